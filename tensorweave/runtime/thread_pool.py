"""A small fixed thread pool: cheaper to submit to than concurrent.futures (a queue put and
a wake-up), which matters because the executor hands it single kernels.

Two lanes: queued work (kernels, continuations) goes before intra-op help (ops/intra_op.ChunkRunner
asking idle threads to take chunks of a kernel that is running). The kernel's own thread goes on
with its chunks anyway, and work left waiting is mostly a chain of cheap kernels that cannot use
two cores, so it should overlap the big kernel, not follow it (in the CNN's backward pass: the
layers below a convolution's input gradient run beside its filter gradient; help first had them
wait ~8 ms for it). A help request is taken when no work is queued, however late: a helper that
finds every chunk taken just returns. Each thread counts the help its kernels asked for
(`help_requests`): the executor learns from it which kernels split their work over the pool
(kernel_scheduling.py)."""
from __future__ import annotations

import _thread
import collections
import queue
import threading
from typing import Any, Callable, Optional


class _HelpRequests(threading.local):
    count = 0


# Per thread: how many times kernels running on it asked the pool for helpers.
help_requests = _HelpRequests()

_STOP = object()


class ThreadPool:
    def __init__(self, num_threads: int, name: str) -> None:
        # One token in the queue per task (it wakes one thread); the tasks themselves wait in
        # the two lanes, so a thread that wakes takes work first whichever token woke it.
        self._queue: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self._help: collections.deque = collections.deque()
        self._work: collections.deque = collections.deque()
        self._threads = []
        self.num_threads = num_threads
        for i in range(num_threads):
            t = threading.Thread(target=self._worker, name=f"{name}-{i}", daemon=True)
            t.start()
            self._threads.append(t)

    def schedule(self, fn: Callable[..., Any], *args: Any) -> None:
        self._work.append((fn, args))
        self._queue.put(True)

    def schedule_help(self, fn: Callable[[], Any]) -> None:
        """Intra-op help for a kernel running now: `fn` must return at once if nothing is left."""
        help_requests.count += 1
        self._help.append((fn, ()))
        self._queue.put(True)

    def _worker(self) -> None:
        get, help_lane, work_lane = self._queue.get, self._help, self._work
        while True:
            if get() is _STOP:
                return
            while True:  # a task is in a lane for every token (appended before its put)
                try:
                    fn, args = work_lane.popleft()
                except IndexError:
                    try:
                        fn, args = help_lane.popleft()
                    except IndexError:  # another thread took "ours" and ours is still coming
                        continue
                break
            fn(*args)
            fn = args = None  # hold nothing while idle

    def shutdown(self) -> None:
        for _ in self._threads:
            self._queue.put(_STOP)


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
