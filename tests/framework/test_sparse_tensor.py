"""tf.SparseTensor: construction and static shapes, fetching as SparseTensorValue, feeding a
SparseTensorValue (or a triple) for a SparseTensor key, and SparseToDense."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_static_shape_matches, check_op


def test_construction_and_static_shape():
    sp = tf.SparseTensor([[0, 1], [2, 3]], [1.0, 2.0], [3, 4])
    assert sp.indices.dtype == tf.int64 and sp.dense_shape.dtype == tf.int64
    assert sp.dtype == tf.float32
    assert sp.get_shape().as_list() == [3, 4] and sp.shape.as_list() == [3, 4]
    assert sp.graph is tf.get_default_graph()
    assert sp.op is sp.values.op


def test_construction_rejects_inconsistent_parts():
    with pytest.raises(ValueError):
        tf.SparseTensor([[0, 1], [2, 3]], [1.0, 2.0, 3.0], [3, 4])  # 2 indices, 3 values
    with pytest.raises(ValueError):
        tf.SparseTensor([[0, 1]], [1.0], [3, 4, 5])                  # rank 2 indices, rank 3 shape
    with pytest.raises(ValueError):
        tf.SparseTensor([0, 1], [1.0, 2.0], [3])                     # indices must be a matrix


def test_fetch_returns_sparse_tensor_value():
    sp = tf.SparseTensor([[0, 1], [2, 3]], [1.5, 2.5], [3, 4])
    with tf.Session() as sess:
        value = sess.run(sp)
        nested = sess.run({"sp": sp, "list": [sp.values]})
        with sess.as_default():
            evaluated = sp.eval()
    assert isinstance(value, tf.SparseTensorValue)
    np.testing.assert_array_equal(value.indices, [[0, 1], [2, 3]])
    np.testing.assert_array_equal(value.values, np.array([1.5, 2.5], np.float32))
    np.testing.assert_array_equal(value.dense_shape, [3, 4])
    assert isinstance(nested["sp"], tf.SparseTensorValue)
    np.testing.assert_array_equal(nested["list"][0], value.values)
    np.testing.assert_array_equal(evaluated.values, value.values)


def test_feed_sparse_tensor_value_and_triple():
    sp = tf.sparse_placeholder(tf.float32)
    dense = tf.sparse_tensor_to_dense(sp, default_value=-1.0)
    fed = tf.SparseTensorValue(np.array([[0, 0], [1, 2]], np.int64), np.array([3.0, 4.0], np.float32),
                               np.array([2, 3], np.int64))
    expected = np.full((2, 3), -1.0, np.float32)
    expected[0, 0], expected[1, 2] = 3.0, 4.0
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(dense, {sp: fed}), expected)
        np.testing.assert_array_equal(sess.run(dense, {sp: ([[0, 0], [1, 2]], [3.0, 4.0], [2, 3])}), expected)
        echoed = sess.run(sp, {sp: fed})
        np.testing.assert_array_equal(echoed.indices, fed.indices)
        call = sess.make_callable(dense, [sp])
        np.testing.assert_array_equal(call(fed), expected)
        with pytest.raises(TypeError):
            sess.run(dense, {sp: np.zeros((2, 3))})


def test_sparse_placeholder_with_known_shape():
    sp = tf.sparse_placeholder(tf.int32, shape=[4, 5])
    assert sp.get_shape().as_list() == [4, 5]
    dense = tf.sparse_tensor_to_dense(sp)
    with tf.Session() as sess:
        out = sess.run(dense, {sp: ([[3, 4]], [7], [4, 5])})
    expected = np.zeros((4, 5), np.int32)
    expected[3, 4] = 7
    np.testing.assert_array_equal(out, expected)


def test_sparse_to_dense_forms():
    # [N, rank] indices, default value
    out = np.full((3, 4), -1.0, np.float32)
    out[0, 1], out[2, 3] = 1.0, 2.0
    check_op(tf.sparse_to_dense([[0, 1], [2, 3]], [3, 4], [1.0, 2.0], default_value=-1.0), out)
    # vector of positions in a 1-D output, scalar value broadcast
    check_op(tf.sparse_to_dense([0, 2], [3], 5.0), np.array([5.0, 0.0, 5.0], np.float32))
    # a single scalar index
    check_op(tf.sparse_to_dense(1, [3], 5.0), np.array([0.0, 5.0, 0.0], np.float32))
    # int64 indices and strings
    check_op(tf.sparse_to_dense(np.array([[1]], np.int64), np.array([2], np.int64), ["x"], default_value=""),
             np.array([b"", b"x"], dtype=object))


def test_sparse_to_dense_static_shape_unknown_when_fed():
    shape = tf.placeholder(tf.int32, [2])
    dense = tf.sparse_to_dense([[0, 0]], shape, [1])
    assert dense.shape.as_list() == [None, None]
    with tf.Session() as sess:
        value = sess.run(dense, {shape: [2, 2]})
    assert_static_shape_matches(dense, value)
    np.testing.assert_array_equal(value, [[1, 0], [0, 0]])


@pytest.mark.parametrize("indices,message", [
    ([[2, 3], [0, 1]], "indices[1] = [0,1] is out of order"),
    ([[0, 1], [0, 1]], "indices[1] = [0,1] is repeated"),
    ([[5, 0], [0, 0]], "indices[0] = [5,0] is out of bounds: need 0 <= index < [3,4]"),
])
def test_sparse_to_dense_validation(indices, message):
    dense = tf.sparse_to_dense(indices, [3, 4], [1.0, 2.0])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=message.replace("[", r"\[")):
            sess.run(dense)


def test_sparse_to_dense_unvalidated_order_and_bad_inputs():
    unordered = tf.sparse_to_dense([[2, 3], [0, 1]], [3, 4], [1.0, 2.0], validate_indices=False)
    expected = np.zeros((3, 4), np.float32)
    expected[2, 3], expected[0, 1] = 1.0, 2.0
    check_op(unordered, expected)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="out of bounds"):
            sess.run(tf.sparse_to_dense([[9, 0]], [3, 4], [1.0], validate_indices=False))
        with pytest.raises(tf.errors.InvalidArgumentError, match="sparse_values has incorrect shape"):
            sess.run(tf.sparse_to_dense([[0, 0], [1, 1]], [3, 4], [1.0, 2.0, 3.0]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="output_shape has incorrect number"):
            sess.run(tf.sparse_to_dense([[0, 0]], [3, 4, 5], [1.0]))


def test_sparse_to_dense_gradient_values():
    values = tf.placeholder(tf.float32, [2])
    default = tf.placeholder(tf.float32, [])
    dense = tf.sparse_to_dense([[0, 1], [2, 3]], [3, 4], values, default)
    weights = np.arange(12, dtype=np.float32).reshape(3, 4)
    grads = tf.gradients(tf.reduce_sum(dense * weights), [values, default])
    with tf.Session() as sess:
        g_values, g_default = sess.run(grads, {values: [3.0, 4.0], default: 0.5})
    np.testing.assert_allclose(g_values, [weights[0, 1], weights[2, 3]])
    np.testing.assert_allclose(g_default, weights.sum() - weights[0, 1] - weights[2, 3])
