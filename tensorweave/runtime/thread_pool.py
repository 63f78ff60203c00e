"""A small fixed thread pool: cheaper to submit to than concurrent.futures (a queue put and
a wake-up), which matters because the executor hands it single kernels."""
from __future__ import annotations

import queue
import threading
from typing import Any, Callable


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
