"""Fused kernels against TensorFlow 2.21's numbers, unfused and XLA-compiled (fixture
tests/data/tf_jit_expected.npz, written by make_tf_jit_fixtures.py)."""
import os

import numpy as np
import pytest

import tensorweave as tf

# numba is the optional extra tensorweave[jit] (CI installs it); without it nothing is fused
pytest.importorskip("numba")
from tests.jit.helpers import fused, gelu, run_traced, x4

FIXTURE = np.load(os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_jit_expected.npz"))


def reduced(x, b):
    return tf.reduce_sum(tf.exp(x * 0.1) * b + 1.0, axis=1, keepdims=True)


@pytest.fixture(scope="module")
def ours():
    with tf.Graph().as_default():
        xp = tf.placeholder(tf.float32, [None])
        mp = tf.placeholder(tf.float32, [None, 129])
        bp = tf.placeholder(tf.float32, [129])
        with tf.xla.experimental.jit_scope():
            fetches = {"gelu": gelu(xp), "x4": x4(xp), "reduced": reduced(mp, bp)}
        values, labels = run_traced(fetches, {xp: FIXTURE["x"], mp: FIXTURE["m"], bp: FIXTURE["b"]})
    assert len(fused(labels)) == 3
    return values


@pytest.mark.parametrize("name", ["gelu", "x4", "reduced"])
def test_fused_results_match_tensorflow_unfused_and_xla(ours, name):
    for key in (name, name + "_xla"):
        np.testing.assert_allclose(ours[name], FIXTURE[key], rtol=1e-5, atol=1e-6, err_msg=key)


def test_x4_is_bit_exact_with_tensorflow():
    # the same float32 products in the same order: no rounding difference at all
    with tf.Graph().as_default():
        xp = tf.placeholder(tf.float32, [None])
        with tf.xla.experimental.jit_scope():
            y = x4(xp)
        value, labels = run_traced(y, {xp: FIXTURE["x"]})
    assert len(fused(labels)) == 1
    np.testing.assert_array_equal(value, FIXTURE["x4"])
