"""Every tf.metrics case of tests/data/metrics_cases.py against the numbers TensorFlow 2.21
computed (tests/data/tf_metrics_expected.json): the update_op's result and the value after each
batch (rtol 1e-5), the value and update tensors' names, and the metric's local variables (names,
dtypes, shapes, collections)."""
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


def _placeholder(case: dict[str, Any], name: str, first: Any) -> Any:
    shape = metrics_cases.placeholder_shape(case, first)
    if isinstance(first, dict):
        return tf.sparse_placeholder(tf.int64, shape=shape, name=name)
    return tf.placeholder(tf.as_dtype(first.dtype), shape=shape, name=name)


def _feed(value: Any) -> Any:
    if isinstance(value, dict):
        return tf.SparseTensorValue(value["indices"], value["values"], value["dense_shape"])
    return value


def test_fixture_covers_every_case() -> None:
    assert _FIXTURE["tensorflow"].startswith("2.21")
    assert sorted(CASES) == sorted(c["id"] for c in metrics_cases.cases())
    assert {c["metric"] for c in CASES.values()} == set(_METRICS)
    assert sum(c["dynamic"] for c in CASES.values()) == len(metrics_cases.DYNAMIC)


# Every name TF 2.21's tf.compat.v1.metrics has, all covered by the cases.
_METRICS = (
    "accuracy", "auc", "average_precision_at_k", "false_negatives", "false_negatives_at_thresholds",
    "false_positives", "false_positives_at_thresholds", "mean", "mean_absolute_error", "mean_cosine_distance",
    "mean_iou", "mean_per_class_accuracy", "mean_relative_error", "mean_squared_error", "mean_tensor",
    "percentage_below", "precision", "precision_at_k", "precision_at_thresholds", "precision_at_top_k",
    "recall", "recall_at_k", "recall_at_thresholds", "recall_at_top_k", "root_mean_squared_error",
    "sensitivity_at_specificity", "sparse_average_precision_at_k", "sparse_precision_at_k",
    "specificity_at_sensitivity", "true_negatives", "true_negatives_at_thresholds", "true_positives",
    "true_positives_at_thresholds")


def test_namespace_has_tf_metric_names() -> None:
    public = {n for n in dir(tf.metrics) if not n.startswith("_") and callable(getattr(tf.metrics, n))}
    assert set(_METRICS) <= public


@pytest.mark.parametrize("case", _FIXTURE["confusion_matrix"], ids=lambda c: c["id"])
def test_confusion_matrix_matches_tensorflow(case: dict[str, Any]) -> None:
    inputs = {c["id"]: c for c in metrics_cases.confusion_matrix_cases()}[case["id"]]
    kwargs = {k: v for k, v in inputs.items() if k in ("num_classes", "weights", "dtype")}
    with tf.Graph().as_default():
        cm = tf.math.confusion_matrix(inputs["labels"], inputs["predictions"], **kwargs)
        assert tf.confusion_matrix is tf.math.confusion_matrix
        assert cm.dtype.name == case["dtype"]
        assert cm.shape.as_list() == case["static_shape"]
        with tf.Session() as sess:
            got = sess.run(cm)
    assert got.dtype == np.dtype(case["dtype"])
    np.testing.assert_allclose(got, np.array(case["value"]), rtol=1e-5)


@pytest.mark.parametrize("case_id", sorted(CASES))
def test_metric_matches_tensorflow(case_id: str) -> None:
    case = CASES[case_id]
    batches = [{k: metrics_cases.decode(v) for k, v in b.items()} for b in case["batches"]]
    with tf.Graph().as_default() as g:
        inputs = {k: _placeholder(case, k, v) for k, v in batches[0].items()}
        value, update = getattr(tf.metrics, case["metric"])(**inputs, **case["kwargs"])
        assert (value.name, update.name) == (case["value_name"], case["update_name"])
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
