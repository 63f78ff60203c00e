"""Kernel engine for 3-D windows (Conv3D and the 3-D pools): TF's geometry over (depth, height,
width) and the arithmetic as one loop over the window's taps.

Each tap (kd, kh, kw) of the window reads one strided view of the padded NDHWC input, covering
every output position at once: convolution is a sum of per-tap matmuls over channels, pooling a
running max / sum. Windows are small (27 taps for 3x3x3), so the loop costs little next to the
NumPy work, and no im2col buffer is needed. Gradients scatter back through the same views; a
single tap never maps two outputs to one input, so `+=` on a view is exact.
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Iterator, Sequence

import numpy as np

from tensorweave.ops._util import format_dims, invalid
from tensorweave.ops.kernels.conv_geometry import window_output

__all__ = ["Geometry3D", "to_ndhwc", "from_ndhwc"]


def to_ndhwc(x: np.ndarray, data_format: str) -> np.ndarray:
    return x.transpose(0, 2, 3, 4, 1) if data_format == "NCDHW" else x


def from_ndhwc(x: np.ndarray, data_format: str) -> np.ndarray:
    return np.ascontiguousarray(x.transpose(0, 4, 1, 2, 3)) if data_format == "NCDHW" else x


def ndhwc_shape(shape: Sequence[int], data_format: str) -> tuple[int, ...]:
    shape = tuple(int(d) for d in shape)
    if len(shape) != 5:
        raise invalid(f"input must be 5-dimensional, got {format_dims(shape)}")
    return (shape[0],) + shape[2:] + (shape[1],) if data_format == "NCDHW" else shape


@dataclasses.dataclass(frozen=True)
class Geometry3D:
    """One 3-D window op at one input shape, in NDHWC terms."""

    in_shape: tuple[int, ...]       # (n, d, h, w, c)
    window: tuple[int, int, int]
    strides: tuple[int, int, int]
    dilations: tuple[int, int, int]
    out_spatial: tuple[int, int, int]
    pad_before: tuple[int, int, int]
    pad_after: tuple[int, int, int]

    @staticmethod
    def make(in_shape: Sequence[int], window: Sequence[int], strides: Sequence[int],
             dilations: Sequence[int], padding: str) -> "Geometry3D":
        outs, befores, afters = [], [], []
        for size, k, s, d in zip(in_shape[1:4], window, strides, dilations):
            try:
                out, before, after = window_output(size, k, s, d, padding)
            except ValueError as e:
                raise invalid(str(e)) from None
            if out < 0:
                raise invalid(f"Computed output size would be negative: {out}")
            outs.append(out)
            befores.append(before)
            afters.append(after)
        return Geometry3D(tuple(in_shape), tuple(window), tuple(strides), tuple(dilations),  # type: ignore[arg-type]
                          tuple(outs), tuple(befores), tuple(afters))  # type: ignore[arg-type]

    @property
    def out_shape(self) -> tuple[int, ...]:
        return (self.in_shape[0],) + self.out_spatial

    def padded(self, x: np.ndarray, fill: float = 0.0) -> np.ndarray:
        if not any(self.pad_before) and not any(self.pad_after):
            return x
        pads = [(0, 0)] + list(zip(self.pad_before, self.pad_after)) + [(0, 0)]
        return np.pad(x, pads, constant_values=fill)

    def padded_zeros(self, dtype: np.dtype) -> np.ndarray:
        n, d, h, w, c = self.in_shape
        pb, pa = self.pad_before, self.pad_after
        return np.zeros((n, d + pb[0] + pa[0], h + pb[1] + pa[1], w + pb[2] + pa[2], c), dtype)

    def unpad(self, xp: np.ndarray) -> np.ndarray:
        _, d, h, w, _ = self.in_shape
        pb = self.pad_before
        return xp[:, pb[0]:pb[0] + d, pb[1]:pb[1] + h, pb[2]:pb[2] + w, :]

    def taps(self) -> Iterator[tuple[tuple[int, int, int], tuple[slice, ...]]]:
        """((kd, kh, kw), the padded input's view for that tap), in row-major tap order."""
        for tap in itertools.product(*(range(k) for k in self.window)):
            view = [slice(None)]
            for t, s, dil, out in zip(tap, self.strides, self.dilations, self.out_spatial):
                start = t * dil
                view.append(slice(start, start + (out - 1) * s + 1, s))
            view.append(slice(None))
            yield tap, tuple(view)

    # --- convolution (filter [kd, kh, kw, in, out]) ----------------------------------------
    def conv(self, x: np.ndarray, f: np.ndarray) -> np.ndarray:
        xp = self.padded(x)
        out = np.zeros(self.out_shape + (f.shape[-1],), np.result_type(x, f))
        for tap, view in self.taps():
            out += xp[view] @ f[tap]
        return out

    def conv_input_grad(self, dy: np.ndarray, f: np.ndarray) -> np.ndarray:
        dxp = self.padded_zeros(np.result_type(dy, f))
        for tap, view in self.taps():
            dxp[view] += dy @ f[tap].T
        return np.ascontiguousarray(self.unpad(dxp))

    def conv_filter_grad(self, x: np.ndarray, dy: np.ndarray, f_shape: Sequence[int]) -> np.ndarray:
        xp = self.padded(x)
        df = np.zeros(tuple(f_shape), np.result_type(x, dy))
        c_in, c_out = x.shape[-1], dy.shape[-1]
        flat_dy = dy.reshape(-1, c_out)
        for tap, view in self.taps():
            df[tap] = np.ascontiguousarray(xp[view]).reshape(-1, c_in).T @ flat_dy
        return df

    # --- pooling ----------------------------------------------------------------------------
    def max_pool(self, x: np.ndarray) -> np.ndarray:
        xp = self.padded(x, -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min)
        out = None
        for _, view in self.taps():
            out = xp[view].copy() if out is None else np.fmax(out, xp[view])  # NaN ignored, as TF
        return out

    def _first_max(self, x: np.ndarray, y: np.ndarray) -> Iterator[tuple[tuple[slice, ...], np.ndarray]]:
        """(view, mask of the outputs whose first maximum in row-major window order is this tap)."""
        xp = self.padded(x, -np.inf if x.dtype.kind == "f" else np.iinfo(x.dtype).min)
        taken = np.zeros(y.shape, bool)
        for _, view in self.taps():
            hit = (xp[view] == y) & ~taken
            taken |= hit
            yield view, hit

    def max_pool_grad(self, x: np.ndarray, y: np.ndarray, dy: np.ndarray) -> np.ndarray:
        dxp = self.padded_zeros(dy.dtype)
        for view, hit in self._first_max(x, y):
            dxp[view] += np.where(hit, dy, 0)
        return np.ascontiguousarray(self.unpad(dxp))

    def max_pool_grad_grad(self, x: np.ndarray, y: np.ndarray, ggrad: np.ndarray) -> np.ndarray:
        gp = self.padded(ggrad)
        out = np.zeros(y.shape, ggrad.dtype)
        for view, hit in self._first_max(x, y):
            out = np.where(hit, gp[view], out)
        return out

    def _window_counts(self) -> np.ndarray:
        """How many real (unpadded) inputs each output window covers."""
        ones = self.padded(np.ones((1,) + self.in_shape[1:4] + (1,), np.float64))
        counts = np.zeros((1,) + self.out_spatial + (1,))
        for _, view in self.taps():
            counts += ones[view]
        return counts

    def avg_pool(self, x: np.ndarray) -> np.ndarray:
        xp = self.padded(x)
        total = np.zeros(self.out_shape + (x.shape[-1],), x.dtype)
        for _, view in self.taps():
            total += xp[view]
        return (total / self._window_counts()).astype(x.dtype)

    def avg_pool_grad(self, dy: np.ndarray) -> np.ndarray:
        share = (dy / self._window_counts()).astype(dy.dtype)
        dxp = self.padded_zeros(dy.dtype)
        for _, view in self.taps():
            dxp[view] += share
        return np.ascontiguousarray(self.unpad(dxp))
