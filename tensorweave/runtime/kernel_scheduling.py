"""How the dataflow executor runs expensive kernels (DESIGN.md "Parallelism"): on a pool thread
when other work is ready here (inter-op parallelism), else inline; and, for kernels that split
their own work over the device's pool (intra-op parallelism, ops/intra_op.py), one at a time per
step, most critical first.

Why the split slot: a kernel that splits already keeps every core busy, so a second one started
beside it only halves the speed of both, and adds threads that fight over the cores and caches
(measured on 2 cores: two towers of 1024^3 products ran 12% slower with both towers' products
at once than one after the other). Run one at a time, each ends sooner; started in order of
critical_path.py's priorities, the kernels that the rest of the step waits for end first, so
the cheap work after them (run inline on another thread) overlaps the later kernels.

Which kernels split is learned, not declared: a kernel that asked the pool for helpers when it
last ran (thread_pool.help_requests) splits. Kernels that do not split keep running beside
anything, as before.
"""
from __future__ import annotations

import collections
import heapq
import itertools
import threading
from typing import Any, Optional

from tensorweave.runtime.executor_tables import EXPENSIVE
from tensorweave.runtime.thread_pool import help_requests

# Ties in priority go first come, first served (and tagged nodes are never compared).
_arrivals = itertools.count()
import os
_EXPERIMENT_SLOT = os.environ.get("TW_SLOT", "1") == "1"


class ExpensiveKernels:
    """Mixed into executor.ExecutorState, which provides the lock, the runner counts, the
    device, `process`, `finish_node` and `run_nodes`."""

    lock: threading.Lock
    runners: int
    device: Any

    def init_split_slot(self) -> None:
        self.split_busy = False  # a splitting kernel of this step is running
        self.split_waiting: list[tuple[float, int, Any]] = []  # heap of (-priority, arrival, tagged)

    def run_expensive(self, tagged: Any, ready: "collections.deque") -> None:
        """A live expensive kernel popped from this thread's ready queue."""
        holds_slot = False
        if tagged[0].splits and _EXPERIMENT_SLOT:
            if not self.claim_split_slot(tagged):
                return  # parked: the slot's holder starts it when its turn comes
            holds_slot = True
        if ready:  # other work is ready here: the kernel gets a pool thread, this one goes on
            self.add_runner()  # type: ignore[attr-defined]
            self.device.thread_pool.schedule(self.run_handed_off, tagged, holds_slot)
        else:
            self.execute_expensive(tagged, ready, holds_slot)

    def claim_split_slot(self, tagged: Any) -> bool:
        if self.runners == 1:
            return self._claim(tagged)
        with self.lock:
            return self._claim(tagged)

    def _claim(self, tagged: Any) -> bool:
        if self.split_busy:
            heapq.heappush(self.split_waiting, (-tagged[0].priority, next(_arrivals), tagged))
            return False
        self.split_busy = True
        return True

    def run_handed_off(self, tagged: Any, holds_slot: bool) -> None:
        """On a pool thread, which holds a runner count: the kernel, then what it makes ready."""
        ready: collections.deque = collections.deque()
        try:
            self.execute_expensive(tagged, ready, holds_slot)
            self.run_nodes(ready)  # type: ignore[attr-defined]
        finally:
            self.release_runner()  # type: ignore[attr-defined]

    def execute_expensive(self, tagged: Optional[Any], ready: "collections.deque", holds_slot: bool) -> None:
        """Runs the kernel and propagates its outputs; the slot's holder then runs (or hands to
        the pool) the next waiting splitting kernel, until none is left."""
        while tagged is not None:
            item = tagged[0]
            asked = help_requests.count
            outputs = self.process(tagged)  # type: ignore[attr-defined]
            item.splits = help_requests.count != asked
            self.finish_node(tagged, outputs, ready)  # type: ignore[attr-defined]
            outputs = None
            tagged = self.pass_split_slot(ready) if holds_slot else None

    def pass_split_slot(self, ready: "collections.deque") -> Optional[Any]:
        """The slot's kernel finished: the most urgent waiting one gets the slot. Returns it
        for this thread to run when it has nothing else ready; else hands it to the pool."""
        if self.runners == 1:
            nxt = self._next_split(ready)
        else:
            with self.lock:
                nxt = self._next_split(ready)
        if nxt is None or not ready:
            return nxt
        self.add_runner()  # type: ignore[attr-defined]
        self.device.thread_pool.schedule(self.run_handed_off, nxt, True)
        return None

    def _next_split(self, ready: "collections.deque") -> Optional[Any]:
        waiting = self.split_waiting
        # Splitting kernels the finished one made ready compete for the slot now (the critical
        # path usually goes on through them) instead of queueing behind the waiting ones.
        for tagged in [t for t in ready if t[0].kind == EXPENSIVE and t[0].splits and not t[2]]:
            ready.remove(tagged)
            heapq.heappush(waiting, (-tagged[0].priority, next(_arrivals), tagged))
        if not waiting:
            self.split_busy = False
            return None
        return heapq.heappop(waiting)[2]
