"""EventFileWriter: Event protos appended to an event file by a background thread.

A step that adds a summary only hands the event over; the writer thread frames it as a TFRecord
and writes it (within a second, or at once when `max_queue` events wait), and flushes the file
every `flush_secs` and when asked. A record is written whole or not at all by the framing, so a process killed at any
moment leaves every record flushed before it readable (TF's EventsWriter makes the same
promise). The file is named as TensorFlow names it: events.out.tfevents.<seconds>.<host><suffix>.
"""
from __future__ import annotations

import collections
import os
import socket
import threading
import time
from typing import Any, Optional

from tensorboard.compat.proto import event_pb2

from tensorweave.lib.file_io import as_path
from tensorweave.lib.tf_record import TFRecordWriter

_FILE_VERSION = "brain.Event:2"


class EventFileWriter:
    """Writes Event protos to a new event file in `logdir`, asynchronously."""

    def __init__(self, logdir: Any, max_queue: int = 10, flush_secs: float = 120,
                 filename_suffix: Optional[str] = None) -> None:
        self._logdir = as_path(logdir)
        os.makedirs(self._logdir, exist_ok=True)
        self._max_queue, self._flush_secs = max(1, max_queue), flush_secs
        self._suffix = filename_suffix or ""
        self._closed = True
        self._lock = threading.Lock()
        self._open()

    def _open(self) -> None:
        name = f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}{self._suffix}"
        self._path = os.path.join(self._logdir, name)
        self._writer = TFRecordWriter(self._path)
        self._worker = _EventLoggerThread(self._writer, self._max_queue, self._flush_secs)
        self._closed = False
        # The first record says which format follows, as TF's writer does.
        self._writer.write(event_pb2.Event(wall_time=time.time(), file_version=_FILE_VERSION).SerializeToString())
        self._writer.flush()
        self._worker.start()

    def get_logdir(self) -> str:
        return self._logdir

    def get_filename(self) -> str:
        return self._path

    def reopen(self) -> None:
        """After close: a new event file in the same directory."""
        with self._lock:
            if self._closed:
                self._open()

    def add_event(self, event: Any) -> None:
        """Hands `event` to the writer thread (never waits for the disk)."""
        if not self._closed:
            self._worker.put(event.SerializeToString())

    def flush(self) -> None:
        """Writes every event added so far and flushes the file."""
        if not self._closed:
            self._worker.drain()
            self._writer.flush()

    def close(self) -> None:
        """Flushes, stops the thread and closes the file; `reopen` starts a new one."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._worker.stop()
            self._writer.flush()
            self._writer.close()


class _EventLoggerThread(threading.Thread):
    """Writes the serialized events handed to it, in order, and flushes every flush_secs.

    Adding an event is a deque append: the thread is woken only when `max_queue` events are
    waiting, at its flush time, or by `drain`/`stop`, so a training step that adds a summary
    pays no thread switch (TF's writer thread takes each event off a queue as it comes)."""

    def __init__(self, writer: TFRecordWriter, max_queue: int, flush_secs: float) -> None:
        super().__init__(name="EventLoggerThread", daemon=True)
        self._writer, self._max_queue, self._flush_secs = writer, max_queue, flush_secs
        self._pending: "collections.deque[bytes]" = collections.deque()
        self._wake = threading.Event()
        self._idle = threading.Condition()
        self._busy = False
        self._stopping = False

    def put(self, record: bytes) -> None:
        self._pending.append(record)
        if len(self._pending) >= self._max_queue:
            self._wake.set()

    def drain(self) -> None:
        """Returns once every record put before the call is written."""
        self._wake.set()
        with self._idle:
            while (self._pending or self._busy) and self.is_alive():
                self._idle.wait(0.1)
                self._wake.set()

    def stop(self) -> None:
        self._stopping = True
        self._wake.set()
        self.join()

    def run(self) -> None:
        next_flush = time.monotonic() + self._flush_secs
        while True:
            self._wake.wait(max(0.0, min(next_flush - time.monotonic(), 1.0)))
            self._wake.clear()
            with self._idle:
                self._busy = True
            try:
                pending = self._pending
                while pending:
                    self._writer.write(pending.popleft())
                if time.monotonic() >= next_flush:
                    self._writer.flush()
                    next_flush = time.monotonic() + self._flush_secs
            finally:
                with self._idle:
                    self._busy = False
                    self._idle.notify_all()
            if self._stopping and not self._pending:
                return
