"""The gradients of the sparse ops, with TensorFlow's formulas (SparseToDense, SparseReorder,
SparseAdd, SparseTensorDenseAdd, SparseReduceSum, SparseTensorDenseMatMul, SparseSoftmax,
SparseDenseCwiseMul/Div, SparseSlice, SparseFillEmptyRows, SparseSegment*), and the
not-differentiable marks; imported only by tensorweave/gradients.py."""
from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Operation, name_scope
from tensorweave.ops import array as array_ops
from tensorweave.ops import math as math_ops
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.sparse import sparse_impl, sparse_structure
from tensorweave.ops.sparse.sparse_math import (
    SparseAdd, SparseAddGrad, SparseDenseCwiseAdd, SparseDenseCwiseDiv, SparseDenseCwiseMul, SparseReduceSum,
    SparseSoftmax, SparseSparseMaximum, SparseSparseMinimum, SparseTensorDenseAdd, SparseTensorDenseMatMul)
from tensorweave.ops.sparse.sparse_ops import SparseToDense
from tensorweave.ops.sparse.sparse_segment import (
    SparseSegmentMean, SparseSegmentMeanGrad, SparseSegmentMeanWithNumSegments, SparseSegmentSqrtN,
    SparseSegmentSqrtNGrad, SparseSegmentSqrtNWithNumSegments, SparseSegmentSum, SparseSegmentSumWithNumSegments)
from tensorweave.ops.sparse.sparse_structure import (
    SparseConcat, SparseFillEmptyRows, SparseFillEmptyRowsGrad, SparseReorder, SparseReshape, SparseSlice,
    SparseSliceGrad, SparseSplit)


@SparseToDense.gradient
def _sparse_to_dense_grad(op: Operation, grad: Any) -> list[Any]:
    """d sparse_values: the incoming gradient at each index (gathered from the flattened
    gradient at row-major linear positions); d default_value: the rest of the gradient's sum."""
    indices, output_shape, values = op.inputs[0], op.inputs[1], op.inputs[2]
    with name_scope("SparseToDenseGrad"):
        shape = math_ops.cast(output_shape, _dtypes.int64)
        rank = array_ops.size(shape)
        positions = array_ops.range(rank)
        # strides[k] = prod(shape[k+1:]): a row-major position's weight for coordinate k.
        later = math_ops.greater(array_ops.expand_dims(positions, 0), array_ops.expand_dims(positions, 1))
        factors = math_ops.where(later, array_ops.tile(array_ops.expand_dims(shape, 0), [rank, 1]),
                                 array_ops.ones_like(later, dtype=_dtypes.int64))
        strides = math_ops.reduce_prod(factors, axis=1)
        coords = array_ops.reshape(math_ops.cast(indices, _dtypes.int64), [-1, rank])
        linear = math_ops.reduce_sum(coords * strides, axis=1)
        values_grad = array_ops.gather(array_ops.reshape(grad, [-1]), linear)
        default_grad = math_ops.reduce_sum(grad) - math_ops.reduce_sum(values_grad)
        if values.shape.ndims == 0:  # one value broadcast to every index
            values_grad = math_ops.reduce_sum(values_grad)
    return [None, None, values_grad, default_grad]


# ---------------------------------------------------------------------------------------------
# Gradients of the sparse ops (TF's sparse_grad.py formulas). Index and shape inputs get None.
# ---------------------------------------------------------------------------------------------
SparseConcat.not_differentiable()
SparseReshape.not_differentiable()
SparseSplit.not_differentiable()
SparseSparseMaximum.not_differentiable()  # TF registers no formula either
SparseSparseMinimum.not_differentiable()
SparseDenseCwiseAdd.not_differentiable()


@SparseReorder.gradient
def _sparse_reorder_grad(op: Operation, _indices_grad: Any, values_grad: Any) -> list[Any]:
    """The reordering is a permutation of the entries: undo it on the values' gradient."""
    indices, shape = op.inputs[0], op.inputs[2]
    entries = array_ops.range(array_ops.shape(indices)[0])
    _, positions = sparse_structure.sparse_reorder_op(indices, entries, shape)
    return [None, array_ops.gather(values_grad, array_ops.invert_permutation(positions)), None]


@SparseAdd.gradient
def _sparse_add_grad(op: Operation, *grads: Any) -> list[Any]:
    a_grad, b_grad = apply_op(SparseAddGrad, backprop_val_grad=grads[1], a_indices=op.inputs[0],
                              b_indices=op.inputs[3], sum_indices=op.outputs[0])
    return [None, a_grad, None, None, b_grad, None, None]


@SparseTensorDenseAdd.gradient
def _sparse_dense_add_grad(op: Operation, grad: Any) -> list[Any]:
    return [None, array_ops.gather_nd(grad, op.inputs[0]), None, grad]


def _kept_dims_shape(shape: Any, axes: Any) -> Any:
    """`shape` with every reduced axis set to 1 (TF's reduced_shape, on int64 shapes)."""
    rank = array_ops.size(shape, out_type=_dtypes.int64)
    axes = math_ops.floormod(math_ops.cast(array_ops.reshape(axes, [-1]), _dtypes.int64), rank)
    positions = array_ops.range(rank)
    reduced = math_ops.reduce_any(math_ops.equal(array_ops.expand_dims(positions, 1),
                                                 array_ops.expand_dims(axes, 0)), axis=1)
    return math_ops.where_v2(reduced, array_ops.ones_like(shape), shape)


