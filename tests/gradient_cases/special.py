"""Gradient-check cases for ReverseSequence and CheckNumerics, and for the composites einsum,
tensordot and sort (whose gradients are those of the ops they are built from)."""
import numpy as np

import tensorweave as tf
from tests.gradient_cases import GradCase


def _hidden_lengths(values):
    return tf.placeholder_with_default(np.array(values, np.int64), [None])


CASES = [
    GradCase("reverse_sequence_batch_major", ("ReverseSequence",),
             lambda a: tf.reverse_sequence(a, [2, 4, 0], seq_axis=1, batch_axis=0), [(3, 4, 2)]),
    GradCase("reverse_sequence_time_major_hidden", ("ReverseSequence",),
             lambda a: tf.reverse_sequence(a, _hidden_lengths([1, 3]), seq_axis=0, batch_axis=1), [(3, 2)]),
    GradCase("check_numerics", ("CheckNumerics",), lambda a: tf.check_numerics(a * 2.0, "bad"), [(2, 3)]),
    GradCase("einsum_matmul", ("MatMul",), lambda a, b: tf.einsum("ij,jk->ik", a, b), [(2, 3), (3, 4)]),
    GradCase("einsum_batch_sum", ("BatchMatMulV2",), lambda a, b: tf.einsum("bij,bkj->bk", a, b),
             [(2, 3, 4), (2, 5, 4)]),
    GradCase("tensordot_two_axes", ("MatMul",), lambda a, b: tf.tensordot(a, b, [[1, 2], [0, 1]]),
             [(2, 3, 4), (3, 4, 2)]),
    GradCase("sort_ascending_axis0", ("TopKV2",), lambda a: tf.sort(a, axis=0), [(3, 4)]),
]
