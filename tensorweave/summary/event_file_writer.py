"""EventFileWriter: Event protos appended to an event file by a background thread.

A step that adds a summary only puts the event on a bounded queue (`max_queue`); the writer
thread frames it as a TFRecord and writes it, and flushes the file every `flush_secs` and when
asked. A record is written whole or not at all by the framing, so a process killed at any
moment leaves every record flushed before it readable (TF's EventsWriter makes the same
promise). The file is named as TensorFlow names it: events.out.tfevents.<seconds>.<host><suffix>.
"""
from __future__ import annotations

import os
import queue
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
        self._max_queue, self._flush_secs = max_queue, flush_secs
        self._suffix = filename_suffix or ""
        self._closed = True
        self._lock = threading.Lock()
        self._open()

    def _open(self) -> None:
        name = f"events.out.tfevents.{int(time.time()):010d}.{socket.gethostname()}{self._suffix}"
        self._path = os.path.join(self._logdir, name)
        self._writer = TFRecordWriter(self._path)
        self._queue: "queue.Queue[Any]" = queue.Queue(self._max_queue)
        self._worker = _EventLoggerThread(self._queue, self._writer, self._flush_secs)
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
        """Queues `event` (waits only while the queue holds max_queue events)."""
        if not self._closed:
            self._queue.put(event.SerializeToString())

    def flush(self) -> None:
        """Writes every queued event and flushes the file."""
        if not self._closed:
            self._queue.join()
            self._writer.flush()

    def close(self) -> None:
        """Flushes, stops the thread and closes the file; `reopen` starts a new one."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            self._queue.put(_STOP)
            self._worker.join()
            self._writer.flush()
            self._writer.close()


_STOP = object()


class _EventLoggerThread(threading.Thread):
    """Takes serialized events off the queue and writes them; flushes every flush_secs."""

    def __init__(self, events: "queue.Queue[Any]", writer: TFRecordWriter, flush_secs: float) -> None:
        super().__init__(name="EventLoggerThread", daemon=True)
        self._queue, self._writer, self._flush_secs = events, writer, flush_secs
        self._next_flush = time.monotonic() + flush_secs

    def run(self) -> None:
        while True:
            try:
                item = self._queue.get(timeout=max(0.0, self._next_flush - time.monotonic()))
            except queue.Empty:
                item = None
            try:
                if item is _STOP:
                    return
                if item is not None:
                    self._writer.write(item)
                if time.monotonic() >= self._next_flush:
                    self._writer.flush()
                    self._next_flush = time.monotonic() + self._flush_secs
            finally:
                if item is not None:
                    self._queue.task_done()
