"""PTB-small-style language model training step (issue 4): vocabulary 10,000, embedding 200, one
LSTMCell of 200 run by tf.nn.dynamic_rnn over 20 time steps, batch 20, full softmax over the
vocabulary, SGD (learning rate 1.0) on gradients clipped by global norm 5.
Goal: training step at most 1.2x TensorFlow's in the same run.

Also the per-iteration cost of the loop machinery alone: an empty tf.while_loop (a counter and
nothing else) run for 10,000 iterations per Session.run, as iterations per second.

The TensorFlow twin runs tensorflow.compat.v1 in graph mode with TF1 control flow (Switch/Merge/
Enter frames, as here) and the TF1 RNN cells (tensorflow.python.keras.layers.legacy_rnn, since
tf.nn.rnn_cell needs Keras 2, which is not installed next to tensorflow 2.21)."""
from __future__ import annotations

import common  # noqa: F401  (sets sys.path)
import numpy as np
from common import report, run_tf

import tensorweave as tf

VOCAB, HIDDEN, STEPS, BATCH = 10000, 200, 20, 20
LOOP_ITERATIONS = 10000

BODY = f"""
VOCAB, HIDDEN, STEPS, BATCH = {VOCAB}, {HIDDEN}, {STEPS}, {BATCH}
LOOP_ITERATIONS = {LOOP_ITERATIONS}


def build_and_time(tf, np, rnn_cell, dynamic_rnn):
    rng = np.random.RandomState(0)
    words = rng.randint(0, VOCAB, (BATCH, STEPS + 1)).astype(np.int32)
    inputs = tf.placeholder(tf.int32, [BATCH, STEPS])
    targets = tf.placeholder(tf.int32, [BATCH, STEPS])
    init = tf.random_uniform_initializer(-0.1, 0.1, seed=1)
    with tf.variable_scope("model", initializer=init):
        embedding = tf.get_variable("embedding", [VOCAB, HIDDEN], dtype=tf.float32)
        embedded = tf.nn.embedding_lookup(embedding, inputs)
        cell = rnn_cell.LSTMCell(HIDDEN, forget_bias=0.0)
        outputs, state = dynamic_rnn(cell, embedded, dtype=tf.float32)
        softmax_w = tf.get_variable("softmax_w", [HIDDEN, VOCAB], dtype=tf.float32)
        softmax_b = tf.get_variable("softmax_b", [VOCAB], dtype=tf.float32)
        logits = tf.matmul(tf.reshape(outputs, [-1, HIDDEN]), softmax_w) + softmax_b
        loss = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.reshape(targets, [-1]), logits=logits)
        cost = tf.reduce_sum(loss) / BATCH
    tvars = tf.trainable_variables()
    grads, _ = tf.clip_by_global_norm(tf.gradients(cost, tvars), 5.0)
    train_op = tf.train.GradientDescentOptimizer(1.0).apply_gradients(zip(grads, tvars))
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    feed = {{inputs: words[:, :-1], targets: words[:, 1:]}}
    first_cost = float(sess.run(cost, feed))
    result = {{"forward": time_per_step(lambda: sess.run(cost, feed), min_time=2.0, warmup=3),
              "train_step": time_per_step(lambda: sess.run(train_op, feed), min_time=4.0, warmup=3),
              "first_cost": first_cost}}
    sess.close()
    return result


def time_empty_loop(tf):
    graph = tf.Graph()
    with graph.as_default():
        n = tf.placeholder(tf.int32, [])
        loop = tf.while_loop(lambda i: i < n, lambda i: i + 1, [tf.constant(0)])
        sess = tf.Session(graph=graph)
        assert sess.run(loop, {{n: 10}}) == 10
        seconds = time_per_step(lambda: sess.run(loop, {{n: LOOP_ITERATIONS}}), min_time=2.0, warmup=2)
        sess.close()
    return seconds / LOOP_ITERATIONS
"""

TF_PRELUDE = """
tf.disable_control_flow_v2()
from tensorflow.python.keras.layers.legacy_rnn import rnn_cell_impl as rnn_cell
from tensorflow.python.ops.rnn import dynamic_rnn
import numpy as np
"""


def main() -> None:
    scope: dict = {"time_per_step": common.time_per_step}
    exec(BODY, scope)
    ours_loop = scope["time_empty_loop"](tf)
    ours = scope["build_and_time"](tf, np, tf.nn.rnn_cell, tf.nn.dynamic_rnn)
    theirs = run_tf(BODY + TF_PRELUDE + "result = build_and_time(tf, np, rnn_cell, dynamic_rnn)\n"
                    "result['empty_loop'] = time_empty_loop(tf)\n") or {}
    print(f"initial cost (log 10000 = {np.log(VOCAB):.3f}): tensorweave {ours['first_cost']:.4f}"
          + (f", tensorflow {theirs['first_cost']:.4f}" if "first_cost" in theirs else ""))
    report("ptb-small lstm forward (cost)", ours["forward"], theirs.get("forward"), unit="ms/step")
    report("ptb-small lstm SGD train step", ours["train_step"], theirs.get("train_step"), unit="ms/step")
    report("empty while_loop, per iteration", ours_loop, theirs.get("empty_loop"), unit="us/iter")
    line = f"empty while_loop iterations/s: tensorweave {1 / ours_loop:,.0f}"
    if "empty_loop" in theirs:
        line += f", tensorflow {1 / theirs['empty_loop']:,.0f}"
    print(line)


if __name__ == "__main__":
    main()
