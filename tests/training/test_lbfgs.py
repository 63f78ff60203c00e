import numpy as np

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
