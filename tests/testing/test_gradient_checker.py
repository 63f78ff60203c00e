"""tf.test.compute_gradient / compute_gradient_error with TF's meaning: Jacobians of shape
[x_size, y_size], theoretical (tf.gradients) and numerical (central differences)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing import gradient_checker


def test_compute_gradient_returns_both_jacobians():
    x = tf.placeholder(tf.float64, [2, 3])
    w = np.arange(6.0).reshape(2, 3)
    y = tf.reduce_sum(tf.square(x) * w, axis=1)       # y_i = sum_j w_ij x_ij^2
    x0 = np.random.RandomState(0).uniform(-1, 1, (2, 3))
    theoretical, numerical = tf.test.compute_gradient(x, [2, 3], y, [2], x_init_value=x0, delta=1e-6)
    expected = np.zeros((6, 2))
    for i in range(2):
        for j in range(3):
            expected[i * 3 + j, i] = 2 * w[i, j] * x0[i, j]
    assert theoretical.shape == numerical.shape == (6, 2)
    np.testing.assert_allclose(theoretical, expected, rtol=1e-12)
    np.testing.assert_allclose(numerical, expected, atol=1e-8)
    assert tf.test.compute_gradient_error(x, [2, 3], y, [2], x_init_value=x0, delta=1e-6) < 1e-8


def test_compute_gradient_for_a_list_of_xs_and_extra_feeds():
    a = tf.placeholder(tf.float64, [3])
    b = tf.placeholder(tf.float64, [3])
    scale = tf.placeholder(tf.float64, [])
    y = a * b * scale
    av, bv = np.array([1.0, 2.0, 3.0]), np.array([-1.0, 0.5, 2.0])
    pairs = tf.test.compute_gradient([a, b], [[3], [3]], y, [3], x_init_value=[av, bv],
                                     extra_feed_dict={scale: 2.0})
    assert len(pairs) == 2
    np.testing.assert_allclose(pairs[0][0], np.diag(2 * bv))
    np.testing.assert_allclose(pairs[1][0], np.diag(2 * av))
    for theoretical, numerical in pairs:
        np.testing.assert_allclose(numerical, theoretical, atol=1e-7)


@tf.RegisterGradient("GradientCheckerWrongSquare")
def _wrong_gradient(op, grad):
    return grad * op.inputs[0]                # wrong for Square (2x) and for Tanh (1 - y^2)


def test_compute_gradient_error_detects_a_wrong_gradient():
    x = tf.placeholder(tf.float64, [4])
    with tf.get_default_graph().gradient_override_map({"Square": "GradientCheckerWrongSquare"}):
        y = tf.square(x)
    x0 = np.array([1.0, -2.0, 0.5, 3.0])
    err = tf.test.compute_gradient_error(x, [4], y, [4], x_init_value=x0)
    assert np.isclose(err, 3.0, atol=1e-6)    # max |x| is 3: |x - 2x| there


def test_uses_the_default_session_and_init_targets():
    v = tf.Variable([1.0, 2.0], dtype=tf.float64)
    x = tf.placeholder(tf.float64, [2])
    y = x * v
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(tf.assign(v, [3.0, 5.0]))    # only this session's v holds [3, 5]
        theoretical, _ = tf.test.compute_gradient(x, [2], y, [2], x_init_value=np.ones(2))
    np.testing.assert_allclose(theoretical, np.diag([3.0, 5.0]))
    theoretical, _ = tf.test.compute_gradient(x, [2], y, [2], x_init_value=np.ones(2),
                                              init_targets=[v.initializer])
    np.testing.assert_allclose(theoretical, np.diag([1.0, 2.0]))


def test_bad_init_value_shape_is_rejected():
    x = tf.placeholder(tf.float64, [3])
    with pytest.raises(ValueError, match="x_shape"):
        tf.test.compute_gradient(x, [3], x * 2.0, [3], x_init_value=np.ones(4))


def test_directional_check_for_large_inputs():
    x = tf.placeholder(tf.float64, [50, 40])
    y = tf.tanh(tf.matmul(x, tf.transpose(x)))
    x0 = np.random.RandomState(2).uniform(-0.3, 0.3, (50, 40))
    assert gradient_checker.directional_gradient_error([x], [x0], y) < 1e-5
    with tf.get_default_graph().gradient_override_map({"Tanh": "GradientCheckerWrongSquare"}):
        wrong = tf.tanh(tf.matmul(x, tf.transpose(x)))
    assert gradient_checker.directional_gradient_error([x], [x0], wrong) > 1e-2
