"""Executors for traced steps: the same executors, also timing every node and counting the
bytes of live outputs per device (step_stats.StepTracer). Chosen per step, only when the step
carries a tracer, so untraced steps run the plain executors untouched."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.runtime import kernel_errors
from tensorweave.runtime.executor import DataflowExecutor, ExecutorState, TaggedNode
from tensorweave.runtime.graph_compiler import PartitionTables
from tensorweave.runtime.step_context import DEAD, StepContext
from tensorweave.runtime.straight_line import StraightLineExecutor


def consumers_per_output(tables: PartitionTables) -> list[list[int]]:
    """How many data edges leave each output of each node."""
    counts = [[0] * max(it.num_outputs, 1) for it in tables.items]
    for it in tables.items:
        for _, port, dst_index in it.out_edges:
            if dst_index >= 0:
                counts[it.id][port] += 1
    return counts


def _holds_memory(item: Any) -> bool:
    op = item.op
    return not item.is_sink and not (op is not None and op.op_def.persistent_output)


class TracingExecutorState(ExecutorState):
    """ExecutorState that reports each node's time and outputs and the live bytes it holds.
    Every node goes through `process` and `finish_node` (no inlined fast path)."""

    def __init__(self, executor: DataflowExecutor, step: StepContext) -> None:
        super().__init__(executor, step)
        self.tracer = step.stats
        self.consumers = consumers_per_output(executor.tables.tables)
        self.started: dict[int, int] = {}

    run_nodes = ExecutorState.run_each

    def process(self, tagged: TaggedNode) -> Optional[tuple]:
        item, state, _ = tagged
        inputs = state.input_tensors[item.slot:item.slot_end]
        self.started[id(tagged)] = self.tracer.now()
        outputs = super().process(tagged)
        self.tracer.release(self.device, inputs)  # one use of each input is over
        return outputs

    def finish_node(self, tagged: TaggedNode, outputs: tuple, ready: Any) -> None:
        item, _, is_dead = tagged
        start = self.started.pop(id(tagged), None)
        ran = not is_dead or item.control_flow is not None or (item.is_transfer and item.num_outputs > 0)
        if start is not None and not item.is_sink and ran:
            self.tracer.record(self.device, item, start, self.tracer.now(), outputs)
            if _holds_memory(item):
                counts = self.consumers[item.id]
                for port, value in enumerate(outputs):
                    if value is not DEAD:
                        self.tracer.hold(self.device, value, counts[port])
        super().finish_node(tagged, outputs, ready)


def run_straight_line_traced(executor: StraightLineExecutor, step: StepContext, device: Any) -> list[Any]:
    """StraightLineExecutor.run with per-node stats and live-byte counting."""
    tracer = step.stats
    vals: list[Any] = [None] * executor.num_slots
    ins = None
    try:
        for ins in executor.program:
            start = tracer.now()
            args = [vals[s] for s in ins.in_slots]
            result = ins.compute(step, *args) if ins.needs_step else ins.compute(*args)
            n = ins.num_outputs
            outputs = [result] if n == 1 else list(result) if n else []
            vals[ins.out_slot:ins.out_slot + n] = outputs
            tracer.record(device, ins.item, start, tracer.now(), outputs)
            if _holds_memory(ins.item):
                for value in outputs:
                    tracer.hold(device, value, 1)
            freed = [vals[s] for s in ins.free_slots]
            tracer.release(device, freed)
            for s in ins.free_slots:
                vals[s] = None
    except Exception as err:
        kernel_errors.reraise(err, ins.item.op if ins is not None else None)
    return [vals[s] for s in executor.fetch_slots]
