"""Streaming means: tf.metrics.mean and mean_tensor, and the metrics TF defines as the mean of a
per-element quantity (accuracy, the error metrics, cosine distance, percentage_below)."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes
from tensorweave.framework.graph import control_dependencies
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.metric_variables import add_to_metric_collections, metric_variable
from tensorweave.metrics.weights import broadcast_weights, remove_squeezable_dimensions
from tensorweave.ops.array import ones_like, size, zeros_like
from tensorweave.ops.math import (
    abs, cast, div_no_nan, divide, equal, less, maximum, multiply, reduce_sum, sqrt, squared_difference,
    subtract, where)
from tensorweave.ops.math.confusion_matrix import remove_squeezable_dimensions as _squeeze_pair
from tensorweave.ops.state import assign_add, variable_scope

__all__ = ["mean", "mean_tensor", "accuracy", "mean_squared_error", "root_mean_squared_error",
           "mean_absolute_error", "mean_relative_error", "mean_cosine_distance", "percentage_below"]


def _weighted(values: Any, weights: Any) -> tuple[Any, Any]:
    """(values * weights, weights), the weights broadcast to the values' shape."""
    values, _, weights = remove_squeezable_dimensions(predictions=values, labels=None, weights=weights)
    weights = broadcast_weights(cast(weights, dtypes.float32), values)
    return multiply(values, weights), weights


def mean(values: Any, weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
         name: Optional[str] = None) -> tuple[Any, Any]:
    """The (weighted) mean of every element seen: total / count, kept in `mean/total` and
    `mean/count`. Returns (mean, update_op); the update_op adds the batch and returns the mean."""
    with variable_scope(name, "mean", (values, weights)):
        values = cast(values, dtypes.float32)
        total = metric_variable([], dtypes.float32, name="total")
        count = metric_variable([], dtypes.float32, name="count")
        if weights is None:
            num_values = cast(size(values), dtypes.float32)
        else:
            values, weights = _weighted(values, weights)
            num_values = reduce_sum(weights)
        update_total = assign_add(total, reduce_sum(values))
        with control_dependencies([values]):
            update_count = assign_add(count, num_values)
        value = add_to_metric_collections(
            metrics_collections, div_no_nan(total, maximum(count, 0), name="value"))
        update_op = add_to_metric_collections(
            updates_collections, div_no_nan(update_total, maximum(update_count, 0), name="update_op"))
        return value, update_op


def mean_tensor(values: Any, weights: Any = None, metrics_collections: Any = None,
                updates_collections: Any = None, name: Optional[str] = None) -> tuple[Any, Any]:
    """The element-wise (weighted) mean over batches of equally shaped tensors (the values' static
    shape must be known: it is the shape of `mean/total_tensor` and `mean/count_tensor`)."""
    with variable_scope(name, "mean", (values, weights)):
        values = cast(values, dtypes.float32)
        total = metric_variable(values.shape, dtypes.float32, name="total_tensor")
        count = metric_variable(values.shape, dtypes.float32, name="count_tensor")
        num_values = ones_like(values)
        if weights is not None:
            values, weights = _weighted(values, weights)
            num_values = multiply(num_values, weights)
        update_total = assign_add(total, values)
        with control_dependencies([values]):
            update_count = assign_add(count, num_values)
        value = add_to_metric_collections(
            metrics_collections, div_no_nan(total, maximum(count, 0), name="value"))
        update_op = add_to_metric_collections(
            updates_collections, div_no_nan(update_total, maximum(update_count, 0), name="update_op"))
        return value, update_op


def accuracy(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
             updates_collections: Any = None, name: Optional[str] = None) -> tuple[Any, Any]:
    """How often predictions equal labels: the mean of the 0/1 matches (scope `accuracy`)."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    predictions.shape.assert_is_compatible_with(labels.shape)
    if labels.dtype != predictions.dtype:
        predictions = cast(predictions, labels.dtype)
    is_correct = cast(equal(predictions, labels), dtypes.float32)
    return mean(is_correct, weights, metrics_collections, updates_collections, name or "accuracy")


def mean_squared_error(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                       updates_collections: Any = None, name: Optional[str] = None) -> tuple[Any, Any]:
    """The mean of (labels - predictions)^2."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    return mean(squared_difference(labels, predictions), weights, metrics_collections, updates_collections,
                name or "mean_squared_error")


def root_mean_squared_error(labels: Any, predictions: Any, weights: Any = None,
                            metrics_collections: Any = None, updates_collections: Any = None,
                            name: Optional[str] = None) -> tuple[Any, Any]:
    """sqrt of the streaming mean squared error."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    mse, update_mse = mean_squared_error(labels, predictions, weights, None, None,
                                         name or "root_mean_squared_error")
    return (add_to_metric_collections(metrics_collections, sqrt(mse)),
            add_to_metric_collections(updates_collections, sqrt(update_mse)))


def mean_absolute_error(labels: Any, predictions: Any, weights: Any = None, metrics_collections: Any = None,
                        updates_collections: Any = None, name: Optional[str] = None) -> tuple[Any, Any]:
    """The mean of |predictions - labels|."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    return mean(abs(predictions - labels), weights, metrics_collections, updates_collections,
                name or "mean_absolute_error")


def mean_relative_error(labels: Any, predictions: Any, normalizer: Any, weights: Any = None,
                        metrics_collections: Any = None, updates_collections: Any = None,
                        name: Optional[str] = None) -> tuple[Any, Any]:
    """The mean of |labels - predictions| / normalizer, counting 0 where the normalizer is 0."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    normalizer, predictions = _squeeze_pair(normalizer, predictions)
    predictions.shape.assert_is_compatible_with(normalizer.shape)
    relative = where(equal(normalizer, 0.0), zeros_like(labels), divide(abs(labels - predictions), normalizer))
    return mean(relative, weights, metrics_collections, updates_collections, name or "mean_relative_error")


def mean_cosine_distance(labels: Any, predictions: Any, dim: int, weights: Any = None,
                         metrics_collections: Any = None, updates_collections: Any = None,
                         name: Optional[str] = None) -> tuple[Any, Any]:
    """1 - mean(sum(labels * predictions, dim)): the inputs are expected unit-normalized along
    `dim` (as in TF, nothing normalizes them)."""
    predictions, labels, weights = remove_squeezable_dimensions(predictions, labels, weights)
    radial = reduce_sum(multiply(predictions, labels), axis=[dim], keepdims=True)
    mean_distance, update_op = mean(radial, weights, None, None, name or "mean_cosine_distance")
    return (add_to_metric_collections(metrics_collections, subtract(1.0, mean_distance)),
            add_to_metric_collections(updates_collections, subtract(1.0, update_op)))


def percentage_below(values: Any, threshold: Any, weights: Any = None, metrics_collections: Any = None,
                     updates_collections: Any = None, name: Optional[str] = None) -> tuple[Any, Any]:
    """The (weighted) fraction of values below `threshold`."""
    values = convert_to_tensor(values)
    is_below = cast(less(values, threshold), dtypes.float32)
    return mean(is_below, weights, metrics_collections, updates_collections,
                name or "percentage_below_threshold")
