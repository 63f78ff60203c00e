"""tf.layers models (tests/data/layers_models.py) against TensorFlow 2.15.1's tf.compat.v1.layers
(tests/data/tf215_layers_expected.*, written by make_tf215_layers_fixtures.py): variable names,
shapes and trainability, initial values under a graph seed (glorot_uniform kernels), outputs,
gradients, regularization losses, batch-norm moving statistics after the UPDATE_OPS, dropout
masks, three training steps of a small CNN, and two towers sharing weights."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.data import layers_models

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
EXPECTED = np.load(os.path.join(DATA, "tf215_layers_expected.npz"))
META = json.load(open(os.path.join(DATA, "tf215_layers_expected.json")))


@pytest.fixture(scope="module", params=sorted(layers_models.CASES))
def case(request):
    name = request.param
    got = layers_models.run_case(tf, name)
    return name, got


def test_variables_named_and_shaped_as_tf(case):
    name, got = case
    assert got["__variables__"] == META["cases"][name]["variables"]


def test_update_ops_as_tf(case):
    name, got = case
    assert got["__updates__"] == META["cases"][name]["updates"]


def test_values_as_tf(case):
    name, got = case
    expected = {k[len(name) + 1:]: EXPECTED[k] for k in EXPECTED.files if k.startswith(name + "/")}
    recorded = {k: v for k, v in got.items() if not k.startswith("__")}
    assert set(recorded) == set(expected)
    for key, want in expected.items():
        value = np.asarray(recorded[key])
        assert value.shape == want.shape, key
        # float32 sums of large terms (the gradients of a convolution's kernel) cancel: their
        # absolute error follows the array's scale, not each element's
        scale = float(np.abs(want).max()) if want.dtype.kind == "f" and want.size else 1.0
        np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-6 * max(1.0, scale), err_msg=f"{name}: {key}")


def test_fixture_covers_what_it_claims():
    # Guards against a fixture that silently lost its content (the comparisons above would pass).
    cases = META["cases"]
    assert [v[0] for v in cases["towers"]["variables"]] == [
        "ConvNet/conv2d/kernel", "ConvNet/conv2d/bias", "ConvNet/conv2d_1/kernel", "ConvNet/conv2d_1/bias",
        "ConvNet/dense/kernel", "ConvNet/dense/bias"]
    assert cases["training"]["updates"] == 2 and cases["batch_norms"]["updates"] == 12
    assert "batch_normalization/moving_variance" in [v[0] for v in cases["training"]["variables"]]
    losses = EXPECTED["training/train_losses"]
    assert losses.shape == (3,) and losses[-1] < losses[0]
    assert not np.allclose(EXPECTED["batch_norms/final/batch_normalization/moving_mean"],
                           EXPECTED["batch_norms/init/batch_normalization/moving_mean"])
