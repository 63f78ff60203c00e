"""Assigns each node of a pruned graph to a device (white paper 3.2.1).

Feasible devices per node: those matching the node's requested device specification whose
device type has a kernel for the op. A request no device can satisfy is softened to the
default device under `allow_soft_placement`, otherwise rejected with InvalidArgumentError
naming the node and the constraint. Colocated nodes (`_class` = `loc:@name`) share a device.
"""
from __future__ import annotations

from typing import Any, Sequence

from tensorweave.framework import errors
from tensorweave.framework.device_spec import parse_device
from tensorweave.framework.graph import Operation


def _feasible(op: Operation, devices: Sequence[Any], spec_text: str) -> list[Any]:
    spec = parse_device(spec_text)
    out = []
    for d in devices:
        if spec.is_compatible_with(d.spec) and op.op_def.find_kernel(d.device_type) is not None:
            out.append(d)
    return out


def place(ops: Sequence[Operation], devices: Sequence[Any], allow_soft_placement: bool,
          log_device_placement: bool = False) -> dict[int, Any]:
    """Returns {id(op): device}."""
    default = devices[0]
    by_name = {op.name: op for op in ops}
    assignment: dict[int, Any] = {}
    for op in ops:
        groups = op._attrs.get("_class")
        requested = op.device
        if groups:
            # Colocation: take the first colocated node's request when this one has none.
            for g in groups:
                target = by_name.get(g[len("loc:@"):]) if g.startswith("loc:@") else None
                if target is not None and id(target) in assignment:
                    assignment[id(op)] = assignment[id(target)]
                    break
                if target is not None and not requested:
                    requested = target.device
            if id(op) in assignment:
                continue
        if not requested:
            assignment[id(op)] = default
            continue
        feasible = _feasible(op, devices, requested)
        if feasible:
            assignment[id(op)] = feasible[0]
        elif allow_soft_placement:
            assignment[id(op)] = _feasible(op, devices, "")[0] if _feasible(op, devices, "") else default
        else:
            known = ", ".join(d.name for d in devices)
            raise errors.InvalidArgumentError(
                None, op, f"Cannot assign a device for operation {op.name}: Could not satisfy explicit "
                f"device specification '{requested}' because no devices matching that specification "
                f"are registered in this process (with a {op.type} kernel); available devices: {known}. "
                "Set allow_soft_placement=True in ConfigProto to place it elsewhere.")
    if log_device_placement:
        for op in ops:
            print(f"{op.name}: ({op.type}): {assignment[id(op)].name}")
    for op in ops:
        op._assigned_device = assignment[id(op)].name
    return assignment
