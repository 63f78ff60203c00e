"""Gradients through tf.while_loop and tf.cond (OSDI 4.1): the backward loop runs as many
iterations as the forward one, reads forward values back from stacks in reverse, and sums the
gradients of loop invariants. Values are compared with NumPy references of the same loops
differentiated by central differences (and closed forms where there is one)."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf


def numeric_grad(f, value, eps=1e-6):
    value = np.array(value, dtype=np.float64)
    grad = np.zeros_like(value)
    for idx in np.ndindex(value.shape):
        step = np.zeros_like(value)
        step[idx] = eps
        grad[idx] = (f(value + step) - f(value - step)) / (2 * eps)
    return grad


def test_power_loop_gradient_closed_form():
    x = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x])
    g = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        assert sess.run(g, {x: 2.0}) == pytest.approx(4 * 2.0 ** 3)
        assert sess.run(g, {x: -1.5}) == pytest.approx(4 * (-1.5) ** 3)


def test_data_dependent_trip_count_same_graph():
    """One graph, several trip counts (including zero): the backward loop follows each."""
    n = tf.placeholder(tf.int32, [])
    w = tf.placeholder(tf.float64, [3])
    _, acc = tf.while_loop(lambda i, a: i < n, lambda i, a: (i + 1, tf.sin(a) * w + a),
                           [0, tf.ones([3], tf.float64)])
    gw = tf.gradients(tf.reduce_sum(acc), w)[0]
    w_val = np.array([0.3, -0.2, 0.5])

    def f(wv, trips):
        a = np.ones(3)
        for _ in range(trips):
            a = np.sin(a) * wv + a
        return a.sum()

    with tf.Session() as sess:
        for trips in (0, 1, 5, 12):
            got = sess.run(gw, {w: w_val, n: trips})
            np.testing.assert_allclose(got, numeric_grad(lambda v: f(v, trips), w_val), rtol=1e-6, atol=1e-9)


def test_nested_loops_gradient():
    x = tf.placeholder(tf.float64, [2])

    def outer(i, a):
        _, b = tf.while_loop(lambda j, b: j < i + 1, lambda j, b: (j + 1, tf.sin(b) * x + b), [0, a])
        return i + 1, b * 1.1

    _, out = tf.while_loop(lambda i, a: i < 3, outer, [0, x])
    g = tf.gradients(tf.reduce_sum(out), x)[0]

    def f(xv):
        a = xv.copy()
        for i in range(3):
            for _ in range(i + 1):
                a = np.sin(a) * xv + a
            a = a * 1.1
        return a.sum()

    x_val = np.array([0.4, -0.7])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: x_val}), numeric_grad(f, x_val), rtol=1e-6)


def test_cond_inside_loop_and_loop_inside_cond():
    x = tf.placeholder(tf.float64, [2])
    p = tf.placeholder(tf.bool, [])

    def body(i, a):
        return i + 1, tf.cond(tf.equal(i % 2, 0), lambda: a * x, lambda: tf.sin(a) + 1.0)

    _, in_loop = tf.while_loop(lambda i, a: i < 5, body, [0, x])
    in_cond = tf.cond(p, lambda: tf.while_loop(lambda i, a: i < 3, lambda i, a: (i + 1, tf.sin(a) * x),
                                               [0, x])[1], lambda: x * 3.0)
    g_loop = tf.gradients(tf.reduce_sum(in_loop), x)[0]
    g_cond = tf.gradients(tf.reduce_sum(in_cond), x)[0]

    def f_loop(xv):
        a = xv.copy()
        for i in range(5):
            a = a * xv if i % 2 == 0 else np.sin(a) + 1.0
        return a.sum()

    def f_cond(xv):
        a = xv.copy()
        for _ in range(3):
            a = np.sin(a) * xv
        return a.sum()

    x_val = np.array([0.4, -0.7])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g_loop, {x: x_val}), numeric_grad(f_loop, x_val), rtol=1e-6)
        np.testing.assert_allclose(sess.run(g_cond, {x: x_val, p: True}), numeric_grad(f_cond, x_val), rtol=1e-6)
        np.testing.assert_array_equal(sess.run(g_cond, {x: x_val, p: False}), [3.0, 3.0])


def test_unused_exit_gets_zero_gradient_and_invariant_accumulates():
    """Only `a` leaves toward y, but `b` (and the invariant x) feed it in every iteration."""
    x = tf.placeholder(tf.float64, [2])
    _, a, _ = tf.while_loop(lambda i, a, b: i < 4, lambda i, a, b: (i + 1, a * b, b + x), [0, x, x])
    g = tf.gradients(tf.reduce_sum(a), x)[0]

    def f(xv):
        a, b = xv.copy(), xv.copy()
        for _ in range(4):
            a, b = a * b, b + xv
        return a.sum()

    x_val = np.array([0.4, -0.7])
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {x: x_val}), numeric_grad(f, x_val), rtol=1e-6)


def test_back_prop_false_gives_no_gradient_as_in_tf():
    x = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x], back_prop=False)
    assert tf.gradients(y, x) == [None]
    assert tf.gradients(y * x, x)[0] is not None  # the path around the loop still differentiates


def test_gradient_with_maximum_iterations_and_two_gradient_calls():
    x = tf.placeholder(tf.float64, [2])
    out = tf.while_loop(lambda a: tf.reduce_sum(a) < 100.0, lambda a: a * x, [x], maximum_iterations=3)
    g1 = tf.gradients(tf.reduce_sum(out), x)[0]
    g2 = tf.gradients(tf.reduce_sum(out) * 2.0, x)[0]   # a second backward loop of its own
    x_val = np.array([1.5, 2.0])
    with tf.Session() as sess:
        r1, r2 = sess.run([g1, g2], {x: x_val})
    np.testing.assert_allclose(r1, 4 * x_val ** 3)
    np.testing.assert_allclose(r2, 8 * x_val ** 3)


def test_second_order_through_loop_is_refused():
    x = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda i, v: i < 3, lambda i, v: (i + 1, v * x), [0, x])
    g = tf.gradients(y, x)[0]
    with pytest.raises(TypeError, match="Second-order gradient for while loops"):
        tf.gradients(g, x)


def test_stateful_op_runs_once_per_forward_iteration_with_gradients():
    counter = tf.Variable(0)
    x = tf.placeholder(tf.float64, [])

    def body(i, v):
        with tf.control_dependencies([tf.assign_add(counter, 1)]):
            return i + 1, v * x

    _, y = tf.while_loop(lambda i, v: i < 6, body, [0, x])
    g = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        sess.run(counter.initializer)
        assert sess.run(g, {x: 1.1}) == pytest.approx(7 * 1.1 ** 6)
        assert sess.run(counter) == 6


def test_out_of_order_iterations_keep_gradient_history_in_order():
    """With parallel_iterations > 1, a slow first iteration's value is pushed after later ones;
    the backward loop still pairs every iteration with its own forward values."""
    x = tf.placeholder(tf.float64, [3])

    def slow_first(i):
        if i == 0:
            time.sleep(0.05)
        return i

    def body(i, acc):
        gate = tf.py_func(slow_first, [i], tf.int32)
        with tf.control_dependencies([gate]):
            scaled = x * tf.cast(i + 1, tf.float64)   # iteration 0's value comes last
        return i + 1, acc + tf.sin(scaled) * tf.cast(i + 1, tf.float64)

    _, acc = tf.while_loop(lambda i, a: i < 4, body, [0, tf.zeros([3], tf.float64)], parallel_iterations=4)
    g = tf.gradients(tf.reduce_sum(acc), x)[0]
    x_val = np.array([0.3, -0.4, 0.8])
    expected = sum((k + 1) ** 2 * np.cos(x_val * (k + 1)) for k in range(4))
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=4)) as sess:
        np.testing.assert_allclose(sess.run(g, {x: x_val}), expected, rtol=1e-9)


def test_training_a_loop_with_a_variable_matches_numpy():
    """A weight read in every iteration (an invariant) trained by SGD through the loop."""
    w = tf.Variable([0.5, -0.3], dtype=tf.float64)
    x = tf.placeholder(tf.float64, [2])
    _, h = tf.while_loop(lambda i, h: i < 3, lambda i, h: (i + 1, tf.tanh(h * w + x)), [0, tf.zeros([2], tf.float64)])
    loss = tf.reduce_sum(tf.square(h - 0.25))
    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
    x_val = np.array([0.2, 0.7])

    def f(wv):
        h = np.zeros(2)
        for _ in range(3):
            h = np.tanh(h * wv + x_val)
        return np.sum((h - 0.25) ** 2)

    w_ref = np.array([0.5, -0.3])
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(3):
            sess.run(train, {x: x_val})
            w_ref = w_ref - 0.1 * numeric_grad(f, w_ref)
        np.testing.assert_allclose(sess.run(w), w_ref, rtol=1e-6)


def test_gradient_concurrent_steps_do_not_share_stacks():
    """Stacks live in each step's resources: concurrent runs of one gradient stay separate."""
    x = tf.placeholder(tf.float64, [])
    _, y = tf.while_loop(lambda i, v: i < 4, lambda i, v: (i + 1, v * x), [0, x])
    g = tf.gradients(y, x)[0]
    results = {}
    with tf.Session() as sess:
        def run(value):
            results[value] = [sess.run(g, {x: value}) for _ in range(5)]
        threads = [threading.Thread(target=run, args=(v,)) for v in (1.5, -2.0, 0.5)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for value, got in results.items():
        np.testing.assert_allclose(got, [5 * value ** 4] * 5)
