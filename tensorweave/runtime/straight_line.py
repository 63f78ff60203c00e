"""The straight-line path (DESIGN.md "Parallelism"): a partition with no control flow, no
asynchronous kernels and nothing worth running in parallel runs as a precomputed list of
kernel calls over a flat value array. No pending counts, no queues, no locks.

A single-partition step whose asynchronous kernels usually complete at once (a dequeue from a
queue that has elements, a read from a reader with data) runs the same way, optimistically:
when an asynchronous kernel has not completed by the time its call returns, the dataflow
executor takes the step over from that point (ExecutorState.take_over), so a step that
waits still holds no thread but the caller's, and nodes independent of the waiting one
still run."""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.runtime import kernel_errors
from tensorweave.runtime.executor import _RETURNED, DataflowExecutor, ExecutorState
from tensorweave.runtime.graph_compiler import PartitionTables
from tensorweave.runtime.step_context import StepContext


class Instruction:
    __slots__ = ("compute", "in_slots", "out_slot", "num_outputs", "needs_step", "free_slots", "item",
                 "is_async")

    def __init__(self, compute: Callable[..., Any], in_slots: tuple[int, ...], out_slot: int,
                 num_outputs: int, needs_step: bool, item: Any) -> None:
        self.compute = compute
        self.in_slots = in_slots
        self.out_slot = out_slot
        self.num_outputs = num_outputs
        self.needs_step = needs_step
        self.free_slots: tuple[int, ...] = ()
        self.item = item
        self.is_async = item.is_async  # compute(step, done, *inputs)


class AsyncCall:
    """The `done` continuation the straight-line path gives an asynchronous kernel. Usually it
    runs during the call; if not, whoever takes the step over gets the late result through
    `forward_to`. Lock-free: list appends are atomic, and the first entry decides the order."""

    __slots__ = ("box", "handoff")

    def __init__(self) -> None:
        self.box: list[Any] = []
        self.handoff: Optional[list[Any]] = None

    def done(self, result: Any) -> None:
        box = self.box
        box.append(result)
        if box[0] is not _RETURNED:
            return  # during the call: `returned` gives it to the caller
        entry = (result,)
        handoff: list[Any] = self.handoff  # type: ignore[assignment]
        handoff.append(entry)
        if handoff[0] is not entry:
            handoff[0](result)  # the taker is already waiting for it

    def returned(self) -> Any:
        """After the call: what the kernel passed to `done`, or _RETURNED if it has not yet."""
        box = self.box
        if box:
            return box[0]
        self.handoff = []
        box.append(_RETURNED)
        return box[0]

    def forward_to(self, target: Callable[[Any], None]) -> None:
        """Sends the late result to `target`, now or when it comes."""
        handoff: list[Any] = self.handoff  # type: ignore[assignment]
        handoff.append(target)
        first = handoff[0]
        if first is not target:
            target(first[0])


def topological_order(tables: PartitionTables) -> list[int]:
    """A valid execution order; Sends go as early as they can, since another device may be
    waiting for them."""
    items = tables.items
    pending = [it.pending_init for it in items]
    order: list[int] = []
    ready = [i for i, p in enumerate(pending) if p == 0]
    sends: list[int] = []
    while ready or sends:
        nid = sends.pop() if sends else ready.pop()
        order.append(nid)
        for dst, _, _ in items[nid].out_edges:
            pending[dst] -= 1
            if pending[dst] == 0:
                (sends if items[dst].is_transfer else ready).append(dst)
    if len(order) != len(tables.items):
        raise ValueError("Graph contains a cycle outside of a while loop")
    return order


