"""A queue's state, kept in its device's resource manager (white paper 4.6; OSDI 3.1, Figure 2).

Queue kernels are asynchronous (white paper 5.3): a step that must wait on a full or empty
queue leaves an *attempt* here, holding its `done` continuation, and returns its thread to the
executor. All waiting is in this one place: enqueue-side attempts (enqueue, enqueue_many and
close) and dequeue-side attempts each wait in arrival order, and after every change the queue
serves the head of each list for as long as they make progress, under its lock, as TF's
QueueBase does. Continuations run after the lock is released. An attempt is withdrawn when its
step is cancelled (session closed, RunOptions timeout, an error elsewhere in the step); a
dequeue_many that had already taken some elements puts them back at the front first.

Subclasses only say how elements are stored: FIFO order (as segments of the enqueued batches,
so enqueue_many/dequeue_many cost a few array operations, not one per element), random order
with a minimum kept back (RandomShuffleQueue), smallest priority first (PriorityQueue), and how
a batch is assembled (PaddingFIFOQueue pads to the longest element).
"""
from __future__ import annotations

import abc
import collections
import heapq
import itertools
import random
import sys
import threading
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import errors
from tensorweave.ops._util import invalid

# What serving an attempt achieved (TF's RunResult).
COMPLETE, PROGRESS, NO_PROGRESS = 0, 1, 2

Shape = Optional[tuple]  # a component shape: a tuple of ints (None for an unknown dim) or None


def format_shape(shape: Sequence[Any]) -> str:
    return "[" + ",".join("?" if d is None else str(d) for d in shape) + "]"


class Attempt:
    """One waiting request: `serve(attempt)` is called under the queue lock and returns
    COMPLETE, PROGRESS or NO_PROGRESS; `done(result_or_error)` is the step's continuation."""

    __slots__ = ("serve", "done", "cancellation", "token", "finished", "result", "error",
                 "batch", "rows", "count", "taken", "allow_small")

    def __init__(self, serve: Callable[["Attempt"], int], done: Callable[[Any], None]) -> None:
        self.serve = serve
        self.done = done
        self.cancellation: Any = None
        self.token: Optional[int] = None
        self.finished = False
        self.result: Any = ()  # no outputs: what enqueue and close deliver
        self.error: Optional[BaseException] = None
        self.batch: tuple = ()      # enqueue: one array per component, elements along axis 0
        self.rows = 0               # enqueue: elements in `batch`; dequeue_many: elements taken
        self.count = 0              # enqueue: elements added so far; dequeue_many: elements wanted
        self.taken: list = []       # dequeue_many: chunks taken so far
        self.allow_small = False

    def complete(self) -> None:
        if self.token is not None:
            self.cancellation.deregister(self.token)
        self.done(self.error if self.error is not None else self.result)


