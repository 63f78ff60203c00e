"""The straight-line path (DESIGN.md "Parallelism"): a partition with no control flow, no
asynchronous kernels and nothing worth running in parallel runs as a precomputed list of
kernel calls over a flat value array. No pending counts, no queues, no locks. (The same
program, run optimistically, also serves partitions with asynchronous kernels and dead
values: optimistic_line.py.)"""
from __future__ import annotations

from typing import Any, Callable

from tensorweave.runtime import kernel_errors
from tensorweave.runtime.graph_compiler import PartitionTables
from tensorweave.runtime.step_context import StepContext


class Instruction:
    __slots__ = ("compute", "in_slots", "out_slot", "num_outputs", "needs_step", "free_slots", "item",
                 "is_async", "deadness", "control_sources")

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
        # Set by OptimisticLine: a control-flow node, or one that may see dead values.
        self.deadness = False
        self.control_sources: tuple[int, ...] = ()  # nodes whose deadness flows in by control edges


def topological_order(tables: PartitionTables) -> list[int]:
    """A valid execution order (of one iteration, in a loop); Sends go as early as they can,
    since another device may be waiting for them."""
    items = tables.items
    # In-degrees (a Merge's pending count is not one), without loops' back edges.
    pending = [0] * len(items)
    for it in items:
        if it.control_flow != "next_iteration":
            for dst, _, _ in it.out_edges:
                pending[dst] += 1
    order: list[int] = []
    ready = [i for i, p in enumerate(pending) if p == 0]
    sends: list[int] = []
    while ready or sends:
        nid = sends.pop() if sends else ready.pop()
        order.append(nid)
        if items[nid].control_flow == "next_iteration":
            continue
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
