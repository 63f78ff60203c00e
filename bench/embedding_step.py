"""Sparse embedding training step (OSDI 4.2): a [R, 64] float32 table Variable, 32 random int32
ids fed each step, loss = reduce_sum(embedding_lookup(table, ids)), one optimizer step.

GradientDescentOptimizer(0.1) takes the sparse path ScatterSub; AdagradOptimizer(0.1)
deduplicates the ids (Unique + UnsortedSegmentSum) and applies SparseApplyAdagrad. Only the
looked-up rows are read or written, so the step time must not depend on R.
Goal: step time independent of R (10^4 vs 10^6 rows) and at most 0.5x TensorFlow's."""
from __future__ import annotations

import common  # noqa: F401  (sets sys.path)
import numpy as np
from common import report, run_tf, time_per_step

import tensorweave as tf
from tensorweave.ops.nn.embedding import embedding_lookup

ROWS = (10_000, 1_000_000)
OPTIMIZERS = ("GradientDescent", "Adagrad")

BODY = """
def build_and_time(tf, np, lookup, rows, optimizer):
    rng = np.random.RandomState(0)
    pool = [rng.randint(0, rows, 32).astype(np.int32) for _ in range(256)]  # fresh ids each step
    table = tf.Variable(tf.random_uniform([rows, 64], -0.1, 0.1))
    ids = tf.placeholder(tf.int32, [32])
    loss = tf.reduce_sum(lookup(table, ids))
    opt = (tf.train.GradientDescentOptimizer(0.1) if optimizer == "GradientDescent"
           else tf.train.AdagradOptimizer(0.1))
    train_op = opt.minimize(loss)
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    step = [0]

    def run():
        step[0] += 1
        sess.run(train_op, {ids: pool[step[0] % 256]})

    seconds = time_per_step(run)
    sess.close()
    return seconds
"""

TF_BODY = BODY + """
import numpy as np
result = {f"{opt}_{rows}": build_and_time(tf, np, tf.nn.embedding_lookup, rows, opt)
          for opt in %r for rows in %r}
""" % (OPTIMIZERS, ROWS)


def _check_sparse_update() -> None:
    """The benchmarked graph really trains: one GD step moves exactly the looked-up rows."""
    tf.reset_default_graph()
    table = tf.Variable(np.zeros([100, 64], np.float32))
    ids = tf.placeholder(tf.int32, [32])
    train_op = tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(embedding_lookup(table, ids)))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        batch = np.arange(32, dtype=np.int32) * 3 % 100
        sess.run(train_op, {ids: batch})
        after = sess.run(table.value())
    want = np.zeros([100, 64], np.float32)
    np.subtract.at(want, batch, np.float32(0.1))
    np.testing.assert_allclose(after, want, rtol=1e-6)


def main() -> None:
    _check_sparse_update()
    ours = {}
    for opt in OPTIMIZERS:
        for rows in ROWS:
            tf.reset_default_graph()
            scope: dict = {"time_per_step": time_per_step}
            exec(BODY, scope)
            ours[f"{opt}_{rows}"] = scope["build_and_time"](tf, np, embedding_lookup, rows, opt)
    theirs = run_tf(TF_BODY) or {}
    for opt in OPTIMIZERS:
        for rows in ROWS:
            key = f"{opt}_{rows}"
            report(f"embedding [{rows:.0e} x 64] ids 32 {opt}", ours[key], theirs.get(key))
        small, large = (ours[f"{opt}_{rows}"] for rows in ROWS)
        print(f"{'':44s} tensorweave step time R=1e6 / R=1e4: {large / small:.2f}", flush=True)


if __name__ == "__main__":
    main()
