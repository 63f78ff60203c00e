"""The run-time datasets behind tf.data's variant tensors: each dataset op's kernel makes one
of these (an iterator factory); an iterator resource asks it for an iterator.

An iterator's `get_next(step)` returns the next element (a tuple of arrays, one per flat
component) or None at the end. `step` is the step that asked (so map and filter bodies share
its cancellation and deadline); iterators that work ahead on their own threads (prefetch) use
a step of their own from the `IteratorContext`, which the iterator resource cancels when it is
re-initialized or its session closes.
"""
from __future__ import annotations

import collections
import csv
import gzip
import queue
import threading
import zlib
from typing import Any, Callable, Iterator, Optional, Sequence

import numpy as np

from tensorweave.framework import errors
from tensorweave.lib import tf_record
from tensorweave.lib.file_io import open_file

Element = tuple


def own_step(origin: Any) -> Any:
    """A step of an iterator's own for work ahead of requests (prefetch): the session's state,
    no deadline, its own cancellation."""
    return type(origin)([], origin.session_state, origin.rendezvous)


class IteratorContext:
    """What the iterators of one initialization share: a step for work on background threads,
    and the stop signal."""

    def __init__(self, step: Any, make_step: Callable[[Any], Any]) -> None:
        self.origin = step
        self._make_step = make_step
        self.stopped = threading.Event()
        self._steps: list = []
        self._lock = threading.Lock()

    def background_step(self) -> Any:
        step = self._make_step(self.origin)
        with self._lock:
            self._steps.append(step)
            if self.stopped.is_set():
                step.cancel(errors.CancelledError(None, None, "Iterator was closed"))
        return step

    def stop(self) -> None:
        self.stopped.set()
        with self._lock:
            steps = list(self._steps)
        for step in steps:
            step.cancel(errors.CancelledError(None, None, "Iterator was closed"))


class DatasetIterator:
    def get_next(self, step: Any) -> Optional[Element]:
        raise NotImplementedError  # every dataset's iterator overrides it

    def close(self) -> None:
        """Releases threads and files (a prefetching iterator stops its worker)."""


class Dataset:
    """A dataset value: `make_iterator(ictx)` starts a fresh pass over its elements.
    `never_waits`: producing an element only computes (no thread hand-over, no Python callback,
    no queue), so a get_next may run it on the requesting thread."""

    never_waits = False

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        raise NotImplementedError  # every dataset overrides it


class _GenIterator(DatasetIterator):
    """An iterator over a Python generator of elements that needs no step."""

    def __init__(self, gen: Iterator[Element]) -> None:
        self._gen = gen

    def get_next(self, step: Any) -> Optional[Element]:
        return next(self._gen, None)


# ---------------------------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------------------------
class TensorDataset(Dataset):
    never_waits = True

    def __init__(self, components: Sequence[Any]) -> None:
        self.components = tuple(components)

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        return _GenIterator(iter([self.components]))


class TensorSliceDataset(Dataset):
    never_waits = True

    def __init__(self, components: Sequence[Any]) -> None:
        self.components = tuple(np.asarray(c) for c in components)
        sizes = {c.shape[0] if c.ndim else None for c in self.components}
        if None in sizes:
            raise errors.InvalidArgumentError(None, None, "Components of a TensorSliceDataset must have rank >= 1")
        if len(sizes) != 1:
            raise errors.InvalidArgumentError(
                None, None, "Expected all components to have the same size in dimension 0, got "
                f"{[c.shape[0] for c in self.components]}")
        self.size = sizes.pop()

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        comps = self.components
        return _GenIterator(tuple(c[i, ...] for c in comps) for i in range(self.size))


class RangeDataset(Dataset):
    never_waits = True

    def __init__(self, start: int, stop: int, step: int) -> None:
        if step == 0:
            raise errors.InvalidArgumentError(None, None, "step must be a non-zero integer.")
        self.range = range(int(start), int(stop), int(step))

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        return _GenIterator((np.int64(i),) for i in self.range)