class QueueResource(abc.ABC):
    """State shared by every queue kind. `dtypes` are NumPy dtypes, `shapes` one entry per
    component (None when the queue was built without shapes)."""

    kind = "FIFOQueue"

    def __init__(self, name: str, dtypes: Sequence[Any], shapes: Optional[Sequence[Shape]],
                 capacity: int, definition: tuple = ()) -> None:
        self.name = name
        self.dtypes = [np.dtype(d) for d in dtypes]
        self.shapes: list[Shape] = list(shapes) if shapes else [None] * len(self.dtypes)
        self.capacity = capacity if capacity >= 0 else sys.maxsize
        self.definition = definition  # what a second op sharing this queue must agree with
        self.fully_defined = all(s is not None and None not in s for s in self.shapes)
        self.closed = False
        self.dropped = False
        self._lock = threading.Lock()
        self._enqueues: "collections.deque[Attempt]" = collections.deque()
        self._dequeues: "collections.deque[Attempt]" = collections.deque()

    # -- storage: each queue kind defines it ---------------------------------------------------
    # Elements move in *chunks*: one array per component with the elements along axis 0, so
    # enqueue_many and dequeue_many cost a few array operations rather than one per element.
    @abc.abstractmethod
    def size(self) -> int:
        """Number of elements stored."""

    @abc.abstractmethod
    def _push_rows(self, batch: tuple, start: int, stop: int) -> None:
        """Stores elements start..stop-1 of `batch`."""

    @abc.abstractmethod
    def _pop_one(self) -> tuple:
        """Removes and returns the next element (one array per component)."""

    @abc.abstractmethod
    def _pop_rows(self, k: int) -> tuple:
        """Removes the next k elements, as one chunk."""

    @abc.abstractmethod
    def _restore(self, chunks: list) -> None:
        """Puts back chunks a failed or cancelled dequeue_many had taken."""

    def _available(self) -> int:
        """How many elements a dequeue may take now."""
        return self.size()

    def assemble(self, chunks: list) -> tuple:
        """One batch tensor per component from the chunks of a dequeue_many."""
        if len(chunks) == 1:
            return chunks[0]
        if not chunks:
            return tuple(np.empty((0,) + tuple(d or 0 for d in (s or ())), dtype=t)
                         for s, t in zip(self.shapes, self.dtypes))
        return tuple(np.concatenate([c[i] for c in chunks]) for i in range(len(self.dtypes)))

    def shape_matches(self, expected: Shape, actual: tuple) -> bool:
        return expected is None or expected == actual

    # -- validation of incoming values (called by the enqueue kernels) ---------------------------
    def check_types(self, dtypes: Sequence[Any]) -> None:
        if len(dtypes) != len(self.dtypes):
            raise invalid(f"Wrong number of components in tuple. Expected {len(self.dtypes)}, got "
                           f"{len(dtypes)}")
        for i, (want, got) in enumerate(zip(self.dtypes, dtypes)):
            if np.dtype(got) != want:
                raise invalid(f"Type mismatch in tuple component {i}. Expected {_type_name(want)}, "
                               f"got {_type_name(got)}")

    def make_element(self, values: Sequence[Any]) -> tuple:
        """The queue's own copy of one element, shape-checked, as a batch of one."""
        batch = []
        for i, value in enumerate(values):
            array = value[None].copy() if type(value) is np.ndarray else \
                np.array(value, dtype=self.dtypes[i])[None]
            if not self.shape_matches(self.shapes[i], array.shape[1:]):
                raise invalid(f"Shape mismatch in tuple component {i}. Expected "
                               f"{format_shape(self.shapes[i])}, got {format_shape(array.shape[1:])}")
            batch.append(array)
        return tuple(batch)

    def split_batch(self, values: Sequence[Any]) -> tuple:
        """The queue's own copy of an enqueue_many batch, shape-checked."""
        arrays = [np.array(v, dtype=self.dtypes[i]) for i, v in enumerate(values)]
        for i, array in enumerate(arrays):
            if array.ndim == 0:
                raise invalid(f"Input tensor for tuple component {i} of an EnqueueMany must have a "
                               f"batch dimension (rank at least 1), got shape []")
        n = arrays[0].shape[0]
        for i, array in enumerate(arrays):
            if array.shape[0] != n:
                raise invalid("All input tensors must have the same size in the 0th dimension. "
                               f"Component {i} has {array.shape[0]}, and should have {n}")
            if not self.shape_matches(self.shapes[i], array.shape[1:]):
                raise invalid(f"Shape mismatch in tuple component {i}. Expected "
                               f"{format_shape((n,) + self.shapes[i])}, got {format_shape(array.shape)}")
        return tuple(arrays)

    # -- the operations (called by the kernels with the step's continuation) -------------------
    def enqueue(self, step: Any, done: Callable[[Any], None], batch: tuple) -> None:
        """Adds the elements of `batch` (from make_element or split_batch), waiting for room."""
        attempt = Attempt(self._serve_enqueue, done)
        attempt.batch, attempt.rows = batch, len(batch[0])
        self._submit(self._enqueues, attempt, step)

    def dequeue(self, step: Any, done: Callable[[Any], None]) -> None:
        self._submit(self._dequeues, Attempt(self._serve_dequeue, done), step)

    def dequeue_many(self, step: Any, done: Callable[[Any], None], n: int, allow_small: bool) -> None:
        attempt = Attempt(self._serve_dequeue_many, done)
        attempt.count = n
        attempt.allow_small = allow_small
        self._submit(self._dequeues, attempt, step)

    def close(self, step: Any, done: Callable[[Any], None], cancel_pending_enqueues: bool) -> None:
        if not cancel_pending_enqueues:
            # Waits behind the enqueues already pending, which still complete (TF's order).
            self._submit(self._enqueues, Attempt(self._serve_close, done), step)
            return
        cancelled = errors.CancelledError(None, None, "Enqueue operation was cancelled")
        with self._lock:
            finished = self._withdraw_all_locked(self._enqueues, cancelled)
            self.closed = True
            finished += self._flush_locked()
        _complete_all(finished)
        done(())

    def is_closed(self) -> bool:
        return self.closed

    def close_resource(self) -> None:
        """Its container was reset (or its session closed): fail everything still waiting."""
        error = errors.CancelledError(None, None, f"{self.kind} '{self.name}' was reset or its "
                                      "session was closed")
        with self._lock:
            self.dropped = self.closed = True
            finished = self._withdraw_all_locked(self._enqueues, error)
            finished += self._withdraw_all_locked(self._dequeues, error)
        _complete_all(finished)

    # -- serving attempts (all under the lock) ---------------------------------------------------
    def _serve_enqueue(self, attempt: Attempt) -> int:
        if self.closed:
            attempt.error = errors.CancelledError(None, None, f"{self.kind} '{self.name}' is closed.")
            return COMPLETE
        start = attempt.count
        room = min(self.capacity - self.size(), attempt.rows - start)
        if room > 0:
            self._push_rows(attempt.batch, start, start + room)
            attempt.count = start + room
        if attempt.count == attempt.rows:
            return COMPLETE
        return PROGRESS if room > 0 else NO_PROGRESS

    def _serve_close(self, attempt: Attempt) -> int:
        if self.closed:
            attempt.error = errors.CancelledError(None, None, f"Queue '{self.name}' is already closed.")
        self.closed = True
        return COMPLETE

    def _insufficient(self, requested: int) -> errors.OutOfRangeError:
        return errors.OutOfRangeError(
            None, None, f"{self.kind} '{self.name}' is closed and has insufficient elements "
            f"(requested {requested}, current size {self.size()})")

    def _serve_dequeue(self, attempt: Attempt) -> int:
        if self._available() > 0:
            attempt.result = self._pop_one()
            return COMPLETE
        if self.closed:
            attempt.error = self._insufficient(1)
            return COMPLETE
        return NO_PROGRESS

    def _serve_dequeue_many(self, attempt: Attempt) -> int:
        wanted, have = attempt.count, attempt.rows
        if self.closed and self.size() < wanted - have:
            # Not enough will ever come: give back what was taken, then a short batch or an error.
            self._restore(attempt.taken)
            attempt.taken, attempt.rows = [], 0
            if attempt.allow_small and self.size() > 0:
                attempt.result = self._pop_rows(self.size())
            else:
                attempt.error = self._insufficient(wanted)
            return COMPLETE
        take = min(self._available(), wanted - have)
        if take > 0:
            attempt.taken.append(self._pop_rows(take))
            attempt.rows = have + take
        if attempt.rows == wanted:
            attempt.result, attempt.taken = self.assemble(attempt.taken), []
            return COMPLETE
        return PROGRESS if take > 0 else NO_PROGRESS

    # -- the waiting lists -----------------------------------------------------------------------
    def _submit(self, attempts: "collections.deque[Attempt]", attempt: Attempt, step: Any) -> None:
        with self._lock:
            attempts.append(attempt)
            finished = self._flush_locked()
            if not attempt.finished:
                manager = step.cancellation
                token = manager.register(lambda err: self._cancel(attempts, attempt, err))
                if token is None:  # the step is already cancelled
                    attempts.remove(attempt)
                    finished += self._withdraw_locked(attempt, manager.cancelled)
                    finished += self._flush_locked()
                else:
                    attempt.cancellation, attempt.token = manager, token
        _complete_all(finished)

    def _flush_locked(self) -> list:
        """Serves the head of each waiting list while anything changes (TF's FlushUnlocked)."""
        finished: list = []
        changed = True
        while changed:
            changed = False
            for attempts in (self._enqueues, self._dequeues):
                while attempts:
                    attempt = attempts[0]
                    outcome = attempt.serve(attempt)
                    if outcome == NO_PROGRESS:
                        break
                    changed = True
                    if outcome == PROGRESS:
                        break
                    attempts.popleft()
                    attempt.finished = True
                    finished.append(attempt)
        return finished

    def _withdraw_locked(self, attempt: Attempt, error: Any) -> list:
        attempt.finished = True
        if attempt.taken:
            self._restore(attempt.taken)
            attempt.taken, attempt.rows = [], 0
        attempt.error = error if isinstance(error, BaseException) else errors.CancelledError(
            None, None, "Queue operation was cancelled")
        return [attempt]

    def _withdraw_all_locked(self, attempts: "collections.deque[Attempt]", error: BaseException) -> list:
        finished: list = []
        while attempts:
            finished += self._withdraw_locked(attempts.popleft(), error)
        return finished

    def _cancel(self, attempts: "collections.deque[Attempt]", attempt: Attempt, error: BaseException) -> None:
        with self._lock:
            if attempt.finished:
                return
            attempts.remove(attempt)
            attempt.token = None  # the manager already dropped its callback
            finished = self._withdraw_locked(attempt, error)
            finished += self._flush_locked()  # a withdrawn head may unblock those behind it
        _complete_all(finished)


