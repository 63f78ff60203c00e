"""Gradients of the array ops, with TensorFlow's formulas; imported only by
tensorweave/gradients.py. They are built from public ops (some of the math family: sums,
casts, segment sums), so they differentiate again.

Ops that only move or reshape elements pass the gradient back the same way (Reshape,
ExpandDims, Squeeze, Transpose, ReverseV2, ReverseSequence); joining and splitting ops are each
other's gradients (ConcatV2 / SplitV, Pack / Unpack), as are the slicing and padding ops (Slice /
Pad, StridedSlice / StridedSliceGrad, MirrorPad / MirrorPadGrad, GatherNd / ScatterNd); GatherV2
along axis 0 gives a sparse gradient (IndexedSlices).
"""
from __future__ import annotations

import builtins
from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array as array_ops
from tensorweave.ops import math as math_ops
from tensorweave.ops._util import const_int, const_ints
from tensorweave.ops.array.constant_op import PlaceholderWithDefault
from tensorweave.ops.array.creation import Fill, MirrorPad, MirrorPadGrad, Pad, PadV2
from tensorweave.ops.array.gather_scatter_nd import GatherNd, ScatterNd
from tensorweave.ops.array.joining import ConcatV2, Pack, Split, SplitV, Unpack
from tensorweave.ops.array.partition_stitch import (
    DynamicPartition, DynamicStitch, ParallelDynamicStitch, parallel_dynamic_stitch)
from tensorweave.ops.array.reverse_sequence import ReverseSequence
from tensorweave.ops.array.shaping import BroadcastTo, ExpandDims, Identity, Reshape, Squeeze, Tile
from tensorweave.ops.array.slicing import (
    GatherV2, ReverseV2, Slice, StridedSlice, StridedSliceGrad, strided_slice_grad)
from tensorweave.ops.array.transposition import ConjugateTranspose, Transpose


# ---------------------------------------------------------------------------------------------
# Identity, PlaceholderWithDefault, reshaping, transposition, tiling, broadcasting
# ---------------------------------------------------------------------------------------------
@Identity.gradient
def _identity_grad(op: Operation, grad: Any) -> list[Any]:
    return [grad]


@PlaceholderWithDefault.gradient
def _placeholder_with_default_grad(op: Operation, grad: Any) -> list[Any]:
    return [grad]


def _like_input(op: Operation, grad: Tensor) -> Tensor:
    """`grad` reshaped to the shape of the op's first input (the gradient of ops that only
    reshape: Reshape, ExpandDims, Squeeze)."""
    return array_ops.reshape(grad, array_ops.shape(op.inputs[0]))


@Reshape.gradient(dense_grad=True)
def _reshape_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [_like_input(op, grad), None]


@ExpandDims.gradient(dense_grad=True)
def _expand_dims_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [_like_input(op, grad), None]


@Squeeze.gradient(dense_grad=True)
def _squeeze_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [_like_input(op, grad)]


@Transpose.gradient(dense_grad=True)
def _transpose_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [array_ops.transpose(grad, array_ops.invert_permutation(op.inputs[1])), None]


@ConjugateTranspose.gradient(dense_grad=True)
def _conjugate_transpose_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [array_ops.transpose(grad, array_ops.invert_permutation(op.inputs[1]), conjugate=True), None]


@Tile.gradient(dense_grad=True)
def _tile_grad(op: Operation, grad: Tensor) -> list[Any]:
    """The output is the input repeated: viewed as [m0, d0, m1, d1, ...] (multiples
    interleaved with the input's dims), the gradient sums over the multiples' axes."""
    x, multiples = op.inputs
    mult = const_ints(multiples)
    if mult is not None and x.shape.is_fully_defined():
        split_shape: Any = [v for pair in zip(mult, x.shape.as_list()) for v in pair]
        axes: Any = list(builtins.range(0, len(split_shape), 2))
    else:
        in_shape = array_ops.shape(x, out_type=multiples.dtype.base_dtype)
        split_shape = array_ops.reshape(array_ops.transpose(array_ops.stack([multiples, in_shape])), [-1])
        axes = array_ops.range(0, array_ops.size(split_shape), 2)
    summed = math_ops.reduce_sum(array_ops.reshape(grad, split_shape), axes)
    summed.set_shape(x.shape)
    return [summed, None]


