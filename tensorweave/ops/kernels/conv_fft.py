"""Stride-1 convolution through the discrete Fourier transform, for ConvEngine's forward pass (and
so for the input gradient, which at stride 1 is a forward convolution of the output gradient).

The padded input of a stride-1, undilated convolution is exactly P = out + k - 1 rows (and
columns) long, so a circular correlation of period P gives every output without wrap-around: per
frequency (u, v) the output is X(u, v) times the conjugate filter transform, summed over input
channels, i.e. one small complex product (images, c) x (c, o) per frequency instead of
out_h*out_w*kh*kw multiply-adds per (c, o) pair. numpy.fft was too slow on thousands of small
planes (see ops/kernels/conv.py), so the transforms are real matrix products with the DFT
matrices (separable, only the hermitian half along w, the padding folded into the matrices):

  x (h, w, nb*c) --Dw--> (h, [re|im] x Fw, nb*c) --M (complex Dh in real form)--> X (re|im, u, v, nb, c)
  Y = X @ conj(W) per frequency; inverse along v (complex), then along u keeping the real part.

Measured (second convolution of bench/cnn_step.py, 64x14x14x32 with 5x5 filters -> 64, one
thread, thread CPU time, interleaved medians on a loaded machine): 16 images 5.3 ms against 8.4
for im2col + sgemm, 64 images 21.3 against 30.7 (0.64-0.69x). Max |error| / max |y| against a
float64 reference: 3.6e-7 here, 6.0e-7 for im2col + sgemm (float32 sums of 800 products).
Buffers are reused between calls (fresh ones cost page faults: 34-42 ms for the same work)."""
from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.ops.kernels.conv_geometry import Geometry

__all__ = ["FFTConv", "fft_worthwhile"]

# The transforms are dense matrix products, O(P^3) per channel plane: only for small planes.
_MAX_PERIOD = 64
# Images per chunk: all of a chunk's buffers (about 0.6 MB per image for bench/cnn_step.py's
# second convolution) stay under this size; 16 and 64 images measured alike per image.
_CHUNK_BYTES = 16 << 20


