"""tf.sparse and the tf.sparse_* functions against TensorFlow 2.21's numbers
(tests/data/tf_sparse_nn_expected.json, written by make_tf_sparse_nn_fixtures.py from the
programs in tests/data/sparse_nn_cases.py): values, fetched SparseTensorValues, gradients, and
the error class and message of bad indices. Static shapes are checked against the fetched ones."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.data import sparse_nn_cases as cases

with open(os.path.join(os.path.dirname(cases.__file__), "tf_sparse_nn_expected.json")) as _f:
    EXPECTED = json.load(_f)

VALUE_NAMES = sorted(n for n in cases.VALUES if n.startswith("sparse_"))
ERROR_NAMES = sorted(n for n in cases.ERRORS if n.startswith("sparse_"))


def _static_shapes(fetch):
    if isinstance(fetch, (list, tuple)):
        return [s for f in fetch for s in _static_shapes(f)]
    if isinstance(fetch, tf.SparseTensor):
        return [fetch.indices.shape, fetch.values.shape, fetch.dense_shape.shape]
    return [fetch.shape]


def _arrays(value):
    if isinstance(value, (list, tuple)) and not hasattr(value, "dense_shape"):
        return [a for v in value for a in _arrays(v)]
    if hasattr(value, "dense_shape"):
        return [np.asarray(p) for p in value]
    return [np.asarray(value)]


def run(build):
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        fetch = build(tf)
        init = tf.global_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            return fetch, sess.run(fetch)


@pytest.mark.parametrize("name", VALUE_NAMES)
def test_values_match_tensorflow(name):
    fetch, got = run(cases.VALUES[name])
    cases.assert_matches(EXPECTED["values"][name], got, name)
    for static, real in zip(_static_shapes(fetch), _arrays(got)):
        assert static.is_compatible_with(real.shape), f"{name}: static {static} vs real {real.shape}"


@pytest.mark.parametrize("name", ERROR_NAMES)
def test_errors_match_tensorflow(name):
    want = EXPECTED["errors"][name]
    with pytest.raises(getattr(tf.errors, want["class"])) as info:
        run(cases.ERRORS[name])
    assert want["message"] in str(info.value)
