"""The tf.metrics cases shared by make_tf_metrics_fixtures.py (run under real TensorFlow) and
tests/metrics/test_metrics_vs_tf.py (run under tensorweave): each case is a metric, its
non-tensor keyword arguments, and a few batches of inputs fed through placeholders.

No TensorFlow or tensorweave import here: the inputs are plain NumPy arrays drawn from a seeded
generator, so both sides see the same numbers.
"""
from __future__ import annotations

from typing import Any

import numpy as np

BATCHES = 3


def _binary(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return (rng.random(shape) > 0.5).astype(np.int64)


def _probs(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    # Rounded to a coarse grid so some predictions sit exactly on thresholds (ties matter).
    return np.round(rng.random(shape), 2).astype(np.float32)


def _weights(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return np.round(rng.random(shape) * 2, 2).astype(np.float32)


def _sparse_labels(rng: np.random.Generator, batch: int, width: int, num_classes: int) -> dict[str, Any]:
    """A SparseTensorValue-like dict with 0..width labels per row (some out of range)."""
    indices, values = [], []
    for row in range(batch):
        n = int(rng.integers(0, width + 1))
        picks = rng.choice(num_classes + 1, size=n, replace=False)  # num_classes itself is out of range
        for j, v in enumerate(sorted(int(p) for p in picks)):
            indices.append([row, j])
            values.append(v)
    return {"sparse": True, "indices": np.array(indices, np.int64).reshape(-1, 2),
            "values": np.array(values, np.int64), "dense_shape": np.array([batch, width], np.int64)}


def cases() -> list[dict[str, Any]]:
    """Every case: {"id", "metric", "kwargs", "batches": [{input name: array or sparse dict}]}."""
    rng = np.random.default_rng(20261124)
    out: list[dict[str, Any]] = []

    def add(case_id: str, metric: str, kwargs: dict[str, Any], make: Any) -> None:
        out.append({"id": case_id, "metric": metric, "kwargs": kwargs,
                    "batches": [make() for _ in range(BATCHES)]})

    shape = (4, 3)
    for weighted in (False, True):
        sfx = "_w" if weighted else ""

        def w(shp: tuple[int, ...] = shape, on: bool = weighted) -> dict[str, Any]:
            return {"weights": _weights(rng, shp)} if on else {}

        add("accuracy" + sfx, "accuracy", {},
            lambda: {"labels": rng.integers(0, 3, shape), "predictions": rng.integers(0, 3, shape), **w()})
        add("mean" + sfx, "mean", {}, lambda: {"values": rng.normal(size=shape).astype(np.float32), **w()})
        add("mean_tensor" + sfx, "mean_tensor", {},
            lambda: {"values": rng.normal(size=shape).astype(np.float32), **w()})
        for m in ("precision", "recall", "true_positives", "false_positives", "true_negatives",
                  "false_negatives"):
            add(m + sfx, m, {}, lambda: {"labels": _binary(rng, shape), "predictions": _binary(rng, shape), **w()})
        for curve in ("ROC", "PR"):
            for summation in ("trapezoidal", "careful_interpolation", "minoring", "majoring"):
                add(f"auc_{curve}_{summation}{sfx}", "auc",
                    {"curve": curve, "summation_method": summation, "num_thresholds": 20},
                    lambda: {"labels": _binary(rng, shape), "predictions": _probs(rng, shape), **w()})
        add("auc_default" + sfx, "auc", {},
            lambda: {"labels": _binary(rng, shape), "predictions": _probs(rng, shape), **w()})
        for m in ("mean_squared_error", "root_mean_squared_error", "mean_absolute_error"):
            add(m + sfx, m, {}, lambda: {"labels": rng.normal(size=shape).astype(np.float32),
                                         "predictions": rng.normal(size=shape).astype(np.float32), **w()})
        add("mean_relative_error" + sfx, "mean_relative_error", {},
            lambda: {"labels": rng.normal(size=shape).astype(np.float32),
                     "predictions": rng.normal(size=shape).astype(np.float32),
                     "normalizer": np.where(rng.random(shape) > 0.8, 0, rng.random(shape) + 0.5).astype(
                         np.float32), **w()})
        add("mean_cosine_distance" + sfx, "mean_cosine_distance", {"dim": 1},
            lambda: {"labels": rng.normal(size=shape).astype(np.float32),
                     "predictions": rng.normal(size=shape).astype(np.float32), **w((4, 1))})
        add("percentage_below" + sfx, "percentage_below", {"threshold": 0.25},
            lambda: {"values": rng.normal(size=shape).astype(np.float32), **w()})
        add("mean_iou" + sfx, "mean_iou", {"num_classes": 4},
            lambda: {"labels": rng.integers(0, 4, shape), "predictions": rng.integers(0, 4, shape), **w()})
        add("mean_per_class_accuracy" + sfx, "mean_per_class_accuracy", {"num_classes": 4},
            lambda: {"labels": rng.integers(0, 4, shape), "predictions": rng.integers(0, 4, shape), **w()})
        thresholds = [0.0, 0.25, 0.5, 0.7, 1.0]
        for m in ("true_positives_at_thresholds", "false_positives_at_thresholds",
                  "true_negatives_at_thresholds", "false_negatives_at_thresholds",
                  "precision_at_thresholds", "recall_at_thresholds"):
            add(m + sfx, m, {"thresholds": thresholds},
                lambda: {"labels": _binary(rng, shape), "predictions": _probs(rng, shape), **w()})
        for spec in (0.3, 0.8):
            add(f"sensitivity_at_specificity_{spec}{sfx}", "sensitivity_at_specificity",
                {"specificity": spec, "num_thresholds": 25},
                lambda: {"labels": _binary(rng, shape), "predictions": _probs(rng, shape), **w()})
            add(f"specificity_at_sensitivity_{spec}{sfx}", "specificity_at_sensitivity",
                {"sensitivity": spec, "num_thresholds": 25},
                lambda: {"labels": _binary(rng, shape), "predictions": _probs(rng, shape), **w()})

        # Top-k metrics: 5 rows over 6 classes; dense labels [5, 2] (ids may repeat or fall out of
        # range), dense labels [5] (one id per row), and sparse labels.
        logits = (5, 6)
        for m in ("precision_at_k", "recall_at_k", "sparse_precision_at_k"):
            for k in (1, 3):
                for class_id in (None, 2):
                    kw = {"k": k} if class_id is None else {"k": k, "class_id": class_id}
                    tag = f"{m}_k{k}" + ("" if class_id is None else f"_c{class_id}") + sfx
                    add(tag + "_dense2", m, kw, lambda: {"labels": rng.integers(0, 7, (5, 2)),
                                                         "predictions": rng.normal(size=logits).astype(
                                                             np.float32), **w((5,))})
                    add(tag + "_dense1", m, kw, lambda: {"labels": rng.integers(0, 6, (5,)),
                                                         "predictions": rng.normal(size=logits).astype(
                                                             np.float32), **w((5,))})
                    add(tag + "_sparse", m, kw, lambda: {"labels": _sparse_labels(rng, 5, 3, 6),
                                                         "predictions": rng.normal(size=logits).astype(
                                                             np.float32), **w((5,))})
        for m in ("precision_at_top_k", "recall_at_top_k"):
            for class_id in (None, 1):
                kw = {} if class_id is None else {"class_id": class_id}
                add(f"{m}" + ("" if class_id is None else f"_c{class_id}") + sfx, m, kw,
                    lambda: {"labels": rng.integers(0, 5, (5, 2)),
                             "predictions_idx": rng.integers(0, 5, (5, 3)), **w((5,))})
        for m in ("average_precision_at_k", "sparse_average_precision_at_k"):
            for k in (1, 4):
                add(f"{m}_k{k}_dense{sfx}", m, {"k": k},
                    lambda: {"labels": np.where(rng.random((5, 3)) > 0.8, -1, rng.integers(0, 7, (5, 3))),
                             "predictions": rng.normal(size=logits).astype(np.float32), **w((5,))})
                add(f"{m}_k{k}_sparse{sfx}", m, {"k": k},
                    lambda: {"labels": _sparse_labels(rng, 5, 3, 6),
                             "predictions": rng.normal(size=logits).astype(np.float32), **w((5,))})
    # Explicit AUC thresholds, rank-matching squeezes, integer values for mean.
    for curve, summation in (("ROC", "trapezoidal"), ("PR", "careful_interpolation"), ("PR", "majoring")):
        add(f"auc_thresholds_{curve}_{summation}", "auc",
            {"curve": curve, "summation_method": summation, "thresholds": [0.7, 0.3, 0.5]},
            lambda: {"labels": _binary(rng, shape), "predictions": _probs(rng, shape),
                     "weights": _weights(rng, shape)})
    add("accuracy_squeeze_labels", "accuracy", {},
        lambda: {"labels": rng.integers(0, 3, (6, 1)), "predictions": rng.integers(0, 3, (6,)),
                 "weights": _weights(rng, (6,))})
    add("mean_squared_error_squeeze_weights", "mean_squared_error", {},
        lambda: {"labels": rng.normal(size=shape).astype(np.float32),
                 "predictions": rng.normal(size=shape).astype(np.float32), "weights": _weights(rng, shape + (1,))})
    add("mean_expand_weights", "mean", {},
        lambda: {"values": rng.normal(size=shape).astype(np.float32), "weights": _weights(rng, (4,))})
    add("mean_int_values", "mean", {}, lambda: {"values": rng.integers(-5, 5, shape)})
    add("precision_float_inputs", "precision", {},
        lambda: {"labels": _probs(rng, shape).round(), "predictions": _probs(rng, shape).round(),
                 "weights": _weights(rng, (4, 1))})
    # The same inputs through placeholders whose batch dimension is unknown (None), so the
    # run-time rank/shape paths are taken where static shapes decided before.
    for case_id in DYNAMIC:
        case = next(c for c in out if c["id"] == case_id)
        out.append({**case, "id": case_id + "_dynamic", "dynamic": True})
    return out


DYNAMIC = ("accuracy_w", "mean_w", "precision_w", "recall", "true_negatives_w", "auc_ROC_trapezoidal_w",
           "auc_PR_careful_interpolation", "mean_squared_error_w", "mean_relative_error_w",
           "mean_cosine_distance_w", "percentage_below_w", "mean_iou_w", "mean_per_class_accuracy_w",
           "precision_at_thresholds_w", "sensitivity_at_specificity_0.8_w", "specificity_at_sensitivity_0.3",
           "precision_at_k_k3_w_dense2", "precision_at_k_k3_c2_sparse", "recall_at_k_k3_w_dense1",
           "recall_at_k_k1_c2_w_sparse", "precision_at_top_k_w", "average_precision_at_k_k4_dense_w",
           "average_precision_at_k_k4_sparse", "accuracy_squeeze_labels", "mean_squared_error_squeeze_weights",
           "mean_expand_weights")


def placeholder_shape(case: dict[str, Any], value: Any) -> list[Any]:
    """The placeholder shape for one input: the batch's, with the first dimension None in
    dynamic cases."""
    shape = list(value["dense_shape"]) if isinstance(value, dict) else list(np.shape(value))
    if case.get("dynamic") and shape:
        shape[0] = None
    return [None if d is None else int(d) for d in shape]


def confusion_matrix_cases() -> list[dict[str, Any]]:
    """tf.math.confusion_matrix inputs: {"id", "labels", "predictions", "weights"?, "num_classes"?,
    "dtype"?}."""
    rng = np.random.default_rng(11)
    labels, predictions = rng.integers(0, 4, 12), rng.integers(0, 4, 12)
    weights = np.round(rng.random(12), 2).astype(np.float32)
    return [
        {"id": "plain", "labels": labels, "predictions": predictions},
        {"id": "num_classes", "labels": labels, "predictions": predictions, "num_classes": 6},
        {"id": "weights_float64", "labels": labels, "predictions": predictions, "weights": weights,
         "num_classes": 5, "dtype": "float64"},
        {"id": "weights_float32", "labels": labels, "predictions": predictions, "weights": weights,
         "dtype": "float32"},
        {"id": "squeezable", "labels": labels.reshape(12, 1), "predictions": predictions},
        {"id": "int64", "labels": labels, "predictions": predictions, "dtype": "int64"},
    ]


def encode(value: Any) -> Any:
    """JSON form of one input: arrays as {"dtype", "value"}, sparse dicts field by field."""
    if isinstance(value, dict):
        return {k: (v if k == "sparse" else encode(v)) for k, v in value.items()}
    arr = np.asarray(value)
    return {"dtype": str(arr.dtype), "shape": list(arr.shape), "value": arr.tolist()}


def decode(value: dict[str, Any]) -> Any:
    if value.get("sparse"):
        return {k: (v if k == "sparse" else decode(v)) for k, v in value.items()}
    return np.array(value["value"], dtype=value["dtype"]).reshape(value["shape"])
