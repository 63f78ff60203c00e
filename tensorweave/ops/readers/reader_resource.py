"""A reader's state (white paper 4.5, input operations): the current work unit (usually a file
name) taken from a queue of work, the position inside it, and counters.

Reads are served in arrival order by one *driver* at a time. When the current work unit is
used up, the driver asks the work queue for the next one with an asynchronous dequeue and
returns its thread; the dequeue's continuation resumes the driver, so a read waiting for work
holds no thread (white paper 5.3). Records are read from files outside the waiting list's lock,
under the reader's state lock, which the synchronous reader ops (reset, counters, state)
also take.

Reader kinds say how a work unit becomes records: lines of a text file, fixed-length records,
the whole file, TFRecord records, or the work string itself.
"""
from __future__ import annotations

import abc
import collections
import io
import os
import threading
import zlib
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.lib import file_io
from tensorweave.lib.sstable import encode_varint, read_varint
from tensorweave.lib.tf_record import RecordReader

_NOTHING = object()  # no work-queue result has arrived


def _string_array(values: list) -> np.ndarray:
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def _string_scalar(value: bytes) -> np.ndarray:
    array = np.empty((), dtype=object)
    array[()] = value
    return array


class ReadRequest:
    """One ReaderRead/ReaderReadUpTo waiting to be served."""

    __slots__ = ("step", "queue", "done", "wanted", "up_to", "keys", "values", "active", "finished",
                 "token", "error")

    def __init__(self, step: Any, queue: Any, done: Callable[[Any], None], wanted: int, up_to: bool) -> None:
        self.step = step
        self.queue = queue
        self.done = done
        self.wanted = wanted
        self.up_to = up_to
        self.keys: list = []
        self.values: list = []
        self.active = False     # the driver is working on it: only the driver may finish it
        self.finished = False
        self.token: Optional[int] = None
        self.error: Optional[BaseException] = None

    def result(self) -> Any:
        if self.error is not None:
            return self.error
        if self.up_to:
            return (_string_array(self.keys), _string_array(self.values))
        return (_string_scalar(self.keys[0]), _string_scalar(self.values[0]))


