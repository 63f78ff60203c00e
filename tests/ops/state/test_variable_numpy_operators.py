"""A NumPy array (or NumPy scalar) on the left of an operator with a tf.Variable builds the op, as in
TF (Variable ranks above ndarray through __array_priority__), instead of NumPy converting the variable."""
import operator

import numpy as np
import pytest

import tensorweave as tf

X = np.array([[3.0, -4.0], [5.0, 7.0]], np.float32)
W = np.array([[2.0, 3.0], [-2.0, 4.0]], np.float32)

# (python operator, TF op type built, NumPy reference) with the ndarray on the left; TF 2.21 compat.v1
# builds these same op types (a reflected comparison turns `X < w` into Greater(w, X)).
CASES = [
    (operator.mul, "Mul", np.multiply),
    (operator.add, "AddV2", np.add),
    (operator.matmul, "MatMul", np.matmul),
    (operator.sub, "Sub", np.subtract),
    (operator.truediv, "RealDiv", np.divide),
    (operator.floordiv, "FloorDiv", np.floor_divide),
    (operator.mod, "FloorMod", np.mod),
    (operator.pow, "Pow", np.power),
    (operator.lt, "Greater", np.less),
    (operator.le, "GreaterEqual", np.less_equal),
    (operator.gt, "Less", np.greater),
    (operator.ge, "LessEqual", np.greater_equal),
]


@pytest.mark.parametrize("op,op_type,ref", CASES, ids=[c[1] for c in CASES])
def test_ndarray_on_the_left_builds_the_op(op, op_type, ref):
    w = tf.Variable(W)
    out = op(X, w)
    assert isinstance(out, tf.Tensor) and out.op.type == op_type
    with tf.Session() as sess:
        sess.run(w.initializer)
        np.testing.assert_allclose(sess.run(out), ref(X, W), rtol=1e-6)


@pytest.mark.parametrize("op,op_type,ref", [(operator.and_, "LogicalAnd", np.logical_and),
                                            (operator.or_, "LogicalOr", np.logical_or),
                                            (operator.xor, "LogicalAnd", np.logical_xor)])
def test_bool_ndarray_on_the_left(op, op_type, ref):
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    v = tf.Variable(b)
    out = op(a, v)
    assert isinstance(out, tf.Tensor) and out.op.type == op_type
    with tf.Session() as sess:
        sess.run(v.initializer)
        np.testing.assert_array_equal(sess.run(out), ref(a, b))


def test_numpy_scalar_on_the_left():
    w = tf.Variable(W)
    prod, less = np.float32(2) * w, np.float32(2) < w
    assert prod.op.type == "Mul" and less.op.type == "Greater"
    with tf.Session() as sess:
        sess.run(w.initializer)
        np.testing.assert_array_equal(sess.run(prod), 2 * W)
        np.testing.assert_array_equal(sess.run(less), 2 < W)


def test_equality_with_ndarray_is_identity_as_in_tf1():
    # TF1 graph mode: Variable.__eq__ is object identity, so NumPy gets a plain bool back.
    w = tf.Variable(W)
    assert (X == w) is False
    assert (X != w) is True
