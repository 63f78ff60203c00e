"""tf.eye and tf.norm against NumPy (names and values as TensorFlow 2.21 builds them)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import check_op

X = np.array([[3.0, -4.0], [1.0, 2.0]], np.float32)


def test_eye_square_rectangular_batched_and_dynamic():
    e = tf.eye(2)
    assert e.op.name == "eye/diag" and e.dtype == tf.float32
    check_op(e, np.eye(2, dtype=np.float32))
    check_op(tf.eye(2, 3), np.eye(2, 3, dtype=np.float32))
    check_op(tf.eye(3, 2, batch_shape=[2]), np.tile(np.eye(3, 2, dtype=np.float32), (2, 1, 1)))
    check_op(tf.eye(2, dtype=tf.int32), np.eye(2, dtype=np.int32))
    check_op(tf.eye(0), np.zeros((0, 0), np.float32))
    n = tf.placeholder(tf.int32, [])
    check_op(tf.eye(n, 3, dtype=tf.float64), np.eye(2, 3), feed_dict={n: 2})
    check_op(tf.eye(n), np.eye(4, dtype=np.float32), feed_dict={n: 4})
    with pytest.raises(ValueError):
        tf.eye(-1)
    with pytest.raises(TypeError):
        tf.eye(2.5)


@pytest.mark.parametrize("ord,axis,keepdims,expected", [
    ("euclidean", None, False, np.sqrt(30.0)),
    ("euclidean", 1, False, [5.0, np.sqrt(5.0)]),
    (1, None, False, 10.0),
    (np.inf, 1, False, [4.0, 2.0]),
    (1, [0, 1], False, 6.0),                      # largest column sum
    (np.inf, [-2, -1], False, 7.0),               # largest row sum
    ("fro", [0, 1], True, [[np.sqrt(30.0)]]),
    (3, 0, False, [28.0 ** (1 / 3), 72.0 ** (1 / 3)]),
    ("euclidean", 0, True, [[np.sqrt(10.0), np.sqrt(20.0)]]),
    (2, 1, False, [5.0, np.sqrt(5.0)]),
])
def test_norm_matches_numpy(ord, axis, keepdims, expected):
    out = tf.norm(X, ord=ord, axis=axis, keepdims=keepdims)
    check_op(out, np.asarray(expected, np.float32), rtol=1e-6)


def test_norm_keep_dims_alias_gradient_and_errors():
    check_op(tf.norm(X, axis=0, keep_dims=True), np.float32([[np.sqrt(10.0), np.sqrt(20.0)]]))
    x = tf.constant(X.astype(np.float64))
    check_op(tf.gradients(tf.norm(x), x)[0], X / np.sqrt(30.0), rtol=1e-12)
    for bad in (dict(ord=2, axis=[0, 1]), dict(ord=-1), dict(ord="nuc"), dict(axis=[0, 1, 1]),
                dict(ord=0), dict(keepdims=True, keep_dims=True)):
        with pytest.raises(ValueError):
            tf.norm(X, **bad)
