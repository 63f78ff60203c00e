"""ASAP/ALAP scheduling of Receive nodes (white paper 5.2; `GraphOptions.enable_recv_scheduling`).

Left alone, every Recv is a root of its partition and starts with the step, so a device may
hold large received tensors long before anything consumes them. This pass estimates, over the
whole partitioned graph (Send -> Recv counted as an edge with its transfer cost), each node's
as-soon-as-possible start and finish times and its as-late-as-possible start time (the latest
start that does not lengthen the critical path). For each top-level Recv it then adds a control
edge from the node on the same device that is estimated to finish last before the Recv's ALAP
time, so the Recv starts just before its consumers need it. A candidate is never downstream of
the Recv (reachability is tracked across devices and updated with each added edge), so the new
edges cannot create a cycle or a cross-device deadlock.
"""
from __future__ import annotations

from typing import Any, Sequence

from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.runtime.cost_model import KERNEL_OVERHEAD_S, TRANSFER_LATENCY_S, CostModel
from tensorweave.runtime.partition import Partition, PNode

_BACK_EDGE = ControlFlowKind.NEXT_ITERATION


class _Graph:
    """All partitions' nodes as one graph with integer ids."""

    def __init__(self, partitions: Sequence[Partition]) -> None:
        self.nodes: list[PNode] = [n for p in partitions for n in p.nodes]
        self.index = {id(n): i for i, n in enumerate(self.nodes)}
        self.succ: list[list[int]] = [[] for _ in self.nodes]
        self.pred: list[list[int]] = [[] for _ in self.nodes]
        sends: dict[str, int] = {}
        recvs: dict[str, int] = {}
        for i, node in enumerate(self.nodes):
            if node.type == "_Send":
                sends[node.op.node_attrs["tensor_name"]] = i
            elif node.type == "_Recv":
                recvs[node.op.node_attrs["tensor_name"]] = i
            sources = [src for src, _ in node.inputs] + list(node.control_inputs)
            for src in sources:
                if src.type != "NextIteration":
                    self._edge(self.index[id(src)], i)
        for name, r in recvs.items():
            if name in sends:
                self._edge(sends[name], r)

    def _edge(self, a: int, b: int) -> None:
        self.succ[a].append(b)
        self.pred[b].append(a)

    def topological(self) -> list[int]:
        pending = [len(p) for p in self.pred]
        order = [i for i, n in enumerate(pending) if n == 0]
        for i in order:  # grows while iterating
            for s in self.succ[i]:
                pending[s] -= 1
                if pending[s] == 0:
                    order.append(s)
        return order


def _cost(node: PNode, cost_model: CostModel) -> float:
    if node.op is None or node.is_synthetic:
        return TRANSFER_LATENCY_S if node.type == "_Recv" else KERNEL_OVERHEAD_S
    return cost_model.compute_time(node.op, node.device)


def schedule_recvs(partitions: Sequence[Partition], cost_model: CostModel) -> int:
    """Adds the control edges; returns how many."""
    graph = _Graph(partitions)
    order = graph.topological()
    if len(order) != len(graph.nodes):
        return 0  # a cycle outside loops: leave the graph as it is
    cost = [_cost(n, cost_model) for n in graph.nodes]
    start = [0.0] * len(cost)
    for i in order:
        start[i] = max((start[p] + cost[p] for p in graph.pred[i]), default=0.0)
    finish = [s + c for s, c in zip(start, cost)]
    makespan = max(finish, default=0.0)
    latest = [0.0] * len(cost)
    for i in reversed(order):
        latest[i] = min((latest[s] for s in graph.succ[i]), default=makespan) - cost[i]
    reach = _Reachability(graph, order)
    added = 0
    for r, node in enumerate(graph.nodes):
        if node.type != "_Recv" or node.frame or latest[r] <= start[r]:
            continue
        best, best_finish = -1, start[r]
        for p, other in enumerate(graph.nodes):
            if (other.device is node.device and start[r] < finish[p] <= latest[r] and finish[p] > best_finish
                    and not other.frame and _is_user_node(other)
                    and not reach.reaches(r, p)):
                best, best_finish = p, finish[p]
        if best >= 0:
            node.control_inputs.append(graph.nodes[best])
            reach.add_edge(best, r)
            added += 1
    return added


def _is_user_node(node: PNode) -> bool:
    """Only the program's own computations pace a Recv (not other transfers, whose timing is
    what is being decided, nor control-flow routing)."""
    return node.op is not None and not node.is_synthetic and node.op.op_def.control_flow is None


class _Reachability:
    """Descendant and ancestor sets as bitsets, kept exact as edges are added."""

    def __init__(self, graph: _Graph, order: list[int]) -> None:
        n = len(graph.nodes)
        self.desc = [0] * n
        self.anc = [0] * n
        for i in reversed(order):
            for s in graph.succ[i]:
                self.desc[i] |= self.desc[s] | (1 << s)
        for i in order:
            for p in graph.pred[i]:
                self.anc[i] |= self.anc[p] | (1 << p)

    def reaches(self, a: int, b: int) -> bool:
        return a == b or bool((self.desc[a] >> b) & 1)

    def add_edge(self, a: int, b: int) -> None:
        down = self.desc[b] | (1 << b)
        up = self.anc[a] | (1 << a)
        for i in _bits(up):
            self.desc[i] |= down
        for i in _bits(down):
            self.anc[i] |= up


def _bits(mask: int) -> Any:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low
