"""Gradient-check cases for the array ops (gradients in tensorweave/ops/array/grad.py): static
shapes, and shapes, axes or specs only known at run time (placeholder_with_default hides the
constant), which take the gradients' dynamic paths."""
import numpy as np

import tensorweave as tf
from tensorweave.ops.array import creation as fill_ops, slicing as slicing_ops
from tests.gradient_cases import GradCase

S = (2, 3)
S3 = (2, 3, 2)


def _unknown_shape(t):
    return tf.placeholder_with_default(t, None)


def _unknown_dims(t):
    return tf.placeholder_with_default(t, [None] * t.shape.ndims)


def _hidden(value, shape=None):
    """A constant int32 value the graph can't see at build time."""
    value = np.array(value, dtype=np.int32)
    return tf.placeholder_with_default(value, [None] * value.ndim if shape is None else shape)


def _off_feed(t):
    """A fresh array instead of the fed one: the checker perturbs its feed array in place, so an
    output that is a view of a feed (Identity, Squeeze) would change under it after the run."""
    return tf.negative(t)


def _as_complex(x):
    return tf.cast(x, tf.complex128)


def _conjugate_transpose(a, perm):
    # The real part of conj(a (1 + 2i))^T (2 + 3i) is 8 a^T; without the conjugate it would be -4 a^T.
    z = tf.transpose(_as_complex(a) * tf.constant(1 + 2j, tf.complex128), perm, conjugate=True)
    return tf.cast(z * tf.constant(2 + 3j, tf.complex128), tf.float64)


def _split_some(outputs):
    """Uses some outputs of a split only, so the others' gradients are missing (zeros)."""
    return tf.concat([outputs[-1], outputs[0]], 0)


SHAPES = [
    GradCase("array_identity", ("Identity",), lambda a: tf.identity(_off_feed(a)), [S]),
    GradCase("array_reshape", ("Reshape",), lambda a: tf.reshape(a, [3, -1]), [S3]),
    GradCase("array_reshape_unknown_shape", ("Reshape", "PlaceholderWithDefault"),
             lambda a: tf.reshape(_unknown_shape(a), _hidden([-1, 4])), [S3]),
    GradCase("array_expand_dims", ("ExpandDims",), lambda a: tf.expand_dims(a, -1), [S]),
    GradCase("array_squeeze", ("Squeeze",), lambda a: tf.squeeze(_off_feed(a), [1]), [(2, 1, 3)]),
    GradCase("array_squeeze_all", ("Squeeze",), lambda a: tf.squeeze(_unknown_shape(_off_feed(a))),
             [(1, 3, 1)]),
    GradCase("array_transpose", ("Transpose",), lambda a: tf.transpose(a, [2, 0, 1]), [S3]),
    GradCase("array_transpose_default", ("Transpose",), tf.transpose, [S]),
    GradCase("array_transpose_dynamic_perm", ("Transpose",),
             lambda a: tf.transpose(_unknown_shape(a), _hidden([1, 2, 0])), [S3]),
    GradCase("array_conjugate_transpose", ("ConjugateTranspose",),
             lambda a: _conjugate_transpose(a, [1, 0]), [S]),
    GradCase("array_tile", ("Tile",), lambda a: tf.tile(a, [2, 1, 3]), [(2, 1, 2)]),
    GradCase("array_tile_dynamic", ("Tile",), lambda a: tf.tile(_unknown_shape(a), _hidden([1, 3])), [S]),
    GradCase("array_broadcast_to_row", ("BroadcastTo",), lambda a: tf.broadcast_to(a, [2, 3]), [(3,)]),
    GradCase("array_broadcast_to_column", ("BroadcastTo",), lambda a: tf.broadcast_to(a, [2, 2, 3]),
             [(2, 1)]),
    GradCase("array_broadcast_to_dynamic", ("BroadcastTo",),
             lambda a: tf.broadcast_to(_unknown_shape(a), _hidden([3, 2, 3])), [(1, 3)]),
]

JOIN_SPLIT = [
    GradCase("array_concat_axis0", ("ConcatV2",), lambda a, b: tf.concat([a, b], 0), [S, (1, 3)]),
    GradCase("array_concat_negative_axis", ("ConcatV2",), lambda a, b, c: tf.concat([a, b, c], -1),
             [(2, 1), S, (2, 2)]),
    GradCase("array_concat_unknown_dims", ("ConcatV2",),
             lambda a, b: tf.concat([_unknown_dims(a), _unknown_dims(b)], 1), [S, (2, 1)]),
    GradCase("array_concat_dynamic_axis", ("ConcatV2",),
             lambda a, b: tf.concat([_unknown_shape(a), b], _hidden(-1, [])), [S3, (2, 3, 1)]),
    GradCase("array_split", ("Split",), lambda a: tf.concat(tf.split(a, 3, axis=1), 0), [(2, 3)]),
    GradCase("array_split_unused_outputs", ("Split",), lambda a: _split_some(tf.split(a, 3, axis=-1)),
             [(2, 6)]),
    GradCase("array_split_v", ("SplitV",), lambda a: _split_some(tf.split(a, [1, -1, 1], 0)), [(4, 2)]),
    GradCase("array_split_v_dynamic", ("SplitV",),
             lambda a: tf.concat(tf.split(_unknown_shape(a), _hidden([2, 1]), 1, num=2), 1), [S]),
    GradCase("array_stack", ("Pack",), lambda a, b: tf.stack([a, b, a]), [S, S]),
    GradCase("array_stack_axis1", ("Pack",), lambda a, b: tf.stack([a, b], axis=1), [S, S]),
    GradCase("array_unstack", ("Unpack",), lambda a: tf.stack(tf.unstack(a)[::-1]), [S]),
    GradCase("array_unstack_unused_outputs", ("Unpack",),
             lambda a: tf.unstack(a, axis=1)[1] + 0.0, [S3]),
]

