"""tanh and sigmoid against TF 2.21's CPU kernels on ~100,000 float32 inputs (denormals, +-0, huge
values, NaN, inf, the values around Eigen's clamps) and ~30,000 float64 ones:
tests/data/tf_activation_expected.npz, written by tests/data/make_tf_activation_fixtures.py from
tests/data/activation_cases.py. tanh is NumPy's (a few ulp from TF's rational approximation) with
TF's exact saturation to +/-1; sigmoid is 1 / (1 + exp(-x)); the gradient kernels are TF's bits."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.math import grad_ops
from tests.data import activation_cases

EXPECTED = np.load(os.path.join(os.path.dirname(activation_cases.__file__), "tf_activation_expected.npz"))
INPUTS = {"float32": activation_cases.float32_inputs(), "float64": activation_cases.float64_inputs()}


def _bits(a):
    a = np.asarray(a)
    return a.view(np.uint32 if a.dtype == np.float32 else np.uint64)


def assert_same_bits(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    nan = np.isnan(got) & np.isnan(want)
    differ = (_bits(got) != _bits(want)) & ~nan
    where = np.nonzero(differ)[0][:5]
    assert not differ.any(), f"{differ.sum()} values differ, e.g. at {where}: {got[where]} vs {want[where]}"


def _run(fn, *arrays):
    holders = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in arrays]
    with tf.Session() as sess:
        return sess.run(fn(*holders), dict(zip(holders, arrays)))


def _normal(want, dtype):
    """TF flushes denormal results to zero; compare ulps only where TF's result is normal."""
    return np.isfinite(want) & (np.abs(want) >= np.finfo(dtype).tiny)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tanh_saturates_exactly_where_tf_does_and_is_within_a_few_ulp_elsewhere(dtype):
    x, want = INPUTS[dtype], EXPECTED[f"tanh_{dtype}"]
    got = _run(tf.tanh, x)
    ones = np.abs(want) == 1
    assert_same_bits(got[ones], want[ones])  # every input TF maps to exactly +/-1
    assert (np.abs(got[~ones & np.isfinite(want)]) < 1).all()  # and no other
    normal = _normal(want, dtype) & ~ones
    np.testing.assert_array_max_ulp(got[normal], want[normal], maxulp=8)  # measured: 5 (float32), 7
    assert np.isnan(got[np.isnan(want)]).all()


def test_tanh_saturates_to_exactly_one():
    got = _run(tf.tanh, np.array([-9.5, 10.0, 7.90738964080810547, -8.0, 7.9073891, np.inf], np.float32))
    assert got.tolist()[:4] == [-1.0, 1.0, 1.0, -1.0] and got[4] < 1.0 and got[5] == 1.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sigmoid_is_within_a_few_ulp(dtype):
    got, want = _run(tf.sigmoid, INPUTS[dtype]), EXPECTED[f"sigmoid_{dtype}"]
    normal = _normal(want, dtype)
    np.testing.assert_array_max_ulp(got[normal], want[normal], maxulp=6)
    assert (got[want == 1] == 1).all() and (np.abs(got[want == 0]) < np.finfo(dtype).tiny).all()


@pytest.mark.parametrize("op", [tf.tanh, tf.sigmoid])
@pytest.mark.parametrize("shape", [(20, 200), (3, 5), (2, 3, 4), ()])
def test_output_shapes(op, shape):
    x = np.full(shape, 0.25, np.float32)
    assert _run(op, x).shape == shape


def test_forwarded_tanh_saturates_too():
    """An input the kernel may overwrite (an intermediate) gets the same result."""
    x = np.array([[-9.5, 0.5], [8.0, 7.9]], np.float32)
    holder = tf.placeholder(tf.float32, x.shape)
    with tf.Session() as sess:
        direct, forwarded = sess.run([tf.tanh(holder), tf.tanh(holder * 1.0)], {holder: x})
    assert_same_bits(direct, forwarded)
    assert direct[0, 0] == -1.0 and direct[1, 0] == 1.0 and direct[1, 1] < 1.0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["tanh_grad", "sigmoid_grad"])
def test_gradient_kernels_match_tf_bits(name, dtype):
    y, dy = activation_cases.grad_inputs(np.dtype(dtype))
    op = grad_ops.tanh_grad if name == "tanh_grad" else grad_ops.sigmoid_grad
    assert_same_bits(_run(op, y, dy), EXPECTED[f"{name}_{dtype}"])
