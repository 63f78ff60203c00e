"""Op cases for sparse ops outside the gradient-check table: serialization, concat, split,
reshape, crosses, reductions to sparse results, sparse-sparse extremes, and the gradient ops
a tape runs for sparse additions, slices, filled rows and segment means."""
import numpy as np

import tensorweave as tf
from tensorweave.ops.sparse.sparse_impl import sparse_dense_cwise_add
from tensorweave.ops.sparse.sparse_serialize import deserialize_sparse
from tests.op_cases import OpCase


def _sp(values, indices=((0, 1), (1, 0), (2, 2)), shape=(3, 3)):
    return tf.SparseTensor(tf.constant(indices, tf.int64), values, tf.constant(shape, tf.int64))


def _values(rng):
    return [rng.randn(3).astype(np.float32), rng.randn(3).astype(np.float32)]


def _serialization(v, w):
    a = _sp(v)
    batch = tf.sparse_concat(0, [tf.sparse_reshape(a, [1, 3, 3]), tf.sparse_reshape(_sp(w), [1, 3, 3])])
    one = tf.serialize_sparse(a)
    many = tf.serialize_many_sparse(batch)
    return [one, many, tf.deserialize_many_sparse(many, tf.float32),
            deserialize_sparse(tf.stack([one, tf.serialize_sparse(_sp(w))]), tf.float32)]


def _reshaping(v, w):
    a = _sp(v)
    return [tf.sparse_concat(1, [a, _sp(w)]), tf.sparse_split(sp_input=a, num_split=3, axis=1),
            tf.sparse_reshape(a, [9, 1])]


def _reductions(v, w):
    a, b = _sp(v), _sp(w, ((0, 1), (1, 1), (2, 2)))
    return [tf.sparse_reduce_max(a, 1), tf.sparse_reduce_max_sparse(a, 0), tf.sparse_reduce_sum_sparse(a, 1),
            tf.sparse_maximum(a, b), tf.sparse_minimum(a, b), sparse_dense_cwise_add(a, tf.ones([3]))]


def _crosses():
    a = tf.SparseTensor([[0, 0], [1, 0], [1, 1]], tf.constant(["x", "y", "z"]), [2, 2])
    b = tf.constant([["p"], ["q"]])
    return [tf.sparse.cross([a, b]), tf.sparse.cross_hashed([a, b], num_buckets=10),
            tf.sparse.cross([a, b], separator="+")]


def _gradients(v, w):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([v, w])
        total = tf.sparse_add(_sp(v), _sp(w, ((0, 0), (1, 0), (2, 1))))
        sliced = tf.sparse_slice(_sp(v), [0, 1], [3, 2])
        filled, _ = tf.sparse_fill_empty_rows(_sp(w, ((0, 0), (0, 1), (2, 1)), (4, 2)), 0.5)
        data = tf.reshape(tf.concat([v, w], 0), [3, 2])
        mean = tf.sparse_segment_mean(data, tf.constant([0, 2, 1]), tf.constant([0, 0, 1]))
        sqrt_n = tf.sparse_segment_sqrt_n(data, tf.constant([0, 2, 1]), tf.constant([0, 0, 1]))
    targets = {"add": total.values, "slice": sliced.values, "fill": filled.values, "mean": mean,
               "sqrt_n": sqrt_n}
    return {k: tape.gradient(t, [v, w], unconnected_gradients=tf.UnconnectedGradients.ZERO)
            for k, t in targets.items()}


CASES = [
    OpCase("sparse:serialization", _serialization, _values,
           ("SerializeSparse", "SerializeManySparse", "DeserializeManySparse", "DeserializeSparse", "SparseConcat",
            "SparseReshape")),
    OpCase("sparse:reshaping", _reshaping, _values, ("SparseConcat", "SparseSplit", "SparseReshape")),
    OpCase("sparse:reductions", _reductions, _values,
           ("SparseReduceMax", "SparseReduceMaxSparse", "SparseReduceSumSparse", "SparseSparseMaximum",
            "SparseSparseMinimum", "SparseDenseCwiseAdd")),
    OpCase("sparse:crosses", _crosses, ops=("SparseCross", "SparseCrossV2")),
    OpCase("sparse:gradients", _gradients, _values,
           ("SparseAddGrad", "SparseSliceGrad", "SparseFillEmptyRowsGrad", "SparseSegmentMeanGrad",
            "SparseSegmentSqrtNGrad")),
]