SLICES = [
    GradCase("array_slice", ("Slice",), lambda a: tf.slice(a, [1, 0, 1], [1, 2, -1]), [S3]),
    GradCase("array_slice_dynamic", ("Slice",),
             lambda a: tf.slice(_unknown_shape(a), _hidden([0, 1]), _hidden([2, 2])), [S]),
    GradCase("array_strided_slice_steps", ("StridedSlice",), lambda a: a[1:, ::2], [(3, 5)]),
    GradCase("array_strided_slice_negative_stride", ("StridedSlice",), lambda a: a[-1::-2, 3:0:-1],
             [(3, 5)]),
    GradCase("array_strided_slice_shrink", ("StridedSlice",), lambda a: a[1], [S]),
    GradCase("array_strided_slice_ellipsis_shrink", ("StridedSlice",), lambda a: a[..., 1], [S3]),
    GradCase("array_strided_slice_new_axis", ("StridedSlice",), lambda a: a[:, tf.newaxis, 1:], [S]),
    GradCase("array_strided_slice_mixed", ("StridedSlice",), lambda a: a[0, ..., tf.newaxis, ::-1],
             [S3]),
    GradCase("array_strided_slice_scalar", ("StridedSlice",), lambda a: a[1, 2], [S]),
    GradCase("array_strided_slice_unknown_shape", ("StridedSlice",), lambda a: _unknown_shape(a)[:, 1:],
             [S3]),
    GradCase("array_strided_slice_tensor_index", ("StridedSlice",), lambda a: a[_hidden(1, []), :2], [S]),
    GradCase("array_strided_slice_grad", ("StridedSliceGrad",),
             lambda dy: tf._apply_op(slicing_ops.StridedSliceGrad, shape=[3, 4], begin=[0, 1], end=[3, 4],
                                     strides=[2, 2], dy=dy, shrink_axis_mask=0), [(2, 2)]),
    GradCase("array_strided_slice_grad_masks", ("StridedSliceGrad",),
             lambda dy: tf._apply_op(slicing_ops.StridedSliceGrad, shape=[2, 3, 2], begin=[1, 0],
                                     end=[2, 0], strides=[1, -1], dy=dy, shrink_axis_mask=1, begin_mask=2,
                                     end_mask=2, ellipsis_mask=0), [(3, 2)]),
    GradCase("array_gather", ("GatherV2",), lambda p: tf.gather(p, [2, 0, 2]), [(3, 2)]),
    GradCase("array_gather_weighted_sum", ("GatherV2",),
             lambda p: tf.reduce_sum(tf.gather(p, [[1, 0], [1, 1]]) * tf.constant([[[1.0], [2.0]],
                                                                                    [[3.0], [4.0]]],
                                                                                   tf.float64)),
             [(3, 2)]),
    GradCase("array_gather_unknown_shape", ("GatherV2",),
             lambda p: tf.gather(_unknown_shape(p), _hidden([1, 1, 0])), [(2, 3)]),
    GradCase("array_gather_axis1", ("GatherV2",), lambda p: tf.gather(p, [2, 0, 2], axis=1), [S3]),
    GradCase("array_gather_axis_last_2d_indices", ("GatherV2",),
             lambda p: tf.gather(p, [[1, 0], [1, 1]], axis=-1), [S3]),
    GradCase("array_gather_batch_dims", ("GatherV2",),
             lambda p: tf.gather(p, [[2, 2], [0, 1]], axis=1, batch_dims=1), [(2, 3, 2)]),
    GradCase("array_boolean_mask", ("GatherV2", "Reshape"),
             lambda a: tf.boolean_mask(a, np.array([True, False, True])), [(3, 2)]),
    GradCase("array_reverse", ("ReverseV2",), lambda a: tf.reverse(a, [0, -1]), [S3]),
]

FILL_PAD = [
    GradCase("array_fill", ("Fill",), lambda v: tf.fill([2, 3], v), [()]),
    GradCase("array_fill_dynamic", ("Fill",), lambda v: tf.fill(_hidden([2, 2]), v), [()]),
    GradCase("array_pad", ("Pad",), lambda a: tf.pad(a, [[1, 0], [2, 1]]), [S]),
    GradCase("array_pad_dynamic", ("Pad",), lambda a: tf.pad(_unknown_shape(a), _hidden([[0, 1], [1, 1]])),
             [S]),
    GradCase("array_pad_v2", ("PadV2",), lambda a: tf.pad(a, [[0, 1], [1, 0]], constant_values=2.0), [S]),
    GradCase("array_mirror_pad_reflect", ("MirrorPad",), lambda a: tf.pad(a, [[1, 1], [2, 1]], "REFLECT"),
             [(3, 3)]),
    GradCase("array_mirror_pad_symmetric", ("MirrorPad",),
             lambda a: tf.pad(a, [[2, 0], [1, 2]], "SYMMETRIC"), [(2, 3)]),
    GradCase("array_mirror_pad_grad", ("MirrorPadGrad",),
             lambda g: tf._apply_op(fill_ops.MirrorPadGrad, input=g, paddings=[[1, 2], [0, 1]],
                                    mode="REFLECT"), [(6, 3)]),
    GradCase("array_mirror_pad_grad_symmetric", ("MirrorPadGrad",),
             lambda g: tf._apply_op(fill_ops.MirrorPadGrad, input=g, paddings=[[2, 1], [1, 1]],
                                    mode="SYMMETRIC"), [(5, 4)]),
]

CASES = SHAPES + JOIN_SPLIT + SLICES + FILL_PAD
