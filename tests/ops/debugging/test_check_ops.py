"""tf.assert_* (build-time failures for constants, run-time InvalidArgumentError with TF's
message), assert_rank/assert_type, check_numerics and verify_tensor_all_finite."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_run_error


def test_static_failures_raise_at_build_time():
    with pytest.raises(tf.errors.InvalidArgumentError) as info:
        tf.assert_equal(tf.constant([1, 2], name="x0"), tf.constant([1, 3], name="y0"))
    assert info.value.message == ("Condition x == y did not hold element-wise:\nx (x0:0) = \n[1 2]\n"
                                  "y (y0:0) = \n[1 3]")
    with pytest.raises(tf.errors.InvalidArgumentError, match="^hello\nCondition x < y did not hold"):
        tf.assert_less(tf.constant([1, 2]), tf.constant([1, 3]), message="hello")
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^\nCondition x > 0 did not hold element-wise:"):
        tf.assert_positive(tf.constant([1, -2]))
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"^m\.  \nCondition x < 0 did not hold"):
        tf.assert_negative(tf.constant([1.0, 2.0]), message="m")
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 2, 3]))
    with tf.Session() as sess:  # passing constant checks build an Assert that runs fine
        sess.run(tf.assert_equal(tf.constant([1, 2]), tf.constant([1, 2])))


CASES = [
    (tf.assert_equal, [1, 2, 3], [1, 2, 3], [1, 5, 3], "=="),
    (tf.assert_none_equal, [1, 2, 3], [2, 3, 4], [2, 5, 3], "!="),
    (tf.assert_less, [1, 2, 3], [2, 3, 4], [1, 5, 3], "<"),
    (tf.assert_less_equal, [1, 2, 3], [1, 3, 4], [0, 5, 3], "<="),
    (tf.assert_greater, [2, 3, 4], [1, 2, 3], [1, 5, 3], ">"),
    (tf.assert_greater_equal, [1, 3, 3], [1, 2, 3], [0, 5, 4], ">="),
]


@pytest.mark.parametrize("check,good_x,y_value,bad_x,symbol", CASES, ids=[c[-1] for c in CASES])
def test_binary_asserts_at_run_time(check, good_x, y_value, bad_x, symbol):
    x, y = tf.placeholder(tf.int32, [None], name="x"), tf.placeholder(tf.int32, [None], name="y")
    op = check(x, y)
    with tf.Session() as sess:
        sess.run(op, {x: good_x, y: y_value})
    message = assert_run_error(op, {x: bad_x, y: y_value}).message
    shown = " ".join(str(v) for v in bad_x)
    want = " ".join(str(v) for v in y_value)
    assert message == (f"assertion failed: [Condition x {symbol} y did not hold element-wise:] [x (x:0) = ] "
                       f"[{shown}] [y (y:0) = ] [{want}]")


def test_message_and_summarize():
    x, y = tf.placeholder(tf.int32, [None], name="a"), tf.placeholder(tf.int32, [None], name="b")
    op = tf.assert_equal(x, y, message="msg", summarize=2)
    assert assert_run_error(op, {x: [1, 2, 3], y: [1, 5, 3]}).message == (
        "assertion failed: [msg] [Condition x == y did not hold element-wise:] [x (a:0) = ] [1 2...] "
        "[y (b:0) = ] [1 5...]")
    m = tf.placeholder(tf.float32, [None, None], name="m")
    assert assert_run_error(tf.assert_non_negative(m), {m: [[1, 2], [-3, 4]]}).message == (
        "assertion failed: [] [Condition x >= 0 did not hold element-wise:] [x (m:0) = ] [[1 2][-3...]...]")
    assert assert_run_error(tf.Assert(False, ["hi", m, tf.constant(3)]), {m: [[1, 2], [-3, 4]]}).message == (
        "assertion failed: [hi] [[1 2][-3...]...] [3]")


@pytest.mark.parametrize("check,good,bad,symbol", [
    (tf.assert_positive, [1, 2], [1, 0], "> 0"), (tf.assert_negative, [-1, -2], [-1, 0], "< 0"),
    (tf.assert_non_negative, [0, 2], [0, -1], ">= 0"), (tf.assert_non_positive, [0, -2], [0, 1], "<= 0")])
def test_sign_asserts(check, good, bad, symbol):
    x = tf.placeholder(tf.float32, [None], name="s")
    op = check(x)
    with tf.Session() as sess:
        sess.run(op, {x: good})
    assert f"Condition x {symbol} did not hold element-wise:] [x (s:0) = ]" in assert_run_error(op, {x: bad}).message


def test_assert_rank_and_type():
    with pytest.raises(ValueError, match=r"^Tensor c:0 must have rank 2.  Received rank 1, shape \(2,\)$"):
        tf.assert_rank(tf.constant([1, 2], name="c"), 2)
    with pytest.raises(ValueError, match=r"^m.  Tensor p:0 must have rank 2.  Received rank 1, shape \(2,\)$"):
        tf.assert_rank(tf.placeholder(tf.float32, [2], name="p"), 2, message="m")
    ok = tf.assert_rank(tf.placeholder(tf.float32, [2]), 1)
    assert ok.type == "NoOp" and ok.name.endswith("static_checks_determined_all_ok")
    z = tf.placeholder(tf.float32, name="z")
    op = tf.assert_rank(z, 2)
    assert assert_run_error(op, {z: [1.0, 2.0]}).message == (
        "assertion failed: [] [Tensor z:0 must have rank] [2] [Received shape: ] [2]")
    with tf.Session() as sess:
        sess.run(op, {z: [[1.0]]})
    with pytest.raises(TypeError, match=r"^t:0 must be of type tf.float32; got tf.int32$"):
        tf.assert_type(tf.constant([1], name="t"), tf.float32)
    with pytest.raises(TypeError, match=r"^m.  u:0 must be of type tf.int32; got tf.float32$"):
        tf.assert_type(tf.placeholder(tf.float32, name="u"), tf.int32, message="m")
    assert tf.assert_type(tf.constant(1.0), tf.float32).type == "NoOp"


def test_check_numerics_and_verify_finite():
    z = tf.placeholder(tf.float32, [None])
    n = tf.check_numerics(z, "boom")
    assert n.shape.as_list() == [None]
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(n, {z: [1.0, 2.0]}), [1.0, 2.0])
    assert assert_run_error(n, {z: [1.0, np.inf]}).message == "boom : Tensor had Inf values"
    assert assert_run_error(n, {z: [np.nan, 1.0]}).message == "boom : Tensor had NaN values"
    assert assert_run_error(n, {z: [np.nan, -np.inf]}).message == "boom : Tensor had Inf and NaN values"
    v = tf.verify_tensor_all_finite(z, "vmsg")
    assert v.name == "VerifyFinite/control_dependency:0" and v.op.type == "Identity"
    assert assert_run_error(v, {z: [np.nan]}).message == "vmsg : Tensor had NaN values"
    with pytest.raises(TypeError, match="DataType int32 not in list of allowed values"):
        tf.check_numerics(tf.constant([1, 2]), "m")
    g = tf.gradients(tf.check_numerics(z * 2.0, "fwd"), z)[0]  # the gradient is checked too
    grad_checks = [op for op in tf.get_default_graph().get_operations()
                   if op.type == "CheckNumerics" and op.name.startswith("gradients")]
    assert [op.get_attr("message") for op in grad_checks] == [
        b"Not a number (NaN) or infinity (Inf) values detected in gradient. fwd"]
    with tf.Session() as sess:
        np.testing.assert_allclose(sess.run(g, {z: [1.0, 2.0]}), [2.0, 2.0])
