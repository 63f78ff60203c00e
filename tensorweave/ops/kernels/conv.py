"""The NumPy engine behind Conv2D and its two backprop ops (NHWC, one filter group).

Each convolution is lowered to BLAS: im2col (a zero-copy `as_strided` window view over the
padded input, copied once per chunk) and one sgemm per chunk, or, for stride-1 convolutions with
large windows and many channels, per-frequency products in the Fourier domain (conv_fft.py; see
the second attempt below). Measured on the 2-core development machine, second convolution of
bench/cnn_step.py (64x14x14x32, 5x5 filters, 64 outputs), quiet machine, best of many runs,
before the FFT path:

- one im2col + one sgemm for the whole batch, 1 BLAS thread: 14 ms; OpenBLAS with 2 threads: 9 ms;
- chunks of about 2 MB of im2col (3 images here: the matrix is still in cache when the sgemm
  reads it; 1 MB chunks measured 12 ms, 8 MB 7 ms) run by the caller and one helper thread of the
  device pool, 1 BLAS thread each: 5.6-6.1 ms. Per chunk the copy is 0.07 ms and the sgemm 0.41 ms
  (150 GFLOP/s), so this is within about 20% of what OpenBLAS can do;
- gradient w.r.t. the filter: dw = cols^T dy per chunk, partial sums added: 6.1-6.4 ms (dy^T cols
  was no faster);
- gradient w.r.t. the input, stride 1: a full correlation of the padded output gradient with the
  filter rotated 180 degrees, i.e. this engine's forward pass: 7.4-8.0 ms; col2im (a
  (rows, 64) x (64, 800) sgemm then KH*KW strided adds into the padded gradient) measured 9-11 ms,
  and per-tap sgemms with long-run adds 8.7-9 ms. Strides above 1 (and few channels) use col2im;
- a single input channel (the first layer) gives M-major im2col rows of only KW elements: there
  the windows are copied K-major (KH*KW long runs) and the sgemm reads them transposed
  (1.2 ms against 1.45 ms).

OpenBLAS's sgemm runs these shapes at 110-140 GFLOP/s a core, well below its 180 on wide
products: it is slower the fewer output channels (N=64 forward 140, N=32 input gradient 115;
oneDNN's direct kernels run the same convolutions at about 210). Tried and not kept (one thread,
second convolution's input gradient): an im2col over one filter row (K=KW*C=320) against all
filter rows side by side (N=KH*C=160), summed with row shifts afterwards: its sgemm runs at
155-180 but computes (H+KH-1)/H = 18/14 of the rows, 13.4 ms against 14.2, not worth the sums.

Re-measured for issue 17 (thread CPU time, one BLAS thread, variants interleaved, medians; the
machine was heavily loaded, so the figures are about 2.5x the quiet ones above; all not kept):
- chunk sizes 0.5 / 1 / 2 / 4 MB: forward 24.2 / 20.4 / 20.4 / 22.9 ms, filter gradient 27.5 /
  22.5 / 20.9 / 25.0, input gradient 30.6 / 27.5 / 24.2 / 26.8: 2 MB stays;
- K-major im2col for many channels (one transposing copy, then out^T = w^T cols^T so that
  OpenBLAS packs the other operand): forward 36.0 against 31.5 ms, input gradient 47.0 against
  31.0: the transposing copy costs more than the product gains;
- the same M-major im2col handed to BLAS as out^T = w^T cols^T (transposed operands, no copy):
  392x1600x32 0.64 against 0.62 ms, 588x800x64 0.85 against 0.75: no gain. The input gradient's
  product (K=1600, N=32) runs about 25% below the forward's (K=800, N=64) in either orientation,
  which is most of the difference between the two kernels;
- padded sources zeroed on their borders only instead of filled and overwritten: 23.2 against
  24.1 ms, inside the noise;
- Winograd F(2x2, 5x5) (36 products of (tiles, c) x (c, o), 2.8x fewer multiply-adds): its 36
  products alone take 9.6 ms and a tensordot input transform 14.5 ms, against 21.2 ms for the whole
  im2col convolution, before the filter and output transforms (and its float32 error is larger);
- the flat-shift implicit GEMM (taps as row offsets into the padded input, no im2col copy) computes
  (h+kh-1)(w+kw-1)/(h*w) = 1.65x the multiply-adds here, for an im2col copy worth about 12% of the
  kernel (py-spy over the training step).
What is left is OpenBLAS's sgemm on these skinny products: it packs the large operand once per
call, a copy as large as the im2col matrix, which oneDNN's direct convolutions do not need.

Second attempt for issue 17 (thread CPU time, one BLAS thread, interleaved, medians; load
average 1-3, so about 2.5x the quiet figures):
- kept: FFT convolution for stride-1 convolutions with 5x5 or larger windows, 16 or more
  channels and 16 or more images (conv_fft.fft_worthwhile): forward, input gradient (a forward
  pass at stride 1) and filter gradient (ops/kernels/conv_fft.py): the second convolution's
  forward 24.1 against 30.2 ms, its input gradient 21.6 against 35.7 ms, its filter gradient
  21.6 against 33.0 ms; with the first two only, the whole LeNet step took 166 against 182 ms of
  CPU on one thread, 166 against 193 ms (wall 578 against 696, load average 14) on two.
  numpy.fft itself was slower than this engine (34-48 against 18-28 ms: rfft2 of the 2048 input
  planes alone 15.5 ms), so the transforms are DFT matrix products with reused buffers. Max
  |error| / max |y| against a float64 reference: 3.6e-7 against 6.0e-7 for im2col + sgemm. Tried
  and not kept:
- bias and activation of _FusedConv2D run per chunk right after its product (in cache) instead
  of over the whole output: 19.7 against 19.6 ms (second convolution), 4.5 against 4.7 ms (first):
  outputs of 3-6 MB stay in the 32 MB L3 anyway;
- the single-channel first layer with P adjacent output columns per im2col row (a (5, 4+P) window
  and a filter of P shifted copies, N = 32P): P=2 6.9-7.2 ms, P=4 6.2-7.0 ms, against 6.0 ms;
- OpenBLAS's own threads instead of the chunk split: 15.8 against 24.5 ms for the forward at load
  2.5 (fc1's products 6.7 and 4.9 against 10.2 and 8.5 ms), but 225-730 ms against 48-100 ms at
  load 6: its threads spin-wait and collapse when the cores are oversubscribed, as they are when
  the executor runs two kernels at once. One BLAS thread per kernel stays (DESIGN.md).

Chunks run on intra_op.ChunkRunner (the caller plus idle device-pool threads; a helper that starts
late finds nothing left).
Each chunk allocates its own im2col matrix (reusing per-thread buffers measured no faster).
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np
from numpy.lib.stride_tricks import as_strided

from tensorweave.ops.kernels.conv_fft import FFTConv, fft_worthwhile
from tensorweave.ops.kernels.conv_geometry import Geometry
from tensorweave.ops.kernels.intra_op import ChunkRunner

__all__ = ["ConvEngine", "padded_window_source", "windows"]

# Target size of one chunk's im2col matrix: big enough that the sgemm runs near its peak,
# small enough to stay in cache between the copy and the sgemm (measured: 2-4 MB best).
_CHUNK_BYTES = 2 << 20
# Below this many multiply-adds a convolution runs on the calling thread: a thread hop costs
# tens of microseconds.
_PARALLEL_MACS = 4_000_000


def padded_window_source(x: np.ndarray, g: Geometry, n0: int, n1: int, r0: int, r1: int,
                         fill: float = 0.0) -> np.ndarray:
    """The input rows that output rows [r0, r1) of images [n0, n1) read, with the padding
    materialized (`fill`): a view of `x` when no padding is touched, else a copy."""
    i0 = r0 * g.sh - g.pad_top
    rows = (r1 - r0 - 1) * g.sh + (g.kh - 1) * g.dh + 1
    i1 = i0 + rows
    if i0 >= 0 and i1 <= g.h and not (g.pad_left or g.pad_right):
        return x[n0:n1, i0:i1]
    buf = np.full((n1 - n0, rows, g.pad_left + g.w + g.pad_right, x.shape[3]), fill, x.dtype)
    lo, hi = max(i0, 0), min(i1, g.h)  # the real rows (none when explicit padding is wider)
    if hi > lo:
        buf[:, lo - i0:hi - i0, g.pad_left:g.pad_left + g.w] = x[n0:n1, lo:hi]
    return buf


def windows(src: np.ndarray, g: Geometry, rows: int) -> np.ndarray:
    """Zero-copy view (n, rows, out_w, kh, kw, c) of the windows over a padded source."""
    s0, s1, s2, s3 = src.strides
    return as_strided(src, (src.shape[0], rows, g.out_w, g.kh, g.kw, src.shape[3]),
                      (s0, s1 * g.sh, s2 * g.sw, s1 * g.dh, s2 * g.dw, s3), writeable=False)


class ConvEngine:
    """Conv2D over one geometry (input n, h, w, c; filter kh, kw, c, o): forward, gradient
    w.r.t. the filter, and gradient w.r.t. the input. Chunking is fixed here, once per shape."""

    def __init__(self, g: Geometry, out_c: int, dtype: Any, runner: ChunkRunner,
                 fft: Optional[bool] = None) -> None:
        """`fft`: run the forward pass (and the stride-1 input gradient) through conv_fft
        (True), never (False), or where conv_fft.fft_worthwhile says so (None)."""
        self.g = g
        self.out_c = out_c
        self.dtype = np.dtype(dtype)
        self.runner = runner
        self.k = g.kh * g.kw * g.c
        self.k_major = g.c == 1 and g.kh * g.kw > 1  # see the module docstring
        self.pointwise = g.kh == g.kw == 1 and g.sh == g.sw == 1 and not g.padded
        macs = g.n * g.out_h * g.out_w * self.k * out_c
        self.parallel = runner.helpers > 0 and macs >= _PARALLEL_MACS
        self.chunks = _chunks(g.n, g.out_h, g.out_w * self.k * self.dtype.itemsize,
                              runner.helpers + 1 if self.parallel else 1)
        self.image_chunks = _chunks(g.n, g.out_h, g.out_w * self.k * self.dtype.itemsize,
                                    runner.helpers + 1 if self.parallel else 1, split_rows=False)
        self.empty = 0 in (g.n, g.h, g.w, g.c, g.out_h, g.out_w, out_c)
        self._flip: Optional[ConvEngine] = None
        self._flip_checked = False
        self._fft_wanted = fft
        self._fft: Optional[FFTConv] = None
        self._fft_checked = False

    # -- im2col ----------------------------------------------------------------------------------
    def _cols(self, x: np.ndarray, n0: int, n1: int, r0: int, r1: int) -> np.ndarray:
        """The chunk's im2col matrix: (rows, k) M-major, or its (k, rows) K-major transpose."""
        g = self.g
        src = padded_window_source(x, g, n0, n1, r0, r1)
        view = windows(src, g, r1 - r0)
        m = (n1 - n0) * (r1 - r0) * g.out_w
        if not self.k_major:
            cols = np.empty((m, self.k), x.dtype)
            np.copyto(cols.reshape(view.shape), view)
            return cols
        cols = np.empty((g.kh, g.kw, m), x.dtype)
        for i in range(g.kh):
            for j in range(g.kw):
                np.copyto(cols[i, j].reshape(view.shape[:3]), view[:, :, :, i, j, 0])
        return cols.reshape(self.k, m)

    # -- the three products ---------------------------------------------------------------------
    def forward(self, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        g = self.g
        w2 = w.reshape(self.k, self.out_c)
        if self.empty:
            return np.zeros((g.n, g.out_h, g.out_w, self.out_c), self.dtype)
        fft = self._fft_engine()
        if fft is not None:
            return self._fft_forward(fft, x, w)
        if self.pointwise:
            return np.dot(x.reshape(-1, g.c), w2).reshape(g.n, g.h, g.w, self.out_c)
        out = np.empty((g.n, g.out_h, g.out_w, self.out_c), self.dtype)
        chunks = self.chunks

        def chunk(i: int) -> None:
            n0, n1, r0, r1 = chunks[i]
            cols = self._cols(x, n0, n1, r0, r1)
            target = out[n0:n1, r0:r1].reshape(-1, self.out_c)
            np.dot(cols.T if self.k_major else cols, w2, out=target)

        self.runner.run(len(chunks), chunk, self.parallel)
        return out

    def _fft_engine(self) -> Optional[FFTConv]:
        if not self._fft_checked:  # built on first use
            wanted = self._fft_wanted
            if wanted is None:
                wanted = fft_worthwhile(self.g, self.out_c, self.dtype)
            self._fft = FFTConv(self.g, self.out_c, self.dtype) if wanted else None
            self._fft_checked = True
        return self._fft

    def _fft_starts(self, fft: FFTConv) -> tuple[range, int]:
        """The first image of each chunk, and the images per chunk."""
        n = self.g.n
        per = min(fft.max_images, n)
        if self.parallel:  # at least two chunks per thread, as the im2col chunks
            per = min(per, max(1, -(-n // (2 * (self.runner.helpers + 1)))))
        return range(0, n, per), per

    def _fft_forward(self, fft: FFTConv, x: np.ndarray, w: np.ndarray) -> np.ndarray:
        g = self.g
        spectrum = fft.filter_spectrum(w)
        out = np.empty((g.n, g.out_h, g.out_w, self.out_c), self.dtype)
        starts, per = self._fft_starts(fft)

        def chunk(i: int) -> None:
            n0 = starts[i]
            n1 = min(n0 + per, g.n)
            fft.forward_into(x[n0:n1], spectrum, out[n0:n1])

        self.runner.run(len(starts), chunk, self.parallel)
        return out

    def filter_grad(self, x: np.ndarray, dy: np.ndarray) -> np.ndarray:
        g = self.g
        dy = np.ascontiguousarray(dy)
        if self.empty:
            return np.zeros((g.kh, g.kw, g.c, self.out_c), self.dtype)
        if self.pointwise:
            return np.dot(x.reshape(-1, g.c).T, dy.reshape(-1, self.out_c)).reshape(1, 1, g.c, self.out_c)
        fft = self._fft_engine()
        if fft is not None:
            return self._fft_filter_grad(fft, x, dy)
        chunks = self.chunks
        parts = np.empty((len(chunks), self.k, self.out_c), self.dtype)  # one partial sum per chunk

        def chunk(i: int) -> None:
            n0, n1, r0, r1 = chunks[i]
            cols = self._cols(x, n0, n1, r0, r1)
            np.dot(cols if self.k_major else cols.T, dy[n0:n1, r0:r1].reshape(-1, self.out_c), out=parts[i])

        self.runner.run(len(chunks), chunk, self.parallel)
        total = parts[0] if len(chunks) == 1 else np.add.reduce(parts, axis=0)
        return total.reshape(g.kh, g.kw, g.c, self.out_c)

    def _fft_filter_grad(self, fft: FFTConv, x: np.ndarray, dy: np.ndarray) -> np.ndarray:
        g = self.g
        starts, per = self._fft_starts(fft)
        parts = np.empty((len(starts), fft.ph * fft.fw, g.c, self.out_c), fft.cdtype)  # per chunk

        def chunk(i: int) -> None:
            n0 = starts[i]
            n1 = min(n0 + per, g.n)
            fft.filter_grad_part(x[n0:n1], dy[n0:n1], parts[i])

        self.runner.run(len(starts), chunk, self.parallel)
        total = parts[0] if len(starts) == 1 else np.add.reduce(parts, axis=0)
        return fft.filter_grad_finish(total)

    def input_grad(self, dy: np.ndarray, w: np.ndarray) -> np.ndarray:
        g = self.g
        if self.empty:
            return np.zeros((g.n, g.h, g.w, g.c), self.dtype)
        if not self._flip_checked:  # built on first use: most engines never need it
            flippable = g.sh == g.sw == 1 and g.c >= 8
            self._flip = _flip_engine(g, self.out_c, self.dtype, self.runner, self._fft_wanted) if flippable \
                else None
            self._flip_checked = True
        if self._flip is not None:
            flipped = np.ascontiguousarray(w[::-1, ::-1].transpose(0, 1, 3, 2))
            return self._flip.forward(dy, flipped)
        dy = np.ascontiguousarray(dy)
        w2t = w.reshape(self.k, self.out_c).T
        if self.pointwise:
            return np.dot(dy.reshape(-1, self.out_c), w2t).reshape(g.n, g.h, g.w, g.c)
        dx = np.empty((g.n, g.h, g.w, g.c), self.dtype)
        chunks = self.image_chunks

        def chunk(i: int) -> None:
            n0, n1, _, _ = chunks[i]
            self._col2im(dy[n0:n1], w2t, dx[n0:n1])

        self.runner.run(len(chunks), chunk, self.parallel)
        return dx

    def _col2im(self, dy: np.ndarray, w2t: np.ndarray, dx: np.ndarray) -> None:
        """dx (a chunk of images) = the windows' gradients (dy x w^T) summed where they overlap:
        KH*KW strided adds of large slices into the padded gradient."""
        g = self.g
        nb = dy.shape[0]
        cols = np.empty((nb * g.out_h * g.out_w, self.k), self.dtype)
        np.dot(dy.reshape(-1, self.out_c), w2t, out=cols)
        cols6 = cols.reshape(nb, g.out_h, g.out_w, g.kh, g.kw, g.c)
        if g.padded:
            acc = np.empty((nb, g.h + g.pad_top + g.pad_bottom, g.w + g.pad_left + g.pad_right, g.c),
                          self.dtype)
        else:
            acc = dx
        acc[...] = 0
        h_end, w_end = (g.out_h - 1) * g.sh + 1, (g.out_w - 1) * g.sw + 1
        for i in range(g.kh):
            for j in range(g.kw):
                top, left = i * g.dh, j * g.dw
                acc[:, top:top + h_end:g.sh, left:left + w_end:g.sw] += cols6[:, :, :, i, j]
        if g.padded:
            dx[...] = acc[:, g.pad_top:g.pad_top + g.h, g.pad_left:g.pad_left + g.w]


def _flip_engine(g: Geometry, out_c: int, dtype: Any, runner: ChunkRunner,
                 fft: Optional[bool]) -> Optional[ConvEngine]:
    """At stride 1 the input gradient is a full correlation of the output gradient with the
    filter rotated 180 degrees (in and out channels swapped): a forward convolution whose
    padding puts every window tap that reached the input back over it."""
    eff_h, eff_w = (g.kh - 1) * g.dh + 1, (g.kw - 1) * g.dw + 1
    top, left = eff_h - 1 - g.pad_top, eff_w - 1 - g.pad_left
    bottom = g.h - g.out_h - top + eff_h - 1
    right = g.w - g.out_w - left + eff_w - 1
    if min(top, left, bottom, right) < 0:  # explicit padding wider than the window: col2im
        return None
    flip = Geometry(g.n, g.out_h, g.out_w, out_c, g.kh, g.kw, 1, 1, g.dh, g.dw,
                    top, bottom, left, right, g.h, g.w)
    return ConvEngine(flip, g.c, dtype, runner, fft)


def _chunks(n: int, out_h: int, row_bytes: int, workers: int,
            split_rows: bool = True) -> list[tuple[int, int, int, int]]:
    """(n0, n1, r0, r1) blocks of output rows: whole images when an image's im2col fits the
    target size, else row blocks of single images; at least `workers` blocks when possible."""
    rows = max(1, _CHUNK_BYTES // max(1, row_bytes))
    if workers > 1:
        rows = min(rows, max(1, -(-(n * out_h) // (2 * workers))))  # >= 2 blocks per worker
    if rows >= out_h or not split_rows or out_h == 0:
        per = max(1, rows // max(out_h, 1)) if out_h else n
        return [(a, min(a + per, n), 0, out_h) for a in range(0, n, per)] or [(0, 0, 0, out_h)]
    blocks = []
    for image in range(n):
        for r in range(0, out_h, rows):
            blocks.append((image, image + 1, r, min(r + rows, out_h)))
    return blocks or [(0, 0, 0, out_h)]