class StraightLineExecutor:
    def __init__(self, tables: PartitionTables) -> None:
        items = tables.items
        base: list[int] = [0] * len(items)
        num_slots = 0
        for it in items:
            base[it.id] = num_slots
            num_slots += max(it.num_outputs, 1)
        sources: list[list[int]] = [[0] * it.num_inputs for it in items]
        for it in items:
            for dst, port, dst_index in it.out_edges:
                if dst_index >= 0:
                    sources[dst][dst_index] = base[it.id] + port
        order = topological_order(tables)
        sinks = set(tables.fetch_items)
        program = []
        last_use: dict[int, int] = {}
        for pos, nid in enumerate(order):
            if nid in sinks:
                continue
            it = items[nid]
            for s in sources[nid]:
                last_use[s] = len(program)
            program.append(Instruction(it.compute, tuple(sources[nid]), base[nid], it.num_outputs,
                                       it.needs_step, it))
        self.fetch_slots = [sources[sid][0] for sid in tables.fetch_items]
        keep = set(self.fetch_slots)
        frees: dict[int, list[int]] = {}
        for slot, pos in last_use.items():
            if slot not in keep:
                frees.setdefault(pos, []).append(slot)
        for pos, slots in frees.items():
            program[pos].free_slots = tuple(slots)
        self.program = program
        self.num_slots = num_slots
        # each node's position in the program (fetch sinks, which it skips, come last)
        self.position = [len(program)] * len(items)
        for pos, ins in enumerate(program):
            self.position[ins.item.id] = pos

    def run(self, step: StepContext) -> list[Any]:
        vals: list[Any] = [None] * self.num_slots
        ins = None
        try:
            for ins in self.program:
                if ins.needs_step:
                    result = ins.compute(step, *[vals[s] for s in ins.in_slots])
                else:
                    result = ins.compute(*[vals[s] for s in ins.in_slots])
                n = ins.num_outputs
                if n == 1:
                    vals[ins.out_slot] = result
                elif n:
                    vals[ins.out_slot:ins.out_slot + n] = result
                for s in ins.free_slots:
                    vals[s] = None
        except Exception as err:
            kernel_errors.reraise(err, ins.item.op if ins is not None else None)
        return [vals[s] for s in self.fetch_slots]

    def run_optimistic(self, step: StepContext, fallback: DataflowExecutor, timeout: Optional[float],
                       active: Any) -> list[Any]:
        """`run` for a partition with asynchronous kernels; if one has not completed when its
        call returns, `fallback` takes the step over and this waits for it."""
        vals: list[Any] = [None] * self.num_slots
        ins = None
        waiting: Optional[AsyncCall] = None
        try:
            for ins in self.program:
                if ins.is_async:
                    call = AsyncCall()
                    ins.compute(step, call.done, *[vals[s] for s in ins.in_slots])
                    result = call.returned()
                    if result is _RETURNED:
                        waiting = call
                        break
                    if isinstance(result, BaseException):
                        raise result
                elif ins.needs_step:
                    result = ins.compute(step, *[vals[s] for s in ins.in_slots])
                else:
                    result = ins.compute(*[vals[s] for s in ins.in_slots])
                n = ins.num_outputs
                if n == 1:
                    vals[ins.out_slot] = result
                elif n:
                    vals[ins.out_slot:ins.out_slot + n] = result
                for s in ins.free_slots:
                    vals[s] = None
        except Exception as err:
            # As in the dataflow executor, a failed step is cancelled: kernels that registered
            # for cancellation (a mutex lock, say) let go of what they hold.
            annotated = kernel_errors.annotate(err, ins.item.op if ins is not None else None)
            step.cancel(annotated)
            if annotated is err:
                raise
            raise annotated from err
        if waiting is not None:
            return self.hand_over(step, fallback, ins, waiting, vals, timeout, active)  # type: ignore[arg-type]
        return [vals[s] for s in self.fetch_slots]

    def hand_over(self, step: StepContext, fallback: DataflowExecutor, ins: Instruction, call: AsyncCall,
                  vals: list[Any], timeout: Optional[float], active: Any) -> list[Any]:
        """The dataflow executor continues the step from the waiting kernel `ins`."""
        pos = self.position[ins.item.id]
        executed = [(done.item, tuple(vals[done.out_slot:done.out_slot + done.num_outputs]))
                    for done in self.program[:pos]]  # freed values: only run consumers needed them
        state = ExecutorState(fallback, step)
        position = self.position
        ready = state.take_over(executed, ins.item, lambda item: position[item.id] > pos)
        tagged = (ins.item, state.root_state, False)
        call.forward_to(lambda result: state.finish_async(tagged, result))
        active.add(state)
        try:
            state.run_ready(ready)
            return state.wait(timeout)
        finally:
            active.discard(state)
