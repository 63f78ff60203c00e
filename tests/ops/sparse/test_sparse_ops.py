"""tf.sparse beyond the TF fixtures: static shapes from the shape functions, build-time errors,
fed SparseTensors, and NumPy references on larger random inputs."""
import numpy as np
import pytest

import tensorweave as tf


def _random_sparse(rng, shape, density=0.3):
    dense = rng.uniform(-1, 1, shape) * (rng.uniform(0, 1, shape) < density)
    idx = np.argwhere(dense != 0)
    return dense, tf.SparseTensorValue(idx.astype(np.int64), dense[tuple(idx.T)], np.array(shape, np.int64))


def test_static_shapes_from_constant_dense_shape():
    sp = tf.SparseTensor([[0, 1], [2, 3]], [1., 2.], [3, 4])
    assert tf.sparse_tensor_dense_matmul(sp, tf.zeros([4, 5])).shape.as_list() == [3, 5]
    assert tf.sparse_tensor_dense_matmul(sp, tf.zeros([3, 5]), adjoint_a=True).shape.as_list() == [4, 5]
    assert tf.sparse.reduce_sum(sp, 1).shape.as_list() == [3]
    assert tf.sparse.reduce_sum(sp, 0, keepdims=True).shape.as_list() == [1, 4]
    assert tf.sparse.reduce_sum(sp).shape.as_list() == []
    assert tf.sparse.concat(1, [sp, sp]).shape.as_list() == [3, 8]
    assert tf.sparse.reshape(sp, [-1, 2]).shape.as_list() == [6, 2]
    assert tf.sparse.transpose(sp).shape.as_list() == [4, 3]
    assert tf.sparse_add(sp, tf.zeros([3, 4])).shape.as_list() == [3, 4]
    assert tf.sparse_add(sp, sp).shape.as_list() == [3, 4]


def test_build_time_errors():
    sp = tf.SparseTensor([[0, 1], [2, 3]], [1., 2.], [3, 4])
    with pytest.raises(ValueError, match="Keyword arguments are required"):
        tf.sparse_split(sp, 2, 1)
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 12 elements"):
        tf.sparse.reshape(sp, [5, -1])
    with pytest.raises(ValueError):
        tf.sparse_add(sp, tf.SparseTensor([[0, 1]], [1.], [3, 5]))
    with pytest.raises(TypeError, match="SparseTensor"):
        tf.sparse.reorder(tf.zeros([2, 2]))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.sparse_tensor_dense_matmul(sp, tf.zeros([5, 2]))
    with pytest.raises(ValueError, match="smaller"):
        tf.sparse.reset_shape(sp, [2, 4])


def test_fed_sparse_placeholder_matches_numpy():
    rng = np.random.RandomState(3)
    dense, value = _random_sparse(rng, (40, 30))
    order = rng.permutation(len(value.values))
    shuffled = tf.SparseTensorValue(value.indices[order], value.values[order], value.dense_shape)
    sp = tf.sparse_placeholder(tf.float64)
    b = rng.uniform(-1, 1, (30, 7))
    ordered = tf.sparse.reorder(sp)
    product = tf.sparse_tensor_dense_matmul(ordered, b)
    sums = tf.sparse.reduce_sum(ordered, 0)
    maxes = tf.sparse.reduce_max(ordered, 1)
    with tf.Session() as sess:
        got_sp, got_product, got_sums, got_maxes = sess.run([ordered, product, sums, maxes], {sp: shuffled})
    np.testing.assert_array_equal(got_sp.indices, value.indices)
    np.testing.assert_allclose(got_product, dense @ b, rtol=1e-12)
    np.testing.assert_allclose(got_sums, dense.sum(0), rtol=1e-12)
    present = np.where(dense != 0, dense, -np.inf).max(1)
    np.testing.assert_allclose(got_maxes, np.where(np.isfinite(present), present, 0))


def test_unknown_dense_shape_gives_unknown_static_shapes():
    sp = tf.sparse_placeholder(tf.float32)
    assert tf.sparse.reduce_sum(sp, 1).shape.ndims is None
    assert tf.sparse_tensor_dense_matmul(sp, tf.zeros([4, 5])).shape.as_list() == [None, 5]
    pieces = tf.sparse.split(sp_input=sp, num_split=3, axis=0)
    assert len(pieces) == 3


def test_split_uneven_sizes_and_concat_round_trip():
    rng = np.random.RandomState(4)
    dense, value = _random_sparse(rng, (7, 5))
    sp = tf.SparseTensor(value.indices, value.values, value.dense_shape)
    pieces = tf.sparse.split(sp_input=sp, num_split=3, axis=0)
    back = tf.sparse.to_dense(tf.sparse.concat(0, pieces))
    with tf.Session() as sess:
        got_pieces, got_back = sess.run([pieces, back])
    assert [list(p.dense_shape) for p in got_pieces] == [[3, 5], [2, 5], [2, 5]]
    np.testing.assert_allclose(got_back, dense)


def test_reshape_bad_size_at_run_time():
    sp = tf.sparse_placeholder(tf.float32)
    out = tf.sparse.reshape(sp, [5, -1])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="12 dense values"):
            sess.run(out, {sp: tf.SparseTensorValue(np.zeros((0, 2), np.int64), np.zeros(0, np.float32),
                                                    np.array([3, 4], np.int64))})


def test_embedding_lookup_sparse_still_works():
    params = tf.constant(np.arange(12, dtype=np.float32).reshape(4, 3))
    ids = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 3, 2], tf.int64), [2, 2])
    out = tf.nn.embedding_lookup_sparse(params, ids, None, combiner="sum")
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(out), [[12, 14, 16], [6, 7, 8]])


def test_sparse_times_and_divided_by_dense():
    sp = tf.SparseTensor([[0, 1], [1, 0], [1, 2]], [2., 4., 6.], [2, 3])
    prod = sp * tf.constant([1., 10., 100.])
    quot = sp / tf.constant([[2.], [4.]])
    assert isinstance(prod, tf.SparseTensor) and isinstance(quot, tf.SparseTensor)
    with tf.Session() as sess:
        p, q = sess.run([prod, quot])
    np.testing.assert_allclose(p.values, [20., 4., 600.])
    np.testing.assert_allclose(q.values, [1., 1., 1.5])
    np.testing.assert_array_equal(p.indices, [[0, 1], [1, 0], [1, 2]])
