"""Runs a compatibility program under tensorweave and compares its results with those real
TensorFlow recorded in tests/data/tf_compat_expected.npz (see tests/data/make_tf_compat_fixtures.py)."""
import importlib
import json
import os

import numpy as np

DATA = os.path.join(os.path.dirname(__file__), "..", "data")
EXPECTED_NPZ = os.path.join(DATA, "tf_compat_expected.npz")
EXPECTED_JSON = os.path.join(DATA, "tf_compat_expected.json")

RTOL = 1e-5
# Values that should be zero come out of float32 arithmetic as rounding noise of either sign.
ATOL = 1e-6

# Looser tolerances, each with the reason it is needed: {program: (rtol, atol)}.
LOOSER = {
    # raw_cnn: tf.nn.lrn's output and gradient equal TF's to one float32 rounding (checked on
    # their own), but nine Adam steps turn such roundings in near-zero gradient components into
    # whole steps (Adam divides by sqrt(v)): the final softmax agrees to 6e-5, the losses to 3e-7.
    "raw_cnn": (1e-4, 1e-6),
    # mlp_layers_dropout: tf.layers' outputs, gradients and dropout masks are TF's (tests/layers/),
    # but Adam's first step moves a weight whose gradient is near zero by lr * g / |g|: a float32
    # rounding of g (matmul summation order) shifts one of the 2048 kernel entries by 1.4e-6 after
    # one step and 4.4e-6 after twelve; the losses agree to 3e-7.
    "mlp_layers_dropout": (1e-5, 1e-5),
}


def load_expected():
    with np.load(EXPECTED_NPZ) as z:
        arrays = {k: z[k] for k in z.files}
    with open(EXPECTED_JSON) as f:
        meta = json.load(f)
    expected = {}
    for key, value in arrays.items():
        program, name = key.split("::", 1)
        expected.setdefault(program, {})[name] = value
    return expected, meta


def run_program(tf, name, workdir):
    module = importlib.import_module("tests.compat.programs." + name)
    return module.run(tf, workdir)


def compare(name, actual, expected):
    """Asserts that the results of program `name` equal TF's: same names, same dtypes, floats to the
    program's tolerance, everything else exactly."""
    rtol, atol = LOOSER.get(name, (RTOL, ATOL))
    assert sorted(actual) == sorted(expected), "result names differ: %s vs TF %s" % (sorted(actual), sorted(expected))
    for key in sorted(expected):
        want = expected[key]
        got = np.asarray(actual[key])
        where = "%s[%s]" % (name, key)
        assert got.shape == want.shape, "%s: shape %s, TF %s" % (where, got.shape, want.shape)
        assert got.dtype == want.dtype, "%s: dtype %s, TF %s" % (where, got.dtype, want.dtype)
        if want.dtype.kind in "fc":
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=where)
        else:
            assert got.tolist() == want.tolist(), "%s: %r, TF %r" % (where, got.tolist(), want.tolist())
