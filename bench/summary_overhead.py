"""Summaries must not slow training (issue 12): the main job's model (OSDI Figure 1, batch 100,
784-100-10, Adagrad) stepped 10 at a time, without summaries and with the loss and accuracy
scalars run and added to a FileWriter on every 10th step. Goal: at most 1.05x. The same loop runs
in TensorFlow in the same run, and each figure is also given as a ratio to it."""
from __future__ import annotations

import tempfile

import common  # noqa: F401  (sets sys.path)
import numpy as np
from common import report, run_tf, time_per_step

import tensorweave as tf

BODY = """
def build_and_time(tf, np, logdir):
    rng = np.random.RandomState(0)
    x_data = rng.rand(100, 784).astype(np.float32)
    y_data = np.eye(10, dtype=np.float32)[rng.randint(0, 10, 100)]
    x = tf.placeholder(tf.float32, [100, 784])
    y = tf.placeholder(tf.float32, [100, 10])
    W_1 = tf.Variable(tf.random_uniform([784, 100], -0.08, 0.08))
    b_1 = tf.Variable(tf.zeros([100]))
    layer_1 = tf.nn.relu(tf.matmul(x, W_1) + b_1)
    W_2 = tf.Variable(tf.random_uniform([100, 10], -0.2, 0.2))
    b_2 = tf.Variable(tf.zeros([10]))
    layer_2 = tf.matmul(layer_1, W_2) + b_2
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=layer_2))
    train_op = tf.train.AdagradOptimizer(0.01).minimize(loss)
    correct = tf.equal(tf.argmax(layer_2, 1), tf.argmax(y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct, tf.float32))
    tf.summary.scalar("loss", loss)
    tf.summary.scalar("accuracy", accuracy)
    merged = tf.summary.merge_all()
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    writer = tf.summary.FileWriter(logdir, sess.graph)
    feed = {x: x_data, y: y_data}
    step = [0]

    def plain():
        for _ in range(10):
            sess.run([train_op, loss], feed)

    def with_summaries():
        _, _, s = sess.run([train_op, loss, merged], feed)
        writer.add_summary(s, step[0])
        step[0] += 10
        for _ in range(9):
            sess.run([train_op, loss], feed)

    times = {}
    for _ in range(3):  # alternate, so both see the same machine
        for name, fn in (("plain", plain), ("summaries", with_summaries)):
            t = time_per_step(fn, min_time=1.0) / 10
            times[name] = min(times.get(name, t), t)
    writer.close()
    return times
"""


def main() -> None:
    scope: dict = {"time_per_step": time_per_step}
    exec(BODY, scope)
    with tempfile.TemporaryDirectory() as logdir:
        ours = scope["build_and_time"](tf, np, logdir)
    theirs = run_tf(BODY + "\nimport tempfile\nimport numpy as np\n"
                    "with tempfile.TemporaryDirectory() as d:\n    result = build_and_time(tf, np, d)\n") or {}
    report("main job step, no summaries", ours["plain"], theirs.get("plain"))
    report("main job step, summaries every 10 steps", ours["summaries"], theirs.get("summaries"))
    print(f"summaries / no summaries: {ours['summaries'] / ours['plain']:.3f}x (goal <= 1.05x)")


if __name__ == "__main__":
    main()
