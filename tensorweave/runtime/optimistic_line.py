"""The straight-line path, run optimistically, for single-partition steps that the plain one
cannot take: steps with asynchronous kernels and steps with conditionals (Switch and Merge,
but no loops).

Asynchronous kernels (white paper 5.3) usually complete at once: a dequeue from a queue with
elements, a read from a reader with data. The program calls them like any kernel; when one has
not completed by the time its call returns, the dataflow executor takes the step over from
that point (ExecutorState.take_over), so a waiting step still holds no thread but the
caller's, and nodes independent of the waiting kernel still run.

Dead values (white paper 4.4) follow the executor's rules, in program order: a node with a dead
data input, or a control input from a dead node, is dead and does not run; a Switch sends its
input to one output and a dead value to the other; a Merge forwards its first live input, and
is dead when all its inputs are. Only nodes that a Switch can reach check for them.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.runtime import kernel_errors
from tensorweave.runtime.executor import (_RETURNED, DataflowExecutor, ExecutorState, dead_fetch_error,
                                          merge_outputs)
from tensorweave.runtime.executor_tables import CONTROL_TRIGGER, MERGE, SWITCH
from tensorweave.runtime.graph_compiler import PartitionTables
from tensorweave.runtime.step_context import DEAD, StepContext
from tensorweave.runtime.straight_line import Instruction, StraightLineExecutor

_RUN = object()  # the node is live: run its kernel


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


def eligible(tables: PartitionTables) -> bool:
    """No loops (frames), no transfers; item kinds must be set (executor_tables)."""
    return not any(it.control_flow in ("enter", "exit", "next_iteration", "loop_cond") or it.is_transfer
                   for it in tables.items)


class OptimisticLine(StraightLineExecutor):
    def __init__(self, tables: PartitionTables) -> None:
        super().__init__(tables)
        self.tables = tables
        self.has_deadness = _mark_deadness(tables, self.program)
        # each node's position in the program (fetch sinks, which it skips, come last)
        self.position = [len(self.program)] * len(tables.items)
        for pos, ins in enumerate(self.program):
            self.position[ins.item.id] = pos

    def run_optimistic(self, step: StepContext, fallback: DataflowExecutor, timeout: Optional[float],
                       active: Any) -> list[Any]:
        """Runs the step; if an asynchronous kernel has not completed when its call returns,
        `fallback` takes the step over and this waits for it."""
        vals: list[Any] = [None] * self.num_slots
        dead = [False] * len(self.position) if self.has_deadness else None
        ins = None
        waiting: Optional[AsyncCall] = None
        try:
            for ins in self.program:
                args = [vals[s] for s in ins.in_slots]
                for s in ins.free_slots:  # before the call: see StraightLineExecutor.run
                    vals[s] = None
                n = ins.num_outputs
                if ins.deadness and (result := self.dead_or_control_flow(ins, args, dead)) is not _RUN:
                    vals[ins.out_slot:ins.out_slot + n] = result
                else:
                    if ins.is_async:
                        call = AsyncCall()
                        ins.compute(step, call.done, *args)
                        result = call.returned()
                        if result is _RETURNED:
                            waiting = call
                            break
                        if isinstance(result, BaseException):
                            raise result
                    elif ins.needs_step:
                        result = ins.compute(step, *args)
                    else:
                        result = ins.compute(*args)
                    if n == 1:
                        vals[ins.out_slot] = result
                    elif n:
                        vals[ins.out_slot:ins.out_slot + n] = result
                result = None
        except Exception as err:
            # As in the dataflow executor, a failed step is cancelled: kernels that registered
            # for cancellation (a mutex lock, say) let go of what they hold.
            annotated = kernel_errors.annotate(err, ins.item.op if ins is not None else None)
            step.cancel(annotated)
            if annotated is err:
                raise
            raise annotated from err
        if waiting is not None:
            args = None  # the waiting kernel's inputs: it holds them itself while it needs them
            return self.hand_over(step, fallback, ins, waiting, vals, dead, timeout, active)  # type: ignore[arg-type]
        results = [vals[s] for s in self.fetch_slots]
        if dead is not None and any(value is DEAD for value in results):
            raise dead_fetch_error(self.tables, next(i for i, v in enumerate(results) if v is DEAD))
        return results

    @staticmethod
    def dead_or_control_flow(ins: Instruction, args: list[Any], dead: Any) -> Any:
        """A Switch's, Merge's or ControlTrigger's outputs, a dead node's, or _RUN."""
        kind = ins.item.kind
        if kind == MERGE:
            outputs = merge_outputs(args)
            if outputs[0] is DEAD and args:
                dead[ins.item.id] = True  # every input dead
            return outputs
        if kind == CONTROL_TRIGGER:
            return ()  # signals live even after dead inputs
        if any(value is DEAD for value in args) or any(dead[c] for c in ins.control_sources):
            dead[ins.item.id] = True
            return ins.item.dead_outputs
        if kind == SWITCH:
            return (DEAD, args[0]) if bool(args[1]) else (args[0], DEAD)
        return _RUN

    def hand_over(self, step: StepContext, fallback: DataflowExecutor, ins: Instruction, call: AsyncCall,
                  vals: list[Any], dead: Optional[list[bool]], timeout: Optional[float], active: Any) -> list[Any]:
        """The dataflow executor continues the step from the waiting kernel `ins`."""
        pos = self.position[ins.item.id]
        executed = [(done.item, tuple(vals[done.out_slot:done.out_slot + done.num_outputs]),
                     dead is not None and dead[done.item.id])
                    for done in self.program[:pos]]  # freed values: only run consumers needed them
        vals.clear()  # from now on the executor's input slots hold what later nodes need
        state = ExecutorState(fallback, step)
        position = self.position
        ready = state.take_over(executed, ins.item, lambda item: position[item.id] > pos)
        executed.clear()
        tagged = (ins.item, state.root_state, False)
        call.forward_to(lambda result: state.finish_async(tagged, result))
        active.add(state)
        try:
            state.run_ready(ready)
            return state.wait(timeout)
        finally:
            active.discard(state)


def _mark_deadness(tables: PartitionTables, program: list[Instruction]) -> bool:
    """Marks the instructions that must check for dead values: control-flow nodes and all that
    a Switch reaches, by data or control edges. Returns whether there are any."""
    items = tables.items
    reach = [it.id for it in items if it.kind == SWITCH]
    marked = set(reach)
    while reach:
        for dst, _, _ in items[reach.pop()].out_edges:
            if dst not in marked:
                marked.add(dst)
                reach.append(dst)
    control_sources: dict[int, list[int]] = {}
    for it in items:
        for dst, _, dst_index in it.out_edges:
            if dst_index < 0 and it.id in marked:
                control_sources.setdefault(dst, []).append(it.id)
    for ins in program:
        item = ins.item
        ins.deadness = item.id in marked or item.kind in (MERGE, CONTROL_TRIGGER)
        ins.control_sources = tuple(control_sources.get(item.id, ()))
    return any(ins.deadness for ins in program)