def _lines(path: str, compression: str) -> Iterator[Element]:
    data = _read_all(path, compression)
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    for line in lines:
        yield (np.array(line[:-1] if line.endswith(b"\r") else line, dtype=object),)


def _read_all(path: str, compression: str) -> bytes:
    with open_file(path, "rb") as f:
        data = f.read()
    if compression == "GZIP":
        return gzip.decompress(data)
    if compression == "ZLIB":
        return zlib.decompress(data)
    return data


class FileDataset(Dataset):
    never_waits = True

    """TextLineDataset, TFRecordDataset, FixedLengthRecordDataset: records of each file in turn."""

    def __init__(self, kind: str, filenames: Sequence[Any], compression: str, **extra: int) -> None:
        self.kind = kind
        self.filenames = [f.decode() if isinstance(f, bytes) else str(f) for f in np.asarray(filenames).ravel()]
        self.compression = compression
        self.extra = extra

    def _records(self, path: str) -> Iterator[Element]:
        if self.kind == "text":
            return _lines(path, self.compression)
        if self.kind == "tfrecord":
            return ((np.array(r, dtype=object),) for r in
                    tf_record.tf_record_iterator(path, tf_record.TFRecordOptions(self.compression or None)))
        return self._fixed(path)

    def _fixed(self, path: str) -> Iterator[Element]:
        data = _read_all(path, self.compression)
        header, footer, size, hop = (self.extra["header_bytes"], self.extra["footer_bytes"],
                                     self.extra["record_bytes"], self.extra["hop_bytes"] or self.extra["record_bytes"])
        body = data[header:len(data) - footer]
        pos = 0
        while pos + size <= len(body):
            yield (np.array(body[pos:pos + size], dtype=object),)
            pos += hop

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        def gen() -> Iterator[Element]:
            for path in self.filenames:
                yield from self._records(path)
        return _GenIterator(gen())


class CsvDataset(Dataset):
    """CsvDataset: one element per CSV record (after an optional header line per file), one
    component per selected column; an empty field (or `na_value`) takes its column's default,
    which a required column (an empty default) does not have."""

    never_waits = True

    def __init__(self, filenames: Sequence[Any], compression: str, header: bool, delim: str, quote: bool,
                 na_value: str, select_cols: Sequence[int], defaults: Sequence[Any]) -> None:
        self.files = FileDataset("text", filenames, compression)
        self.header, self.delim, self.quote, self.na_value = header, delim, quote, na_value
        self.select_cols = list(select_cols)
        self.defaults = [np.asarray(d) for d in defaults]
        if self.select_cols and (sorted(set(self.select_cols)) != self.select_cols or self.select_cols[0] < 0):
            raise errors.InvalidArgumentError(None, None, "select_cols is not sorted in ascending order or has "
                                              "duplicates or negative values")

    def _parse(self, line: bytes) -> Element:
        text = line.decode("utf-8")
        dialect = dict(delimiter=self.delim, quotechar='"', quoting=csv.QUOTE_MINIMAL) if self.quote else \
            dict(delimiter=self.delim, quoting=csv.QUOTE_NONE)
        fields = next(csv.reader([text], **dialect), [""])  # type: ignore[call-overload]
        columns = self.select_cols or list(range(len(self.defaults)))
        if len(columns) != len(self.defaults):
            raise errors.InvalidArgumentError(None, None, "Expect the same number of defaults as selected columns")
        out = []
        for i, (col, default) in enumerate(zip(columns, self.defaults)):
            if col >= len(fields):
                raise errors.InvalidArgumentError(None, None, f"Expect {len(columns)} fields but have "
                                                  f"{len(fields)} in record")
            field = fields[col]
            if field == "" or field == self.na_value:
                if default.size == 0:
                    raise errors.InvalidArgumentError(None, None, f"Field {i} is required but missing in record!")
                out.append(default.reshape(-1)[0:1].reshape(()))
                continue
            out.append(_convert_field(field, default.dtype, i))
        return tuple(out)

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        ds = self

        def gen() -> Iterator[Element]:
            for path in ds.files.filenames:
                lines = _lines(path, ds.files.compression)
                if ds.header:
                    next(lines, None)
                for (line,) in lines:
                    yield ds._parse(line[()])
        return _GenIterator(gen())