class ReaderResource(abc.ABC):
    """What every reader kind shares: the request list, the driver, the counters."""

    kind = "ReaderBase"
    supports_serialize = False

    def __init__(self, name: str) -> None:
        self.name = name
        self.dropped = False
        self.work = b""
        self.work_started = 0
        self.work_finished = 0
        self.num_records_produced = 0
        self.state_lock = threading.Lock()  # counters and file position
        self._lock = threading.Lock()       # requests, driver and waiting flags
        self._pending: "collections.deque[ReadRequest]" = collections.deque()
        self._driving = False
        self._waiting = False
        self._work_result: Any = _NOTHING

    # -- what each kind defines --------------------------------------------------------------------
    def on_work_started(self) -> None:
        """Opens the new work unit (`self.work`); an OpError skips it."""

    @abc.abstractmethod
    def read_record(self) -> tuple[Optional[tuple[bytes, bytes]], bool]:
        """((key, value) or None, at_end) from the current work unit."""

    def on_work_finished(self) -> None:
        """Closes the current work unit."""

    def reset_kind(self) -> None:
        self.on_work_finished()

    # -- requests --------------------------------------------------------------------------------
    def read(self, step: Any, queue: Any, done: Callable[[Any], None], wanted: int, up_to: bool) -> None:
        request = ReadRequest(step, queue, done, wanted, up_to)
        with self._lock:
            self._pending.append(request)
            request.token = step.cancellation.register(lambda err: self._cancel(request, err))
            already_cancelled = request.token is None
            if already_cancelled:
                self._pending.remove(request)
                request.finished = True
        # Not `request.finished`: once the lock is released another thread's driver may
        # complete this request, and `done` must run exactly once.
        if already_cancelled:
            done(step.cancellation.cancelled)
            return
        self._drive()

    def _cancel(self, request: ReadRequest, error: BaseException) -> None:
        with self._lock:
            if request.finished or request.active:
                return  # the driver finishes active requests (a pending dequeue fails with the step)
            request.finished = True
            self._pending.remove(request)
        request.done(error)

    def _finish(self, request: ReadRequest) -> None:
        with self._lock:
            request.finished = True
            self._pending.popleft()
        if request.token is not None:
            request.step.cancellation.deregister(request.token)
        request.done(request.result())

    # -- the driver --------------------------------------------------------------------------------
    def _drive(self) -> None:
        with self._lock:
            if self._driving:
                return
            self._driving = True
        while True:
            with self._lock:
                if self._waiting or not self._pending:
                    self._driving = False
                    return
                request = self._pending[0]
                request.active = True
                work_result, self._work_result = self._work_result, _NOTHING
            try:
                complete = self._step(request, work_result)
            except Exception as err:  # noqa: BLE001  (fail this read, keep the reader serving)
                request.error = err if isinstance(err, errors.OpError) else errors.InternalError(
                    None, None, f"{self.kind} '{self.name}': {type(err).__name__}: {err}")
                complete = True
            if complete:
                self._finish(request)

    def _step(self, request: ReadRequest, work_result: Any) -> bool:
        """Moves the head request on; True when it is complete (or failed)."""
        with self.state_lock:
            if work_result is not _NOTHING:
                return self._start_work(request, work_result)
            if self.work_finished >= self.work_started:  # no work in progress: ask for more
                return self._request_work(request)
            try:
                return self._serve(request)
            except errors.OpError as err:  # the work unit stays in progress, as TF's
                request.error = err
            except OSError as err:
                request.error = file_io.os_error_to_tf(err, self.work.decode("utf-8", "replace"))
            return True

    def _request_work(self, request: ReadRequest) -> bool:
        queue = request.queue
        if len(queue.dtypes) != 1 or queue.dtypes[0] != np.object_:
            request.error = errors.InvalidArgumentError(
                None, None, f"{self.kind} '{self.name}' needs a queue with a single string component "
                "(work units such as file names)")
            return True
        with self._lock:
            self._waiting = True
        try:
            queue.dequeue(request.step, self._on_work)  # may call back at once, or later
        except BaseException:
            with self._lock:
                self._waiting = False
            raise
        return False

    def _on_work(self, result: Any) -> None:
        with self._lock:
            self._work_result = result
            self._waiting = False
        self._drive()

    def _start_work(self, request: ReadRequest, result: Any) -> bool:
        if isinstance(result, BaseException):
            request.error = result  # e.g. OutOfRangeError: the work queue is closed and empty
            return True
        unit = result[0]
        if np.ndim(unit) != 0:
            request.error = errors.InvalidArgumentError(
                None, None, "Expected to dequeue a one-element string tensor, got shape "
                f"{list(np.shape(unit))}")
            return True
        work = unit[()] if isinstance(unit, np.ndarray) else unit
        self.work = work.encode("utf-8") if isinstance(work, str) else bytes(work)
        try:
            self.on_work_started()
        except errors.OpError as err:  # the unit is skipped: the next read takes the next one
            request.error = err
            return True
        self.work_started += 1
        return False

    def _serve(self, request: ReadRequest) -> bool:
        while len(request.keys) < request.wanted:
            record, at_end = self.read_record()
            if record is not None:
                request.keys.append(record[0])
                request.values.append(record[1])
                self.num_records_produced += 1
            if at_end:
                self.on_work_finished()
                self.work_finished = self.work_started
                # A read never spans two work units once it has produced something (as TF).
                return bool(request.keys)
        return True

    # -- the synchronous verbs -------------------------------------------------------------------
    def reset(self) -> None:
        with self.state_lock:
            self.reset_kind()
            self.work = b""
            self.work_started = self.work_finished = self.num_records_produced = 0

    def serialize_state(self) -> bytes:
        if not self.supports_serialize:
            raise errors.UnimplementedError(None, None, "Reader SerializeState")
        with self.state_lock:
            return encode_base_state(self.work_started, self.work_finished, self.num_records_produced,
                                     self.work)

    def restore_state(self, state: bytes) -> None:
        if not self.supports_serialize:
            raise errors.UnimplementedError(None, None, "Reader RestoreState")
        try:
            started, finished, produced, work = decode_base_state(state)
        except ValueError:
            raise errors.InvalidArgumentError(
                None, None, f"Could not parse state for {self.kind} '{self.name}': "
                f"{state.decode('utf-8', 'backslashreplace')}") from None
        if min(started, finished, produced) < 0:
            raise errors.InvalidArgumentError(
                None, None, f"Unexpected negative value when restoring in {self.kind} '{self.name}'")
        if finished > started:
            raise errors.InvalidArgumentError(
                None, None, f"Inconsistent work started vs. finished when restoring in {self.kind} "
                f"'{self.name}': {started} vs. {finished}")
        with self.state_lock:
            self.reset_kind()
            self.work_started, self.work_finished, self.num_records_produced = started, finished, produced
            self.work = work

    def close_resource(self) -> None:
        self.dropped = True
        with self.state_lock:
            self.reset_kind()


