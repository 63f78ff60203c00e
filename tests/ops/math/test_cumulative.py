"""tf.cumsum and tf.cumprod against NumPy, with TF's exclusive and reverse flags."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import check_op

RNG = np.random.RandomState(0)


def reference(x, axis, exclusive, reverse, ufunc):
    if reverse:
        x = np.flip(x, axis)
    out = ufunc.accumulate(x, axis=axis, dtype=x.dtype)
    if exclusive:
        identity = np.full_like(np.take(out, [0], axis=axis), 0 if ufunc is np.add else 1)
        out = np.concatenate([identity, np.delete(out, -1, axis=axis)], axis=axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("fn,ufunc", [(tf.cumsum, np.add), (tf.cumprod, np.multiply)], ids=["cumsum", "cumprod"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int32, np.int64, np.complex64])
def test_scans_match_numpy(fn, ufunc, dtype):
    x = (RNG.uniform(0.5, 2.0, (3, 4, 2)) * 3).astype(dtype)
    for axis in (0, 1, -1):
        for exclusive in (False, True):
            for reverse in (False, True):
                out = fn(x, axis=axis, exclusive=exclusive, reverse=reverse)
                assert out.op.type == ("Cumsum" if ufunc is np.add else "Cumprod")
                assert out.shape.as_list() == [3, 4, 2] and out.dtype == tf.as_dtype(dtype)
                check_op(out, reference(x, axis, exclusive, reverse, ufunc), rtol=1e-5)


def test_values_verified_with_tensorflow():
    x = tf.constant([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    check_op(tf.cumsum(x, 1, exclusive=True), np.float32([[0, 1, 3], [0, 4, 9]]))
    check_op(tf.cumsum(x, 0, reverse=True), np.float32([[5, 7, 9], [4, 5, 6]]))
    check_op(tf.cumprod(x, -1, exclusive=True, reverse=True), np.float32([[6, 3, 1], [30, 6, 1]]))
    check_op(tf.cumsum([1, 2, 3]), np.int32([1, 3, 6]))
    grad = tf.gradients(tf.reduce_sum(tf.cumprod(x, 1) * tf.constant([[1.0, 2, 3], [4, 5, 6]])), x)[0]
    check_op(grad, np.float32([[23, 11, 6], [209, 164, 120]]))
    with tf.Graph().as_default():
        assert tf.cumsum([1.0]).op.name == "Cumsum" and tf.cumprod([1.0], name="p").op.name == "p"


def test_unknown_shapes_axis_tensor_and_errors():
    x = tf.placeholder(tf.float32, [None, 3])
    axis = tf.placeholder(tf.int32, [])
    out = tf.cumsum(x, axis)
    assert out.shape.as_list() == [None, 3]
    value = np.arange(6, dtype=np.float32).reshape(2, 3)
    check_op(out, np.cumsum(value, 1), feed_dict={x: value, axis: 1})
    check_op(tf.cumsum(tf.zeros([0, 2]), 0), np.zeros((0, 2), np.float32))
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="scan axis"):
            sess.run(out, {x: value, axis: 2})
        with pytest.raises(tf.errors.InvalidArgumentError, match="scan axis"):
            sess.run(tf.cumsum(5.0))
    with pytest.raises(TypeError):
        tf.cumsum(tf.constant([True]))
    with pytest.raises(ValueError):
        tf.cumsum(x, axis=[0, 1])