def _convert_field(field: str, dtype: Any, index: int) -> np.ndarray:
    try:
        if dtype.kind == "O":
            return np.array(field.encode(), dtype=object)
        if dtype.kind == "i":
            return np.array(int(field), dtype=dtype)
        return np.array(float(field), dtype=dtype)
    except (ValueError, OverflowError):
        kind = "int" if dtype.kind == "i" else "float"
        raise errors.InvalidArgumentError(None, None, f"Field {index} in record is not a valid {kind}: {field}") \
            from None


class GeneratorDataset(Dataset):
    """from_generator: elements of a Python generator, converted to the declared dtypes."""

    def __init__(self, make: Callable[[], Any], flatten: Callable[[Any], list]) -> None:
        self.make = make
        self.flatten = flatten

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        gen = iter(self.make())
        return _GenIterator(tuple(self.flatten(v)) for v in gen)


# ---------------------------------------------------------------------------------------------
# Transformations
# ---------------------------------------------------------------------------------------------
class _Wrap(DatasetIterator):
    def __init__(self, inner: DatasetIterator) -> None:
        self.inner = inner

    def close(self) -> None:
        self.inner.close()


class ZipDataset(Dataset):
    def __init__(self, inputs: Sequence[Dataset]) -> None:
        self.inputs = list(inputs)
        self.never_waits = all(d.never_waits for d in self.inputs)

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        its = [d.make_iterator(ictx) for d in self.inputs]

        class _Zip(DatasetIterator):
            def get_next(self, step: Any) -> Optional[Element]:
                out: tuple = ()
                for it in its:
                    e = it.get_next(step)
                    if e is None:
                        return None
                    out += e
                return out

            def close(self) -> None:
                for it in its:
                    it.close()
        return _Zip()


class ConcatenateDataset(Dataset):
    def __init__(self, first: Dataset, second: Dataset) -> None:
        self.parts = (first, second)
        self.never_waits = all(d.never_waits for d in self.parts)

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        parts = self.parts

        class _Concat(DatasetIterator):
            def __init__(self) -> None:
                self.index, self.it = 0, parts[0].make_iterator(ictx)

            def get_next(self, step: Any) -> Optional[Element]:
                while True:
                    e = self.it.get_next(step)
                    if e is not None or self.index == len(parts) - 1:
                        return e
                    self.it.close()
                    self.index += 1
                    self.it = parts[self.index].make_iterator(ictx)

            def close(self) -> None:
                self.it.close()
        return _Concat()


class MapDataset(Dataset):
    """map (and its parallel form, `num_parallel_calls` workers keeping the input order):
    `run(step, args) -> outputs` runs the map function."""

    def __init__(self, inner: Dataset, run: Callable[[Any, list], list], captured: Sequence[Any],
                 parallel: int = 1, pure: bool = False) -> None:
        self.inner, self.run, self.captured, self.parallel = inner, run, list(captured), parallel
        self.never_waits = inner.never_waits and pure and parallel <= 1

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        inner, run, captured = self.inner.make_iterator(ictx), self.run, self.captured

        class _Map(_Wrap):
            def get_next(self, step: Any) -> Optional[Element]:
                e = self.inner.get_next(step)
                if e is None:
                    return None
                try:
                    return tuple(run(step, list(e) + captured))
                except errors.OutOfRangeError:
                    return None  # the function may end the iteration early (as TF's map)
        if self.parallel <= 1:
            return _Map(inner)
        return _ParallelMap(inner, run, captured, self.parallel)


