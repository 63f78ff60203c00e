"""Colocation groups (white paper 4.3): union-find over the constraints that nodes must share a
device, so the placer can treat each group as one unit.

Two nodes are colocated when they name a common group in their `_class` attr (`loc:@name`, set
by `tf.colocate_with`, variables' initializers and reads, optimizer slots, gradients under
`colocate_gradients_with_ops`), and when one consumes the other's reference output through a
reference argument (Assign, AssignAdd, ApplyGradientDescent... run where the variable lives) or
takes a resource handle it made (a queue's enqueue and dequeue run where the queue lives, as in
TF: a handle names state in one device's resource manager). Across such an edge the state's
device wins: a consumer's own device request that conflicts with it is ignored (TF logs
"Ignoring device specification ..."), so `tf.assign_add(v, x)` under a worker's device scope
still runs where `v` lives.
"""
from __future__ import annotations

from typing import Sequence

from tensorweave.framework.device_spec import parse_device
from tensorweave.framework.dtypes import resource
from tensorweave.framework.graph import Operation

# Ops that take a resource without using it where they run (function calls pass it on to ops
# placed with it), as TF's input colocation exemptions.
_RESOURCE_INPUT_EXEMPT = frozenset({"PartitionedCall", "StatefulPartitionedCall"})


class ColocationGroups:
    """Union-find keyed by group names (`loc:@x`): ops join the groups they list, so two ops
    colocated with a node outside the plan still end up together."""

    def __init__(self, ops: Sequence[Operation]) -> None:
        self._parent: dict[str, str] = {}
        self._key_of: dict[int, str] = {}
        # id(consumer) -> the state's op, for consumers whose device request the state overrides
        self.overridden: dict[int, Operation] = {}
        for op in ops:
            groups = op._colocation_groups()
            key = groups[0]
            self._key_of[id(op)] = key
            for other in groups[1:]:
                self._union(key, other)
        for op in ops:
            exempt = op.type in _RESOURCE_INPUT_EXEMPT
            for i, is_ref_arg in enumerate(ref_argument_flags(op)):
                t = op.inputs[i]
                if id(t.op) not in self._key_of:
                    continue
                if (is_ref_arg and t.dtype.is_ref_dtype) or (t.dtype is resource and not exempt):
                    self._union(self._key_of[id(op)], self._key_of[id(t.op)])
                    if op.device and t.op.device and not _compatible(op.device, t.op.device):
                        self.overridden[id(op)] = t.op
        self._members: dict[str, list[Operation]] = {}
        for op in ops:
            self._members.setdefault(self.root(op), []).append(op)

    def _find(self, key: str) -> str:
        parent = self._parent
        root = key
        while parent.get(root, root) != root:
            root = parent[root]
        while key != root:  # path compression
            parent[key], key = root, parent.get(key, key)
        return root

    def _union(self, a: str, b: str) -> None:
        ra, rb = self._find(a), self._find(b)
        if ra != rb:
            self._parent[max(ra, rb)] = min(ra, rb)  # deterministic representative

    def root(self, op: Operation) -> str:
        return self._find(self._key_of[id(op)])

    def members(self, root: str) -> list[Operation]:
        return self._members[root]

    def roots(self) -> list[str]:
        return list(self._members)


def _compatible(a: str, b: str) -> bool:
    return parse_device(a).is_compatible_with(parse_device(b))


def ref_argument_flags(op: Operation) -> list[bool]:
    """Per input: whether the op's signature takes it by reference."""
    flags: list[bool] = []
    for arg in op.op_def.inputs:
        if arg.number_attr:
            n = op.node_attrs[arg.number_attr]
        elif arg.type_list_attr:
            n = len(op.node_attrs[arg.type_list_attr])
        else:
            n = 1
        flags.extend([arg.is_ref] * n)
    return flags
