"""Gradient-check cases for the reductions and sums (gradients at the end of
tensorweave/ops/reduction_ops.py): constant axes, negative axes, keep_dims, and axes or input
shapes that are only known at run time (placeholder_with_default hides the constant)."""
import numpy as np

import tensorweave as tf
from tests.gradient_cases import GradCase

S3 = (2, 3, 2)


def _dynamic_axes(axes):
    return tf.placeholder_with_default(np.array(axes, dtype=np.int32), [None])


def _unknown_shape(t):
    return tf.placeholder_with_default(t, None)


def _reduce_cases(prefix, op_type, fn, **kwargs):
    return [
        GradCase(f"{prefix}_all", (op_type,), lambda a: fn(a), [S3], **kwargs),
        GradCase(f"{prefix}_axis0", (op_type,), lambda a: fn(a, 0), [S3], **kwargs),
        GradCase(f"{prefix}_axes_0_2_keepdims", (op_type,), lambda a: fn(a, [0, 2], keepdims=True),
                 [S3], **kwargs),
        GradCase(f"{prefix}_negative_axis", (op_type,), lambda a: fn(a, -1), [S3], **kwargs),
        GradCase(f"{prefix}_tensor_axes", (op_type, "PlaceholderWithDefault"),
                 lambda a: fn(a, _dynamic_axes([-1, 0])), [S3], **kwargs),
        GradCase(f"{prefix}_tensor_axes_keepdims", (op_type, "PlaceholderWithDefault"),
                 lambda a: fn(a, _dynamic_axes([1])[0], keepdims=True), [S3], **kwargs),
        GradCase(f"{prefix}_unknown_shape", (op_type, "PlaceholderWithDefault"),
                 lambda a: fn(_unknown_shape(a), [1, 2]), [S3], **kwargs),
        GradCase(f"{prefix}_vector", (op_type,), lambda a: fn(a, 0), [(4,)], **kwargs),
    ]


def _with_zeros(rng):
    """A product's gradient where one group holds one zero and another two."""
    x = rng.uniform(0.5, 1.5, (3, 4))
    x[1, 2] = 0.0
    x[2, 0] = x[2, 3] = 0.0
    return [x]


def _distinct(shape):
    """Values without ties (a max/min gradient at a tie is not a derivative)."""
    def init(rng):
        return [rng.permutation(np.prod(shape)).reshape(shape) / 7.0 - 0.5]
    return init


CASES = (
    _reduce_cases("reduction_sum", "Sum", tf.reduce_sum)
    + _reduce_cases("reduction_mean", "Mean", tf.reduce_mean)
    + _reduce_cases("reduction_prod", "Prod", tf.reduce_prod, low=0.5, high=1.5)
    + _reduce_cases("reduction_max", "Max", tf.reduce_max, init=_distinct(S3))[:-1]
    + _reduce_cases("reduction_min", "Min", tf.reduce_min, init=_distinct(S3))[:-1]
    + [
        GradCase("reduction_prod_with_zeros", ("Prod",), lambda a: tf.reduce_prod(a, 1), [(3, 4)],
                 init=_with_zeros),
        GradCase("reduction_prod_one_zero_all", ("Prod",), lambda a: tf.reduce_prod(a), [(2, 3)],
                 init=lambda rng: [np.array([[0.7, 1.2, 0.9], [0.0, 1.3, 0.6]])]),
        GradCase("reduction_prod_two_zeros_all", ("Prod",), lambda a: tf.reduce_prod(a), [(2, 3)],
                 init=lambda rng: [np.array([[0.7, 0.0, 0.9], [0.0, 1.3, 0.6]])]),
        GradCase("reduction_add_n", ("AddN",), lambda a, b: tf.add_n([a, b, a]), [(2, 3), (2, 3)]),
        GradCase("reduction_unsorted_segment_sum", ("UnsortedSegmentSum",),
                 lambda a: tf.unsorted_segment_sum(a, tf.constant([0, 2, -1, 0, 1]), 3), [(5, 2)]),
        GradCase("reduction_unsorted_segment_sum_2d_ids", ("UnsortedSegmentSum",),
                 lambda a: tf.unsorted_segment_sum(a, tf.constant([[1, 0, 1], [-1, 3, 1]]), 4),
                 [(2, 3, 2)]),
        GradCase("reduction_unsorted_segment_sum_unknown_shape", ("UnsortedSegmentSum",),
                 lambda a: tf.unsorted_segment_sum(_unknown_shape(a), tf.constant([1, 0, 1]), 2),
                 [(3, 2)]),
    ]
)