class _ParallelMap(_Wrap):
    """Up to `parallel` elements mapped at once on a pool of worker threads (stopped when the
    iterator closes); results in input order."""

    def __init__(self, inner: DatasetIterator, run: Callable[[Any, list], list], captured: list,
                 parallel: int) -> None:
        super().__init__(inner)
        self.run, self.captured, self.parallel = run, captured, parallel
        self.pending: collections.deque = collections.deque()
        self.ended = False
        self.work: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self.workers: list = []

    def _start(self, step: Any, element: Element) -> dict:
        slot: dict = {"done": threading.Event()}
        if len(self.workers) < self.parallel:  # the pool grows to `parallel` threads
            worker = threading.Thread(target=self._work, daemon=True, name="tf.data parallel map")
            self.workers.append(worker)
            worker.start()
        self.work.put((slot, step, element))
        return slot

    def _work(self) -> None:
        while True:
            item = self.work.get()
            if item is None:
                return
            slot, step, element = item
            try:
                slot["value"] = tuple(self.run(step, list(element) + self.captured))
            except BaseException as err:  # delivered to the consumer, in order
                slot["error"] = err
            slot["done"].set()

    def close(self) -> None:
        for _ in self.workers:
            self.work.put(None)
        self.workers = []
        super().close()

    def get_next(self, step: Any) -> Optional[Element]:
        while not self.ended and len(self.pending) < self.parallel:
            e = self.inner.get_next(step)
            if e is None:
                self.ended = True
                break
            self.pending.append(self._start(step, e))
        if not self.pending:
            return None
        slot = self.pending.popleft()
        while not slot["done"].wait(0.05):
            stop = step.interrupted()
            if stop is not None:
                raise stop
        if "error" in slot:
            raise slot["error"]
        value: Element = slot["value"]
        return value


class FlatMapDataset(Dataset):
    """flat_map and interleave: `run` maps an input element to a dataset; the elements of
    `cycle_length` such datasets are taken `block_length` at a time in turn (TF's
    InterleaveDataset order; flat_map is cycle_length 1)."""

    def __init__(self, inner: Dataset, run: Callable[[Any, list], list], captured: Sequence[Any],
                 cycle_length: int = 1, block_length: int = 1) -> None:
        if cycle_length <= 0 or block_length <= 0:
            raise errors.InvalidArgumentError(None, None, "cycle_length and block_length must be greater than zero.")
        self.inner, self.run, self.captured = inner, run, list(captured)
        self.cycle, self.block = cycle_length, block_length

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        ds = self

        class _Interleave(_Wrap):
            def __init__(self, inner: DatasetIterator) -> None:
                super().__init__(inner)
                self.current: list = [None] * ds.cycle
                self.index = self.block_index = self.open = 0
                self.end_of_input = False

            def _advance(self) -> None:
                self.block_index = 0
                self.index = (self.index + 1) % ds.cycle

            def get_next(self, step: Any) -> Optional[Element]:
                while not self.end_of_input or self.open > 0:
                    it = self.current[self.index]
                    if it is not None:
                        e = it.get_next(step)
                        if e is not None:
                            self.block_index += 1
                            if self.block_index == ds.block:
                                self._advance()
                            return e
                        it.close()
                        self.current[self.index] = None
                        self.open -= 1
                        self._advance()
                    elif not self.end_of_input:
                        e = self.inner.get_next(step)
                        if e is None:
                            self.end_of_input = True
                            continue
                        value = ds.run(step, list(e) + ds.captured)[0]
                        dataset = value[()] if type(value) is np.ndarray else value
                        self.current[self.index] = dataset.make_iterator(ictx)
                        self.open += 1
                    else:
                        self._advance()
                return None

            def close(self) -> None:
                for it in self.current:
                    if it is not None:
                        it.close()
                self.inner.close()
        return _Interleave(self.inner.make_iterator(ictx))


