"""tf.add_check_numerics_ops: a CheckNumerics per floating-point output, chained in graph order,
grouped; matches the graph and errors TF 2.21 compat.v1 builds for the same program."""
import numpy as np
import pytest

import tensorweave as tf


def _graph():
    a = tf.placeholder(tf.float32, [2], name="a")
    v = tf.Variable([1.0, 2.0], name="v")
    d = tf.div(a, tf.constant([0.0, 1.0]), name="divide")
    total = tf.reduce_sum(d * v, name="total")
    tf.constant([1, 2]) + 1  # int32: not checked
    return a, v, total


def test_checks_every_float_output_chained_in_graph_order():
    _, _, _ = _graph()
    chk = tf.add_check_numerics_ops()
    g = tf.get_default_graph()
    checks = [op for op in g.get_operations() if op.type == "CheckNumerics"]
    # TF 2.21 builds exactly these, each after the previous one; the ref output of `v` is skipped
    assert [op.inputs[0].name for op in checks] == ["a:0", "v/initial_value:0", "v/read:0", "Const:0",
                                                   "divide:0", "mul:0", "total:0"]
    assert [op.name for op in checks] == ["CheckNumerics"] + [f"CheckNumerics_{i}" for i in range(1, 7)]
    assert checks[0].control_inputs == []
    for prev, op in zip(checks, checks[1:]):
        assert op.control_inputs == [prev]
    assert checks[4].get_attr("message") == b"divide:0"
    assert chk.type == "NoOp" and chk.name == "group_deps" and chk.control_inputs == [checks[-1]]


def test_nan_from_a_division_raises_naming_the_tensor():
    a, v, total = _graph()
    chk = tf.add_check_numerics_ops()
    with tf.Session() as sess:
        sess.run(v.initializer)
        with pytest.raises(tf.errors.InvalidArgumentError, match="divide:0 : Tensor had NaN values") as err:
            sess.run(chk, {a: [0.0, 1.0]})
        assert err.value.op.name == "CheckNumerics_4"
        with pytest.raises(tf.errors.InvalidArgumentError, match="divide:0 : Tensor had Inf values"):
            sess.run([total, chk], {a: [1.0, 1.0]})


def test_finite_values_pass():
    a = tf.placeholder(tf.float32, [2])
    out = tf.sqrt(a) * 2.0
    chk = tf.add_check_numerics_ops()
    with tf.Session() as sess:
        got, none = sess.run([out, chk], {a: [4.0, 9.0]})
    np.testing.assert_allclose(got, [4.0, 6.0])
    assert none is None


def test_cond_with_float_ops_raises_value_error():
    p = tf.placeholder(tf.bool)
    tf.cond(p, lambda: tf.constant(1.0), lambda: tf.constant(2.0))
    with pytest.raises(ValueError, match="not compatible with TensorFlow control flow"):
        tf.add_check_numerics_ops()


def test_while_body_with_float_ops_raises_value_error():
    tf.while_loop(lambda x: x < 3.0, lambda x: x + 1.0, [tf.constant(0.0)])
    with pytest.raises(ValueError, match="not compatible with TensorFlow control flow"):
        tf.add_check_numerics_ops()


def test_integer_only_loop_is_fine():
    tf.while_loop(lambda i: i < 3, lambda i: i + 1, [tf.constant(0)])
    assert tf.add_check_numerics_ops().type == "NoOp"
