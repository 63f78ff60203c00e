"""Static node priorities for the executor (critical-path list scheduling): each node's priority
is the longest estimated time from its start to the end of the step, along any path of data or
control edges, weighted by the cost model's estimates (white paper 3.2.1: static estimates, or
times measured in earlier traced steps).

When two expensive kernels are ready at once and the device's cores are better spent on one of
them at a time (each splits its work over the pool, ops/intra_op.py), the executor starts the one
with the longer path after it first: the rest of the step then waits the least. In the CNN's
backward pass the gradient w.r.t. a convolution's input (what the layers below wait for) goes
before the gradient w.r.t. its filter (only the optimizer waits for that); in the LSTM's, the
softmax input gradient (the backward loop waits for it) before the softmax weights' gradient.

Loops: iterations follow each other, so a node in a loop body has the rest of its iteration, the
loop's later iterations and what follows the loop after it: the back edge (NextIteration) is cut
and stands for LOOP_TRIP_GUESS - 1 more iterations of the loop's longest iteration, then the
longest path after the loop's Exits (a guess: the trip count is not known when the plan is
built; nested loops count their inner loops once per outer iteration).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.runtime.cost_model import KERNEL_OVERHEAD_S, CostModel
from tensorweave.runtime.executor_tables import assign_frames
from tensorweave.runtime.graph_compiler import NodeItem, PartitionTables, topological_order

# How many iterations a loop is assumed to run.
LOOP_TRIP_GUESS = 10


def node_cost(cost_model: CostModel, device: Any) -> Callable[[NodeItem], float]:
    """A node's estimated time: the cost model's for graph nodes, the executor's dispatch cost
    for the nodes a plan adds (fetch sinks, partitioner-made nodes without a graph)."""

    def cost(item: NodeItem) -> float:
        op = item.op
        if item.is_sink or op is None or getattr(op, "graph", None) is None:
            return KERNEL_OVERHEAD_S
        return cost_model.compute_time(op, device)

    return cost


def _longest_paths(tables: PartitionTables, order: list[int], cost: list[float],
                   after_next: Callable[[int], float], exit_stops: bool) -> list[float]:
    """Longest path from each node to the end, back edges cut: a NextIteration's path goes on
    with `after_next(node id)`; with `exit_stops`, an Exit's path ends at the Exit."""
    items = tables.items
    path = [0.0] * len(items)
    for nid in reversed(order):
        item = items[nid]
        kind = item.control_flow
        if kind == ControlFlowKind.NEXT_ITERATION:
            path[nid] = cost[nid] + after_next(nid)
            continue
        after = 0.0
        if not (exit_stops and kind == ControlFlowKind.EXIT):
            for dst, _, _ in item.out_edges:
                if path[dst] > after:
                    after = path[dst]
        path[nid] = cost[nid] + after
    return path


def node_priorities(tables: PartitionTables, cost_of: Callable[[NodeItem], float]) -> list[float]:
    """Each node's longest estimated path to the end of the step, itself included (seconds).
    A loop's NextIteration continues with LOOP_TRIP_GUESS - 1 more iterations of the loop's
    longest iteration, then with the longest path after the loop's Exits."""
    order = topological_order(tables)
    cost = [cost_of(item) for item in tables.items]
    frames: Optional[list[str]] = assign_frames(tables)
    if frames is None:  # no consistent frames: loops count once
        return _longest_paths(tables, order, cost, lambda nid: 0.0, False)
    one_iteration = _longest_paths(tables, order, cost, lambda nid: 0.0, True)
    no_loops = _longest_paths(tables, order, cost, lambda nid: 0.0, False)
    iteration: dict[str, float] = {}  # frame -> its longest iteration (from a Merge)
    after_loop: dict[str, float] = {}  # frame -> its longest path after an Exit
    for item in tables.items:
        frame = frames[item.id]
        if item.control_flow == ControlFlowKind.MERGE:
            iteration[frame] = max(iteration.get(frame, 0.0), one_iteration[item.id])
        elif item.control_flow == ControlFlowKind.EXIT:
            after_loop[frame] = max(after_loop.get(frame, 0.0), no_loops[item.id])

    def after_next(nid: int) -> float:
        frame = frames[nid]  # type: ignore[index]
        return (LOOP_TRIP_GUESS - 1) * iteration.get(frame, 0.0) + after_loop.get(frame, 0.0)

    return _longest_paths(tables, order, cost, after_next, False)


def plan_priorities(tables: PartitionTables, cost_model: Optional[CostModel], device: Any) -> Optional[list[float]]:
    """Every node's priority, by node id (None without a cost model: all 0). They go into the
    plan's PlanLearning, beside the compiled rows."""
    if cost_model is None:
        return None
    return node_priorities(tables, node_cost(cost_model, device))
