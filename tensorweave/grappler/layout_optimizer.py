"""Layout optimisation (TF's generic_layout_optimizer*.cc, in the CPU direction): NCHW image ops
run as NHWC, with transposes only where a chain of them starts and ends.

TensorFlow's CPU kernels compute convolutions, pooling and batch norm in NHWC; so do
tensorweave's, which transpose an NCHW input in and the output back out in every kernel. On a
plan whose nodes run on CPU, this pass rewrites each layout-sensitive NCHW node (Conv2D and its
two backprops, BiasAdd/BiasAddGrad, MaxPool/AvgPool and their gradients, FusedBatchNorm(V3)
and its gradients) to NHWC, with its strides, ksize and dilations and its constant shape
inputs (a backprop's input_sizes) permuted, and the layout-agnostic element-wise nodes between
such nodes (Relu, ReluGrad, Add, Mul, ... on 4-D tensors of one shape, or scalars) with them. A 4-D input
coming from outside the rewritten set passes a Transpose to NHWC (or, when it is itself a
transpose from NHWC, reads that transpose's input: the pair cancels); an output read outside
the set passes one Transpose back to NCHW. So a CNN written in NCHW pays two transposes per
chain instead of two per op, and the NHWC convolutions can then be fused by the remapper.

Left alone: nodes placed (or requested) on another device type, fetched or target nodes (their
outputs keep TF's layout), nodes with explicit padding, ranks not statically 4, non-float
types, shape inputs that are not constants, and every node in loops or opaque to the passes.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.grappler.graph_view import Node, OptGraph, Port, const_value, is_opaque
from tensorweave.grappler.pass_context import PassContext
from tensorweave.ops.array.constant_op import Const
from tensorweave.ops.array.transposition import Transpose

TO_NHWC = (0, 2, 3, 1)
TO_NCHW = (0, 3, 1, 2)


@dataclasses.dataclass(frozen=True)
class _Layout:
    inputs: tuple[int, ...]         # 4-D activation inputs
    outputs: tuple[int, ...]        # 4-D activation outputs
    shape_inputs: tuple[int, ...] = ()  # constant NCHW shape vectors
    list_attrs: tuple[str, ...] = ()    # per-dimension attrs


_CONV = ("strides", "dilations")
_POOL = ("ksize", "strides")
SENSITIVE = {
    "Conv2D": _Layout((0,), (0,), (), _CONV),
    "Conv2DBackpropInput": _Layout((2,), (0,), (0,), _CONV),
    "Conv2DBackpropFilter": _Layout((0, 2), (), (), _CONV),
    "BiasAdd": _Layout((0,), (0,)),
    "BiasAddGrad": _Layout((0,), ()),
    "MaxPool": _Layout((0,), (0,), (), _POOL),
    "AvgPool": _Layout((0,), (0,), (), _POOL),
    "MaxPoolGrad": _Layout((0, 1, 2), (0,), (), _POOL),
    "AvgPoolGrad": _Layout((1,), (0,), (0,), _POOL),
    "FusedBatchNorm": _Layout((0,), (0,)),
    "FusedBatchNormV3": _Layout((0,), (0,)),
    "FusedBatchNormGrad": _Layout((0, 1), (0,)),
    "FusedBatchNormGradV3": _Layout((0, 1), (0,)),
}
# Element-wise ops whose result does not depend on the layout when all their inputs share one
# 4-D shape (no broadcasting).
AGNOSTIC = frozenset({"Relu", "Relu6", "Elu", "Selu", "Tanh", "Sigmoid", "Softplus", "Neg", "Square", "Abs",
                      "Exp", "Log", "Identity", "ReluGrad", "Relu6Grad", "EluGrad", "SeluGrad", "TanhGrad",
                      "SigmoidGrad", "SoftplusGrad", "Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum",
                      "Minimum", "SquaredDifference", "AddN"})
_FLOAT = ("float16", "float32", "float64")


def optimize(graph: OptGraph, context: PassContext) -> bool:
    if not any(n.type in SENSITIVE and n.attrs.get("data_format") == "NCHW" for n in graph.nodes):
        return False  # the common case, decided in one scan
    nodes = graph.ordered()
    converted: dict[int, _Layout] = {}
    all_cpu = all(d.device_type == "CPU" for d in context.devices)
    for node in nodes:
        if node.removed or is_opaque(node) or node.preserved or not _on_cpu(node, all_cpu):
            continue
        layout = _sensitive(node)
        if layout is None and node.type in AGNOSTIC:
            layout = _agnostic(node, converted)
        if layout is not None:
            converted[id(node)] = layout
    if not any(n.type in SENSITIVE for n in nodes if id(n) in converted):
        return False
    consumers = graph.consumers()
    rewritten = [n for n in nodes if id(n) in converted]
    into: dict[tuple[int, int], Port] = {}  # one transpose to NHWC per outside value
    for node in rewritten:
        _rewrite_inputs(graph, node, converted, into)
    for node in rewritten:
        _rewrite_outputs(graph, node, converted, consumers)
    for node in rewritten:
        _to_nhwc(graph, node, converted[id(node)])
    return True


def _on_cpu(node: Node, all_cpu: bool) -> bool:
    device = node.device.upper()
    if "GPU" in device:
        return False
    return "CPU" in device or all_cpu


def _rank4(node: Node, port: int) -> bool:
    return node.shapes[port].ndims == 4


def _sensitive(node: Node) -> Optional[_Layout]:
    layout = SENSITIVE.get(node.type)
    if layout is None or node.attrs.get("data_format") != "NCHW" or node.attrs.get("padding") == "EXPLICIT":
        return None
    if node.dtypes[0].base_dtype.name not in _FLOAT:
        return None
    if any(node.inputs[i][0].dtypes[node.inputs[i][1]].base_dtype.name not in _FLOAT for i in layout.inputs):
        return None
    if not all(_rank4(*node.inputs[i]) for i in layout.inputs) or not all(_rank4(node, k) for k in layout.outputs):
        return None
    if any(const_value(node.inputs[i]) is None for i in layout.shape_inputs):
        return None
    return layout


def _agnostic(node: Node, converted: dict[int, _Layout]) -> Optional[_Layout]:
    """An element-wise node joins when one of its inputs is a rewritten node's 4-D output and
    its other inputs and its output have that one full shape (or are scalars)."""
    if len(node.dtypes) != 1 or not node.inputs or node.dtypes[0].base_dtype.name not in _FLOAT:
        return None
    shape = node.shapes[0]
    if shape.ndims != 4 or not shape.is_fully_defined():
        return None
    fed = False
    activations = []
    for i, (src, port) in enumerate(node.inputs):
        input_shape = src.shapes[port]
        if input_shape.ndims == 0:
            continue  # a scalar broadcasts the same in either layout
        if input_shape != shape:
            return None
        activations.append(i)
        layout = converted.get(id(src))
        fed |= layout is not None and port in layout.outputs
    if not fed:
        return None
    return _Layout(tuple(activations), (0,))


def _rewrite_inputs(graph: OptGraph, node: Node, converted: dict[int, _Layout],
                    into: dict[tuple[int, int], Port]) -> None:
    layout = converted[id(node)]
    for i in layout.inputs:
        src, port = node.inputs[i]
        src_layout = converted.get(id(src))
        if src_layout is not None and port in src_layout.outputs:
            continue  # already NHWC
        key = (id(src), port)
        if key not in into:
            into[key] = _transposed(graph, (src, port), TO_NHWC, node)
        node.inputs[i] = into[key]
    for i in layout.shape_inputs:
        value = const_value(node.inputs[i])
        permuted = np.asarray(value)[list(TO_NHWC)]
        const = graph.new_node(graph.unique_name(f"{node.name}-LayoutOptimizer-shape-{i}"), Const,
                               {"value": permuted, "dtype": node.inputs[i][0].dtypes[0]}, [], node.device,
                               [node.inputs[i][0].dtypes[0]], [TensorShape([4])], node)
        node.inputs[i] = (const, 0)
    node.changed = True


def _rewrite_outputs(graph: OptGraph, node: Node, converted: dict[int, _Layout], consumers: dict) -> None:
    layout = converted[id(node)]
    for k in layout.outputs:
        users = []
        for user, i in consumers.get(id(node), []):
            if user.removed or user.inputs[i] != (node, k):
                continue
            user_layout = converted.get(id(user))
            if user_layout is not None and i in user_layout.inputs:
                continue
            users.append((user, i))
        if not users:
            continue
        first = min((u for u, _ in users), key=lambda u: u.key)
        back = _new_transpose(graph, (node, k), TO_NCHW, first, _permuted(node.shapes[k], TO_NHWC))
        graph.redirect((node, k), back, users)


def _transposed(graph: OptGraph, port: Port, perm: tuple[int, ...], before: Node) -> Port:
    """`port` in the other layout: the input of a transpose that did the opposite, or a new one."""
    src, index = port
    if src.type == "Transpose" and not src.frozen:
        value = const_value(src.inputs[1])
        if value is not None and tuple(int(p) for p in np.reshape(value, -1)) == _inverse(perm):
            return src.inputs[0]
    return _new_transpose(graph, port, perm, before, src.shapes[index])


def _new_transpose(graph: OptGraph, port: Port, perm: tuple[int, ...], before: Node, shape: TensorShape) -> Port:
    src, index = port
    dtype = src.dtypes[index]
    suffix = "ToNHWC" if perm == TO_NHWC else "ToNCHW"
    perm_const = graph.new_node(graph.unique_name(f"LayoutOptimizer/{src.name}-{index}-{suffix}-perm"), Const,
                                {"value": np.asarray(perm, np.int32), "dtype": _dtypes.int32}, [], before.device,
                                [_dtypes.int32], [TensorShape([4])], before)
    node = graph.new_node(graph.unique_name(f"LayoutOptimizer/{src.name}-{index}-{suffix}"), Transpose,
                          {"T": dtype.base_dtype, "Tperm": _dtypes.int32}, [port, (perm_const, 0)], before.device,
                          [dtype], [_permuted(shape, perm)], before)
    return node, 0


def _to_nhwc(graph: OptGraph, node: Node, layout: _Layout) -> None:
    attrs: dict[str, Any] = dict(node.attrs)  # the user's op's attrs are shared: copy
    if "data_format" in attrs:
        attrs["data_format"] = "NHWC"
    for name in layout.list_attrs:
        value = attrs.get(name)
        if value is not None and len(value) == 4:
            attrs[name] = [value[p] for p in TO_NHWC]
    node.attrs = attrs
    shapes = list(node.shapes)
    for k in layout.outputs:
        shapes[k] = _permuted(shapes[k], TO_NHWC)
    node.shapes = shapes
    node.changed = True


def _permuted(shape: TensorShape, perm: tuple[int, ...]) -> TensorShape:
    dims = shape.as_list()
    return TensorShape([dims[p] for p in perm])


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    out = [0] * len(perm)
    for i, p in enumerate(perm):
        out[p] = i
    return tuple(out)
