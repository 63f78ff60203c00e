"""TensorArray gradients (TensorArrayGradV3): a gradient array per tf.gradients call, repeated
writes into it summed, and gradients through loops that read and write TensorArrays."""
import numpy as np

import tensorweave as tf
from tensorweave.testing.op_test import check_op


def test_read_write_stack_gradients_sum_repeated_reads():
    x = tf.placeholder(tf.float64, [3, 2])
    ta = tf.TensorArray(tf.float64, size=3, clear_after_read=False).unstack(x)
    y = ta.read(0) * ta.read(2) + ta.read(0) + tf.reduce_sum(ta.stack() ** 2, 0) + tf.reduce_sum(ta.gather([1, 1]), 0)
    g = tf.gradients(tf.reduce_sum(y), x)[0]
    x_val = np.arange(6.0).reshape(3, 2) / 10.0
    expected = 2 * x_val
    expected[0] += x_val[2] + 1.0
    expected[2] += x_val[0]
    expected[1] += 2.0
    check_op(g, expected, {x: x_val})


def test_split_concat_gradients():
    x = tf.placeholder(tf.float64, [6])
    ta = tf.TensorArray(tf.float64, size=2, clear_after_read=False).split(x, [2, 4])
    z = tf.reduce_sum(ta.concat() * tf.range(6, dtype=tf.float64)) + tf.reduce_sum(ta.read(1) ** 3)
    g = tf.gradients(z, x)[0]
    x_val = np.linspace(-1.0, 1.0, 6)
    expected = np.arange(6.0)
    expected[2:] += 3 * x_val[2:] ** 2
    check_op(g, expected, {x: x_val})


def test_each_gradients_call_gets_its_own_gradient_array():
    x = tf.placeholder(tf.float64, [2, 2])
    ta = tf.TensorArray(tf.float64, size=2).unstack(x)
    y = tf.reduce_sum(ta.stack() * 3.0)
    g1 = tf.gradients(y, x)[0]
    g2 = tf.gradients(y, x)[0]
    with tf.Session() as sess:
        r1, r2 = sess.run([g1, g2], {x: np.ones((2, 2))})
    np.testing.assert_array_equal(r1, np.full((2, 2), 3.0))
    np.testing.assert_array_equal(r2, np.full((2, 2), 3.0))   # not 6: separate arrays


def test_unwritten_gradient_element_reads_as_zeros():
    """Element 1 is never read after the write, so no gradient is written for it."""
    x = tf.placeholder(tf.float64, [3, 2])
    ta = tf.TensorArray(tf.float64, size=3, element_shape=[2]).unstack(x)
    y = tf.reduce_sum(ta.read(0) * 2.0 + ta.read(2))
    g = tf.gradients(y, x)[0]
    check_op(g, [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]], {x: np.ones((3, 2))})


def test_dynamic_size_array_written_in_loop():
    n = tf.placeholder(tf.int32, [])
    w = tf.placeholder(tf.float64, [2])
    ta = tf.TensorArray(tf.float64, size=0, dynamic_size=True)

    def body(i, h, acc):
        h = tf.tanh(h * w + 0.1)
        return i + 1, h, acc.write(i, h)
    _, _, acc = tf.while_loop(lambda i, h, a: i < n, body, [0, tf.ones([2], tf.float64), ta])
    y = tf.reduce_sum(acc.stack() * tf.constant([1.0, -2.0], tf.float64))
    g = tf.gradients(y, w)[0]

    def f(wv, trips):
        h, total = np.ones(2), 0.0
        for _ in range(trips):
            h = np.tanh(h * wv + 0.1)
            total += np.sum(h * [1.0, -2.0])
        return total

    w_val = np.array([0.7, -0.4])
    with tf.Session() as sess:
        for trips in (1, 4):
            got = sess.run(g, {w: w_val, n: trips})
            eps = 1e-6
            num = [(f(w_val + e * eps, trips) - f(w_val - e * eps, trips)) / (2 * eps) for e in np.eye(2)]
            np.testing.assert_allclose(got, num, rtol=1e-6)


def test_grad_array_static_shapes():
    x = tf.placeholder(tf.float64, [3, 2])
    ta = tf.TensorArray(tf.float64, size=3).unstack(x)
    g = ta.grad("gradients")
    assert g.element_shape.as_list() == [2]
    written = g.write(1, tf.constant([1.0, 2.0], tf.float64))
    check_op(written.read(1), [1.0, 2.0], {x: np.zeros((3, 2))})


def test_handles_are_vectors_of_two_as_tf_declares_them():
    """TF declares TensorArray (and its gradient's) and stack handles as vectors of 2; a GraphDef
    TF reads back carries those shapes, and the values match them."""
    from tensorweave.framework.op_def_library import apply_op
    from tensorweave.ops.control_flow import stack_ops
    from tensorweave.ops.control_flow.tensor_array import TensorArrayGradV3
    ta = tf.TensorArray(tf.float32, size=2)
    grad_handle = apply_op(TensorArrayGradV3, handle=ta.handle, flow_in=ta.flow, source="gradients")[0]
    handles = [ta.handle, grad_handle, stack_ops.stack(tf.float32, 5)]
    for h in handles:
        assert h.shape.as_list() == [2]
    with tf.Session() as sess:
        for value in sess.run(handles):
            assert value.shape == (2,)
