"""Writes tests/data/tf_control_flow.meta and tf_control_flow_expected.npz: a MetaGraphDef
exported by TensorFlow (TF1 graph mode, control flow v1) whose loops and conds
tests/ops/test_control_flow_meta_graph.py imports and differentiates again, and the gradients
TensorFlow computed for them.

Run with real TensorFlow, never imported by the tests:
`/opt/tfref/bin/python tests/data/make_tf_control_flow_meta_graph.py tests/data`.

The model (float64, variables with constant initializers, so no checkpoint is needed):
- loss_loop: a while_loop reading the variable `loop/w` in its body and the constant `loop/x`
  as a loop invariant;
- loss_nested: a loop in a loop, the inner one reading `nested/w`, with a tf.cond in the body;
- loss_cond: a tf.cond on the placeholder `pred` (default True) reading `cond/w`;
- loss_rnn: tf.nn.dynamic_rnn with an LSTMCell (scope `rnn`) over a constant batch.
For each loss, the gradients with respect to its variables, with pred True and False.
"""
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.python.ops import rnn, rnn_cell_impl  # noqa: E402

tf.disable_eager_execution()
tf.disable_control_flow_v2()
tf.disable_resource_variables()

RNG = np.random.RandomState(7)
F64 = tf.float64


def variable(name, value):
    return tf.get_variable(name, initializer=tf.constant_initializer(value), shape=np.shape(value), dtype=F64)


def build():
    losses = {}
    with tf.variable_scope("loop"):
        w = variable("w", [0.5, -0.3, 0.8])
        x = tf.constant([0.2, 0.4, -0.1], F64, name="x")
        _, a = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, tf.tanh(a * w) + x),
                             [tf.constant(0), tf.ones([3], F64)])
        losses["loop"] = (tf.reduce_sum(a, name="loss_loop"), [w])
    with tf.variable_scope("nested"):
        w = variable("w", [0.9, 0.7])
        pred = tf.placeholder_with_default(True, [], name="pred")

        def inner(b):
            return tf.while_loop(lambda k, b: k < 2, lambda k, b: (k + 1, tf.sin(b) * w + 0.1),
                                 [tf.constant(0), b])[1]

        def outer_body(j, b):
            b = inner(b)
            b = tf.cond(pred, lambda: b * w, lambda: b + w)
            return j + 1, b

        _, b = tf.while_loop(lambda j, b: j < 3, outer_body, [tf.constant(0), tf.constant([0.3, -0.2], F64)])
        losses["nested"] = (tf.reduce_sum(b * b, name="loss_nested"), [w])
    with tf.variable_scope("cond"):
        w = variable("w", [1.5, -0.5])
        pred = tf.placeholder_with_default(True, [], name="pred")
        c = tf.cond(pred, lambda: tf.reduce_sum(w * w), lambda: tf.reduce_sum(tf.sin(w)))
        losses["cond"] = (tf.identity(c, name="loss_cond"), [w])
    inputs = tf.constant(RNG.uniform(-1, 1, [2, 4, 3]), F64, name="rnn_inputs")
    cell = rnn_cell_impl.LSTMCell(5, initializer=tf.constant_initializer(RNG.uniform(-0.5, 0.5, [8, 20])))
    outputs, state = rnn.dynamic_rnn(cell, inputs, dtype=F64, scope="rnn")
    rnn_vars = tf.trainable_variables("rnn")
    losses["rnn"] = (tf.add(tf.reduce_sum(outputs), tf.reduce_sum(state.h), name="loss_rnn"), rnn_vars)
    return losses


def main(out_dir):
    with tf.Graph().as_default():
        losses = build()
        tf.train.export_meta_graph(os.path.join(out_dir, "tf_control_flow.meta"))
        expected = {}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for key, (loss, variables) in losses.items():
                grads = tf.gradients(loss, variables)
                for pred in (True, False):
                    feed = {"nested/pred:0": pred, "cond/pred:0": pred}
                    loss_value, grad_values = sess.run([loss, grads], feed)
                    expected[f"{key}/{pred}/loss"] = loss_value
                    for v, g in zip(variables, grad_values):
                        expected[f"{key}/{pred}/{v.op.name}"] = g
    np.savez(os.path.join(out_dir, "tf_control_flow_expected.npz"), **expected)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
