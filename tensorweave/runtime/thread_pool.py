"""A small fixed thread pool: cheaper to submit to than concurrent.futures (a queue put and
a wake-up), which matters because the executor hands it single kernels."""
from __future__ import annotations

import _thread
import collections
import queue
import threading
from typing import Any, Callable, Optional


class ThreadPool:
    def __init__(self, num_threads: int, name: str) -> None:
        self._queue: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._threads = []
        self.num_threads = num_threads
        for i in range(num_threads):
            t = threading.Thread(target=self._worker, name=f"{name}-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def schedule(self, fn: Callable[..., Any], *args: Any) -> None:
        self._queue.put((fn, args))

    def _worker(self) -> None:
        get = self._queue.get
        while True:
            item = get()
            if item is None:
                return
            fn, args = item
            fn(*args)

    def shutdown(self) -> None:
        for _ in self._threads:
            self._queue.put(None)


class Wakeup:
    """threading.Event's set/clear/wait on one raw lock (held while the event is clear):
    a fraction of the cost of Event's condition variable, which matters because the
    executor needs one for every step that waits."""

    __slots__ = ("_lock",)

    def __init__(self) -> None:
        self._lock = _thread.allocate_lock()
        self._lock.acquire()

    def set(self) -> None:
        try:
            self._lock.release()
        except RuntimeError:
            pass  # already set

    def clear(self) -> None:
        self._lock.acquire(False)

    def is_set(self) -> bool:
        return not self._lock.locked()

    def wait(self, timeout: Optional[float] = None) -> bool:
        """True once set (without clearing it), False after `timeout` seconds."""
        if not self._lock.acquire(True, -1 if timeout is None else max(timeout, 0.0)):
            return False
        self.set()
        return True


class CallerHelp:
    """The caller's thread as a worker of a threaded multi-partition step: it runs the ready
    work posted here, and is woken by `wake` when work is posted or a partition finishes."""

    __slots__ = ("tasks", "wake")

    def __init__(self) -> None:
        self.tasks: collections.deque = collections.deque()
        self.wake = Wakeup()

    def post(self, task: "Continuation") -> None:
        self.tasks.append(task)
        self.wake.set()


class Continuation:
    """Ready work handed to a device's pool that a waiting thread may run instead, whichever
    claims it first (popping the one-element list is atomic)."""

    __slots__ = ("run_ready", "box")

    def __init__(self, run: Callable[[Any], None], ready: Any) -> None:
        self.run_ready = run
        self.box = [ready]

    def run(self) -> None:
        try:
            ready = self.box.pop()
        except IndexError:
            return  # claimed by the other
        self.run_ready(ready)
