"""Shape optimisation (TF's shape_optimizer.cc): arithmetic on shapes that is known before running.

Constant folding already turns Shape, Size and Rank of fully known static shapes into
constants; this pass covers what partially known shapes still allow:

- Prod(Shape(x)) (the product of a shape's dimensions, not keeping the reduced dimension)
  becomes Size(x): one node instead of two, and no shape vector built. The node keeps its
  name; Size's `out_type` is the product's type.
- Div or FloorDiv (integers) of Size(x) by Size(y) becomes a Const when the ratio of the two
  sizes is known although the sizes are not. TF proves that with symbolic shapes (an unknown
  dimension shared by both); here the case that matters is y being a reduction of x (Sum, Mean,
  Prod, Max, Min) over constant axes whose dimensions in x are known: the unknown dimensions
  are then the same in both, and the ratio is the product of the reduced ones (what a mean's
  gradient divides by). x and y the same tensor gives 1. The Const waits for both Size nodes
  (TF turns the inputs into control inputs), so it is dead exactly when the division was.

Nodes in loops, fetched or fed nodes' outputs and stateful nodes are left alone, as by every pass.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.grappler.graph_view import Node, OptGraph, Port, const_value, is_opaque
from tensorweave.grappler.pass_context import PassContext
from tensorweave.ops.array.constant_op import Const
from tensorweave.ops.array.shaping import Size

_INT_TYPES = ("int32", "int64")
_DIVISIONS = ("Div", "FloorDiv")
_REDUCTIONS = ("Sum", "Mean", "Prod", "Max", "Min")


def optimize(graph: OptGraph, context: PassContext) -> bool:
    changed = False
    for node in graph.ordered():
        if node.removed or is_opaque(node) or len(node.inputs) != 2:
            continue
        if node.type == "Prod":
            changed |= _prod_of_shape(node)
        elif node.type in _DIVISIONS:
            changed |= _ratio_of_sizes(node)
    return changed


def _int_typed(node: Node) -> bool:
    return node.dtypes[0].base_dtype.name in _INT_TYPES


def _prod_of_shape(node: Node) -> bool:
    shape, indices = node.inputs
    if shape[0].type != "Shape" or shape[0].frozen or node.attrs.get("keep_dims") or not _int_typed(node):
        return False
    index_shape = indices[0].shapes[indices[1]]
    if not index_shape.is_fully_defined() or index_shape.num_elements() != 1:
        return False  # only a reduction over the shape's single dimension is the whole size
    source = shape[0].inputs[0]
    node.set_op_def(Size)
    node.attrs = {"T": source[0].dtypes[source[1]].base_dtype, "out_type": node.dtypes[0].base_dtype}
    node.inputs = [source]
    node.changed = True
    return True


def _ratio_of_sizes(node: Node) -> bool:
    if not _int_typed(node):
        return False
    (a, _), (b, _) = node.inputs
    if a.type != "Size" or b.type != "Size" or a.frozen or b.frozen:
        return False
    ratio = size_ratio(a.inputs[0], b.inputs[0])
    if ratio is None:
        return False
    dtype = node.dtypes[0]
    value = np.asarray(ratio, dtype=dtype.base_dtype.as_numpy_dtype)
    controls = list(node.controls)
    for size in (a, b):
        if size not in controls:
            controls.append(size)
    node.set_op_def(Const)
    node.attrs = {"value": value, "dtype": dtype}
    node.inputs = []
    node.controls = controls
    node.shapes = [TensorShape([])]
    return True


def size_ratio(x: Port, y: Port) -> Optional[int]:
    """size(x) / size(y) when it is known statically although the sizes may not be; None
    otherwise, or when it is no whole number."""
    if x == y:
        return 1
    x_shape, y_shape = x[0].shapes[x[1]], y[0].shapes[y[1]]
    if x_shape.is_fully_defined() and y_shape.is_fully_defined():
        nx, ny = x_shape.num_elements(), y_shape.num_elements()
        return nx // ny if ny and nx % ny == 0 else None
    reducer = y[0]
    if reducer.type not in _REDUCTIONS or reducer.inputs[0] != x or is_opaque(reducer) or x_shape.ndims is None:
        return None
    axes = const_value(reducer.inputs[1])
    if axes is None:
        return None
    dims = x_shape.as_list()
    reduced = {int(a) % len(dims) for a in np.reshape(axes, -1)} if dims else set()
    ratio = 1
    for axis in reduced:
        if dims[axis] is None:
            return None
        ratio *= dims[axis]
    return ratio
