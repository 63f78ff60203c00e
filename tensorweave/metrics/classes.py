"""Per-class metrics over integer class ids: mean_per_class_accuracy and mean_iou (the latter on
a streaming confusion matrix)."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.metric_variables import add_to_metric_collections, metric_variable
from tensorweave.ops.array import ones, ones_like, reshape, size
from tensorweave.ops.linalg import diag_part
from tensorweave.ops.math import (
    cast, div_no_nan, divide, equal, greater, maximum, not_equal, reduce_mean, reduce_sum, where)
from tensorweave.ops.math.confusion_matrix import confusion_matrix
from tensorweave.ops.state import assign_add, scatter_add, variable_scope

__all__ = ["mean_per_class_accuracy", "mean_iou"]


def _flat(t: Any) -> Any:
    return reshape(t, [-1]) if t.shape.ndims is None or t.shape.ndims > 1 else t


def mean_per_class_accuracy(labels: Any, predictions: Any, num_classes: int, weights: Any = None,
                            metrics_collections: Any = None, updates_collections: Any = None,
                            name: Optional[str] = None) -> tuple[Any, Any]:
    """The mean over classes of (correct / seen) per true class, accumulated by scatter_add into
    `mean_accuracy/total` (examples per class) and `mean_accuracy/count` (correct per class)."""
    with variable_scope(name, "mean_accuracy", (predictions, labels, weights)):
        labels = _flat(cast(labels, dtypes.int64))
        predictions = _flat(convert_to_tensor(predictions))
        predictions.shape.assert_is_compatible_with(labels.shape)
        total = metric_variable([num_classes], dtypes.float32, name="total")
        count = metric_variable([num_classes], dtypes.float32, name="count")
        seen = ones([size(labels)], dtypes.float32)
        if labels.dtype != predictions.dtype:
            predictions = cast(predictions, labels.dtype)
        is_correct = cast(equal(predictions, labels), dtypes.float32)
        if weights is not None:
            weights = cast(_flat(convert_to_tensor(weights)), dtypes.float32)
            is_correct *= weights
            seen *= weights
        update_total = scatter_add(total, labels, seen)
        update_count = scatter_add(count, labels, is_correct)
        value = reduce_mean(div_no_nan(count, maximum(total, 0)), name="mean_accuracy")
        update_op = div_no_nan(update_count, maximum(update_total, 0), name="update_op")
        return (add_to_metric_collections(metrics_collections, value),
                add_to_metric_collections(updates_collections, update_op))


def _mean_iou_of(total_cm: Any) -> Any:
    """Mean over the classes that occur (in labels or predictions) of TP / (TP + FP + FN)."""
    sum_over_row = cast(reduce_sum(total_cm, 0), dtypes.float32)
    sum_over_col = cast(reduce_sum(total_cm, 1), dtypes.float32)
    cm_diag = cast(diag_part(total_cm), dtypes.float32)
    denominator = sum_over_row + sum_over_col - cm_diag
    num_valid = reduce_sum(cast(not_equal(denominator, 0), dtypes.float32))
    denominator = where(greater(denominator, 0), denominator, ones_like(denominator))
    iou = divide(cm_diag, denominator)
    return where(greater(num_valid, 0), reduce_sum(iou, name="mean_iou") / num_valid, 0)


def mean_iou(labels: Any, predictions: Any, num_classes: int, weights: Any = None,
             metrics_collections: Any = None, updates_collections: Any = None,
             name: Optional[str] = None) -> tuple[Any, Any]:
    """Mean intersection-over-union. The update_op returns the updated confusion matrix
    (`mean_iou/total_confusion_matrix`, float64), as TF's does."""
    with variable_scope(name, "mean_iou", (predictions, labels, weights)):
        labels, predictions = convert_to_tensor(labels), convert_to_tensor(predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
        total_cm = metric_variable([num_classes, num_classes], dtypes.float64, name="total_confusion_matrix")
        predictions = _flat(cast(predictions, dtypes.int64))
        labels = _flat(cast(labels, dtypes.int64))
        if weights is not None:
            weights = _flat(convert_to_tensor(weights))
        current = confusion_matrix(labels, predictions, num_classes, weights=weights, dtype=dtypes.float64)
        update_op = assign_add(total_cm, current)
        value = _mean_iou_of(total_cm)
        return (add_to_metric_collections(metrics_collections, value),
                add_to_metric_collections(updates_collections, update_op))