# The output gradient has the broadcast shape; tf.gradients sums it down to the input's.
@BroadcastTo.gradient(dense_grad=True, broadcasts=True)
def _broadcast_to_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [grad, None]


# ---------------------------------------------------------------------------------------------
# ConcatV2, Split, SplitV, Pack, Unpack
# ---------------------------------------------------------------------------------------------
def _static_rank(values: Sequence[Tensor]) -> Optional[int]:
    for v in values:
        if v.shape.ndims is not None:
            return v.shape.ndims
    return None


@ConcatV2.gradient(dense_grad=True)
def _concat_grad(op: Operation, grad: Tensor) -> list[Any]:
    """The gradient split back into pieces of the inputs' sizes along the axis (one SplitV;
    the sizes are read at run time when they are not static)."""
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    axis, rank_ = const_int(axis_t), _static_rank(values)
    if axis is not None and rank_ is not None:
        axis %= rank_
        sizes = [v.shape[axis].value if v.shape.ndims is not None else None for v in values]
        if None not in sizes:
            return array_ops.split(grad, np.array(sizes, np.int32), axis, num=len(values)) + [None]
    else:
        if axis_t.dtype.base_dtype != _dtypes.int32:
            axis_t = math_ops.cast(axis_t, _dtypes.int32)
        axis = math_ops.floormod(axis_t, array_ops.rank(values[0]))
    sizes_t = array_ops.gather(array_ops.stack(array_ops.shape_n(list(values))), axis, axis=1)
    return array_ops.split(grad, sizes_t, axis, num=len(values)) + [None]


def _with_zeros(op: Operation, grads: Sequence[Optional[Tensor]]) -> list[Tensor]:
    """Each output's gradient; zeros for outputs that got none."""
    return [array_ops.zeros_like(t) if g is None else g for t, g in zip(op.outputs, grads)]


@Split.gradient(dense_grad=True)
def _split_grad(op: Operation, *grads: Optional[Tensor]) -> list[Any]:
    return [None, array_ops.concat(_with_zeros(op, grads), op.inputs[0])]


@SplitV.gradient(dense_grad=True)
def _split_v_grad(op: Operation, *grads: Optional[Tensor]) -> list[Any]:
    return [array_ops.concat(_with_zeros(op, grads), op.inputs[2]), None, None]


@Pack.gradient(dense_grad=True)
def _pack_grad(op: Operation, grad: Tensor) -> list[Any]:
    return array_ops.unstack(grad, num=op._get_attr("N"), axis=op._get_attr("axis"))


@Unpack.gradient(dense_grad=True)
def _unpack_grad(op: Operation, *grads: Optional[Tensor]) -> list[Any]:
    return [array_ops.stack(_with_zeros(op, grads), axis=op._get_attr("axis"))]


# ---------------------------------------------------------------------------------------------
# Fill, Pad, PadV2, MirrorPad, MirrorPadGrad
# ---------------------------------------------------------------------------------------------
@Fill.gradient(dense_grad=True)
def _fill_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [None, math_ops.reduce_sum(grad)]


@Pad.gradient(dense_grad=True)
def _pad_grad(op: Operation, grad: Tensor) -> list[Any]:
    """The gradient's slice that lines up with the input (the padding gets nothing, and, as in
    TF, PadV2's constant_values gets no gradient)."""
    x, paddings = op.inputs[0], op.inputs[1]
    pads = const_ints(paddings)
    if pads is not None and x.shape.is_fully_defined():
        begin: Any = np.array(pads[0::2], dtype=np.int32)
        size: Any = np.array(x.shape.as_list(), dtype=np.int32)
    else:
        begin = paddings[:, 0]
        size = array_ops.shape(x, out_type=paddings.dtype.base_dtype)
    sliced = array_ops.slice(grad, begin, size)
    return [sliced, None] + [None] * (len(op.inputs) - 2)


PadV2.gradient(_pad_grad)


@MirrorPad.gradient(dense_grad=True)
def _mirror_pad_gradient(op: Operation, grad: Tensor) -> list[Any]:
    return [apply_op(MirrorPadGrad, input=grad, paddings=op.inputs[1], mode=op._get_attr("mode")), None]


