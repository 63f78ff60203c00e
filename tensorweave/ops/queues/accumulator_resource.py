"""A conditional accumulator's state, kept in its device's resource manager (the gradient
aggregation behind `tf.train.SyncReplicasOptimizer`, OSDI 4.4).

An accumulator sums the gradients it is given and hands out their average (or sum) once enough
have come. It keeps a global step of its own: a gradient whose `local_step` is older is stale and
silently dropped; every successful take advances the step by one and starts a fresh sum. Takes
are asynchronous (white paper 5.3): a take that must wait leaves its continuation here and holds
no thread; waiting takes are served in arrival order after every apply, and withdrawn when their
step is cancelled (TF's ConditionalAccumulatorBase).

The dense kind adds whole tensors. The sparse kind adds IndexedSlices as TF's does: it merges the
new (indices, values) into the running sum walking both index lists in order (they are expected
sorted, as TF expects; rows with the same index in both are added and counted), and its mean
divides each row by how many gradients contributed to it, not by the number of gradients.
"""
from __future__ import annotations

import collections
import logging
import threading
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import errors
from tensorweave.ops._util import invalid

_log = logging.getLogger("tensorflow")

Shape = Optional[tuple]  # the accumulator's shape: None for an unknown rank, None dims unknown


def format_partial(shape: Shape) -> str:
    """TF's PartialTensorShape::DebugString."""
    if shape is None:
        return "<unknown>"
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


