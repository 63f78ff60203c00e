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

Loops: back edges (NextIteration) are left out, and a loop body's nodes count as many times as a
loop usually runs, since its iterations follow each other (a guess: the trip count is not known
when the plan is built).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.runtime.cost_model import KERNEL_OVERHEAD_S, CostModel
from tensorweave.runtime.executor_tables import assign_frames
from tensorweave.runtime.graph_compiler import NodeItem, PartitionTables
from tensorweave.runtime.straight_line import topological_order

# How many times a loop body's nodes count on a path through the loop (per nesting level).
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


def _loop_weights(tables: PartitionTables) -> list[float]:
    """LOOP_TRIP_GUESS to the power of each node's loop nesting depth."""
    frames: Optional[list[str]] = assign_frames(tables)
    if frames is None:
        return [1.0] * len(tables.items)
    depth: dict[str, int] = {"": 0}
    parent: dict[str, str] = {}
    for item in tables.items:  # an Enter's frame is nested in the Enter's own frame
        if item.control_flow == "enter":
            parent.setdefault(item.frame_name, frames[item.id])

    def depth_of(name: str) -> int:
        if name not in depth:
            depth[name] = 1 + depth_of(parent[name]) if name in parent and parent[name] != name else 1
        return depth[name]

    return [float(LOOP_TRIP_GUESS ** depth_of(f)) for f in frames]


def node_priorities(tables: PartitionTables, cost: Callable[[NodeItem], float]) -> list[float]:
    """Each node's longest weighted path to the end of the step, itself included (seconds)."""
    items = tables.items
    weights = _loop_weights(tables)
    priority = [0.0] * len(items)
    for nid in reversed(topological_order(tables)):
        item = items[nid]
        after = 0.0
        if item.control_flow != "next_iteration":  # its edge goes back to the loop's start
            for dst, _, _ in item.out_edges:
                if priority[dst] > after:
                    after = priority[dst]
        priority[nid] = cost(item) * weights[nid] + after
    return priority


def assign_priorities(tables: PartitionTables, cost_model: Optional[CostModel], device: Any) -> None:
    """Sets `priority` on every node row of a partition (all 0 without a cost model)."""
    if cost_model is None:
        return
    for item, value in zip(tables.items, node_priorities(tables, node_cost(cost_model, device))):
        item.priority = value
