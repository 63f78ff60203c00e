"""tf.gather_nd and tf.scatter_nd against NumPy; shapes, errors and the gradients' sparse
addresses (values verified with TensorFlow 2.21)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import check_op

PARAMS = np.arange(24.0).reshape(2, 3, 4)


@pytest.mark.parametrize("indices", [
    [[0, 1, 2], [1, 2, 3]],            # elements
    [[1, 0], [0, 2], [1, 0]],          # rows of the last axis, one twice
    [[[1]], [[0]]],                    # whole matrices, in a batch of addresses
    [[]],                              # the empty address: all of params
    np.zeros((2, 3, 2), np.int64),     # int64 indices in a 2-D batch
])
def test_gather_nd_matches_numpy(indices):
    idx = np.asarray(indices, dtype=np.int64 if np.asarray(indices).dtype == np.int64 else np.int32)
    k = idx.shape[-1]
    rows = idx.reshape(int(np.prod(idx.shape[:-1])), k)
    expected = np.stack([PARAMS[tuple(r)] for r in rows]).reshape(idx.shape[:-1] + PARAMS.shape[k:])
    out = tf.gather_nd(PARAMS, idx)
    assert out.op.type == "GatherNd"
    check_op(out, expected)


def test_gather_nd_strings_unknown_shapes_and_errors():
    words = tf.constant([["a", "b"], ["c", "d"]])
    check_op(tf.gather_nd(words, [[1, 0], [0, 1]]), np.array([b"c", b"b"], dtype=object))
    p = tf.placeholder(tf.float64)
    i = tf.placeholder(tf.int32, [None, 2])
    out = tf.gather_nd(p, i)
    assert out.shape.ndims is None
    check_op(out, PARAMS[[0, 1], [2, 0]], feed_dict={p: PARAMS, i: [[0, 2], [1, 0]]})
    assert tf.gather_nd(tf.placeholder(tf.float32, [5, 6, 7]), i).shape.as_list() == [None, 7]
    with pytest.raises(ValueError, match="must be <= params.rank"):
        tf.gather_nd(tf.constant(PARAMS), [[0, 0, 0, 0]])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[1\] = \[2, 0\] does not index into param shape \[2,3,4\]"):
            sess.run(out, {p: PARAMS, i: [[0, 0], [2, 0]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="does not index"):
            sess.run(out, {p: PARAMS, i: [[0, -1]]})


def test_scatter_nd_adds_repeated_addresses():
    check_op(tf.scatter_nd([[1], [1], [3]], [1.0, 2.0, 3.0], [5]), np.float32([0, 3, 0, 3, 0]))
    indices = np.array([[0, 1], [2, 0], [0, 1]], np.int32)
    updates = np.float64([1.5, -2.0, 4.0])
    expected = np.zeros((3, 2))
    np.add.at(expected, tuple(indices.T), updates)
    out = tf.scatter_nd(indices, updates, [3, 2])
    assert out.op.type == "ScatterNd" and out.shape.as_list() == [3, 2]
    check_op(out, expected)
    slices = np.arange(6, dtype=np.int32).reshape(3, 2)
    check_op(tf.scatter_nd([[2], [0], [2]], slices, tf.constant([4, 2])),
             np.int32([[2, 3], [0, 0], [4 + 0, 5 + 1], [0, 0]]))


def test_scatter_nd_shapes_and_errors():
    with pytest.raises(ValueError, match="updates has shape"):
        tf.scatter_nd([[1]], [1.0, 2.0], [4])
    shape = tf.placeholder(tf.int32, [2])
    out = tf.scatter_nd([[0], [1]], tf.ones([2, 3]), shape)
    assert out.shape.as_list() == [None, None]
    check_op(out, np.float32([[1, 1, 1], [1, 1, 1], [0, 0, 0]]), feed_dict={shape: [3, 3]})
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"indices\[0\] = \[5\] does not index into shape \[4\]"):
            sess.run(tf.scatter_nd([[5]], [1.0], [4]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="updates has shape"):
            sess.run(out, {shape: [3, 4]})


def test_gradients_are_each_other():
    p = tf.constant(np.arange(12.0).reshape(3, 4))
    grad = tf.gradients(tf.reduce_sum(tf.gather_nd(p, [[0, 1], [2, 3], [0, 1]])), p)[0]
    check_op(grad, [[0, 2, 0, 0], [0, 0, 0, 0], [0, 0, 0, 1]])
    u = tf.constant([1.0, 2.0, 3.0])
    weights = tf.constant([10.0, 20.0, 30.0, 40.0])
    scattered = tf.scatter_nd([[3], [0], [3]], u, [4])
    check_op(tf.gradients(tf.reduce_sum(scattered * weights), u)[0], np.float32([40, 10, 40]))
