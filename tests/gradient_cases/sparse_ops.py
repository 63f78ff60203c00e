"""Gradient cases of the sparse ops (issue 11): the values (and dense operands) of SparseTensor
programs, with their index parts constant."""
import numpy as np

import tensorweave as tf
from tensorweave.ops.sparse import sparse_impl
from tests.gradient_cases import GradCase

_IDX = [[0, 1], [0, 3], [1, 0], [2, 2], [2, 3]]
_SHAPE = [3, 4]


def _sp(v):
    return tf.SparseTensor(_IDX, v, _SHAPE)


def _other():
    return tf.SparseTensor([[0, 1], [1, 1], [2, 3]], tf.constant([-1.5, 2.0, 1.0], tf.float64), _SHAPE)


def _weights(n):
    return tf.constant(np.linspace(0.5, 1.5, n), tf.float64)


CASES = [
    GradCase("sparse_dense_matmul", ("SparseTensorDenseMatMul",),
             lambda v, b: tf.sparse_tensor_dense_matmul(_sp(v), b), [(5,), (4, 2)]),
    GradCase("sparse_dense_matmul_adjoint", ("SparseTensorDenseMatMul",),
             lambda v, b: tf.sparse_tensor_dense_matmul(_sp(v), b, adjoint_a=True, adjoint_b=True),
             [(5,), (2, 3)]),
    GradCase("sparse_add", ("SparseAdd",),
             lambda v: tf.sparse_add(_sp(v), _other(), thresh=0.01).values * _weights(6), [(5,)], low=0.2, high=1.0),
    GradCase("sparse_dense_add", ("SparseTensorDenseAdd",),
             lambda v, d: tf.sparse_add(_sp(v), d) * 1.5, [(5,), (3, 4)]),
    GradCase("sparse_reorder", ("SparseReorder",),
             lambda v: tf.sparse.reorder(tf.SparseTensor(_IDX[::-1], v, _SHAPE)).values * _weights(5), [(5,)]),
    GradCase("sparse_reduce_sum", ("SparseReduceSum",),
             lambda v: tf.sparse.reduce_sum(_sp(v), 1) * _weights(3), [(5,)]),
    GradCase("sparse_reduce_sum_keepdims_neg_axis", ("SparseReduceSum",),
             lambda v: tf.sparse.reduce_sum(_sp(v), -2, keepdims=True) * _weights(4), [(5,)]),
    GradCase("sparse_softmax", ("SparseSoftmax", "SparseReduceSum", "SparseDenseCwiseAdd"),
             lambda v: tf.sparse.softmax(_sp(v)).values * _weights(5), [(5,)]),
    GradCase("sparse_dense_cwise_mul", ("SparseDenseCwiseMul",),
             lambda v, d: sparse_impl.sparse_dense_cwise_mul(_sp(v), d), [(5,), (4,)]),
    GradCase("sparse_dense_cwise_div", ("SparseDenseCwiseDiv",),
             lambda v, d: sparse_impl.sparse_dense_cwise_div(_sp(v), d), [(5,), (3, 1)], low=0.5, high=1.5),
    GradCase("sparse_slice", ("SparseSlice",),
             lambda v: tf.sparse.slice(_sp(v), [0, 1], [2, 3]).values * _weights(2), [(5,)]),
    GradCase("sparse_fill_empty_rows", ("SparseFillEmptyRows",),
             lambda v, d: tf.sparse.fill_empty_rows(tf.SparseTensor([[0, 1], [2, 0]], v, [4, 2]), d)[0].values
             * _weights(4), [(2,), ()]),
    GradCase("sparse_segment_sum", ("SparseSegmentSum",),
             lambda d: tf.sparse_segment_sum(d, [0, 2, 2], [0, 0, 1]), [(3, 2)]),
    GradCase("sparse_segment_sum_n", ("SparseSegmentSumWithNumSegments",),
             lambda d: tf.sparse_segment_sum(d, [0, 2, 2], [0, 0, 2], num_segments=4), [(3, 2)]),
    GradCase("sparse_segment_mean", ("SparseSegmentMean",),
             lambda d: tf.sparse_segment_mean(d, [0, 2, 1], [0, 0, 1]), [(3, 2)]),
    GradCase("sparse_segment_mean_n", ("SparseSegmentMeanWithNumSegments",),
             lambda d: tf.sparse_segment_mean(d, [0, 2, 1], [0, 0, 2], num_segments=3), [(3, 2)]),
    GradCase("sparse_segment_sqrt_n", ("SparseSegmentSqrtN",),
             lambda d: tf.sparse_segment_sqrt_n(d, [0, 2, 1], [0, 0, 1]), [(3, 2)]),
    GradCase("sparse_segment_sqrt_n_n", ("SparseSegmentSqrtNWithNumSegments",),
             lambda d: tf.sparse_segment_sqrt_n(d, [1, 1], [1, 1], num_segments=3), [(3, 2)]),
]