def _complete_all(attempts: list) -> None:
    for attempt in attempts:
        attempt.complete()


def _type_name(dtype: Any) -> str:
    dtype = np.dtype(dtype)
    return "string" if dtype == np.object_ else dtype.name


# ---------------------------------------------------------------------------------------------
# Queue kinds
# ---------------------------------------------------------------------------------------------
class FIFOQueueResource(QueueResource):
    """First in, first out. Stored as segments of enqueued batches (a batch array per
    component plus the range still queued), so batches go in and out without splitting."""

    kind = "FIFOQueue"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._segments: "collections.deque[list]" = collections.deque()  # [batch, start, stop]
        self._size = 0

    def size(self) -> int:
        return self._size

    def _push_rows(self, batch: tuple, start: int, stop: int) -> None:
        self._segments.append([batch, start, stop])
        self._size += stop - start

    def _pop_one(self) -> tuple:
        segment = self._segments[0]
        batch, i = segment[0], segment[1]
        segment[1] = i + 1
        if i + 1 == segment[2]:
            self._segments.popleft()
        self._size -= 1
        return tuple(a[i, ...] for a in batch)

    def _pop_rows(self, k: int) -> tuple:
        chunks = []
        self._size -= k
        while k:
            segment = self._segments[0]
            batch, i, stop = segment
            take = min(k, stop - i)
            whole = i == 0 and take == len(batch[0])
            chunks.append(batch if whole else tuple(a[i:i + take] for a in batch))
            k -= take
            if i + take == stop:
                self._segments.popleft()
            else:
                segment[1] = i + take
        return self.assemble(chunks)

    def _restore(self, chunks: list) -> None:
        for chunk in reversed(chunks):
            rows = len(chunk[0])
            self._segments.appendleft([chunk, 0, rows])
            self._size += rows


