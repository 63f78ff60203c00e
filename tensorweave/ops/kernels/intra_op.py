"""Intra-op parallelism for CPU kernels: one kernel's work split into chunks that run on the
calling thread plus idle threads of the device's pool (DESIGN.md "Parallelism", "BLAS threads").

The runtime pins BLAS to one thread per kernel (OpenBLAS's own threads are process-global and
oversubscribe the cores when the executor runs two kernels at once), so a large product or
convolution uses the other cores only if the kernel splits it. `ChunkRunner` does that without
risking a deadlock or a wait on a busy pool: chunks are claimed from a shared counter, helpers
queued on the pool only take chunks nobody has claimed yet, and a helper that starts late finds
nothing left, so a busy pool just means the caller does all the chunks itself.

Measured on the 2-core development machine (quiet, 1 BLAS thread per call), a split in two
halves a large sgemm: [400x200]@[200x10000] 9.3 -> 4.6 ms split along N, 6.6 ms along M;
[3136x64]@[64x1024] splits better along M (3.3 -> 1.6 ms against 1.95 along N). Splitting the
larger of M and N won on every shape measured, except when K dominates: then K is split and the
partial products summed. Waking a helper costs about 60 us, so products below about 50 MFLOP
stay on one thread. `oriented_dot` picks the faster of two BLAS orientations for products whose
right operand is a transposed view.
"""
from __future__ import annotations

import dataclasses
import itertools
import os
import threading
from typing import Any, Callable, Optional

import numpy as np
from tensorweave.framework.kernel_contract import KernelContext

__all__ = ["ChunkRunner", "ElementwiseSplitter", "IntraOpSettings", "MatMulSplitter", "available_cores",
           "intra_op_settings", "may_reorient", "oriented_dot", "split_bounds"]

# Below this many multiply-adds (m * n * k) a product runs as one BLAS call: waking a helper
# costs about 60 us, a split [256x256]@[256x256] (17M) measured no faster, [320^3] (33M) 10% faster.
_SPLIT_MATMUL_MACS = 24_000_000
_BLAS_KINDS = frozenset("fc")  # float and complex products run in BLAS
# Below this many output elements an element-wise op runs as one call. On 1.6M float32 (6.4 MB)
# two threads measured Relu 0.44 -> 0.33 ms, ReluGrad 0.95 -> 0.59, BiasAdd 0.72 -> 0.48 ms.
_SPLIT_ELEMENTS = 1 << 19
_NUMERIC_KINDS = frozenset("biufc")


@dataclasses.dataclass(frozen=True)
class IntraOpSettings:
    """How many threads one kernel may use (the caller plus helpers from its device's pool),
    and how many threads each BLAS call already uses on its own."""
    threads: int
    blas_threads: int

    def helpers(self, uses_blas: bool) -> int:
        if uses_blas and self.blas_threads > 1:  # BLAS already spreads each call over the cores
            return 0
        return self.threads - 1


def available_cores() -> int:
    """Cores this process may run on (its CPU affinity where the OS reports one)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def intra_op_settings(ctx: KernelContext) -> IntraOpSettings:
    """The session's ConfigProto.intra_op_parallelism_threads (0: one thread per core, as in TF)
    bounded by the cores and by the device pool's threads plus the caller."""
    cores = available_cores()
    session = ctx.session_state
    intra = getattr(session, "intra_op_parallelism_threads", 0) or 0  # no session: kernels built alone
    pool_threads = ctx.device.num_threads
    threads = max(1, min(intra if intra > 0 else cores, pool_threads + 1, cores))
    return IntraOpSettings(threads=threads, blas_threads=intra if intra > 0 else 1)


class ChunkRunner:
    """Runs `fn(i)` for i in range(n) on the calling thread plus `helpers` threads of a device
    pool. `pool_getter` is called only when help is wanted (the device pool starts lazily)."""

    def __init__(self, pool_getter: Callable[[], Any], helpers: int) -> None:
        self._pool_getter = pool_getter
        self.helpers = max(0, helpers)

    @classmethod
    def for_kernel(cls, ctx: KernelContext, uses_blas: bool = True) -> "ChunkRunner":
        """A runner for the kernel being built: helpers per `intra_op_settings(ctx)`."""
        device = ctx.device
        return cls(lambda: device.thread_pool, intra_op_settings(ctx).helpers(uses_blas))

    def run(self, n: int, fn: Callable[[int], None], parallel: bool = True) -> None:
        helpers = min(self.helpers, n - 1) if parallel else 0
        if helpers <= 0:
            for i in range(n):
                fn(i)
            return
        job = _Job(n, fn)
        pool = self._pool_getter()
        for _ in range(helpers):
            pool.schedule_help(job.work)  # the help lane: before queued kernels
        job.work()
        job.finished.wait()  # only chunks other threads are running right now remain
        # Helpers still queued behind busy pool threads keep the job alive: let them not keep
        # the kernel's arrays too (an in-place update checks that nothing else references them).
        job.fn = None
        if job.error is not None:
            raise job.error


