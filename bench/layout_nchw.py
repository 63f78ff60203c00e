"""The layout optimizer (issue 17): cnn_step.py's network written in NCHW (28x28x1 images, batch
64, conv5x5x32-relu-maxpool / conv5x5x64-relu-maxpool / fc1024-relu / fc10, SGD), its training
step with `rewrite_options.layout_optimizer` on (the default) and off. On CPU the NCHW kernels
transpose in and out in every op; with the pass the chain runs NHWC with transposes at its ends
(and the NHWC convolutions fuse with their bias and Relu). Both sessions alive, measured in
alternation, best of the rounds (this machine's load drifts); the numbers are checked equal."""
from __future__ import annotations

import time

import common  # noqa: F401  (sets sys.path)
import numpy as np

import tensorweave as tf


def build():
    rng = np.random.RandomState(0)
    images = rng.rand(64, 1, 28, 28).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.randint(0, 10, 64)]
    x = tf.placeholder(tf.float32, [64, 1, 28, 28])
    y = tf.placeholder(tf.float32, [64, 10])

    def conv_pool(h, channels_in, channels_out):
        w = tf.Variable(tf.truncated_normal([5, 5, channels_in, channels_out], stddev=0.1, seed=channels_out))
        b = tf.Variable(tf.constant(0.1, shape=[channels_out]))
        h = tf.nn.conv2d(h, w, strides=[1, 1, 1, 1], padding="SAME", data_format="NCHW")
        h = tf.nn.relu(tf.nn.bias_add(h, b, data_format="NCHW"))
        return tf.nn.max_pool(h, ksize=[1, 1, 2, 2], strides=[1, 1, 2, 2], padding="SAME", data_format="NCHW")

    h = tf.reshape(conv_pool(conv_pool(x, 1, 32), 32, 64), [-1, 64 * 7 * 7])
    w3 = tf.Variable(tf.truncated_normal([64 * 7 * 7, 1024], stddev=0.1, seed=3))
    h = tf.nn.relu(tf.matmul(h, w3) + 0.1)
    w4 = tf.Variable(tf.truncated_normal([1024, 10], stddev=0.1, seed=4))
    logits = tf.matmul(h, w4)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=y, logits=logits))
    train = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
    return train, loss, {x: images, y: labels}


def session(layout_on: bool):
    graph = tf.Graph()
    with graph.as_default():
        tf.set_random_seed(0)
        train, loss, feed = build()
        config = tf.ConfigProto()
        if not layout_on:
            config.graph_options.rewrite_options.layout_optimizer = config.graph_options.rewrite_options.OFF
        sess = tf.Session(config=config)
        sess.run(tf.global_variables_initializer())
    return sess, train, loss, feed


def main() -> None:
    sessions = {on: session(on) for on in (True, False)}
    first_loss = {on: s.run(loss, feed) for on, (s, _, loss, feed) in sessions.items()}
    np.testing.assert_allclose(first_loss[True], first_loss[False], rtol=1e-5)
    best = {True: float("inf"), False: float("inf")}
    for round_ in range(5):
        for on in ((True, False) if round_ % 2 else (False, True)):
            sess, train, _, feed = sessions[on]
            sess.run(train, feed)  # warm
            times = []
            for _ in range(5):
                t0 = time.process_time()
                sess.run(train, feed)
                times.append(time.process_time() - t0)
            best[on] = min(best[on], float(np.median(times)))
    print(f"NCHW CNN train step (CPU time): layout optimizer on {best[True] * 1e3:.1f} ms, "
          f"off {best[False] * 1e3:.1f} ms, ratio {best[True] / best[False]:.2f}")


if __name__ == "__main__":
    main()
