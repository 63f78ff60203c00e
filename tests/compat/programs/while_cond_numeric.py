"""Numeric control flow: Newton's method for a square root in tf.while_loop, a Collatz step count
with tf.cond inside the loop body, a TensorArray of partial sums, tf.case, and the gradient of a
loop's result with respect to its input."""
import numpy as np


def run(tf, workdir):
    a = tf.placeholder(tf.float32, [])
    n = tf.placeholder(tf.int32, [])

    def newton_body(i, x):
        return i + 1, 0.5 * (x + a / x)

    _, root = tf.while_loop(lambda i, x: i < 8, newton_body, [tf.constant(0), a])

    def collatz_body(k, steps):
        nxt = tf.cond(tf.equal(k % 2, 0), lambda: k // 2, lambda: 3 * k + 1)
        return nxt, steps + 1

    _, collatz = tf.while_loop(lambda k, s: k > 1, collatz_body, [n, tf.constant(0)])

    def sums_body(i, total, ta):
        total = total + tf.cast(i, tf.float32) * a
        return i + 1, total, ta.write(i, total)

    _, _, ta = tf.while_loop(lambda i, t, ta: i < 5, sums_body,
                             [0, tf.constant(0.0), tf.TensorArray(tf.float32, size=5)])
    partial = ta.stack()
    branch = tf.case([(tf.less(a, 1.0), lambda: tf.constant(-1.0)), (tf.less(a, 5.0), lambda: a * 2.0)],
                     default=lambda: tf.sqrt(a))
    x = tf.placeholder(tf.float32, [])
    _, power = tf.while_loop(lambda i, p: i < 4, lambda i, p: (i + 1, p * x), [0, tf.constant(1.0)])
    dpower = tf.gradients(power, x)[0]
    out = {}
    with tf.Session() as sess:
        out["roots"] = np.array([sess.run(root, {a: v}) for v in (2.0, 9.0, 0.5)], np.float32)
        out["collatz"] = np.array([sess.run(collatz, {n: v}) for v in (6, 7, 27)], np.int32)
        out["partial_sums"] = sess.run(partial, {a: 1.5})
        out["case"] = np.array([sess.run(branch, {a: v}) for v in (0.5, 3.0, 16.0)], np.float32)
        out["power_and_grad"] = np.array(sess.run([power, dpower], {x: 1.7}), np.float32)
    return out