class _Job:
    """One `ChunkRunner.run`: chunks are claimed from a shared counter (next() on a count is
    atomic under the GIL), so every chunk runs exactly once, on whichever thread claims it."""

    __slots__ = ("n", "fn", "claims", "left", "lock", "finished", "error")

    def __init__(self, n: int, fn: Callable[[int], None]) -> None:
        self.n, self.fn = n, fn
        self.claims = itertools.count()
        self.left = n  # chunks not yet finished
        self.lock = threading.Lock()
        self.finished = threading.Event()
        self.error: Optional[BaseException] = None

    def work(self) -> None:
        while True:
            i = next(self.claims)
            if i >= self.n:  # a late helper: everything was claimed; fn may be gone already
                return
            try:
                self.fn(i)
            except BaseException as err:  # noqa: BLE001  (re-raised on the caller)
                self.error = self.error or err
            with self.lock:
                self.left -= 1
                if self.left == 0:
                    self.finished.set()


def split_bounds(size: int, parts: int) -> list[int]:
    """parts + 1 increasing bounds cutting range(size) into nearly equal pieces."""
    return [size * i // parts for i in range(parts + 1)]


# OpenBLAS packs a transposed right operand slowly when the left one has few rows: for such
# products a @ b, (b.T @ a.T).T (b.T then a plain C-ordered matrix) plus a transposing copy of the
# small result is faster. Measured, 1 thread: [20x800]@[400x800]^T 230 -> 155 us (the LSTM
# cell's backward product), [64x1024]@[3136x1024]^T 4.26 -> 3.41 ms (fc1's input gradient),
# [8x256]@[256x256]^T 38 -> 21 us; no gain at 100 rows, a loss when b is not transposed.
_FEW_ROWS = 64
# An inner dimension this many times the larger output dimension is split instead of m or n:
# [400x10000]@[10000x200] (the LSTM's input gradient) 5.6 ms in two halves of k, 6.0 in halves
# of m, whose parts each pack all of the right operand (11.7 against 10.6 ms when no helper runs).
_K_SPLIT_RATIO = 4


def may_reorient(m: int, n: int) -> bool:
    """Whether oriented_dot may reorient an m x n product (given a transposed right operand)."""
    return m <= _FEW_ROWS and m < n


def _transposed_is_faster(m: int, n: int, b: np.ndarray) -> bool:
    return may_reorient(m, n) and b.flags.f_contiguous and not b.flags.c_contiguous


def oriented_dot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """a @ b for 2-D operands (views allowed), in the faster BLAS orientation. np.matmul, not
    np.dot: as fast or faster on transposed views ([400x20]@[20x800]: 120 against 145 us)."""
    if _transposed_is_faster(a.shape[0], b.shape[1], b):
        return np.ascontiguousarray(np.matmul(b.T, a.T).T)
    return np.matmul(a, b)


class MatMulSplitter:
    """Products (..., m, k) @ (..., k, n) that are large enough run as one BLAS call per slice of
    the larger of m and n, each writing its block of a preallocated output (`np.matmul(out=)`
    takes a strided block of the output directly), or, for 2-D products whose k dominates, one
    partial product per slice of k. Operands may be transposed views."""

    def __init__(self, runner: ChunkRunner, min_macs: Optional[int] = None) -> None:
        self.runner = runner
        self.parts = runner.helpers + 1
        self.min_macs = _SPLIT_MATMUL_MACS if min_macs is None else min_macs

    def wants_split(self, a: Any, b: Any) -> bool:
        if self.parts < 2 or type(a) is not np.ndarray or type(b) is not np.ndarray:
            return False
        if a.dtype.kind not in _BLAS_KINDS or a.dtype != b.dtype or a.ndim < 2 or b.ndim < 2:
            return False
        m, k = a.shape[-2:]
        n = b.shape[-1]
        batch = 1
        for d in (a.shape[:-2] if a.ndim >= b.ndim else b.shape[:-2]):
            batch *= d
        return batch * m * n * k >= self.min_macs and max(m, n) >= self.parts

    def __call__(self, a: np.ndarray, b: np.ndarray, out: Optional[np.ndarray] = None) -> np.ndarray:
        """a @ b split over the runner; the caller has checked `wants_split` (and the shapes)."""
        m, n = a.shape[-2], b.shape[-1]
        if out is None and a.ndim == b.ndim == 2 and a.shape[1] >= _K_SPLIT_RATIO * max(m, n):
            return self._split_inner(a, b)
        if out is None:
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
            out = np.empty(batch + (m, n), a.dtype)
        matmul = np.matmul
        if n >= m and a.ndim == b.ndim == 2 and _transposed_is_faster(m, n, b):
            bounds = split_bounds(n, self.parts)

            def chunk(i: int) -> None:
                lo, hi = bounds[i], bounds[i + 1]
                out[:, lo:hi] = matmul(b[:, lo:hi].T, a.T).T  # see _transposed_is_faster
        elif n >= m:
            bounds = split_bounds(n, self.parts)

            def chunk(i: int) -> None:
                lo, hi = bounds[i], bounds[i + 1]
                matmul(a, b[..., lo:hi], out=out[..., lo:hi])
        else:
            bounds = split_bounds(m, self.parts)

            def chunk(i: int) -> None:
                lo, hi = bounds[i], bounds[i + 1]
                matmul(a[..., lo:hi, :], b, out=out[..., lo:hi, :])

        self.runner.run(self.parts, chunk)
        return out

    def _split_inner(self, a: np.ndarray, b: np.ndarray) -> np.ndarray:
        """A long inner dimension: one partial product per slice of k, then their sum (the
        output is small; slicing m or n would make every part read all of the other operand)."""
        bounds = split_bounds(a.shape[1], self.parts)
        partial = np.empty((self.parts, a.shape[0], b.shape[1]), np.result_type(a, b))
        self.runner.run(self.parts, lambda i: np.matmul(
            a[:, bounds[i]:bounds[i + 1]], b[bounds[i]:bounds[i + 1]], out=partial[i]))
        return np.add.reduce(partial, axis=0) if self.parts > 2 else np.add(partial[0], partial[1])


class ElementwiseSplitter:
    """Element-wise kernels over large arrays, split along the output's first axis into blocks
    run on a ChunkRunner: `fn(out_block, *operand_blocks)` writes each block. Operands that
    broadcast along that axis (fewer dimensions, or size 1 there) are passed whole."""

    def __init__(self, runner: ChunkRunner, min_elements: Optional[int] = None) -> None:
        self.runner = runner
        self.parts = runner.helpers + 1
        self.min_elements = _SPLIT_ELEMENTS if min_elements is None else min_elements

    @classmethod
    def for_kernel(cls, ctx: KernelContext) -> Optional["ElementwiseSplitter"]:
        """A splitter for a NumPy kernel whose first output may be large, else None (the
        kernel then keeps its plain, cheapest form)."""
        if ctx.xp is not np or np.dtype(ctx.output_dtypes[0].as_numpy_dtype).kind not in _NUMERIC_KINDS:
            return None
        runner = ChunkRunner.for_kernel(ctx, uses_blas=False)
        splitter = cls(runner)
        shape = ctx.op.outputs[0].shape
        if not runner.helpers or (shape.is_fully_defined() and shape.num_elements() < splitter.min_elements):
            return None
        return splitter

    def wants_split(self, size: int, shape: tuple) -> bool:
        return size >= self.min_elements and len(shape) > 0 and shape[0] >= 2 * self.parts

    def run(self, fn: Callable[..., Any], shape: tuple, dtype: Any, *operands: Any,
            out: Optional[np.ndarray] = None) -> np.ndarray:
        """The result in `out` (which may be one of the operands: each block reads only its own
        elements), or in a new array."""
        if out is None:
            out = np.empty(shape, dtype)
        rows, ndim = shape[0], len(shape)
        sliced = [type(a) is np.ndarray and a.ndim == ndim and a.shape[0] == rows for a in operands]
        bounds = split_bounds(rows, 2 * self.parts)  # 2 blocks per thread: a late helper costs less

        def block(i: int) -> None:
            lo, hi = bounds[i], bounds[i + 1]
            fn(out[lo:hi], *(a[lo:hi] if s else a for a, s in zip(operands, sliced)))

        self.runner.run(len(bounds) - 1, block)
        return out