@MirrorPadGrad.gradient(dense_grad=True)
def _mirror_pad_grad_gradient(op: Operation, grad: Tensor) -> list[Any]:
    return [apply_op(MirrorPad, input=grad, paddings=op.inputs[1], mode=op._get_attr("mode")), None]


# ---------------------------------------------------------------------------------------------
# Slice, StridedSlice, StridedSliceGrad, ReverseV2, ReverseSequence
# ---------------------------------------------------------------------------------------------
@Slice.gradient(dense_grad=True)
def _slice_grad(op: Operation, grad: Tensor) -> list[Any]:
    """The gradient padded with zeros back to the input's shape: begin[i] before, the rest after."""
    x, begin_t, _ = op.inputs
    begin, out_shape = const_ints(begin_t), op.outputs[0].shape
    if begin is not None and x.shape.is_fully_defined() and out_shape.is_fully_defined():
        paddings: Any = np.array([[b, d - b - s] for b, d, s in zip(begin, x.shape.as_list(),
                                                                     out_shape.as_list())],
                                 dtype=np.int32).reshape(-1, 2)
    else:
        index_dtype = begin_t.dtype.base_dtype
        after = (array_ops.shape(x, out_type=index_dtype) - array_ops.shape(grad, out_type=index_dtype)
                 - begin_t)
        paddings = array_ops.stack([begin_t, after], axis=1)
    return [array_ops.pad(grad, paddings), None, None]


def _mask_attrs(op: Operation) -> dict[str, int]:
    return {k: op._get_attr(k) for k in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                        "shrink_axis_mask")}


@StridedSlice.gradient(dense_grad=True)
def _strided_slice_gradient(op: Operation, grad: Tensor) -> list[Any]:
    x, begin, end, strides = op.inputs
    shape_t = array_ops.shape(x, out_type=begin.dtype.base_dtype)
    return [strided_slice_grad(shape_t, begin, end, strides, grad, **_mask_attrs(op)), None, None, None]


@StridedSliceGrad.gradient(dense_grad=True)
def _strided_slice_grad_gradient(op: Operation, grad: Tensor) -> list[Any]:
    _, begin, end, strides, _ = op.inputs
    sliced = array_ops.strided_slice(grad, begin, end, strides, **_mask_attrs(op))
    return [None, None, None, None, sliced]


@ReverseV2.gradient(dense_grad=True)
def _reverse_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [array_ops.reverse(grad, op.inputs[1]), None]


@ReverseSequence.gradient
def _reverse_sequence_grad(op: Operation, grad: Any) -> list[Any]:
    return [apply_op(ReverseSequence, input=grad, seq_lengths=op.inputs[1], seq_dim=op._get_attr("seq_dim"),
                     batch_dim=op._get_attr("batch_dim")), None]


# ---------------------------------------------------------------------------------------------
# GatherV2, GatherNd, ScatterNd
# ---------------------------------------------------------------------------------------------
@GatherV2.gradient(dense_grad=True)
def _gather_grad(op: Operation, grad: Tensor) -> list[Any]:
    """Axis 0: the sparse gradient IndexedSlices(grad rows, indices, shape(params)), as TF.
    Other axes (and batch_dims): a dense gradient by unsorted_segment_sum."""
    params, indices, axis_t = op.inputs
    batch_dims = op._get_attr("batch_dims")
    axis = const_int(axis_t)
    p_rank, i_rank = params.shape.ndims, indices.shape.ndims
    if axis is not None and p_rank is not None:
        axis %= p_rank
    if batch_dims < 0 and i_rank is not None:
        batch_dims += i_rank
    params_shape = array_ops.shape(params)
    if axis == 0 and batch_dims == 0:
        tail = params.shape[1:] if p_rank is not None else None
        count = indices.shape.num_elements()
        if tail is not None and tail.is_fully_defined() and count is not None:
            values_shape: Any = [count] + tail.as_list()
        else:
            values_shape = array_ops.concat([array_ops.reshape(array_ops.size(indices), [1]),
                                             params_shape[1:]], 0)
        values = array_ops.reshape(grad, values_shape)
        return [IndexedSlices(values, array_ops.reshape(indices, [-1]), params_shape), None, None]
    if axis is None or p_rank is None or i_rank is None:
        raise LookupError(f"The gradient of {op.name} (GatherV2) along a non-zero axis needs a constant "
                          f"axis and params and indices of known rank")
    return [_dense_gather_grad(params, indices, grad, axis, batch_dims), None, None]