class PaddingFIFOQueueResource(FIFOQueueResource):
    """FIFO whose shapes may have unknown dimensions; a batch pads every element to the
    largest size in each such dimension, with zeros (empty strings for strings)."""

    kind = "PaddingFIFOQueue"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fully_defined = True  # dequeue_many works: unknown dimensions are padded

    def shape_matches(self, expected: Shape, actual: tuple) -> bool:
        return expected is None or (len(expected) == len(actual) and all(
            e is None or e == a for e, a in zip(expected, actual)))

    def assemble(self, chunks: list) -> tuple:
        if len(chunks) <= 1:  # one chunk came from one enqueue: its elements already agree
            return super().assemble(chunks)
        out = []
        for i, dtype in enumerate(self.dtypes):
            parts = [c[i] for c in chunks]
            rank = len(self.shapes[i]) if self.shapes[i] is not None else parts[0].ndim - 1
            dims = tuple(max((p.shape[d + 1] for p in parts), default=0) for d in range(rank))
            batch = np.full((sum(len(p) for p in parts),) + dims, b"" if dtype == np.object_ else 0,
                            dtype=dtype)
            row = 0
            for part in parts:
                batch[(slice(row, row + len(part)),) + tuple(slice(0, s) for s in part.shape[1:])] = part
                row += len(part)
            out.append(batch)
        return tuple(out)


