"""Stride-1 convolution through the discrete Fourier transform, for ConvEngine's forward pass (and
so for the input gradient, which at stride 1 is a forward convolution of the output gradient) and
its gradient w.r.t. the filter (a correlation of the input with the output gradient: per frequency
X^T conj(DY) summed over images, then the inverse transform at the kh x kw window offsets only).

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
for im2col + sgemm, 64 images 21.3 against 30.7 (0.64-0.69x); the filter gradient 21.6 against
33.0. Max |error| / max |y| against a float64 reference: 3.6e-7 here, 6.0e-7 for im2col + sgemm
(float32 sums of 800 products).
Buffers are reused between calls (fresh ones cost page faults: 34-42 ms for the same work)."""
from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.ops.kernels.conv_geometry import Geometry

__all__ = ["FFTConv", "fft_worthwhile"]

# The transforms are dense matrix products, O(P^3) per channel plane: only for small planes
# (measured up to 32x32 images, period 36).
_MAX_PERIOD = 40
# The filter's spectrum and the per-frequency product calls cost the same whatever the batch:
# below 16 images the FFT path measured slower (1 image 1.8-7x, 4 images 1.2-1.7x, 8 images
# 0.9-1.1x the im2col time; 16 images 0.8-1.05x, 32-64 images 0.6-0.9x).
_MIN_IMAGES = 16
# Images per chunk: all of a chunk's buffers (about 0.6 MB per image for bench/cnn_step.py's
# second convolution) stay under this size; 16 and 64 images measured alike per image.
_CHUNK_BYTES = 16 << 20


