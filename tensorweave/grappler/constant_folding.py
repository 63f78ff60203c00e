"""Constant folding (TF's constant_folding.cc): a node whose data inputs are all constants is
run once, now, with its own CPU kernel, and becomes a Const holding the result; so are Shape,
Size and Rank of tensors whose static shape is known. Walking in topological order folds whole
constant subgraphs in one pass.

The folded Const keeps the node's name (so fetching it still works) and the control inputs of
the node and of the constants it read, so it is dead, or waits, exactly when the node would
have. Never folded: stateful and random ops, control flow, nodes in loops, feeds and
placeholders, Python functions, results over the size cap (10 MiB, or
OptimizerOptions.max_folded_constant_in_bytes), values that are not plain arrays, and nodes
whose kernel fails (the step reports that error as it would have). A folded node with several
outputs becomes one Const per output (`ConstantFolding/<name>-folded-<i>`), unless it is
fetched or something waits on it.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.kernel_contract import KernelCall
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.grappler.graph_view import Node, OptGraph, Port, const_value, scratch_operation
from tensorweave.grappler.pass_context import PassContext
from tensorweave.ops.array.constant_op import Const
from tensorweave.runtime.graph_compiler import build_kernel

_NEVER = frozenset({"Const", "Placeholder", "PlaceholderV2", "PlaceholderWithDefault", "PyFuncStateless",
                    "EagerPyFunc", "_FusedMatMul", "_FusedConv2D",
                    # they read the file system, which ops of the same step may change first
                    # (a MatchingFiles run after a WriteFile finds the file, as in TF)
                    "MatchingFiles", "ReadFile"})
_SHAPE_OPS = frozenset({"Shape", "Size", "Rank"})


def optimize(graph: OptGraph, context: PassContext) -> bool:
    device = context.cpu
    if device is None:
        return False
    limit = context.settings.max_constant_bytes
    changed = False
    control_consumers: Optional[dict] = None
    consumers: Optional[dict] = None
    for node in graph.ordered():
        if node.removed or node.opaque or not node.inputs:
            continue
        if node.type in _SHAPE_OPS:
            values = _shape_value(node)
            if values is None and _all_const(node):
                values = _evaluate(node, device, limit)
        elif _all_const(node) and node.type not in _NEVER and _plain_outputs(node):
            values = _evaluate(node, device, limit)
        else:
            continue
        if values is None:
            continue
        if len(values) == 1:
            _become_const(node, values[0])
        else:
            if control_consumers is None or consumers is None:
                control_consumers, consumers = graph.control_consumers(), graph.consumers()
            if node.preserved or control_consumers.get(id(node)):
                continue
            _split_into_consts(graph, node, values, consumers.get(id(node), []))
        changed = True
    return changed


def _all_const(node: Node) -> bool:
    for port in node.inputs:
        if const_value(port) is None:
            return False
    return True


def _plain_outputs(node: Node) -> bool:
    if not node.dtypes:
        return False
    for dt in node.dtypes:
        if dt.is_ref_dtype or dt.base_dtype in (_dtypes.resource, _dtypes.variant):
            return False
    return True


def _shape_value(node: Node) -> Optional[list[np.ndarray]]:
    """Shape/Size/Rank of a statically known shape (the input itself need not be constant)."""
    src, port = node.inputs[0]
    shape: TensorShape = src.shapes[port]
    if node.type == "Rank":
        if shape.ndims is None:
            return None
        return [np.asarray(shape.ndims, np.int32)]
    if not shape.is_fully_defined():
        return None
    out_type = node.attrs.get("out_type", _dtypes.int32).as_numpy_dtype
    dims = shape.as_list()
    if node.type == "Shape":
        return [np.asarray(dims, out_type)]
    return [np.asarray(int(np.prod(dims, dtype=np.int64)), out_type)]


def _evaluate(node: Node, device: Any, limit: int) -> Optional[list[np.ndarray]]:
    if not node.inputs or node.op_def.kernel_call is not KernelCall.PLAIN:
        return None
    args = []
    for port in node.inputs:
        value = const_value(port)
        if value is None:
            return None
        args.append(value if value.flags.c_contiguous else np.array(value))  # broadcast views made whole
    if sum(a.nbytes for a in args) > 4 * limit:
        return None
    try:
        op = scratch_operation(node, [_const_node(src, port, a) for (src, port), a in zip(node.inputs, args)])
        result = build_kernel(op, device)(*args)
    except Exception:  # noqa: BLE001  (the step reports the kernel's error when it runs)
        return None
    results = result if len(node.dtypes) > 1 else (result,)
    if not isinstance(results, (tuple, list)) or len(results) != len(node.dtypes):
        return None
    values = []
    total = 0
    for value, dt in zip(results, node.dtypes):
        if not isinstance(value, (np.ndarray, np.generic)):
            return None
        array = np.array(value, dtype=dt.as_numpy_dtype)  # a copy: never a view of an input
        total += array.nbytes
        if total > limit:
            return None
        values.append(array)
    return values


def _const_node(src: Node, port: int, value: np.ndarray) -> Node:
    """A stand-in Const for an input (its port's value as output 0)."""
    dtype = src.dtypes[port]
    return Node(src.name, Const, {"value": value, "dtype": dtype}, src.device, src.op, [dtype],
                [src.shapes[port]], src.key)


def _folded_controls(node: Node) -> list[Node]:
    controls = list(node.controls)
    for src, _ in node.inputs:
        for c in src.controls:
            if c not in controls:
                controls.append(c)
    return controls


def _become_const(node: Node, value: np.ndarray) -> None:
    node.controls = _folded_controls(node)
    dtype = node.dtypes[0]
    node.set_op_def(Const)
    node.attrs = {"value": value, "dtype": dtype}
    node.inputs = []
    node.shapes = [TensorShape(value.shape)]
    node.changed = True


def _split_into_consts(graph: OptGraph, node: Node, values: list[np.ndarray],
                       consumers: list[tuple[Node, int]]) -> None:
    controls = _folded_controls(node)
    for i, (value, dtype) in enumerate(zip(values, node.dtypes)):
        users = [(u, j) for u, j in consumers if u.inputs[j] == (node, i)]
        if not users:
            continue
        const = graph.new_node(graph.unique_name(f"ConstantFolding/{node.name}-folded-{i}"), Const,
                               {"value": value, "dtype": dtype}, [], node.device, [dtype],
                               [TensorShape(value.shape)], node)
        const.controls = list(controls)
        const.op = node.op  # errors and tracebacks still point at the user's line
        port: Port = (const, 0)
        graph.redirect((node, i), port, users)
    node.removed = True