class FilterDataset(Dataset):
    def __init__(self, inner: Dataset, run: Callable[[Any, list], list], captured: Sequence[Any],
                 pure: bool = False) -> None:
        self.inner, self.run, self.captured = inner, run, list(captured)
        self.never_waits = inner.never_waits and pure

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        run, captured = self.run, self.captured

        class _Filter(_Wrap):
            def get_next(self, step: Any) -> Optional[Element]:
                while True:
                    e = self.inner.get_next(step)
                    if e is None:
                        return None
                    keep = np.asarray(run(step, list(e) + captured)[0])
                    if keep.shape != ():
                        raise errors.InvalidArgumentError(
                            None, None, "Filter predicate `predicate` must return a scalar bool.")
                    if bool(keep):
                        return e
        return _Filter(self.inner.make_iterator(ictx))


def _stack(rows: list, padded_shapes: Optional[list], padding_values: Optional[list]) -> Element:
    out = []
    for i, column in enumerate(zip(*rows)):
        arrays = [np.asarray(v) for v in column]
        if padded_shapes is None:
            odd = next((j for j, a in enumerate(arrays) if a.shape != arrays[0].shape), None)
            if odd is not None:
                raise errors.InvalidArgumentError(
                    None, None, f"Cannot batch tensors with different shapes in component {i}. First element had "
                    f"shape {list(arrays[0].shape)} and element {odd} had shape {list(arrays[odd].shape)}.")
            out.append(np.stack(arrays))
            continue
        want = padded_shapes[i]
        dims = [max(a.shape[d] for a in arrays) if w is None or w < 0 else w for d, w in enumerate(want)]
        pad = padding_values[i] if padding_values is not None else None
        batch = np.full([len(arrays)] + dims, pad if pad is not None else
                        (b"" if arrays[0].dtype == object else 0), dtype=arrays[0].dtype)
        for j, a in enumerate(arrays):
            if any(s > d for s, d in zip(a.shape, dims)):
                raise errors.InvalidArgumentError(
                    None, None, f"Attempted to pad to a smaller size than the input element: {list(a.shape)} "
                    f"into {dims}")
            batch[(j,) + tuple(slice(0, s) for s in a.shape)] = a
        out.append(batch)
    return tuple(out)


class BatchDataset(Dataset):
    def __init__(self, inner: Dataset, batch_size: int, drop_remainder: bool,
                 padded_shapes: Optional[list] = None, padding_values: Optional[list] = None) -> None:
        if batch_size <= 0:
            raise errors.InvalidArgumentError(None, None, "Batch size must be greater than zero.")
        self.inner, self.size, self.drop = inner, batch_size, drop_remainder
        self.padded_shapes, self.padding_values = padded_shapes, padding_values
        self.never_waits = inner.never_waits

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        ds = self

        class _Batch(_Wrap):
            def get_next(self, step: Any) -> Optional[Element]:
                rows = []
                while len(rows) < ds.size:
                    e = self.inner.get_next(step)
                    if e is None:
                        break
                    rows.append(e)
                if not rows or (ds.drop and len(rows) < ds.size):
                    return None
                return _stack(rows, ds.padded_shapes, ds.padding_values)
        return _Batch(self.inner.make_iterator(ictx))


class UnbatchDataset(Dataset):
    def __init__(self, inner: Dataset) -> None:
        self.inner = inner
        self.never_waits = inner.never_waits

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        class _Unbatch(_Wrap):
            def __init__(self, inner: DatasetIterator) -> None:
                super().__init__(inner)
                self.rows: collections.deque = collections.deque()

            def get_next(self, step: Any) -> Optional[Element]:
                while not self.rows:
                    e = self.inner.get_next(step)
                    if e is None:
                        return None
                    arrays = [np.asarray(c) for c in e]
                    self.rows = collections.deque(tuple(a[i, ...] for a in arrays) for i in range(len(arrays[0])))
                return tuple(self.rows.popleft())
        return _Unbatch(self.inner.make_iterator(ictx))