def fft_worthwhile(g: Geometry, out_c: int, dtype: np.dtype) -> bool:
    """Whether the FFT path is used for this geometry: stride 1, no dilation, a window of at
    least 5x5 (where the products' count falls well below the direct one), enough channels
    and images for the per-frequency products to run near BLAS speed, and small periods."""
    ph, pw = g.out_h + g.kh - 1, g.out_w + g.kw - 1
    if dtype not in (np.float32, np.float64) or (g.sh, g.sw, g.dh, g.dw) != (1, 1, 1, 1):
        return False
    if g.kh * g.kw < 25 or g.c < 16 or out_c < 16 or max(ph, pw) > _MAX_PERIOD or g.n < _MIN_IMAGES:
        return False
    products = 4 * ph * (pw // 2 + 1)  # real multiply-adds per (image, c, o) in the spectrum
    return 2 * products <= g.out_h * g.out_w * g.kh * g.kw


class FFTConv:
    """The forward convolution of one geometry and its gradient w.r.t. the filter through DFT
    matrices (see the module docstring)."""

    def __init__(self, g: Geometry, out_c: int, dtype: Any) -> None:
        self.g, self.o = g, out_c
        self.dtype = np.dtype(dtype)
        self.cdtype = np.dtype(np.complex64 if self.dtype == np.float32 else np.complex128)
        self.ph, self.pw = g.out_h + g.kh - 1, g.out_w + g.kw - 1
        self.fw = self.pw // 2 + 1
        u, v = np.arange(self.ph), np.arange(self.fw)
        # analysis: the padding is an offset of the real rows and columns in the period
        self.dw2, self.m = self._analysis(g.h, g.w, g.pad_top, g.pad_left)
        self._dy_analysis: Any = None  # the output gradient's, built by the first filter_grad
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
        self._spare_grad: list[dict[str, np.ndarray]] = []
        o_row = g.out_h * g.out_w * self.o
        self._grad_real = {"xt": self._real["xt"], "t1": self._real["t1"], "x": self._real["x"],
                           "dxt": o_row, "dt1": g.out_h * 2 * self.fw * self.o, "dx": 2 * f * self.o}
        self._grad_complex = {"xc": self._complex["xc"], "dxc": f * self.o}
        self._taps: Any = None

    def _analysis(self, rows: int, cols: int, top: int, left: int) -> tuple[np.ndarray, np.ndarray]:
        """The DFT matrices for a rows x cols signal at (top, left) in the period, in real form:
        along w (2Fw, cols), rows (re|im, v); along h, complex input and output as real pairs,
        (2Ph, 2 rows), rows (re|im, u) and columns (r, re|im)."""
        u, v = np.arange(self.ph), np.arange(self.fw)
        dh = np.exp(-2j * np.pi * np.outer(u, np.arange(rows) + top) / self.ph)
        dw = np.exp(-2j * np.pi * np.outer(v, np.arange(cols) + left) / self.pw)
        m = np.zeros((2, self.ph, rows, 2))
        m[0, :, :, 0], m[0, :, :, 1] = dh.real, -dh.imag
        m[1, :, :, 0], m[1, :, :, 1] = dh.imag, dh.real
        return (np.concatenate([dw.real, dw.imag]).astype(self.dtype),
                m.reshape(2 * self.ph, 2 * rows).astype(self.dtype))

    def _spectrum(self, a: np.ndarray, analysis: tuple[np.ndarray, np.ndarray], bufs: dict[str, np.ndarray],
                  prefix: str) -> np.ndarray:
        """The DFT of images a (nb, rows, cols, ch) over the period, (Ph * Fw, nb, ch) complex,
        in the buffers named prefix + xt / t1 / x / xc."""
        nb, rows, cols, ch = a.shape
        dw2, m = analysis
        f = self.ph * self.fw
        at = bufs[prefix + "xt"][:rows * cols * nb * ch].reshape(rows, cols, nb, ch)
        np.copyto(at, a.transpose(1, 2, 0, 3))
        t1 = bufs[prefix + "t1"][:rows * 2 * self.fw * nb * ch].reshape(rows, 2 * self.fw, nb * ch)
        np.matmul(dw2, at.reshape(rows, cols, nb * ch), out=t1)
        spec = bufs[prefix + "x"][:2 * f * nb * ch].reshape(2 * self.ph, self.fw * nb * ch)
        np.dot(m, t1.reshape(2 * rows, self.fw * nb * ch), out=spec)
        halves = spec.reshape(2, f, nb, ch)
        packed = bufs[prefix + "xc"][:f * nb * ch].reshape(f, nb, ch)
        packed.real, packed.imag = halves[0], halves[1]
        return packed

    def filter_spectrum(self, w: np.ndarray) -> np.ndarray:
        """conj(DFT of the zero-padded filter), (Ph * Fw, c, o): correlation, not convolution."""
        g = self.g
        co = g.c * self.o
        t = np.matmul(self.kw_t, w.reshape(g.kh, g.kw, co).astype(self.cdtype))  # (kh, Fw, c*o)
        spec = np.dot(self.kh_t, t.reshape(g.kh, self.fw * co))  # (Ph, Fw * c * o)
        np.conjugate(spec, out=spec)
        return spec.reshape(self.ph * self.fw, g.c, self.o)

    def _buffers(self, images: int, spare: list, real: dict[str, int], cplx: dict[str, int]) -> dict[str, np.ndarray]:
        """A buffer set for `images` images (per-image sizes `real` and `cplx`) from `spare`."""
        try:
            bufs = spare.pop()
        except IndexError:
            bufs = None
        if bufs is not None and bufs["images"].shape[0] >= images:
            return bufs
        # sized for this chunk (the engine's chunks have one size, but for the last)
        bufs = {name: np.empty(n * images, self.dtype) for name, n in real.items()}
        bufs.update({name: np.empty(n * images, self.cdtype) for name, n in cplx.items()})
        bufs["images"] = np.empty(images, np.int8)  # records the capacity
        return bufs

    # -- the gradient w.r.t. the filter ----------------------------------------------------------
    def filter_grad_part(self, x: np.ndarray, dy: np.ndarray, out: np.ndarray) -> None:
        """out (Ph * Fw, c, o) = the spectrum of images x's share of the filter gradient,
        sum over images of X^T conj(DY) per frequency (a correlation of x with dy)."""
        g, o, f = self.g, self.o, self.ph * self.fw
        if self._dy_analysis is None:
            self._dy_analysis = self._analysis(g.out_h, g.out_w, 0, 0)
        b = self._buffers(x.shape[0], self._spare_grad, self._grad_real, self._grad_complex)
        try:
            xc = self._spectrum(x, (self.dw2, self.m), b, "")
            dyc = self._spectrum(dy, self._dy_analysis, b, "d")
            np.conjugate(dyc, out=dyc)
            np.matmul(xc.transpose(0, 2, 1), dyc, out=out.reshape(f, g.c, o))
        finally:
            self._spare_grad.append(b)

    def filter_grad_finish(self, spectrum: np.ndarray) -> np.ndarray:
        """The filter gradient (kh, kw, c, o) from its summed spectrum: the inverse DFT at the
        window's kh x kw offsets only."""
        g = self.g
        if self._taps is None:
            u, v = np.arange(self.ph), np.arange(self.fw)
            weight = np.full(self.fw, 2.0)
            weight[0] = 1.0
            if self.pw % 2 == 0:
                weight[-1] = 1.0
            rows = np.exp(2j * np.pi * np.outer(np.arange(g.kh), u) / self.ph)
            cols = np.exp(2j * np.pi * np.outer(np.arange(g.kw), v) / self.pw) * weight
            taps = rows[:, None, :, None] * cols[None, :, None, :] / (self.ph * self.pw)
            self._taps = taps.reshape(g.kh * g.kw, self.ph * self.fw).astype(self.cdtype)
        grad = np.dot(self._taps, spectrum.reshape(self.ph * self.fw, g.c * self.o)).real
        return np.ascontiguousarray(grad, dtype=self.dtype).reshape(g.kh, g.kw, g.c, self.o)

    def forward_into(self, x: np.ndarray, spectrum: np.ndarray, out: np.ndarray) -> None:
        """out (nb, out_h, out_w, o) = the convolution of images x (nb, h, w, c)."""
        g, o, ph, fw = self.g, self.o, self.ph, self.fw
        nb = x.shape[0]
        f = ph * fw
        b = self._buffers(nb, self._spare, self._real, self._complex)
        try:
            xc = self._spectrum(x, (self.dw2, self.m), b, "")
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