def _format(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


class _Take:
    __slots__ = ("num_required", "done", "cancellation", "token", "finished")

    def __init__(self, num_required: int, done: Callable[[Any], None]) -> None:
        self.num_required, self.done = num_required, done
        self.cancellation: Any = None
        self.token: Optional[int] = None
        self.finished = False


class AccumulatorResource:
    """What dense and sparse accumulators share: the counter, the global step and the takes."""

    kind = "ConditionalAccumulator"

    def __init__(self, name: str, dtype: Any, shape: Shape, reduction_type: str, definition: tuple = ()) -> None:
        self.name = name
        self.dtype = np.dtype(dtype)
        self.shape = shape
        self.mean = reduction_type == "MEAN"
        self.definition = definition
        self.dropped = False
        self.counter = 0
        self.global_step = 0
        self._lock = threading.Lock()
        self._takes: "collections.deque[_Take]" = collections.deque()

    # -- subclasses: the sum ---------------------------------------------------------------------
    def _validate(self, grad: Any) -> None:
        raise NotImplementedError

    def _start(self, grad: Any) -> None:
        raise NotImplementedError

    def _add(self, grad: Any) -> None:
        raise NotImplementedError

    def _result(self) -> Any:
        """The output of a take (the average when MEAN); the sum is then dropped."""
        raise NotImplementedError

    def _divide(self, total: np.ndarray, counts: Any) -> np.ndarray:
        if np.issubdtype(total.dtype, np.integer):  # C++ integer division truncates toward zero
            return (np.sign(total) * (np.abs(total) // counts)).astype(total.dtype)
        return (total / np.asarray(counts, total.dtype)).astype(total.dtype, copy=False)

    # -- the operations --------------------------------------------------------------------------
    def apply(self, local_step: int, grad: Any) -> None:
        """Adds `grad` unless it is stale (local_step older than the accumulator's step)."""
        with self._lock:
            if local_step >= self.global_step:
                self._validate(grad)
                if self.counter > 0:
                    self._add(grad)
                else:
                    self._start(grad)
                self.counter += 1
            finished = self._flush_locked()
        _finish(finished)

    def take(self, step: Any, done: Callable[[Any], None], num_required: int) -> None:
        """Calls `done(result)` once `num_required` gradients have been accumulated."""
        if num_required <= 0:
            raise invalid(f"Argument num_required must be positive, but was {num_required}")
        take = _Take(num_required, done)
        with self._lock:
            manager = step.cancellation
            token = manager.register(lambda err: self._cancel(take))
            if token is None:
                take.finished = True
            else:
                take.cancellation, take.token = manager, token
                self._takes.append(take)
                finished = self._flush_locked()
        if token is None:
            done(errors.CancelledError(None, None, "TakeGrad operation was cancelled"))
            return
        _finish(finished)

    def num_accumulated(self) -> int:
        return self.counter

    def set_global_step(self, new_global_step: int) -> None:
        with self._lock:
            if new_global_step < self.global_step:
                _log.warning("Attempt to set current_global_step_ to smaller value: current_global_step_ = "
                             "%d >= %d = new_global_step.", self.global_step, new_global_step)
            self.global_step = new_global_step

    def close_resource(self) -> None:
        """Its container was reset (or its session closed): fail the takes still waiting."""
        with self._lock:
            self.dropped = True
            waiting, self._takes = list(self._takes), collections.deque()
            for take in waiting:
                take.finished = True
        error = errors.CancelledError(None, None, f"{self.kind} '{self.name}' was reset or its session was closed")
        for take in waiting:
            _deregister(take)
            take.done(error)

    # -- waiting takes ---------------------------------------------------------------------------
    def _flush_locked(self) -> list:
        finished = []
        while self._takes and self.counter >= self._takes[0].num_required:
            take = self._takes.popleft()
            take.finished = True
            self.global_step += 1  # a take advances the step: older gradients are now stale
            result = self._result()
            self.counter = 0
            finished.append((take, result))
        return finished

    def _cancel(self, take: _Take) -> None:
        with self._lock:
            if take.finished:
                return
            take.finished = True
            take.token = None  # the manager already dropped its callback
            self._takes.remove(take)
            finished = self._flush_locked()  # a withdrawn head may unblock those behind it
        take.done(errors.CancelledError(None, None, "TakeGrad operation was cancelled"))
        _finish(finished)


def _deregister(take: _Take) -> None:
    if take.token is not None:
        take.cancellation.deregister(take.token)
        take.token = None


def _finish(finished: list) -> None:
    for take, result in finished:
        _deregister(take)
        take.done(result)


class DenseAccumulator(AccumulatorResource):
    """Sums whole tensors of the accumulator's shape."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sum: Optional[np.ndarray] = None

    def _validate(self, grad: np.ndarray) -> None:
        if self.counter > 0 and self._sum is not None and self._sum.shape != grad.shape:
            raise invalid(f"Shape mismatch: expected {_format(self._sum.shape)}, got {_format(grad.shape)}")
        shape = self.shape
        if shape is not None and (len(shape) != grad.ndim or any(
                d is not None and d != g for d, g in zip(shape, grad.shape))):
            raise invalid(f"Shape mismatch: expected {format_partial(shape)}, got {_format(grad.shape)}")

    def _start(self, grad: np.ndarray) -> None:
        self._sum = np.array(grad, dtype=self.dtype, copy=True)

    def _add(self, grad: np.ndarray) -> None:
        assert self._sum is not None
        self._sum += grad

    def _result(self) -> np.ndarray:
        total, self._sum = self._sum, None
        assert total is not None
        return self._divide(total, self.counter) if self.mean else total


class SparseAccumulator(AccumulatorResource):
    """Sums IndexedSlices (indices, values, dense shape) by index, counting each row's
    contributions; a take returns (indices, values, shape) with shape[0] from the accumulator's
    shape (-1 when it has no dims) and the rest from the values."""

    kind = "SparseConditionalAccumulator"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._indices = np.zeros(0, np.int64)
        self._values: Optional[np.ndarray] = None
        self._counts = np.zeros(0, np.int64)

    def _validate(self, grad: tuple) -> None:
        indices, values, dense_shape = grad
        shape = self.shape
        rank = -1 if shape is None else len(shape)
        if dense_shape is not None:
            if rank > dense_shape.size:
                raise invalid(f"Shape mismatch: expected shape rank at least {rank}, got {dense_shape.size}")
            for i in range(max(rank, 0)):
                if shape[i] is not None and shape[i] != int(dense_shape[i]):  # type: ignore[index]
                    raise invalid(f"Shape mismatch: expected shape dim {i} to be {shape[i]}, got "  # type: ignore
                                  f"{int(dense_shape[i])}")
        if rank > 0 and shape[0] is not None and indices.ndim > 0:  # type: ignore[index]
            over = np.flatnonzero(indices >= shape[0])  # type: ignore[index]
            if over.size:
                i = int(over[0])
                raise invalid(f"Shape mismatch: index of slice {i} exceeded limits of shape; index is "
                              f"{int(indices[i])} exceeded {shape[0]}")  # type: ignore[index]
        if self.counter > 0 and self._values is not None:
            if self._values.ndim != values.ndim:
                raise invalid(f"Shape mismatch: expected values rank {self._values.ndim}, got {values.ndim}")
            for i in range(1, values.ndim):
                if self._values.shape[i] != values.shape[i]:
                    raise invalid(f"Shape mismatch: expected values dim {i} to be {self._values.shape[i]}, "
                                  f"got {values.shape[i]}")
        else:
            if rank > values.ndim:
                raise invalid(f"Shape mismatch: expected values rank at least {rank}, got {values.ndim}")
            for i in range(1, max(rank, 0)):
                if shape[i] is not None and shape[i] != values.shape[i]:  # type: ignore[index]
                    raise invalid(f"Shape mismatch: expected values dim {i} to be {shape[i]}, got "  # type: ignore
                                  f"{values.shape[i]}")

    def _start(self, grad: tuple) -> None:
        indices, values, _ = grad
        self._indices = np.array(indices, np.int64, copy=True)
        self._values = np.array(values, self.dtype, copy=True)
        self._counts = np.ones(self._indices.size, np.int64)

    def _add(self, grad: tuple) -> None:
        """TF's merge of two index lists walked in step (as SparseAdd): equal indices are added
        and counted, others copied, in the order the walk meets them."""
        indices, values, _ = grad
        a, b = self._indices.tolist(), indices.tolist()
        i = j = 0
        take_a, take_b, out_a, out_b, merged = [], [], [], [], []
        n = 0
        while i < len(a) or j < len(b):
            if j == len(b) or (i < len(a) and a[i] < b[j]):
                take_a.append(i), out_a.append(n), merged.append(a[i])
                i += 1
            elif i == len(a) or a[i] > b[j]:
                take_b.append(j), out_b.append(n), merged.append(b[j])
                j += 1
            else:
                take_a.append(i), out_a.append(n), take_b.append(j), out_b.append(n), merged.append(a[i])
                i += 1
                j += 1
            n += 1
        assert self._values is not None
        total = np.zeros((n,) + values.shape[1:], self.dtype)
        counts = np.zeros(n, np.int64)
        total[out_a] = self._values[take_a]
        counts[out_a] = self._counts[take_a]
        total[out_b] += values[take_b]
        counts[out_b] += 1
        self._indices, self._values, self._counts = np.array(merged, np.int64), total, counts

    def _result(self) -> tuple:
        values = self._values
        assert values is not None
        if self.mean:
            counts = self._counts.reshape((-1,) + (1,) * (values.ndim - 1))
            values = self._divide(values, counts)
        rank = -1 if self.shape is None else len(self.shape)
        first = (-1 if self.shape[0] is None else self.shape[0]) if rank > 0 else -1  # type: ignore[index]
        shape = np.array([first] + list(values.shape[1:]), np.int64)
        result = (self._indices, values, shape)
        self._indices, self._values, self._counts = np.zeros(0, np.int64), None, np.zeros(0, np.int64)
        return result
