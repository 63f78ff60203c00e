"""Metrics on probabilities compared with a list of thresholds: the tp/fp/tn/fn counts per
threshold, precision and recall at thresholds, AUC (ROC and PR curves) and
sensitivity/specificity at a given specificity/sensitivity."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from tensorweave.framework import dtypes
from tensorweave.framework.graph import control_dependencies
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.metric_variables import add_to_metric_collections, metric_variable
from tensorweave.metrics.weights import broadcast_weights, remove_squeezable_dimensions
from tensorweave.ops.array import constant, expand_dims, identity, ones_like, reshape, shape, stack, tile, transpose
from tensorweave.ops.debugging import assert_greater_equal, assert_less_equal
from tensorweave.ops.math import (
    abs, argmax, argmin, cast, cumsum, div_no_nan, divide, equal, greater, log, logical_and, logical_not,
    maximum, minimum, multiply, reduce_min, reduce_sum, where)
from tensorweave.ops.state import assign_add, variable_scope

__all__ = ["true_positives_at_thresholds", "false_positives_at_thresholds", "true_negatives_at_thresholds",
           "false_negatives_at_thresholds", "precision_at_thresholds", "recall_at_thresholds", "auc",
           "sensitivity_at_specificity", "specificity_at_sensitivity"]

_KEPSILON = 1e-7
_ALL = ("tp", "fn", "tn", "fp")
_VARIABLE_NAMES = {"tp": "true_positives", "fn": "false_negatives", "tn": "true_negatives",
                   "fp": "false_positives"}


def _confusion_at_thresholds(labels: Any, predictions: Any, thresholds: Sequence[float], weights: Any = None,
                             includes: Sequence[str] = _ALL) -> tuple[dict[str, Any], dict[str, Any]]:
    """Per-threshold counts of the requested kinds: a prediction is positive when it is strictly
    greater than the threshold. Returns ({kind: variable}, {kind: update op})."""
    for include in includes:
        if include not in _ALL:
            raise ValueError(f"Invalid key: {include}")
    predictions = convert_to_tensor(predictions)
    in_range = [assert_greater_equal(predictions, cast(0.0, predictions.dtype),
                                     message="predictions must be in [0, 1]"),
                assert_less_equal(predictions, cast(1.0, predictions.dtype), message="predictions must be in [0, 1]")]
    with control_dependencies(in_range):
        predictions, labels, weights = remove_squeezable_dimensions(
            cast(predictions, dtypes.float32), cast(labels, dtypes.bool), weights)
    num_thresholds = len(thresholds)
    predictions_2d = reshape(predictions, [-1, 1])
    labels_2d = reshape(labels, [1, -1])
    num_predictions = predictions_2d.shape.as_list()[0]
    if num_predictions is None:
        num_predictions = shape(predictions_2d)[0]
    # [num_thresholds, num_predictions] grids: one row per threshold.
    thresh_tiled = tile(expand_dims(constant(list(thresholds), dtype=dtypes.float32), 1),
                        stack([1, num_predictions]))
    pred_is_pos = greater(tile(transpose(predictions_2d), [num_thresholds, 1]), thresh_tiled)
    pred_is_neg = logical_not(pred_is_pos)
    label_is_pos = tile(labels_2d, [num_thresholds, 1])
    label_is_neg = logical_not(label_is_pos)
    weights_tiled = None
    if weights is not None:
        weights = broadcast_weights(cast(weights, dtypes.float32), predictions)
        weights_tiled = tile(reshape(weights, [1, -1]), [num_thresholds, 1])
        thresh_tiled.shape.assert_is_compatible_with(weights_tiled.shape)
    conditions = {"tp": (label_is_pos, pred_is_pos), "fn": (label_is_pos, pred_is_neg),
                  "tn": (label_is_neg, pred_is_neg), "fp": (label_is_neg, pred_is_pos)}
    values, updates = {}, {}
    for kind in _ALL:
        if kind not in includes:
            continue
        var = metric_variable([num_thresholds], dtypes.float32, name=_VARIABLE_NAMES[kind])
        hits = cast(logical_and(*conditions[kind]), dtypes.float32)
        if weights_tiled is not None:
            hits *= weights_tiled
        updates[kind] = assign_add(var, reduce_sum(hits, 1))
        values[kind] = var
    return values, updates


def _count_at_thresholds(kind: str) -> Any:
    scope = _VARIABLE_NAMES[kind]

    def metric(labels: Any, predictions: Any, thresholds: Sequence[float], weights: Any = None,
               metrics_collections: Any = None, updates_collections: Any = None,
               name: Optional[str] = None) -> tuple[Any, Any]:
        with variable_scope(name, scope, (predictions, labels, weights)):
            values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights, (kind,))
            return (add_to_metric_collections(metrics_collections, identity(values[kind])),
                    add_to_metric_collections(updates_collections, updates[kind]))
    metric.__name__ = f"{scope}_at_thresholds"
    metric.__doc__ = f"The (weighted) {scope.replace('_', ' ')} at each threshold, in `{scope}/{scope}`."
    return metric


true_positives_at_thresholds = _count_at_thresholds("tp")
false_positives_at_thresholds = _count_at_thresholds("fp")
true_negatives_at_thresholds = _count_at_thresholds("tn")
false_negatives_at_thresholds = _count_at_thresholds("fn")


def precision_at_thresholds(labels: Any, predictions: Any, thresholds: Sequence[float], weights: Any = None,
                            metrics_collections: Any = None, updates_collections: Any = None,
                            name: Optional[str] = None) -> tuple[Any, Any]:
    """tp / (tp + fp + 1e-7) at each threshold."""
    with variable_scope(name, "precision_at_thresholds", (predictions, labels, weights)):
        values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights, ("tp", "fp"))

        def compute(tp: Any, fp: Any, suffix: str) -> Any:
            return divide(tp, _KEPSILON + tp + fp, name="precision_" + suffix)
        return (add_to_metric_collections(metrics_collections, compute(values["tp"], values["fp"], "value")),
                add_to_metric_collections(updates_collections, compute(updates["tp"], updates["fp"], "update_op")))


def recall_at_thresholds(labels: Any, predictions: Any, thresholds: Sequence[float], weights: Any = None,
                         metrics_collections: Any = None, updates_collections: Any = None,
                         name: Optional[str] = None) -> tuple[Any, Any]:
    """tp / (tp + fn + 1e-7) at each threshold."""
    with variable_scope(name, "recall_at_thresholds", (predictions, labels, weights)):
        values, updates = _confusion_at_thresholds(labels, predictions, thresholds, weights, ("tp", "fn"))

        def compute(tp: Any, fn: Any, suffix: str) -> Any:
            return divide(tp, _KEPSILON + tp + fn, name="recall_" + suffix)
        return (add_to_metric_collections(metrics_collections, compute(values["tp"], values["fn"], "value")),
                add_to_metric_collections(updates_collections, compute(updates["tp"], updates["fn"], "update_op")))


def _even_thresholds(num_thresholds: int, top: float) -> list[float]:
    """num_thresholds thresholds: just below 0, (num_thresholds - 2) evenly inside (0, 1), and `top`."""
    inner = [(i + 1) * 1.0 / (num_thresholds - 1) for i in range(num_thresholds - 2)]
    return [0.0 - _KEPSILON] + inner + [top]


def _interpolate_pr_auc(tp: Any, fp: Any, fn: Any, n: int) -> Any:
    """PR-AUC by Davis & Goadrich's interpolation: precision varies along each segment as
    (tp slope) over (predicted-positive slope), integrated in closed form."""
    dtp = tp[:n - 1] - tp[1:]
    p = tp + fp
    prec_slope = div_no_nan(dtp, maximum(p[:n - 1] - p[1:], 0), name="prec_slope")
    intercept = tp[1:] - multiply(prec_slope, p[1:])
    safe_p_ratio = where(logical_and(p[:n - 1] > 0, p[1:] > 0),
                         div_no_nan(p[:n - 1], maximum(p[1:], 0), name="recall_relative_ratio"),
                         ones_like(p[1:]))
    return reduce_sum(div_no_nan(prec_slope * (dtp + intercept * log(safe_p_ratio)),
                                 maximum(tp[1:] + fn[1:], 0), name="pr_auc_increment"),
                      name="interpolate_pr_auc")


def auc(labels: Any, predictions: Any, weights: Any = None, num_thresholds: int = 200,
        metrics_collections: Any = None, updates_collections: Any = None, curve: str = "ROC",
        name: Optional[str] = None, summation_method: str = "trapezoidal",
        thresholds: Optional[Sequence[float]] = None) -> tuple[Any, Any]:
    """Area under the ROC or PR curve, a Riemann sum over `num_thresholds` thresholds (or the given
    `thresholds`, with one below 0 and one above 1 added): 'trapezoidal', 'careful_interpolation'
    (interpolated PR; trapezoidal for ROC), 'minoring' or 'majoring'."""
    with variable_scope(name, "auc", (labels, predictions, weights)):
        if curve not in ("ROC", "PR"):
            raise ValueError(f"Curve must be either ROC or PR. Curve {curve} is unknown.")
        if thresholds is not None:
            inner = sorted(thresholds)
            num_thresholds = len(inner) + 2
            cuts = [0.0 - _KEPSILON] + inner + [1.0 + _KEPSILON]
        else:
            cuts = _even_thresholds(num_thresholds, 1.0 + _KEPSILON)
        values, updates = _confusion_at_thresholds(labels, predictions, cuts, weights)
        epsilon = 1.0e-6
        n = num_thresholds

        def compute(tp: Any, fn: Any, tn: Any, fp: Any, op_name: str) -> Any:
            if curve == "PR" and summation_method == "careful_interpolation":
                return _interpolate_pr_auc(tp, fp, fn, n)
            rec = divide(tp + epsilon, tp + fn + epsilon)
            if curve == "ROC":
                x, y = divide(fp, fp + tn + epsilon), rec
            else:
                x, y = rec, divide(tp + epsilon, tp + fp + epsilon)
            if summation_method in ("trapezoidal", "careful_interpolation"):
                heights = (y[:n - 1] + y[1:]) / 2.0
            elif summation_method == "minoring":
                heights = minimum(y[:n - 1], y[1:])
            elif summation_method == "majoring":
                heights = maximum(y[:n - 1], y[1:])
            else:
                raise ValueError(f"Invalid summation_method: {summation_method} summation_method should be "
                                 "'trapezoidal', 'careful_interpolation', 'minoring', or 'majoring'.")
            return reduce_sum(multiply(x[:n - 1] - x[1:], heights), name=op_name)

        value = compute(values["tp"], values["fn"], values["tn"], values["fp"], "value")
        update_op = compute(updates["tp"], updates["fn"], updates["tn"], updates["fp"], "update_op")
        return (add_to_metric_collections(metrics_collections, value),
                add_to_metric_collections(updates_collections, update_op))


def sensitivity_at_specificity(labels: Any, predictions: Any, specificity: float, weights: Any = None,
                               num_thresholds: int = 200, metrics_collections: Any = None,
                               updates_collections: Any = None, name: Optional[str] = None) -> tuple[Any, Any]:
    """The sensitivity (recall) at the threshold whose specificity is closest to `specificity`."""
    if specificity < 0 or specificity > 1:
        raise ValueError(f"`specificity` must be in the range [0, 1]. Currently, `specificity` got {specificity}.")
    with variable_scope(name, "sensitivity_at_specificity", (predictions, labels, weights)):
        values, updates = _confusion_at_thresholds(
            labels, predictions, _even_thresholds(num_thresholds, 1.0 + _KEPSILON), weights)

        def compute(tp: Any, tn: Any, fp: Any, fn: Any, op_name: str) -> Any:
            specificities = divide(tn, tn + fp + _KEPSILON)
            index = cast(argmin(abs(specificities - specificity), 0), dtypes.int32)
            return divide(tp[index], tp[index] + fn[index] + _KEPSILON, op_name)

        return (add_to_metric_collections(metrics_collections, compute(
                    values["tp"], values["tn"], values["fp"], values["fn"], "value")),
                add_to_metric_collections(updates_collections, compute(
                    updates["tp"], updates["tn"], updates["fp"], updates["fn"], "update_op")))


def specificity_at_sensitivity(labels: Any, predictions: Any, sensitivity: float, weights: Any = None,
                               num_thresholds: int = 200, metrics_collections: Any = None,
                               updates_collections: Any = None, name: Optional[str] = None) -> tuple[Any, Any]:
    """The specificity at the threshold whose sensitivity is closest to `sensitivity` (the last
    such threshold on ties, as TF picks it)."""
    if sensitivity < 0 or sensitivity > 1:
        raise ValueError(f"`sensitivity` must be in the range [0, 1]. Currently, `sensitivity` is {sensitivity}.")
    with variable_scope(name, "specificity_at_sensitivity", (predictions, labels, weights)):
        # TF's top threshold here is 1 - epsilon (not 1 + epsilon as for AUC).
        values, updates = _confusion_at_thresholds(
            labels, predictions, _even_thresholds(num_thresholds, 1.0 - _KEPSILON), weights)

        def compute(tp: Any, tn: Any, fp: Any, fn: Any, op_name: str) -> Any:
            gaps = abs(divide(tp, tp + fn + _KEPSILON) - sensitivity)
            at_min = cumsum(cast(equal(gaps, reduce_min(gaps)), dtypes.int64))
            index = cast(argmax(at_min, 0), dtypes.int32)
            return divide(tn[index], tn[index] + fp[index] + _KEPSILON, op_name)

        return (add_to_metric_collections(metrics_collections, compute(
                    values["tp"], values["tn"], values["fp"], values["fn"], "value")),
                add_to_metric_collections(updates_collections, compute(
                    updates["tp"], updates["tn"], updates["fp"], updates["fn"], "update_op")))
