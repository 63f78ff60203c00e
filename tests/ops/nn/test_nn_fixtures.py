"""The tf.nn additions of issue 11 against TensorFlow's numbers: tests/data/tf_sparse_nn_expected.json
(TF 2.21; make_tf_sparse_nn_fixtures.py) and tests/data/tf215_birnn_expected.json (TF 2.15, for
static_bidirectional_rnn with TF1 cells), from the programs in tests/data/sparse_nn_cases.py.
Static shapes are checked against the fetched ones."""
import json
import os

import pytest

import tensorweave as tf

from tests.data import sparse_nn_cases as cases
from tests.ops.sparse.test_sparse_fixtures import _arrays, _static_shapes, run

_DIR = os.path.dirname(cases.__file__)
with open(os.path.join(_DIR, "tf_sparse_nn_expected.json")) as _f:
    _ALL = json.load(_f)
    EXPECTED, ERRORS = _ALL["values"], _ALL["errors"]
with open(os.path.join(_DIR, "tf215_birnn_expected.json")) as _f:
    EXPECTED.update(json.load(_f)["values"])

BUILDERS = dict(cases.NN_VALUES, **cases.TF215_VALUES)


@pytest.mark.parametrize("name", sorted(BUILDERS))
def test_values_match_tensorflow(name):
    fetch, got = run(BUILDERS[name])
    cases.assert_matches(EXPECTED[name], got, name)
    for static, real in zip(_static_shapes(fetch), _arrays(got)):
        assert static.is_compatible_with(real.shape), f"{name}: static {static} vs real {real.shape}"


@pytest.mark.parametrize("name", sorted(n for n in cases.ERRORS if n.startswith("nn_")))
def test_errors_match_tensorflow(name):
    want = ERRORS[name]
    with pytest.raises(getattr(tf.errors, want["class"])) as info:
        run(cases.ERRORS[name])
    assert want["message"] in str(info.value)
