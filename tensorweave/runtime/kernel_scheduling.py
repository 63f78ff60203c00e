"""How the dataflow executor runs expensive kernels (DESIGN.md "Parallelism"): on a pool thread
when other work is ready here (inter-op parallelism), else inline; the most urgent of several
ready ones (critical_path.py's priorities) stays on this thread; and kernels that split their
own work over the device's pool (intra-op parallelism, ops/intra_op.py) run one at a time per
step, most urgent first.

Why one splitting kernel at a time: such a kernel already keeps every core busy, so a second one
started beside it halves the speed of both and adds threads that fight over the cores and the
caches (2 cores, two towers of 1024^3 products: each pair of products took 14-15 ms side by side,
against 2 x 7 ms one after the other). One at a time, in priority order, the kernels the rest of
the step waits for end first, and the cheap chains after them overlap the later kernels: in the
CNN's backward pass the convolution's input gradient (the layers below wait for it) runs on both
cores before its filter gradient, in the LSTM's the softmax input gradient (the backward loop
waits for it) before the softmax weights' gradient, which then runs beside the loop. Measured
(same process, alternating, quiet machine): CNN train step 38.5 against 40.0 ms, LSTM 39.4 against
42.4 ms. A second splitting kernel may start only if it is more urgent than the running one: a
kernel off the critical path that happened to start first must not hold the critical one back.

Which kernels split is learned, not declared: a kernel that asked the pool for helpers when it
last ran (thread_pool.help_requests) splits (plan_learning.PlanLearning.splits, beside the
compiled rows). Kernels that do not split run beside anything.

`ExpensiveKernels` is a member of executor.ExecutorState (one per step whose partition has
expensive kernels); it runs kernels and propagates through the state it belongs to.
"""
from __future__ import annotations

import collections
import heapq
import itertools
from typing import TYPE_CHECKING, Optional

from tensorweave.runtime.control_flow_semantics import TaggedNode
from tensorweave.runtime.executor_tables import EXPENSIVE
from tensorweave.runtime.plan_learning import PlanLearning
from tensorweave.runtime.thread_pool import help_requests

if TYPE_CHECKING:
    from tensorweave.runtime.executor import ExecutorState

# Ties in priority go first come, first served (and tagged nodes are never compared).
_arrivals = itertools.count()