class ElementQueueResource(QueueResource):
    """A queue kind that keeps elements one by one (random or priority order)."""

    @abc.abstractmethod
    def _push(self, element: tuple) -> None:
        """Stores one element (one array per component)."""

    @abc.abstractmethod
    def _pop(self) -> tuple:
        """Removes and returns the next element."""

    def _push_rows(self, batch: tuple, start: int, stop: int) -> None:
        for j in range(start, stop):
            self._push(tuple(a[j, ...] for a in batch))

    def _pop_one(self) -> tuple:
        return self._pop()

    def _pop_rows(self, k: int) -> tuple:
        elements = [self._pop() for _ in range(k)]
        return tuple(np.stack([e[i] for e in elements]) if elements else
                     np.empty((0,) + tuple(d or 0 for d in (s or ())), dtype=t)
                     for i, (s, t) in enumerate(zip(self.shapes, self.dtypes)))

    def _restore(self, chunks: list) -> None:
        for chunk in chunks:
            self._push_rows(chunk, 0, len(chunk[0]))


class RandomShuffleQueueResource(ElementQueueResource):
    """Dequeues a uniformly random element, keeping at least `min_after_dequeue` elements
    back until the queue is closed (so batches are well mixed)."""

    kind = "RandomShuffleQueue"

    def __init__(self, *args: Any, min_after_dequeue: int = 0, rng: Optional[Any] = None,
                 **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if min_after_dequeue >= self.capacity:
            raise invalid(f"min_after_dequeue {min_after_dequeue} must be < capacity {self.capacity}")
        self.min_after_dequeue = min_after_dequeue
        self._rng = rng or random.Random()
        self._elements: list[tuple] = []

    def size(self) -> int:
        return len(self._elements)

    def _push(self, element: tuple) -> None:
        self._elements.append(element)

    def _pop(self) -> tuple:
        elements = self._elements
        i = self._rng.randrange(len(elements))
        elements[i], elements[-1] = elements[-1], elements[i]
        return elements.pop()

    def _available(self) -> int:
        if self.closed:
            return len(self._elements)
        return max(len(self._elements) - self.min_after_dequeue, 0)


class PriorityQueueResource(ElementQueueResource):
    """Dequeues the element with the smallest int64 priority (component 0) first; equal
    priorities leave in arrival order."""

    kind = "PriorityQueue"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._heap: list = []
        self._arrival = itertools.count()

    def size(self) -> int:
        return len(self._heap)

    def _push(self, element: tuple) -> None:
        heapq.heappush(self._heap, (int(element[0]), next(self._arrival), element))

    def _pop(self) -> tuple:
        return heapq.heappop(self._heap)[2]