def _dense_gather_grad(params: Tensor, indices: Tensor, grad: Tensor, axis: int, batch_dims: int) -> Tensor:
    """grad has shape B + M + J + T for params B + M + [n] + T and indices B + J (B the batch
    dims, J the index dims). Rows of grad laid out as [batch * index, M, T] are summed into
    segments batch * n + index, then moved back to params' layout."""
    p_rank = params.shape.ndims
    mid, tail = axis - batch_dims, p_rank - axis - 1
    p_shape, i_shape = array_ops.shape(params), array_ops.shape(indices)
    mid_dims, tail_dims = p_shape[batch_dims:axis], p_shape[axis + 1:]
    n_batch = math_ops.reduce_prod(p_shape[:batch_dims])
    n_index = math_ops.reduce_prod(i_shape[batch_dims:])
    n = p_shape[axis]
    values = array_ops.reshape(grad, array_ops.concat([[n_batch], mid_dims, [n_index], tail_dims], 0))
    to_rows = [0, mid + 1] + list(builtins.range(1, mid + 1)) + list(builtins.range(mid + 2, mid + 2 + tail))
    values = array_ops.transpose(values, to_rows)
    values = array_ops.reshape(values, array_ops.concat([[n_batch * n_index], mid_dims, tail_dims], 0))
    ids = array_ops.reshape(indices, array_ops.stack([n_batch, n_index]))
    if batch_dims:
        index_dtype = indices.dtype.base_dtype
        offsets = array_ops.range(0, n_batch, 1) * n
        ids = ids + array_ops.expand_dims(math_ops.cast(offsets, index_dtype), 1)
    summed = math_ops.unsorted_segment_sum(values, array_ops.reshape(ids, [-1]), n_batch * n)
    summed = array_ops.reshape(summed, array_ops.concat([[n_batch, n], mid_dims, tail_dims], 0))
    back = [0] + list(builtins.range(2, mid + 2)) + [1] + list(builtins.range(mid + 2, mid + 2 + tail))
    result = array_ops.reshape(array_ops.transpose(summed, back), p_shape)
    result.set_shape(params.shape)
    return result


@GatherNd.gradient(dense_grad=True)
def _gather_nd_grad(op: Operation, grad: Tensor) -> list[Any]:
    params, indices = op.inputs
    shape = array_ops.shape(params, out_type=indices.dtype.base_dtype)
    return [array_ops.scatter_nd(indices, grad, shape), None]


@ScatterNd.gradient(dense_grad=True)
def _scatter_nd_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [None, array_ops.gather_nd(grad, op.inputs[0]), None]


# ---------------------------------------------------------------------------------------------
# DynamicPartition, DynamicStitch, ParallelDynamicStitch
# ---------------------------------------------------------------------------------------------
@DynamicPartition.gradient
def _dynamic_partition_grad(op: Operation, *grads: Any) -> list[Any]:
    """Partitions the positions of data's rows the same way, then stitches the gradients of
    the partitions back to those positions."""
    data, partitions = op.inputs
    n = op._get_attr("num_partitions")
    if partitions.shape.is_fully_defined():
        dims = partitions.shape.as_list()
        positions = array_ops.reshape(np.arange(int(np.prod(dims)), dtype=np.int32), dims)
    else:
        prefix = array_ops.shape(partitions)
        positions = array_ops.reshape(array_ops.range(math_ops.reduce_prod(prefix)), prefix)
    parts = array_ops.dynamic_partition(positions, partitions, n)
    stitched = parallel_dynamic_stitch(parts, list(grads))
    return [array_ops.reshape(stitched, array_ops.shape(data)), None]


@DynamicStitch.gradient
def _stitch_grad(op: Operation, grad: Any) -> list[Any]:
    """Each data input gets the rows of the gradient at its indices (as TF, a position written
    twice passes its gradient to every writer)."""
    n = op._get_attr("N")
    if isinstance(grad, IndexedSlices):
        rows = array_ops.shape(op.outputs[0])[0]
        grad = math_ops.unsorted_segment_sum(grad.values, grad.indices, rows)
    return [None] * n + [array_ops.gather(grad, idx) for idx in op.inputs[:n]]


ParallelDynamicStitch.gradient(_stitch_grad)
