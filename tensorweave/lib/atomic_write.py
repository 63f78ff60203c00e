"""Replacing a file so that readers, and a process killed at any moment, see either the old
contents or the new ones, never a mix: write a temporary file next to it, fsync, rename over
it, fsync the directory (TF's atomic_write_string_to_file, plus the fsyncs that make the
result survive a machine crash too)."""
from __future__ import annotations

import atexit
import ctypes
import glob
import os
import queue
import threading
import uuid
from typing import Any, Callable, Optional, Sequence

from tensorweave.lib.file_io import as_path, os_error_to_tf


def _load_sync_file_range() -> Optional[Callable[..., int]]:
    try:
        fn = ctypes.CDLL(None, use_errno=True).sync_file_range
    except (OSError, AttributeError):
        return None  # not Linux: writeback simply starts at fsync time
    fn.argtypes = [ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_uint]
    fn.restype = ctypes.c_int
    return fn


_sync_file_range = _load_sync_file_range()
_SYNC_FILE_RANGE_WRITE = 2


def start_writeback(fd: int, offset: int, nbytes: int) -> None:
    """Asks the kernel to start writing `nbytes` at `offset` of `fd` to disk without waiting, so
    a large file's final fsync only waits for its tail (Linux sync_file_range; else nothing)."""
    if _sync_file_range is not None and nbytes > 0:
        _sync_file_range(fd, offset, nbytes, _SYNC_FILE_RANGE_WRITE)


def sync_data(fd: int) -> None:
    """fdatasync where available (the file's data and size, not its timestamps), else fsync."""
    (getattr(os, "fdatasync", None) or os.fsync)(fd)


def temp_name(path: str) -> str:
    """A unique temporary name next to `path` (TF's `.tempstate` suffix)."""
    return f"{path}.tempstate{uuid.uuid4().hex}"


def fsync_dir(path: str) -> None:
    """Makes renames inside the directory holding `path` durable."""
    try:
        fd = os.open(os.path.dirname(os.path.abspath(path)) or ".", os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot fsync a directory; the rename is still atomic
    finally:
        os.close(fd)


def remove_quietly(path: str) -> None:
    try:
        os.remove(path)
    except OSError:
        pass


def remove_stale_temps(path: str) -> None:
    """Deletes temporaries of `path` that a process killed inside `atomic_write` left behind."""
    for temp in glob.glob(glob.escape(path) + ".tempstate*"):
        remove_quietly(temp)


def atomic_write(path: Any, data: bytes, sync_dir: bool = True) -> None:
    """Replaces the file `path` by `data` atomically and durably (TF error classes on failure)."""
    path = as_path(path)
    temp = temp_name(path)
    try:
        with open(temp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except OSError as err:
        remove_quietly(temp)
        raise os_error_to_tf(err, path) from None
    if sync_dir:
        fsync_dir(path)


class _BackgroundRemover:
    """Unlinks files on a helper thread. Freeing a large file's disk extents takes a while (about
    20 ms for 100 MB here) and nothing needs to wait for it once the file has a name no one uses:
    callers rename first (cheap), then hand the new name over. Drained at interpreter exit."""

    def __init__(self) -> None:
        self._queue: "queue.Queue[str]" = queue.Queue()
        self._thread: Optional[threading.Thread] = None
        self._lock = threading.Lock()

    def submit(self, path: str) -> None:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="checkpoint-remover", daemon=True)
                self._thread.start()
                atexit.register(self.wait)
        self._queue.put(path)

    def _run(self) -> None:
        while True:
            path = self._queue.get()
            remove_quietly(path)
            self._queue.task_done()

    def wait(self) -> None:
        """Blocks until every submitted file is gone."""
        self._queue.join()


_remover = _BackgroundRemover()


def remove_in_background(paths: Sequence[str]) -> None:
    """Removes `paths` soon: each is renamed to a unique name now (so a new file created under
    the old name is never touched) and unlinked by a helper thread."""
    for path in paths:
        doomed = f"{path}.removing{uuid.uuid4().hex}"
        try:
            os.rename(path, doomed)
        except OSError:
            continue  # already gone
        _remover.submit(doomed)


def wait_for_background_removals() -> None:
    _remover.wait()