# ---------------------------------------------------------------------------------------------
# ReaderBaseState, TF's serialized reader state (a protobuf message written by hand: four fields)
# ---------------------------------------------------------------------------------------------
_U64 = (1 << 64) - 1


def encode_base_state(started: int, finished: int, produced: int, work: bytes) -> bytes:
    out = bytearray()
    for field, value in ((1, started), (2, finished), (3, produced)):
        if value:  # proto3 leaves out zeros; a negative int64 is its 64-bit two's complement
            out += bytes([field << 3]) + encode_varint(value & _U64)
    if work:
        out += bytes([(4 << 3) | 2]) + encode_varint(len(work)) + work
    return bytes(out)


def _signed_varint(data: bytes, pos: int) -> tuple[int, int]:
    value, pos = read_varint(data, pos)  # a TableError is a ValueError: unparsable
    return (value - (1 << 64) if value >= 1 << 63 else value), pos


def decode_base_state(data: bytes) -> tuple[int, int, int, bytes]:
    values = {1: 0, 2: 0, 3: 0}
    work = b""
    pos = 0
    while pos < len(data):
        key, pos = read_varint(data, pos)
        field, wire = key >> 3, key & 7
        if field in values and wire == 0:
            values[field], pos = _signed_varint(data, pos)
        elif field == 4 and wire == 2:
            length, pos = read_varint(data, pos)
            if pos + length > len(data):
                raise ValueError("truncated bytes field")
            work, pos = bytes(data[pos:pos + length]), pos + length
        else:
            raise ValueError(f"unexpected field {field} (wire type {wire})")
    return values[1], values[2], values[3], work