class RepeatDataset(Dataset):
    def __init__(self, inner: Dataset, count: int) -> None:
        self.inner, self.count = inner, count
        self.never_waits = inner.never_waits

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        ds = self

        class _Repeat(DatasetIterator):
            def __init__(self) -> None:
                self.passes = 0
                self.it: Optional[DatasetIterator] = ds.inner.make_iterator(ictx) if ds.count != 0 else None
                self.yielded = False  # in the current pass

            def get_next(self, step: Any) -> Optional[Element]:
                while self.it is not None:
                    e = self.it.get_next(step)
                    if e is not None:
                        self.yielded = True
                        return e
                    self.it.close()
                    self.passes += 1
                    # an empty pass ends even an endless repeat (as TF's)
                    if (0 <= ds.count <= self.passes) or not self.yielded:
                        self.it = None
                        break
                    self.it, self.yielded = ds.inner.make_iterator(ictx), False
                return None

            def close(self) -> None:
                if self.it is not None:
                    self.it.close()
        return _Repeat()


class TakeDataset(Dataset):
    def __init__(self, inner: Dataset, count: int) -> None:
        self.inner, self.count = inner, count
        self.never_waits = inner.never_waits

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        count = self.count

        class _Take(_Wrap):
            taken = 0

            def get_next(self, step: Any) -> Optional[Element]:
                if 0 <= count <= self.taken:
                    return None
                self.taken += 1
                return self.inner.get_next(step)
        return _Take(self.inner.make_iterator(ictx))


class SkipDataset(Dataset):
    def __init__(self, inner: Dataset, count: int) -> None:
        self.inner, self.count = inner, count
        self.never_waits = inner.never_waits

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        count = self.count

        class _Skip(_Wrap):
            skipped = False

            def get_next(self, step: Any) -> Optional[Element]:
                if not self.skipped:
                    self.skipped = True
                    n = 0
                    while count < 0 or n < count:
                        if self.inner.get_next(step) is None:
                            return None
                        n += 1
                return self.inner.get_next(step)
        return _Skip(self.inner.make_iterator(ictx))


class ShardDataset(Dataset):
    def __init__(self, inner: Dataset, num_shards: int, index: int) -> None:
        if num_shards <= 0 or not 0 <= index < num_shards:
            raise errors.InvalidArgumentError(
                None, None, f"Index must be between 0 and {num_shards - 1} (currently index = {index}).")
        self.inner, self.n, self.index = inner, num_shards, index
        self.never_waits = inner.never_waits

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        ds = self

        class _Shard(_Wrap):
            pos = 0

            def get_next(self, step: Any) -> Optional[Element]:
                while True:
                    e = self.inner.get_next(step)
                    if e is None:
                        return None
                    i, self.pos = self.pos, self.pos + 1
                    if i % ds.n == ds.index:
                        return e
        return _Shard(self.inner.make_iterator(ictx))


