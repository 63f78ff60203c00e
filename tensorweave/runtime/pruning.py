"""Partial execution (white paper 4.2): keep only the nodes the fetches and targets need.
Fed tensors cut the graph: their producers run only if something else needs them."""
from __future__ import annotations

from typing import Iterable

from tensorweave.framework.graph import Operation, Tensor


def prune(fetches: Iterable[Tensor], targets: Iterable[Operation], feeds: set[Tensor]) -> list[Operation]:
    """The needed operations, in graph creation order (a valid order for acyclic parts)."""
    needed: dict[int, Operation] = {}
    stack: list[Operation] = [t.op for t in fetches if t not in feeds] + list(targets)
    while stack:
        op = stack.pop()
        if id(op) in needed:
            continue
        needed[id(op)] = op
        for t in op.inputs:
            if t not in feeds and id(t.op) not in needed:
                stack.append(t.op)
        for c in op.control_inputs:
            # A control dependency on an op whose outputs are all fed is met by the feed (TF
            # replaces the fed node, e.g. a placeholder a CriticalSection waits for).
            if id(c) not in needed and not (c.outputs and all(t in feeds for t in c.outputs)):
                stack.append(c)
    return sorted(needed.values(), key=lambda op: op._id)