# ---------------------------------------------------------------------------------------------
# Reader kinds
# ---------------------------------------------------------------------------------------------
class TextLineReaderResource(ReaderResource):
    """Each line of each file is a record; key 'file:line' counts lines from 1, skipped header
    lines included; the line ending ('\\n' or '\\r\\n') is dropped."""

    kind = "TextLineReader"

    def __init__(self, name: str, skip_header_lines: int = 0) -> None:
        super().__init__(name)
        self.skip_header_lines = skip_header_lines
        self._file: Any = None
        self._line = 0

    def on_work_started(self) -> None:
        self._file = file_io.open_file(self.work, "rb")
        self._line = 0
        for _ in range(self.skip_header_lines):
            if not self._file.readline():
                break
            self._line += 1

    def read_record(self) -> tuple[Optional[tuple[bytes, bytes]], bool]:
        line = self._file.readline()
        if not line:
            return None, True
        self._line += 1
        if line.endswith(b"\n"):
            line = line[:-2] if line.endswith(b"\r\n") else line[:-1]
        return (b"%s:%d" % (self.work, self._line), line), False

    def on_work_finished(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class FixedLengthRecordReaderResource(ReaderResource):
    """Records of `record_bytes` bytes after `header_bytes`, ignoring the last `footer_bytes`;
    record k starts k * hop_bytes after the first (hop_bytes 0: records are adjacent). Keys are
    'file:k'. `encoding` 'ZLIB' or 'GZIP' reads compressed files."""

    kind = "FixedLengthRecordReader"

    def __init__(self, name: str, record_bytes: int, header_bytes: int = 0, footer_bytes: int = 0,
                 hop_bytes: int = 0, encoding: str = "") -> None:
        super().__init__(name)
        self.record_bytes, self.header_bytes, self.footer_bytes = record_bytes, header_bytes, footer_bytes
        self.hop_bytes = hop_bytes or record_bytes
        self.encoding = encoding
        self._file: Any = None
        self._limit = 0
        self._record = 0

    def on_work_started(self) -> None:
        file = file_io.open_file(self.work, "rb")
        if self.encoding:
            with file:
                raw = file.read()
            try:
                data = zlib.decompress(raw, 31 if self.encoding == "GZIP" else 15)
            except zlib.error as err:
                raise errors.DataLossError(None, None, f"{self.work.decode()}: corrupted {self.encoding} "
                                           f"stream: {err}") from None
            file, size = io.BytesIO(data), len(data)
        else:
            size = os.fstat(file.fileno()).st_size
        self._file, self._limit, self._record = file, size - self.footer_bytes, 0

    def read_record(self) -> tuple[Optional[tuple[bytes, bytes]], bool]:
        start = self.header_bytes + self._record * self.hop_bytes
        if start + self.record_bytes > self._limit:
            return None, True
        self._file.seek(start)
        value = self._file.read(self.record_bytes)
        if len(value) < self.record_bytes:
            raise errors.DataLossError(None, None, f"{self.work.decode()}: file shrank while reading "
                                       f"record {self._record}")
        key = b"%s:%d" % (self.work, self._record)
        self._record += 1
        return (key, value), False

    def on_work_finished(self) -> None:
        if self._file is not None:
            self._file.close()
            self._file = None


class WholeFileReaderResource(ReaderResource):
    """Each file is one record: key the file name, value its contents."""

    kind = "WholeFileReader"
    supports_serialize = True

    def read_record(self) -> tuple[Optional[tuple[bytes, bytes]], bool]:
        with file_io.open_file(self.work, "rb") as f:
            return (self.work, f.read()), True


class TFRecordReaderResource(ReaderResource):
    """The records of TFRecord files; key 'file:offset' with the record's byte offset in the
    (uncompressed) stream. A bad checksum raises DataLossError."""

    kind = "TFRecordReader"

    def __init__(self, name: str, compression_type: str = "") -> None:
        super().__init__(name)
        self.compression_type = compression_type
        self._reader: Optional[RecordReader] = None

    def on_work_started(self) -> None:
        self._reader = RecordReader(self.work, self.compression_type or None)

    def read_record(self) -> tuple[Optional[tuple[bytes, bytes]], bool]:
        reader = self._reader
        offset = reader.offset  # type: ignore[union-attr]
        record = reader.read_record()  # type: ignore[union-attr]
        if record is None:
            return None, True
        return (b"%s:%d" % (self.work, offset), record), False

    def on_work_finished(self) -> None:
        if self._reader is not None:
            self._reader.close()
            self._reader = None


class IdentityReaderResource(ReaderResource):
    """Each work unit is one record whose key and value are the work string itself."""

    kind = "IdentityReader"
    supports_serialize = True

    def read_record(self) -> tuple[Optional[tuple[bytes, bytes]], bool]:
        return (self.work, self.work), True
