"""Writes tests/data/tw_functions_graph.pb: a GraphDef with a function library written by
tensorweave (Defun functions, one calling another, a captured tensor, a registered grad_func,
a PartitionedCall and tf.gradients through the calls). make_tf_functions_fixtures.py imports it
into TensorFlow 2.21 and records TF's outputs, so the tests know TF accepts ours.

Run from the repository root: /work/main/.venv/bin/python tests/data/make_tw_functions_graph.py
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

import tensorweave as tf  # noqa: E402
from tensorweave.ops.functional import partitioned_call  # noqa: E402
from tensorweave.python.framework.function import Defun  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))


def build():
    """The model (tests/framework/test_function_library.py builds it again and compares)."""
    @Defun(tf.float32, func_name="TwInner")
    def inner(x):
        return tf.tanh(x) * 2.0

    scale = tf.constant([1.5, -0.5, 2.0], name="scale")

    @Defun(tf.float32, tf.float32)
    def outer(x, y):
        return inner(x) * scale + y, x * y

    @Defun(tf.float32, tf.float32, func_name="TwSquareGrad")
    def square_grad(x, dy):
        return dy * 2.0 * x

    @Defun(tf.float32, func_name="TwSquare", grad_func=square_grad)
    def square(x):
        return x * x

    a = tf.placeholder(tf.float32, [3], name="a")
    b = tf.placeholder(tf.float32, [3], name="b")
    u, v = outer(a, b)
    w = partitioned_call([u], square)[0]
    tf.identity(w, name="w")
    tf.identity(v, name="v")
    ga, gb = tf.gradients(w + v * v, [a, b])
    tf.identity(ga, name="ga")
    tf.identity(gb, name="gb")


def main():
    with tf.Graph().as_default() as graph:
        build()
    with open(os.path.join(HERE, "tw_functions_graph.pb"), "wb") as f:
        f.write(graph.as_graph_def().SerializeToString(deterministic=True))


if __name__ == "__main__":
    main()