class ExpensiveKernels:
    """Where one step's expensive kernels run: this thread, a pool thread, or (splitting
    kernels) a wait for their turn."""

    __slots__ = ("state", "priority", "splits", "split_running", "split_waiting")

    def __init__(self, state: ExecutorState, learning: PlanLearning) -> None:
        self.state = state
        self.priority = learning.priority  # by node id
        self.splits = learning.splits      # by node id, learned here
        self.split_running: list[float] = []  # priorities of this step's running splitting kernels
        self.split_waiting: list[tuple[float, int, TaggedNode]] = []  # heap of (-priority, arrival, tagged)

    def run_expensive(self, tagged: TaggedNode, ready: "collections.deque[TaggedNode]") -> None:
        """A live expensive kernel popped from this thread's ready queue."""
        if self.splits[tagged[0].id]:
            mine = self.schedule_splits(ready, tagged, None)
            if mine is not None:
                self.execute_expensive(mine, ready, True)
        elif ready and not self.keep_most_urgent(tagged, ready):
            # other work is ready here: the kernel gets a pool thread, this one goes on
            self.state.add_runner()
            self.state.device.thread_pool.schedule(self.run_handed_off, tagged, False)
        else:
            self.execute_expensive(tagged, ready, False)

    def keep_most_urgent(self, tagged: TaggedNode, ready: "collections.deque[TaggedNode]") -> bool:
        """Other expensive kernels are ready here too: the most urgent one runs on this thread
        (no hop before it starts, and what it makes ready goes on here), the others go to the
        pool now. False (hand `tagged` over) when one of them is more urgent. In the LSTM's
        backward loop, the input gradient (the next iteration waits for it) stays and the
        weight gradient goes: 1 ms a step, measured."""
        prio, splits = self.priority, self.splits
        priority = prio[tagged[0].id]
        others = [t for t in ready if t[0].kind == EXPENSIVE and not splits[t[0].id] and not t[2]]
        if not others or any(prio[t[0].id] > priority for t in others):
            return False
        state = self.state
        for t in others:
            ready.remove(t)
            state.add_runner()
            state.device.thread_pool.schedule(self.run_handed_off, t, False)
        return True

    def run_handed_off(self, tagged: TaggedNode, holds_slot: bool) -> None:
        """On a pool thread, which holds a runner count: the kernel, then what it makes ready."""
        ready: collections.deque[TaggedNode] = collections.deque()
        try:
            self.execute_expensive(tagged, ready, holds_slot)
            self.state.run_nodes(ready)
        finally:
            self.state.release_runner()

    def execute_expensive(self, tagged: Optional[TaggedNode], ready: "collections.deque[TaggedNode]",
                          holds_slot: bool) -> None:
        """Runs the kernel and propagates its outputs; a splitting kernel then lets the next
        waiting ones start (running one of them here when this thread has nothing else)."""
        state = self.state
        while tagged is not None:
            item = tagged[0]
            asked = help_requests.count
            outputs = state.process(tagged)
            self.splits[item.id] = help_requests.count != asked
            # an expensive kernel is never asynchronous: it has outputs now
            state.finish_node(tagged, outputs, ready)  # type: ignore[arg-type]
            outputs = None
            tagged = self.schedule_splits(ready, None, self.priority[item.id]) if holds_slot else None

    def schedule_splits(self, ready: "collections.deque[TaggedNode]", arrived: Optional[TaggedNode],
                        finished: Optional[float]) -> Optional[TaggedNode]:
        """A splitting kernel `arrived` (popped from `ready`) or one with priority `finished`
        ended: starts the waiting ones that may run now, most urgent first. Returns the one
        this thread runs (when nothing else is ready here); the others go to the pool."""
        state = self.state
        if state.runners == 1:
            starts = self._start_splits(ready, arrived, finished)
        else:
            with state.lock:
                starts = self._start_splits(ready, arrived, finished)
        mine = None
        for tagged in starts:
            if mine is None and not ready:
                mine = tagged
            else:
                # Whatever else is ready here goes on on this thread: it is mostly a chain of
                # cheap kernels that cannot use two cores, while the kernel can (a pool thread
                # runs it, and this one joins in as a helper once its own work is done).
                state.add_runner()
                state.device.thread_pool.schedule(self.run_handed_off, tagged, True)
        return mine

    def _start_splits(self, ready: "collections.deque[TaggedNode]", arrived: Optional[TaggedNode],
                      finished: Optional[float]) -> list[TaggedNode]:
        running, waiting = self.split_running, self.split_waiting
        prio, splits = self.priority, self.splits
        if finished is not None:
            running.remove(finished)
        # Splitting kernels ready here compete now, whichever was popped first: the critical
        # path usually goes on through one of them.
        for tagged in [t for t in ready if t[0].kind == EXPENSIVE and splits[t[0].id] and not t[2]]:
            ready.remove(tagged)
            heapq.heappush(waiting, (-prio[tagged[0].id], next(_arrivals), tagged))
        if arrived is not None:
            heapq.heappush(waiting, (-prio[arrived[0].id], next(_arrivals), arrived))
        starts = []
        # One at a time; a second only if it is more urgent than the one running (else a
        # kernel off the critical path that started first would hold the critical one back).
        while waiting and (not running or (len(running) < 2 and -waiting[0][0] > max(running))):
            tagged = heapq.heappop(waiting)[2]
            running.append(prio[tagged[0].id])
            starts.append(tagged)
        return starts
