"""Runs the walkthrough's two JIT examples (x*x*x*x and the hand-written GELU) under TensorFlow
2.21 (TF1 graph mode) on fixed float32 inputs, unfused and inside tf.xla.experimental.jit_scope
(XLA on the CPU), plus a jit_scope cluster ending in a reduction, and writes inputs and outputs to
tf_jit_expected.npz. Run under /opt/tfref only:
    /opt/tfref/bin/python tests/data/make_tf_jit_fixtures.py
"""
import math
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

HERE = os.path.dirname(os.path.abspath(__file__))


def gelu(x):
    return 0.5 * x * (1.0 + tf.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x * x * x)))


def x4(x):
    return x * x * x * x


def reduced(x, b):
    return tf.reduce_sum(tf.exp(x * 0.1) * b + 1.0, axis=1, keepdims=True)


def main():
    rng = np.random.RandomState(17)
    x = np.concatenate([np.linspace(-12, 12, 4001), rng.randn(4096) * 3]).astype(np.float32)
    m = rng.randn(64, 129).astype(np.float32)
    b = rng.randn(129).astype(np.float32)
    out = {"x": x, "m": m, "b": b}
    with tf.Graph().as_default():
        xp = tf.placeholder(tf.float32, [None])
        mp = tf.placeholder(tf.float32, [None, 129])
        bp = tf.placeholder(tf.float32, [129])
        fetches = {"gelu": gelu(xp), "x4": x4(xp), "reduced": reduced(mp, bp)}
        with tf.xla.experimental.jit_scope():
            fetches.update({"gelu_xla": gelu(xp), "x4_xla": x4(xp), "reduced_xla": reduced(mp, bp)})
        with tf.Session() as sess:
            out.update(sess.run(fetches, {xp: x, mp: m, bp: b}))
    np.savez(os.path.join(HERE, "tf_jit_expected.npz"), **out)


if __name__ == "__main__":
    main()
