"""OSDI Figure 1 training step: batch 100, 784-100-10, relu, softmax cross-entropy, Adagrad 0.01.
Goal: at most 0.8x TensorFlow's step time in the same run."""
from __future__ import annotations

import common  # noqa: F401  (sets sys.path)
import numpy as np
from common import report, run_tf, time_per_step

import tensorweave as tf

BODY = """
def build_and_time(tf, np):
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
    loss = tf.nn.softmax_cross_entropy_with_logits(labels=y, logits=layer_2)
    train_op = tf.train.AdagradOptimizer(0.01).minimize(loss)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    feed = {x: x_data, y: y_data}
    return {"train_step": time_per_step(lambda: sess.run(train_op, feed)),
            "forward": time_per_step(lambda: sess.run(loss, feed))}
"""


def main() -> None:
    scope: dict = {"time_per_step": time_per_step}
    exec(BODY, scope)
    ours = scope["build_and_time"](tf, np)
    theirs = run_tf(BODY + "\nimport numpy as np\nresult = build_and_time(tf, np)\n") or {}
    report("mlp 784-100-10 batch 100 forward (loss)", ours["forward"], theirs.get("forward"))
    report("mlp 784-100-10 batch 100 Adagrad train step", ours["train_step"], theirs.get("train_step"))


if __name__ == "__main__":
    main()