def fft_worthwhile(g: Geometry, out_c: int, dtype: np.dtype) -> bool:
    """Whether the FFT path is used for this geometry: stride 1, no dilation, a window of at
    least 5x5 (where the products' count falls well below the direct one), enough channels
    for the per-frequency products to run near BLAS speed, and small periods."""
    ph, pw = g.out_h + g.kh - 1, g.out_w + g.kw - 1
    if dtype not in (np.float32, np.float64) or (g.sh, g.sw, g.dh, g.dw) != (1, 1, 1, 1):
        return False
    if g.kh * g.kw < 25 or g.c < 16 or out_c < 16 or max(ph, pw) > _MAX_PERIOD or g.n == 0:
        return False
    products = 4 * ph * (pw // 2 + 1)  # real multiply-adds per (image, c, o) in the spectrum
    return 2 * products <= g.out_h * g.out_w * g.kh * g.kw


class FFTConv:
    """The forward convolution of one geometry through DFT matrices (see the module docstring)."""

    def __init__(self, g: Geometry, out_c: int, dtype: Any) -> None:
        self.g, self.o = g, out_c
        self.dtype = np.dtype(dtype)
        self.cdtype = np.dtype(np.complex64 if self.dtype == np.float32 else np.complex128)
        self.ph, self.pw = g.out_h + g.kh - 1, g.out_w + g.kw - 1
        self.fw = self.pw // 2 + 1
        u, v = np.arange(self.ph), np.arange(self.fw)
        # analysis: the padding is an offset of the real rows and columns in the period
        dh = np.exp(-2j * np.pi * np.outer(u, np.arange(g.h) + g.pad_top) / self.ph)
        dw = np.exp(-2j * np.pi * np.outer(v, np.arange(g.w) + g.pad_left) / self.pw)
        self.dw2 = np.concatenate([dw.real, dw.imag]).astype(self.dtype)  # (2Fw, w)
        m = np.zeros((2, self.ph, g.h, 2))
        m[0, :, :, 0], m[0, :, :, 1] = dh.real, -dh.imag
        m[1, :, :, 0], m[1, :, :, 1] = dh.imag, dh.real
        self.m = m.reshape(2 * self.ph, 2 * g.h).astype(self.dtype)  # rows (re|im, u), cols (r, re|im)
        self.kh_t = np.exp(-2j * np.pi * np.outer(u, np.arange(g.kh)) / self.ph).astype(self.cdtype)
        self.kw_t = np.exp(-2j * np.pi * np.outer(v, np.arange(g.kw)) / self.pw).astype(self.cdtype)
        # synthesis of the wanted outputs only; the hermitian half counts twice but for v = 0
        # (and v = P/2 when P is even)
        weight = np.full(self.fw, 2.0)
        weight[0] = 1.0
        if self.pw % 2 == 0:
            weight[-1] = 1.0
        self.ew = (np.exp(2j * np.pi * np.outer(np.arange(g.out_w), v) / self.pw) * weight).astype(self.cdtype)
        eh = np.exp(2j * np.pi * np.outer(np.arange(g.out_h), u) / self.ph) / (self.ph * self.pw)
        self.e2 = np.concatenate([eh.real, eh.imag]).astype(self.dtype)  # (2 out_h, Ph)
        f = self.ph * self.fw
        # per image: the real buffers, then the complex ones (two reals each); see _buffers
        self._real = {"xt": g.h * g.w * g.c, "t1": g.h * 2 * self.fw * g.c, "x": 2 * f * g.c,
                      "r": 2 * g.out_h * g.out_w * self.o * 2}
        self._complex = {"xc": f * g.c, "y": f * self.o, "z": self.ph * g.out_w * self.o}
        per_image = (sum(self._real.values()) + 2 * sum(self._complex.values())) * self.dtype.itemsize
        self.max_images = max(1, _CHUNK_BYTES // per_image)
        # buffer sets not in use: pop and append are atomic, so concurrent steps never share one
        self._spare: list[dict[str, np.ndarray]] = []

    def filter_spectrum(self, w: np.ndarray) -> np.ndarray:
        """conj(DFT of the zero-padded filter), (Ph * Fw, c, o): correlation, not convolution."""
        g = self.g
        co = g.c * self.o
        t = np.matmul(self.kw_t, w.reshape(g.kh, g.kw, co).astype(self.cdtype))  # (kh, Fw, c*o)
        spec = np.dot(self.kh_t, t.reshape(g.kh, self.fw * co))  # (Ph, Fw * c * o)
        np.conjugate(spec, out=spec)
        return spec.reshape(self.ph * self.fw, g.c, self.o)

    def _buffers(self, images: int) -> dict[str, np.ndarray]:
        try:
            bufs = self._spare.pop()
        except IndexError:
            bufs = None
        if bufs is not None and bufs["images"].shape[0] >= images:
            return bufs
        # sized for this chunk (the engine's chunks have one size, but for the last)
        bufs = {name: np.empty(n * images, self.dtype) for name, n in self._real.items()}
        bufs.update({name: np.empty(n * images, self.cdtype) for name, n in self._complex.items()})
        bufs["images"] = np.empty(images, np.int8)  # records the capacity
        return bufs

    def forward_into(self, x: np.ndarray, spectrum: np.ndarray, out: np.ndarray) -> None:
        """out (nb, out_h, out_w, o) = the convolution of images x (nb, h, w, c)."""
        g, o, ph, fw = self.g, self.o, self.ph, self.fw
        nb = x.shape[0]
        f = ph * fw
        b = self._buffers(nb)
        try:
            xt = b["xt"][:g.h * g.w * nb * g.c].reshape(g.h, g.w, nb, g.c)
            np.copyto(xt, x.transpose(1, 2, 0, 3))
            t1 = b["t1"][:g.h * 2 * fw * nb * g.c].reshape(g.h, 2 * fw, nb * g.c)
            np.matmul(self.dw2, xt.reshape(g.h, g.w, nb * g.c), out=t1)
            spec = b["x"][:2 * f * nb * g.c].reshape(2 * ph, fw * nb * g.c)
            np.dot(self.m, t1.reshape(2 * g.h, fw * nb * g.c), out=spec)
            halves = spec.reshape(2, f, nb, g.c)
            xc = b["xc"][:f * nb * g.c].reshape(f, nb, g.c)
            xc.real, xc.imag = halves[0], halves[1]
            y = b["y"][:f * nb * o].reshape(f, nb, o)
            np.matmul(xc, spectrum, out=y)
            z = b["z"][:ph * g.out_w * nb * o].reshape(ph, g.out_w, nb * o)
            np.matmul(self.ew, y.reshape(ph, fw, nb * o), out=z)
            r = b["r"][:2 * g.out_h * g.out_w * nb * o * 2].reshape(2 * g.out_h, g.out_w * nb * o * 2)
            np.dot(self.e2, z.view(self.dtype).reshape(ph, g.out_w * nb * o * 2), out=r)
            parts = r.reshape(2, g.out_h, g.out_w, nb, o, 2)
            # Re(sum_u Eh[i, u] Z[u]) = Re(Eh) Re(Z) - Im(Eh) Im(Z)
            np.subtract(parts[0, ..., 0].transpose(2, 0, 1, 3), parts[1, ..., 1].transpose(2, 0, 1, 3), out=out)
        finally:
            self._spare.append(b)
