"""Every tf.metrics case of tests/data/metrics_cases.py against the numbers TensorFlow 2.21
computed (tests/data/tf_metrics_expected.json): the update_op's result and the value after each
batch (rtol 1e-5), and the metric's local variables (names, dtypes, shapes, collections)."""
from __future__ import annotations

import json
import os
from typing import Any

import numpy as np
import pytest

import tensorweave as tf
from tests.data import metrics_cases

_PATH = os.path.join(os.path.dirname(__file__), os.pardir, "data", "tf_metrics_expected.json")
with open(_PATH) as _f:
    _FIXTURE = json.load(_f)
CASES = {c["id"]: c for c in _FIXTURE["cases"]}


def _expected(entry: dict[str, Any]) -> np.ndarray:
    flat = np.array([np.nan if v is None else v for v in entry["value"]], np.float64)
    return flat.reshape(entry["shape"])


def _placeholder(name: str, first: Any) -> Any:
    if isinstance(first, dict):
        return tf.sparse_placeholder(tf.int64, shape=first["dense_shape"].tolist(), name=name)
    return tf.placeholder(tf.as_dtype(first.dtype), shape=first.shape, name=name)


def _feed(value: Any) -> Any:
    if isinstance(value, dict):
        return tf.SparseTensorValue(value["indices"], value["values"], value["dense_shape"])
    return value


def test_fixture_covers_every_case() -> None:
    assert _FIXTURE["tensorflow"].startswith("2.21")
    assert sorted(CASES) == sorted(c["id"] for c in metrics_cases.cases())


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_metric_matches_tensorflow(case_id: str) -> None:
    case = CASES[case_id]
    batches = [{k: metrics_cases.decode(v) for k, v in b.items()} for b in case["batches"]]
    with tf.Graph().as_default() as g:
        inputs = {k: _placeholder(k, v) for k, v in batches[0].items()}
        value, update = getattr(tf.metrics, case["metric"])(**inputs, **case["kwargs"])
        assert [v.op.name for v in tf.local_variables()] == case["local_variables"]
        assert [v.op.name for v in g.get_collection(tf.GraphKeys.METRIC_VARIABLES)] == case["metric_variables"]
        assert [v.op.name for v in tf.global_variables()] == case["global_variables"] == []
        assert [v.dtype.base_dtype.name for v in tf.local_variables()] == case["variable_dtypes"]
        assert [v.shape.as_list() for v in tf.local_variables()] == case["variable_shapes"]
        assert value.dtype.base_dtype.name == case["values"][0]["dtype"]
        assert update.dtype.base_dtype.name == case["updates"][0]["dtype"]
        with tf.Session(graph=g) as sess:
            sess.run(tf.local_variables_initializer())
            for batch, want_update, want_value in zip(batches, case["updates"], case["values"]):
                feed = {inputs[k]: _feed(v) for k, v in batch.items()}
                got_update = sess.run(update, feed)
                got_value = sess.run(value)
                np.testing.assert_allclose(got_update, _expected(want_update), rtol=1e-5, atol=1e-6)
                np.testing.assert_allclose(got_value, _expected(want_value), rtol=1e-5, atol=1e-6)
                assert np.shape(got_value) == tuple(want_value["shape"])
