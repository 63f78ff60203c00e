"""Default scope names (`variable_scope(None, default_name=...)`) are made unique as TF 1.15 does:
from counts of scope openings, reset for sub-scopes when a named scope is left, so a second pass
through a scope re-entered with reuse=True picks the same names (two towers sharing weights).
Expected names recorded from TF 2.15's tf.compat.v1 by hand (tests/data/README.md, issue 11)."""
import tensorweave as tf


def _tower():
    names = []
    for _ in range(2):
        with tf.variable_scope(None, default_name="conv2d"):
            names.append(tf.get_variable("kernel", [1]).name)
    return names


def test_reused_scope_second_pass_reuses_first_pass_names():
    with tf.Graph().as_default():
        with tf.variable_scope("ConvNet"):
            first = _tower()
        with tf.variable_scope("ConvNet", reuse=True):
            second = _tower()
        assert first == ["ConvNet/conv2d/kernel:0", "ConvNet/conv2d_1/kernel:0"]
        assert second == first
        assert len(tf.global_variables()) == 2


def test_reentering_scope_object_restores_counts():
    with tf.Graph().as_default():
        with tf.variable_scope("X") as x:
            with tf.variable_scope(None, default_name="d"):
                pass
        with tf.variable_scope(x):
            with tf.variable_scope(None, default_name="d") as s1:
                pass
        with tf.variable_scope(x):
            with tf.variable_scope(None, default_name="d") as s2:
                pass
        with tf.variable_scope(None, default_name="d") as t1:
            pass
        with tf.variable_scope(None, default_name="d") as t2:
            pass
        assert (s1.name, s2.name, t1.name, t2.name) == ("X/d", "X/d", "d", "d_1")


def test_default_names_count_openings_not_variables():
    # TF counts scope openings: an empty `dense` scope still takes the name, so the next is dense_1.
    with tf.Graph().as_default():
        with tf.variable_scope(None, default_name="dense") as a:
            pass
        with tf.variable_scope(None, default_name="dense") as b:
            v = tf.get_variable("w", [2])
        assert (a.name, b.name, v.name) == ("dense", "dense_1", "dense_1/w:0")