class ShuffleDataset(Dataset):
    """A buffer of `buffer_size` elements; each output is a uniformly chosen buffer slot, which
    the next input element refills. Seeded passes are deterministic; with
    reshuffle_each_iteration each new pass (iterator) draws a different order."""

    def __init__(self, inner: Dataset, buffer_size: int, seed: int, seed2: int, reshuffle: bool) -> None:
        if buffer_size <= 0:
            raise errors.InvalidArgumentError(None, None, "buffer_size must be greater than zero.")
        self.inner, self.size, self.reshuffle = inner, buffer_size, reshuffle
        self.seeds = (seed, seed2) if (seed, seed2) != (0, 0) else tuple(np.random.randint(1, 2**31, size=2))
        self.passes = 0
        self.lock = threading.Lock()
        self.never_waits = inner.never_waits

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        with self.lock:
            epoch = self.passes if self.reshuffle else 0
            self.passes += 1
        rng = np.random.Generator(np.random.Philox(key=[int(self.seeds[0]), int(self.seeds[1])]).jumped(epoch))
        size = self.size

        class _Shuffle(_Wrap):
            def __init__(self, inner: DatasetIterator) -> None:
                super().__init__(inner)
                self.buffer: list = []
                self.draws: list = []
                self.ended = False

            def get_next(self, step: Any) -> Optional[Element]:
                while not self.ended and len(self.buffer) < size:
                    e = self.inner.get_next(step)
                    if e is None:
                        self.ended = True
                    else:
                        self.buffer.append(e)
                if not self.buffer:
                    return None
                if not self.draws:  # uniform draws in blocks: one NumPy call per 1024 elements
                    self.draws = rng.random(1024).tolist()
                i = int(self.draws.pop() * len(self.buffer))
                self.buffer[i], self.buffer[-1] = self.buffer[-1], self.buffer[i]
                return self.buffer.pop()
        return _Shuffle(self.inner.make_iterator(ictx))


class CacheDataset(Dataset):
    """cache(): the first complete pass is recorded (in memory; `filename` is accepted and the
    cache kept in memory too), later passes replay it."""

    def __init__(self, inner: Dataset) -> None:
        self.inner = inner
        self.cached: Optional[list] = None
        self.lock = threading.Lock()
        self.never_waits = inner.never_waits

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        ds = self
        with self.lock:
            cached = self.cached
        if cached is not None:
            return _GenIterator(iter(cached))

        class _Record(_Wrap):
            def __init__(self, inner: DatasetIterator) -> None:
                super().__init__(inner)
                self.seen: list = []

            def get_next(self, step: Any) -> Optional[Element]:
                e = self.inner.get_next(step)
                if e is None:
                    with ds.lock:
                        ds.cached = self.seen
                    return None
                self.seen.append(e)
                return e
        return _Record(self.inner.make_iterator(ictx))


class PrefetchDataset(Dataset):
    def __init__(self, inner: Dataset, buffer_size: int) -> None:
        self.inner, self.size = inner, buffer_size if buffer_size > 0 else 16

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        return _Prefetch(self.inner.make_iterator(ictx), self.size, ictx)


class _Prefetch(_Wrap):
    """Elements produced ahead on a background thread (its own step) into a bounded buffer;
    the thread stops when the iterator is closed (re-initialized, session closed)."""

    def __init__(self, inner: DatasetIterator, size: int, ictx: IteratorContext) -> None:
        super().__init__(inner)
        self.size, self.ictx = size, ictx
        self.buffer: collections.deque = collections.deque()
        self.cond = threading.Condition()
        self.finished = False
        self.stop = False
        self.thread: Optional[threading.Thread] = None

    def _work(self) -> None:
        step = self.ictx.background_step()
        while True:
            with self.cond:
                while len(self.buffer) >= self.size and not self.stop and not self.ictx.stopped.is_set():
                    self.cond.wait(0.1)
                if self.stop or self.ictx.stopped.is_set():
                    return
            try:
                e: Any = self.inner.get_next(step)
            except BaseException as err:  # handed to the consumer in order
                e = err
            with self.cond:
                if e is None:
                    self.finished = True
                else:
                    self.buffer.append(e)
                self.cond.notify_all()
                if e is None or isinstance(e, BaseException):
                    self.finished = True
                    return

    def get_next(self, step: Any) -> Optional[Element]:
        if self.thread is None:
            self.thread = threading.Thread(target=self._work, daemon=True, name="tf.data prefetch")
            self.thread.start()
        with self.cond:
            while not self.buffer and not self.finished:
                self.cond.wait(0.05)
                stop = step.interrupted()
                if stop is not None:
                    raise stop
            if not self.buffer:
                return None
            e = self.buffer.popleft()
            self.cond.notify_all()
        if isinstance(e, BaseException):
            raise e
        return e  # type: ignore[no-any-return]

    def close(self) -> None:
        with self.cond:
            self.stop = True
            self.cond.notify_all()
        self.inner.close()


