"""The sequential interpreter: a partition run in program order (DESIGN.md "Parallelism": the
straight-line path). A precomputed list of kernel calls over a flat value array: no pending
counts, no queues, no locks. executor_choice.choose_executor decides which partitions it runs.

Hooks, each chosen when the interpreter is built (one of a few prebuilt loop bodies), so a
step that needs none pays for none:

- dead values (conditionals without loops, white paper 4.4), following
  control_flow_semantics.py in program order: a node with a dead data input, or a control
  input from a dead node, is dead and does not run; a Switch sends its input to one output
  and a dead value to the other; a Merge forwards its first live input, and is dead when all
  its inputs are. Only nodes a Switch can reach check for them.
- hand-over to dataflow: asynchronous kernels (white paper 5.3) usually complete at once (a
  dequeue from a queue with elements); the program calls them like any kernel, and when one
  has not completed by the time its call returns, the dataflow executor takes the step over
  from that point (ExecutorState.take_over), so a waiting step still holds no thread but the
  caller's, and nodes independent of the waiting kernel still run.
- tracing (FULL_TRACE steps): each node's time, outputs and live bytes go to the step's
  StepTracer. Chosen per step (one test per step, not per node), so tracing a step does not
  change which executor runs it.
- checkpoints (cancellation and deadlines): before each expensive kernel and every
  CHECK_EVERY instructions the step asks `interrupted()` and stops with the step's error
  (Session.close, RunOptions.timeout_in_ms). A program without either (a short run of cheap
  kernels, which ends soon anyway) gets the plain body without the test.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.framework.kernel_contract import Compute, ControlFlowKind, KernelCall
from tensorweave.runtime import kernel_errors
from tensorweave.runtime.device import Device
from tensorweave.runtime.control_flow_semantics import RUN, sequential_outputs
from tensorweave.runtime.executor import RETURNED, DataflowExecutor, TracingExecutorState, dead_fetch_error
from tensorweave.runtime.executor_tables import CHECK_EVERY, CONTROL_TRIGGER, MERGE
from tensorweave.runtime.graph_compiler import NodeItem, PartitionTables, topological_order
from tensorweave.runtime.plan_codegen import StraightLineCode
from tensorweave.runtime.step_context import DEAD, StepContext


class Instruction:
    """One node of the program, built once with the interpreter."""

    __slots__ = ("compute", "in_slots", "out_slot", "num_outputs", "needs_step", "free_slots", "item",
                 "is_async", "deadness", "control_sources", "check", "last_uses", "out_uses")

    def __init__(self, item: NodeItem, in_slots: tuple[int, ...], out_slot: int,
                 free_slots: tuple[int, ...], deadness: bool, control_sources: tuple[int, ...],
                 check: bool) -> None:
        self.compute: Compute = item.compute
        self.in_slots = in_slots
        self.out_slot = out_slot
        self.num_outputs = item.num_outputs
        self.needs_step = item.kernel_call is not KernelCall.PLAIN
        self.is_async = item.kernel_call is KernelCall.ASYNC  # compute(step, done, *inputs)
        # Values used for the last time here, and the outputs of the instruction before that
        # nothing reads (a multi-output op's unused outputs, a target's): dropped before the call.
        self.free_slots = free_slots
        self.item = item
        # For traced steps (step_stats.StepTracer): the values whose last use this node is,
        # and how many uses each of its outputs has (0: nothing reads it; fetched: 1).
        self.last_uses: tuple[int, ...] = ()
        self.out_uses: tuple[int, ...] = ()
        # A control-flow node, or one that may see dead values (a Switch reaches it).
        self.deadness = deadness
        self.control_sources = control_sources  # nodes whose deadness flows in by control edges
        self.check = check  # a checkpoint: look for cancellation and the deadline before it runs


class AsyncCall:
    """The `done` continuation the interpreter gives an asynchronous kernel. Usually it runs
    during the call; if not, whoever takes the step over gets the late result through
    `forward_to`. Lock-free: list appends are atomic, and the first entry decides the order."""

    __slots__ = ("box", "handoff")

    def __init__(self) -> None:
        self.box: list[Any] = []
        self.handoff: Optional[list[Any]] = None

    def done(self, result: Any) -> None:
        box = self.box
        box.append(result)
        if box[0] is not RETURNED:
            return  # during the call: `returned` gives it to the caller
        entry = (result,)
        handoff: list[Any] = self.handoff  # type: ignore[assignment]
        handoff.append(entry)
        if handoff[0] is not entry:
            handoff[0](result)  # the taker is already waiting for it

    def returned(self) -> Any:
        """After the call: what the kernel passed to `done`, or RETURNED if it has not yet."""
        box = self.box
        if box:
            return box[0]
        self.handoff = []
        box.append(RETURNED)
        return box[0]

    def forward_to(self, target: Callable[[Any], None]) -> None:
        """Sends the late result to `target`, now or when it comes."""
        handoff: list[Any] = self.handoff  # type: ignore[assignment]
        handoff.append(target)
        first = handoff[0]
        if first is not target:
            target(first[0])


class SequentialInterpreter:
    """Runs one partition in program order. `fallback`: the dataflow executor that takes a
    step over when an asynchronous kernel waits (None: the partition has no asynchronous
    kernel, or none may wait)."""

    def __init__(self, tables: PartitionTables, device: Device, fallback: Optional[DataflowExecutor],
                 straight_line: bool = False) -> None:
        self.tables = tables
        self.device = device
        self.fallback = fallback
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
        order = [nid for nid in topological_order(tables) if not items[nid].is_sink]
        last_use: dict[int, int] = {}
        for pos, nid in enumerate(order):
            for s in sources[nid]:
                last_use[s] = pos
        self.fetch_slots = [sources[sid][0] for sid in tables.fetch_items]
        keep = set(self.fetch_slots)
        last_uses: dict[int, list[int]] = {}
        for slot, pos in last_use.items():
            if slot not in keep:
                last_uses.setdefault(pos, []).append(slot)
        # An output nothing reads dies right after its node: the next instruction drops it.
        unused = {pos: [base[nid] + port for port in range(items[nid].num_outputs)
                        if base[nid] + port not in last_use and base[nid] + port not in keep]
                  for pos, nid in enumerate(order)}
        marked, control_sources = _deadness_marks(tables)
        self.program = [Instruction(items[nid], tuple(sources[nid]), base[nid],
                                    tuple(last_uses.get(pos, []) + unused.get(pos - 1, [])),
                                    nid in marked or items[nid].kind in (MERGE, CONTROL_TRIGGER),
                                    tuple(control_sources.get(nid, ())),
                                    items[nid].expensive or pos % CHECK_EVERY == CHECK_EVERY - 1)
                        for pos, nid in enumerate(order)]
        for pos, ins in enumerate(self.program):
            ins.last_uses = tuple(last_uses.get(pos, ()))
            ins.out_uses = tuple(0 if ins.out_slot + port in unused[pos] else 1 for port in range(ins.num_outputs))
        self.num_slots = num_slots
        self.has_deadness = any(ins.deadness for ins in self.program)
        # each node's position in the program (fetch sinks, which it skips, come last)
        self.position = [len(self.program)] * len(items)
        for pos, ins in enumerate(self.program):
            self.position[ins.item.id] = pos
        self.has_checks = any(ins.check for ins in self.program)
        # The loop body, chosen once: the plain one unless dead values or waits can happen, or
        # the program is long enough to need checkpoints.
        self.run: Callable[[StepContext], list[Any]] = (
            self.run_with_hooks if self.has_deadness or tables.has_async
            else self.run_checked if self.has_checks else self.run_plain)
        if straight_line and self.run != self.run_with_hooks:
            # the same program as generated code (plan_codegen.py), from the plan's second step
            self.run = StraightLineCode(self.program, self.fetch_slots, self.run, self.run_traced).run

    # -- the loop bodies ----------------------------------------------------------------------------
    def run_plain(self, step: StepContext) -> list[Any]:
        """No dead values, no asynchronous kernels, no checkpoints: kernel calls in order."""
        if step.stats is not None:
            return self.run_traced(step)
        vals: list[Any] = [None] * self.num_slots
        ins = None
        try:
            for ins in self.program:
                # Values used for the last time are dropped before the call and no output
                # stays in `result`: the kernel may write into an input nothing else holds
                # (ops/buffer_forwarding.py).
                args = [vals[s] for s in ins.in_slots]
                for s in ins.free_slots:
                    vals[s] = None
                if ins.needs_step:
                    result = ins.compute(step, *args)
                else:
                    result = ins.compute(*args)
                n = ins.num_outputs
                if n == 1:
                    vals[ins.out_slot] = result
                elif n:
                    vals[ins.out_slot:ins.out_slot + n] = result
                result = None
        except Exception as err:
            kernel_errors.reraise(err, ins.item.op if ins is not None else None)
        return [vals[s] for s in self.fetch_slots]

    def run_checked(self, step: StepContext) -> list[Any]:
        """run_plain with checkpoints (the program has expensive kernels or is long)."""
        if step.stats is not None:
            return self.run_traced(step)
        vals: list[Any] = [None] * self.num_slots
        ins = None
        try:
            for ins in self.program:
                if ins.check and step.interrupted() is not None:
                    raise step.cancellation.cancelled  # type: ignore[misc]
                # Values used for the last time are dropped before the call and no output
                # stays in `result`: the kernel may write into an input nothing else holds
                # (ops/buffer_forwarding.py).
                args = [vals[s] for s in ins.in_slots]
                for s in ins.free_slots:
                    vals[s] = None
                if ins.needs_step:
                    result = ins.compute(step, *args)
                else:
                    result = ins.compute(*args)
                n = ins.num_outputs
                if n == 1:
                    vals[ins.out_slot] = result
                elif n:
                    vals[ins.out_slot:ins.out_slot + n] = result
                result = None
        except Exception as err:
            if err is step.cancellation.cancelled:
                raise  # the step's own cancellation (close, the deadline), naming no node
            kernel_errors.reraise(err, ins.item.op if ins is not None else None)
        return [vals[s] for s in self.fetch_slots]

    def run_with_hooks(self, step: StepContext) -> list[Any]:
        """The deadness and hand-over hooks (untraced), with checkpoints."""
        if step.stats is not None:
            return self.run_traced(step)
        vals: list[Any] = [None] * self.num_slots
        # by node id, whether it was dead (None when no node may be: nothing reads it then)
        dead: list[bool] = [False] * len(self.position) if self.has_deadness else None  # type: ignore[assignment]
        ins = None
        waiting: Optional[AsyncCall] = None
        try:
            for ins in self.program:
                if ins.check and step.interrupted() is not None:
                    raise step.cancellation.cancelled  # type: ignore[misc]
                args = [vals[s] for s in ins.in_slots]
                for s in ins.free_slots:  # before the call: see run_plain
                    vals[s] = None
                n = ins.num_outputs
                if ins.deadness and (
                        result := sequential_outputs(ins.item, args, ins.control_sources, dead)) is not RUN:
                    vals[ins.out_slot:ins.out_slot + n] = result
                else:
                    if ins.is_async:
                        call = AsyncCall()
                        ins.compute(step, call.done, *args)
                        result = call.returned()
                        if result is RETURNED:
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
            raise self.failed(step, err, ins) from err
        if waiting is not None:
            del args  # the waiting kernel's inputs: it holds them itself while it needs them
            return self.hand_over(step, ins, waiting, vals, dead)  # type: ignore[arg-type]
        return self.results(vals, dead)

    def run_traced(self, step: StepContext) -> list[Any]:
        """Every hook the partition needs, with the tracing hook: per node its time, its outputs
        and the live bytes it holds."""
        tracer = step.stats
        assert tracer is not None  # only for traced steps
        device = self.device
        vals: list[Any] = [None] * self.num_slots
        # by node id, whether it was dead (None when no node may be: nothing reads it then)
        dead: list[bool] = [False] * len(self.position) if self.has_deadness else None  # type: ignore[assignment]
        ins = None
        waiting: Optional[AsyncCall] = None
        try:
            for ins in self.program:
                if ins.check and step.interrupted() is not None:
                    raise step.cancellation.cancelled  # type: ignore[misc]
                start = tracer.now()
                args = [vals[s] for s in ins.in_slots]
                n = ins.num_outputs
                ran = True
                if ins.deadness and (
                        result := sequential_outputs(ins.item, args, ins.control_sources, dead)) is not RUN:
                    ran = not dead[ins.item.id] or ins.item.control_flow is not None  # type: ignore[index]
                    outputs = list(result)
                else:
                    if ins.is_async:
                        call = AsyncCall()
                        ins.compute(step, call.done, *args)
                        result = call.returned()
                        if result is RETURNED:
                            waiting = call
                            break
                        if isinstance(result, BaseException):
                            raise result
                    elif ins.needs_step:
                        result = ins.compute(step, *args)
                    else:
                        result = ins.compute(*args)
                    outputs = [result] if n == 1 else list(result) if n else []
                result = None
                vals[ins.out_slot:ins.out_slot + n] = outputs
                done = [vals[s] for s in ins.last_uses]
                if ran:
                    tracer.node_done(device, ins.item, start, tracer.now(), outputs, ins.out_uses, done)
                else:
                    tracer.release(device, done)
                for s in ins.free_slots:
                    vals[s] = None
        except Exception as err:
            raise self.failed(step, err, ins) from err
        if waiting is not None:
            del args  # as in run_with_hooks
            return self.hand_over(step, ins, waiting, vals, dead, start)  # type: ignore[arg-type]
        return self.results(vals, dead)

    # -- the hooks' parts ---------------------------------------------------------------------------
    def results(self, vals: list[Any], dead: Optional[list[bool]]) -> list[Any]:
        results = [vals[s] for s in self.fetch_slots]
        if dead is not None and any(value is DEAD for value in results):
            raise dead_fetch_error(self.tables, next(i for i, v in enumerate(results) if v is DEAD))
        return results

    @staticmethod
    def failed(step: StepContext, err: Exception, ins: Optional[Instruction]) -> BaseException:
        """As in the dataflow executor, a failed step is cancelled: kernels that registered for
        cancellation (a mutex lock, say) let go of what they hold. Returns the error to raise:
        the step's own cancellation (Session.close, the deadline) as it is, naming no node."""
        if err is step.cancellation.cancelled:
            return err
        annotated = kernel_errors.annotate(err, ins.item.op if ins is not None else None)
        step.cancel(annotated)
        return annotated

    def hand_over(self, step: StepContext, ins: Instruction, call: AsyncCall, vals: list[Any],
                  dead: Optional[list[bool]], traced_start: Optional[int] = None) -> list[Any]:
        """The dataflow executor continues the step from the waiting kernel `ins`."""
        fallback: DataflowExecutor = self.fallback  # type: ignore[assignment]
        pos = self.position[ins.item.id]
        executed = [(done.item, tuple(vals[done.out_slot:done.out_slot + done.num_outputs]),
                     dead is not None and dead[done.item.id])
                    for done in self.program[:pos]]  # freed values: only run consumers needed them
        inputs = [vals[s] for s in ins.last_uses]  # a traced step counts them until it completes
        vals.clear()  # from now on the executor's input slots hold what later nodes need
        state = fallback.new_state(step)
        position = self.position
        ready = state.take_over(executed, ins.item, lambda item: position[item.id] > pos)
        executed.clear()
        tagged = (ins.item, state.root_state, False)
        if isinstance(state, TracingExecutorState) and traced_start is not None:
            state.started[id(tagged)] = (traced_start, inputs)  # its completion is recorded from there
        call.forward_to(lambda result: state.finish_async(tagged, result))
        state.run_ready(ready)
        return state.wait(step.remaining())


def _deadness_marks(tables: PartitionTables) -> tuple[set[int], dict[int, list[int]]]:
    """The nodes that must check for dead values (all that a Switch reaches, by data or
    control edges), and for each node the marked nodes among its control inputs."""
    items = tables.items
    reach = [it.id for it in items if it.control_flow == ControlFlowKind.SWITCH]
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
    return marked, control_sources