@SparseReduceSum.gradient
def _sparse_reduce_sum_grad(op: Operation, grad: Any) -> list[Any]:
    """Each entry's gradient is the output gradient at the position it was summed into."""
    indices, shape = op.inputs[0], op.inputs[2]
    kept = _kept_dims_shape(shape, op.inputs[3])
    grad = array_ops.reshape(grad, kept)
    scale = math_ops.floordiv(shape, kept)
    return [None, array_ops.gather_nd(grad, math_ops.floordiv(indices, scale)), None, None]


@SparseTensorDenseMatMul.gradient
def _sparse_dense_matmul_grad(op: Operation, grad: Any) -> list[Any]:
    """d b = adjoint(A) @ grad (transposed back for adjoint_b); d A.values[k] = the dot product
    of the grad row and the b row that entry k multiplied."""
    indices, values, shape, b = op.inputs
    adj_a, adj_b = op._get_attr("adjoint_a"), op._get_attr("adjoint_b")
    b_grad = apply_op(SparseTensorDenseMatMul, a_indices=indices, a_values=values, a_shape=shape, b=grad,
                      adjoint_a=not adj_a)
    if adj_b:
        b_grad = array_ops.transpose(b_grad)
    rows, cols = indices[:, 0], indices[:, 1]
    grad_part = array_ops.gather(grad, cols if adj_a else rows)
    b_part = array_ops.gather(array_ops.transpose(b) if adj_b else b, rows if adj_a else cols)
    values_grad = math_ops.reduce_sum(grad_part * b_part, axis=1)
    return [None, values_grad, None, b_grad]


@SparseSoftmax.gradient
def _sparse_softmax_grad(op: Operation, grad: Any) -> list[Any]:
    """Softmax's Jacobian per row: (grad - sum(grad * out)) * out over the entries present."""
    indices, shape = op.inputs[0], op.inputs[2]
    out = op.outputs[0]
    product = SparseTensor(indices, out * grad, shape)
    row_sums = -sparse_impl.sparse_reduce_sum(product, [-1], keepdims=True)
    shifted = apply_op(SparseDenseCwiseAdd, sp_indices=indices, sp_values=grad, sp_shape=shape, dense=row_sums)
    return [None, shifted * out, None]


def _cwise_mul_div_grad(op: Operation, grad: Any, is_mul: bool) -> list[Any]:
    """The dense operand's gradient sums the entries that read each of its (broadcast) positions."""
    indices, values, x_shape, y = op.inputs
    y_shape = math_ops.cast(array_ops.shape(y), _dtypes.int64)
    added = array_ops.expand_dims(array_ops.size(x_shape) - array_ops.size(y_shape), 0)
    full_y_shape = array_ops.concat([array_ops.ones(added, _dtypes.int64), y_shape], 0)
    scaled = math_ops.floordiv(indices, math_ops.floordiv(x_shape, full_y_shape))
    scaled = array_ops.slice(scaled, array_ops.concat([[0], added], 0), [-1, -1])
    dense_values = array_ops.gather_nd(y, scaled)
    if is_mul:
        dx, dy_values = grad * dense_values, grad * values
    else:
        dx = grad / dense_values
        dy_values = grad * (-values / math_ops.square(dense_values))
    dy = apply_op(SparseTensorDenseAdd, a_indices=scaled, a_values=dy_values, a_shape=y_shape,
                  b=array_ops.zeros_like(y))
    return [None, dx, None, dy]


@SparseDenseCwiseMul.gradient
def _cwise_mul_grad(op: Operation, grad: Any) -> list[Any]:
    return _cwise_mul_div_grad(op, grad, True)


@SparseDenseCwiseDiv.gradient
def _cwise_div_grad(op: Operation, grad: Any) -> list[Any]:
    return _cwise_mul_div_grad(op, grad, False)


@SparseSlice.gradient
def _sparse_slice_grad(op: Operation, *grads: Any) -> list[Any]:
    values_grad = apply_op(SparseSliceGrad, backprop_val_grad=grads[1], input_indices=op.inputs[0],
                           input_start=op.inputs[3], output_indices=op.outputs[0])
    return [None, values_grad, None, None, None]


@SparseFillEmptyRows.gradient
def _sparse_fill_empty_rows_grad(op: Operation, *grads: Any) -> list[Any]:
    d_values, d_default = apply_op(SparseFillEmptyRowsGrad, reverse_index_map=op.outputs[3],
                                   grad_values=grads[1])
    return [None, d_values, None, d_default]


def _segment_sum_grad(op: Operation, grad: Any) -> list[Any]:
    rows = array_ops.shape(op.inputs[0])[0]
    data_grad = math_ops.unsorted_segment_sum(array_ops.gather(grad, op.inputs[2]), op.inputs[1], rows)
    return [data_grad] + [None] * (len(op.inputs) - 1)


def _segment_scaled_grad(grad_op: Any) -> Any:
    def fn(op: Operation, grad: Any) -> list[Any]:
        rows = array_ops.shape(op.inputs[0])[0]
        data_grad = apply_op(grad_op, grad=grad, indices=op.inputs[1], segment_ids=op.inputs[2],
                             output_dim0=rows)
        return [data_grad] + [None] * (len(op.inputs) - 1)
    return fn


SparseSegmentSum.gradient(_segment_sum_grad)
SparseSegmentSumWithNumSegments.gradient(_segment_sum_grad)
SparseSegmentMean.gradient(_segment_scaled_grad(SparseSegmentMeanGrad))
SparseSegmentMeanWithNumSegments.gradient(_segment_scaled_grad(SparseSegmentMeanGrad))
SparseSegmentSqrtN.gradient(_segment_scaled_grad(SparseSegmentSqrtNGrad))
SparseSegmentSqrtNWithNumSegments.gradient(_segment_scaled_grad(SparseSegmentSqrtNGrad))