class ChooseDataset(Dataset):
    """choose_from_datasets: each selector element names the input to take the next element
    from; an exhausted input's turns are skipped (TF's DirectedInterleaveDataset)."""

    def __init__(self, selector: Dataset, inputs: Sequence[Dataset]) -> None:
        self.selector, self.inputs = selector, list(inputs)
        self.never_waits = selector.never_waits and all(d.never_waits for d in self.inputs)

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        selector = self.selector.make_iterator(ictx)
        its: list = [d.make_iterator(ictx) for d in self.inputs]

        class _Choose(DatasetIterator):
            def get_next(self, step: Any) -> Optional[Element]:
                while any(it is not None for it in its):
                    choice = selector.get_next(step)
                    if choice is None:
                        return None
                    index = int(np.asarray(choice[0]))
                    if not 0 <= index < len(its):
                        raise errors.InvalidArgumentError(
                            None, None, f"Selector index out of range: {index} >= {len(its)}")
                    if its[index] is None:
                        continue
                    e = its[index].get_next(step)
                    if e is not None:
                        return e
                    its[index].close()
                    its[index] = None
                return None

            def close(self) -> None:
                selector.close()
                for it in its:
                    if it is not None:
                        it.close()
        return _Choose()


class RandomDataset(Dataset):
    never_waits = True

    """Endless uniformly random int64 values from a Philox stream (seeded: reproducible)."""

    def __init__(self, seed: int, seed2: int) -> None:
        self.seeds = (seed, seed2) if (seed, seed2) != (0, 0) else tuple(np.random.randint(1, 2**31, size=2))

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        rng = np.random.Generator(np.random.Philox(key=[int(self.seeds[0]), int(self.seeds[1])]))
        return _GenIterator(iter(lambda: (np.int64(rng.integers(0, 2**63 - 1)),), None))


class IgnoreErrorsDataset(Dataset):
    """ignore_errors: elements whose production fails are dropped."""

    def __init__(self, inner: Dataset) -> None:
        self.inner = inner
        self.never_waits = inner.never_waits

    def make_iterator(self, ictx: IteratorContext) -> DatasetIterator:
        class _Ignore(_Wrap):
            def get_next(self, step: Any) -> Optional[Element]:
                while True:
                    try:
                        return self.inner.get_next(step)
                    except errors.OpError as err:
                        if isinstance(err, errors.CancelledError) or step.cancellation.cancelled is not None:
                            raise
        return _Ignore(self.inner.make_iterator(ictx))


def single_element(dataset: Dataset, step: Any) -> Element:
    """The only element of `dataset` (TF's DatasetToSingleElement)."""
    ictx = IteratorContext(step, own_step)
    it = dataset.make_iterator(ictx)
    try:
        first = it.get_next(step)
        if first is None:
            raise errors.InvalidArgumentError(None, None, "Dataset was empty.")
        if it.get_next(step) is not None:
            raise errors.InvalidArgumentError(None, None, "Dataset had more than one element.")
        return first
    finally:
        it.close()
        ictx.stop()


def reduce_dataset(dataset: Dataset, step: Any, state: list, run: Callable[[Any, list], list],
                   captured: Sequence[Any]) -> list:
    """`state = run(state + element)` over every element (TF's ReduceDataset)."""
    ictx = IteratorContext(step, own_step)
    it = dataset.make_iterator(ictx)
    try:
        while True:
            e = it.get_next(step)
            if e is None:
                return state
            state = list(run(step, list(state) + list(e) + list(captured)))
    finally:
        it.close()
        ictx.stop()
