"""Counting metrics on boolean predictions: true/false positives/negatives, precision, recall."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes
from tensorweave.framework.graph import control_dependencies
from tensorweave.metrics.metric_variables import add_to_metric_collections, metric_variable
from tensorweave.metrics.weights import remove_squeezable_dimensions
from tensorweave.ops.array import identity, rank
from tensorweave.ops.debugging import Assert, assert_type
from tensorweave.ops.math import (
    cast, divide, equal, greater, logical_and, logical_or, multiply, reduce_sum, where)
from tensorweave.ops.state import assign_add, variable_scope

__all__ = ["true_positives", "false_positives", "true_negatives", "false_negatives", "precision", "recall"]


def _check_weights_rank(weights: Any, values: Any) -> Any:
    """TF's assert_rank_in(weights, (0, rank(values))): static ranks fail at build time with
    ValueError, unknown ones through an Assert."""
    w_rank, v_rank = weights.shape.ndims, values.shape.ndims
    if w_rank is not None and v_rank is not None:
        if w_rank not in (0, v_rank):
            raise ValueError(f"weights must have rank in (0, {v_rank}), got rank {w_rank} "
                             f"(shape {weights.shape}).")
        return []
    w = rank(weights)
    return [Assert(logical_or(equal(w, 0), equal(w, rank(values))),
                   ["weights rank must be 0 or the values' rank, got", w])]


def _count_condition(values: Any, weights: Any, metrics_collections: Any,
                     updates_collections: Any) -> tuple[Any, Any]:
    """Sums the (weighted) true entries of a bool tensor into a `count` variable."""
    assert_type(values, dtypes.bool)
    count = metric_variable([], dtypes.float32, name="count")
    values = cast(values, dtypes.float32)
    if weights is not None:
        with control_dependencies(_check_weights_rank(weights, values)):
            values = multiply(values, cast(weights, dtypes.float32))
    value = add_to_metric_collections(metrics_collections, identity(count))
    update_op = add_to_metric_collections(updates_collections, assign_add(count, reduce_sum(values)))
    return value, update_op


def _condition_metric(default_name: str, label_value: bool, prediction_value: bool) -> Any:
    def metric(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
               updates_collections: Any = None, name: Optional[str] = None) -> tuple[Any, Any]:
        with variable_scope(name, default_name, (predictions, labels, weights)):
            predictions, labels, weights = remove_squeezable_dimensions(
                cast(predictions, dtypes.bool), cast(labels, dtypes.bool), weights)
            hit = logical_and(equal(labels, label_value), equal(predictions, prediction_value))
            return _count_condition(hit, weights, metrics_collections, updates_collections)
    metric.__name__ = default_name
    metric.__doc__ = (f"The (weighted) number of elements with label {label_value} and prediction "
                      f"{prediction_value}, kept in `{default_name}/count`.")
    return metric


true_positives = _condition_metric("true_positives", True, True)
false_positives = _condition_metric("false_positives", False, True)
true_negatives = _condition_metric("true_negatives", False, False)
false_negatives = _condition_metric("false_negatives", True, False)


def _ratio(hits: Any, misses: Any, name: str) -> Any:
    """hits / (hits + misses), 0 when both are 0."""
    return where(greater(hits + misses, 0), divide(hits, hits + misses), 0, name=name)


def precision(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
              updates_collections: Any = None, name: Optional[str] = None) -> tuple[Any, Any]:
    """tp / (tp + fp) over boolean predictions, from the `precision/true_positives` and
    `precision/false_positives` counts."""
    with variable_scope(name, "precision", (predictions, labels, weights)):
        predictions, labels, weights = remove_squeezable_dimensions(
            cast(predictions, dtypes.bool), cast(labels, dtypes.bool), weights)
        tp, tp_update = true_positives(labels, predictions, weights)
        fp, fp_update = false_positives(labels, predictions, weights)
        return (add_to_metric_collections(metrics_collections, _ratio(tp, fp, "value")),
                add_to_metric_collections(updates_collections, _ratio(tp_update, fp_update, "update_op")))


def recall(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
           updates_collections: Any = None, name: Optional[str] = None) -> tuple[Any, Any]:
    """tp / (tp + fn) over boolean predictions."""
    with variable_scope(name, "recall", (predictions, labels, weights)):
        predictions, labels, weights = remove_squeezable_dimensions(
            cast(predictions, dtypes.bool), cast(labels, dtypes.bool), weights)
        tp, tp_update = true_positives(labels, predictions, weights)
        fn, fn_update = false_negatives(labels, predictions, weights)
        return (add_to_metric_collections(metrics_collections, _ratio(tp, fn, "value")),
                add_to_metric_collections(updates_collections, _ratio(tp_update, fn_update, "update_op")))
