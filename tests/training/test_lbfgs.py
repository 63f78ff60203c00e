import numpy as np
import pytest

import tensorweave as tf


def test_lbfgs_reaches_the_minimum_of_a_convex_problem():
    rng = np.random.RandomState(3)
    a = rng.standard_normal((20, 5))
    b = rng.standard_normal((20, 1))
    lam = 0.1
    x_star = np.linalg.solve(a.T @ a + lam * np.eye(5), a.T @ b)
    x = tf.Variable(tf.zeros([5, 1], tf.float64))
    residual = tf.matmul(tf.constant(a), x) - tf.constant(b)
    loss = tf.reduce_sum(tf.square(residual)) + lam * tf.reduce_sum(tf.square(x))
    optimizer = tf.train.LBFGSOptimizer(loss, [x], max_iterations=100, tolerance=1e-12)
    with tf.Session() as sess:
        sess.run(x.initializer)
        final = optimizer.minimize(sess)
        got = sess.run(x)
    best = float(np.sum((a @ x_star - b) ** 2) + lam * np.sum(x_star ** 2))
    np.testing.assert_allclose(got, x_star, atol=1e-6)
    assert abs(final - best) < 1e-9


def test_lbfgs_on_rosenbrock():
    xy = tf.Variable(tf.constant([-1.2, 1.0], tf.float64))
    x, y = xy[0], xy[1]
    loss = tf.square(1.0 - x) + 100.0 * tf.square(y - tf.square(x))
    optimizer = tf.train.LBFGSOptimizer(loss, [xy], max_iterations=200, tolerance=1e-14)
    with tf.Session() as sess:
        sess.run(xy.initializer)
        optimizer.minimize(sess)
        np.testing.assert_allclose(sess.run(xy), [1.0, 1.0], atol=1e-4)


def _rosenbrock(v):
    return tf.reduce_sum(100.0 * tf.square(v[1:] - tf.square(v[:-1])) + tf.square(1.0 - v[:-1]))


def test_lbfgs_on_ten_dimensional_rosenbrock_in_float32_and_float64():
    start = np.tile([-1.2, 1.0], 5)
    for dtype, atol in ((tf.float64, 1e-6), (tf.float32, 1e-4)):
        tf.reset_default_graph()
        v = tf.Variable(tf.constant(start, dtype))
        steps = []
        optimizer = tf.train.LBFGSOptimizer(_rosenbrock(v), [v], max_iterations=300, tolerance=1e-14)
        with tf.Session() as sess:
            sess.run(v.initializer)
            final = optimizer.minimize(sess, step_callback=steps.append)
            got = sess.run(v)
        np.testing.assert_allclose(got, np.ones(10), atol=atol)
        assert final < 1e-8
        assert 0 < len(steps) < 300
        np.testing.assert_allclose(steps[-1], got, atol=1e-6)  # callback sees each iterate


def test_lbfgs_loss_decreases_every_iteration_and_callbacks_fire():
    v = tf.Variable(tf.constant([-1.2, 1.0], tf.float64))
    loss = _rosenbrock(v)
    losses, fetched = [], []
    optimizer = tf.train.LBFGSOptimizer(loss, [v], max_iterations=50, tolerance=1e-14)
    values = []
    with tf.Session() as sess:
        sess.run(v.initializer)
        optimizer.minimize(sess, step_callback=lambda x: values.append(sess.run(loss)),
                           loss_callback=lambda f, vv: (losses.append(f), fetched.append(vv)),
                           fetches=[v])
    assert all(b < a for a, b in zip(values, values[1:]))  # Wolfe steps always decrease
    assert len(losses) >= len(values) and len(fetched) == len(losses)
    x = fetched[0]
    assert np.isclose(losses[0], 100 * (x[1] - x[0] ** 2) ** 2 + (1 - x[0]) ** 2)


def test_lbfgs_with_several_variables_and_feeds():
    rng = np.random.RandomState(0)
    a_val = rng.standard_normal((30, 4))
    t_val = a_val @ np.array([[1.0], [-2.0], [0.5], [3.0]]) + 0.25
    a = tf.placeholder(tf.float64, [None, 4])
    t = tf.placeholder(tf.float64, [None, 1])
    w = tf.Variable(tf.zeros([4, 1], tf.float64))
    b = tf.Variable(tf.zeros([], tf.float64))
    loss = tf.reduce_mean(tf.square(tf.matmul(a, w) + b - t))
    optimizer = tf.train.LBFGSOptimizer(loss, [w, b], tolerance=1e-12)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        optimizer.minimize(sess, feed_dict={a: a_val, t: t_val})
        got_w, got_b = sess.run([w, b])
    design = np.hstack([a_val, np.ones((30, 1))])
    ref = np.linalg.lstsq(design, t_val, rcond=None)[0]
    np.testing.assert_allclose(got_w, ref[:4], atol=1e-6)
    np.testing.assert_allclose(got_b, ref[4, 0], atol=1e-6)


def test_lbfgs_rejects_bad_arguments():
    v = tf.Variable(tf.zeros([2], tf.float64))
    u = tf.Variable(tf.zeros([2], tf.float64))
    with pytest.raises(ValueError, match="No gradients"):
        tf.train.LBFGSOptimizer(tf.reduce_sum(v), [v, u])
    with pytest.raises(ValueError, match="scalar"):
        tf.train.LBFGSOptimizer(v * 2.0, [v])
    with pytest.raises(ValueError, match="history"):
        tf.train.LBFGSOptimizer(tf.reduce_sum(v), [v], history=0)
