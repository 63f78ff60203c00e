"""Top-k metrics on class scores against sets of true class ids: precision_at_k, recall_at_k (and
their *_at_top_k forms taking the top ids directly), average_precision_at_k, and TF 1.x's
sparse_* aliases.

TF computes these with tf.sets ops on SparseTensors. Here each row's set is a dense id tensor
plus a validity mask (sparse labels are densified, the mask marking the stored entries), and set
sizes are counted with set semantics: an id counts once per row however often it repeats.
"""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes
from tensorweave.framework.graph import control_dependencies, name_scope
from tensorweave.framework.sparse_tensor import SparseTensor, SparseTensorValue
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.metrics.metric_variables import add_to_metric_collections, metric_variable
from tensorweave.metrics.weights import assert_broadcastable, broadcast_weights
from tensorweave.ops.array import expand_dims, fill, ones_like, range as range_, shape, size
from tensorweave.ops.control_flow.cond import cond
from tensorweave.ops.math import (
    add, cast, cumsum, div_no_nan, divide, equal, greater_equal, less, logical_and, logical_not, minimum,
    multiply, reduce_any, reduce_max, reduce_sum, where_v2)
from tensorweave.ops.nn import top_k
from tensorweave.ops.sparse import sparse_tensor_to_dense
from tensorweave.ops.state import assign_add

__all__ = ["precision_at_k", "recall_at_k", "precision_at_top_k", "recall_at_top_k", "sparse_precision_at_k",
           "average_precision_at_k", "sparse_average_precision_at_k"]


class _IdSets:
    """One set of int64 ids per row: `ids` [..., n] and `valid` [..., n] (None: all valid)."""

    def __init__(self, ids: Any, valid: Any = None) -> None:
        self.ids, self.valid = ids, valid

    def contains(self, other: "_IdSets") -> Any:
        """bool [..., n_other]: whether each of other's ids is a (valid) member of this set."""
        eq = equal(expand_dims(other.ids, -1), expand_dims(self.ids, -2))
        if self.valid is not None:
            eq = logical_and(eq, expand_dims(self.valid, -2))
        return reduce_any(eq, axis=-1)

    def first_occurrences(self) -> Any:
        """bool [..., n]: valid entries whose id does not occur earlier in the row."""
        positions = range_(shape(self.ids)[-1])
        earlier = less(expand_dims(positions, 0), expand_dims(positions, 1))  # [i, j]: j < i
        repeat = logical_and(equal(expand_dims(self.ids, -1), expand_dims(self.ids, -2)), earlier)
        if self.valid is not None:
            repeat = logical_and(repeat, expand_dims(self.valid, -2))
        first = logical_not(reduce_any(repeat, axis=-1))
        return first if self.valid is None else logical_and(first, self.valid)

    def select(self, class_id: int) -> "_IdSets":
        """The set {class_id} in rows holding it, the empty set elsewhere (TF's _select_class_id)."""
        hit = equal(self.ids, cast(class_id, dtypes.int64))
        if self.valid is not None:
            hit = logical_and(hit, self.valid)
        present = reduce_any(hit, axis=-1, keepdims=True)
        return _IdSets(fill(shape(present), cast(class_id, dtypes.int64)), present)


def _count(mask: Any) -> Any:
    return reduce_sum(cast(mask, dtypes.float64), axis=-1)


def _label_sets(labels: Any, predictions_idx: Any) -> tuple[_IdSets, bool]:
    """The labels as id sets with the predictions' rank (labels one rank lower get a trailing
    dimension, as TF's _maybe_expand_labels does); also whether they came sparse."""
    if isinstance(labels, SparseTensorValue):
        labels = SparseTensor.from_value(labels)
    pred_rank = predictions_idx.shape.ndims
    if isinstance(labels, SparseTensor):
        ids = cast(sparse_tensor_to_dense(labels, default_value=0, validate_indices=False), dtypes.int64)
        marks = SparseTensor(labels.indices, ones_like(labels.values, dtype=dtypes.bool), labels.dense_shape)
        valid = sparse_tensor_to_dense(marks, default_value=False, validate_indices=False)
        labels_rank = labels.dense_shape.shape.as_list()[0]
        if labels_rank is not None and pred_rank is not None and pred_rank == labels_rank + 1:
            ids, valid = expand_dims(ids, -1), expand_dims(valid, -1)
        return _IdSets(ids, valid), True
    labels = convert_to_tensor(labels)
    labels_rank = labels.shape.ndims
    if labels_rank is not None and pred_rank is not None:
        if pred_rank == labels_rank + 1:
            labels = expand_dims(labels, -1)
        elif pred_rank != labels_rank:
            raise ValueError(f"Unexpected labels shape {labels.shape} for predictions shape "
                             f"{predictions_idx.shape}. Predictions rank should be the same rank as labels "
                             "rank or labels rank plus one .")
    return _IdSets(cast(labels, dtypes.int64)), False


def _weighted(per_row: Any, weights: Any) -> Any:
    if weights is None:
        return per_row
    with control_dependencies([assert_broadcastable(weights, per_row)]):
        return multiply(per_row, cast(weights, dtypes.float64))


def _at_k_name(name: str, k: Optional[int] = None, class_id: Optional[int] = None) -> str:
    name = f"{name}_at_{k}" if k is not None else f"{name}_at_k"
    return name if class_id is None else f"{name}_class{class_id}"


def _streaming_count(kind: str, count: Any, k: Optional[int], class_id: Optional[int], weights: Any) -> tuple[Any, Any]:
    """A float64 `<kind>_at_<k>` variable summing the (weighted) per-row counts `count()`."""
    with name_scope(None, _at_k_name(kind, k, class_id), ()) as scope:
        batch_total = cast(reduce_sum(_weighted(count(), weights)), dtypes.float64)
        var = metric_variable([], dtypes.float64, name=scope)
        return var, assign_add(var, batch_total, name="update")


def _set_pair(labels: Any, predictions_idx: Any, class_id: Optional[int]) -> tuple[_IdSets, _IdSets]:
    label_sets, _ = _label_sets(labels, predictions_idx)
    predicted = _IdSets(cast(predictions_idx, dtypes.int64))
    if class_id is not None:
        return label_sets.select(class_id), predicted.select(class_id)
    return label_sets, predicted


def precision_at_top_k(labels: Any, predictions_idx: Any, k: Optional[int] = None, class_id: Optional[int] = None,
                       weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
                       name: Optional[str] = None) -> tuple[Any, Any]:
    """Of the predicted top ids (per row, as a set), the fraction that are true labels; with
    `class_id`, how often class_id is a true label when it is among the top ids."""
    with name_scope(name, _at_k_name("precision", k, class_id), (predictions_idx, labels, weights)) as scope:
        predictions_idx = convert_to_tensor(predictions_idx)
        truth, predicted = _set_pair(labels, predictions_idx, class_id)
        distinct = predicted.first_occurrences()
        hit = truth.contains(predicted)
        tp, tp_update = _streaming_count("true_positive", lambda: _count(logical_and(distinct, hit)),
                                         k, class_id, weights)
        fp, fp_update = _streaming_count("false_positive", lambda: _count(logical_and(distinct, logical_not(hit))),
                                         k, class_id, weights)
        value = divide(tp, add(tp, fp), name=scope)
        update = divide(tp_update, add(tp_update, fp_update), name="update")
        return (add_to_metric_collections(metrics_collections, value),
                add_to_metric_collections(updates_collections, update))


def recall_at_top_k(labels: Any, predictions_idx: Any, k: Optional[int] = None, class_id: Optional[int] = None,
                    weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
                    name: Optional[str] = None) -> tuple[Any, Any]:
    """Of the true label ids (per row, as a set), the fraction among the predicted top ids."""
    with name_scope(name, _at_k_name("recall", k, class_id), (predictions_idx, labels, weights)) as scope:
        predictions_idx = convert_to_tensor(predictions_idx)
        truth, predicted = _set_pair(labels, predictions_idx, class_id)
        tp, tp_update = _streaming_count(
            "true_positive", lambda: _count(logical_and(predicted.first_occurrences(), truth.contains(predicted))),
            k, class_id, weights)
        fn, fn_update = _streaming_count(
            "false_negative",
            lambda: _count(logical_and(truth.first_occurrences(), logical_not(predicted.contains(truth)))),
            k, class_id, weights)
        value = divide(tp, add(tp, fn), name=scope)
        update = divide(tp_update, add(tp_update, fn_update), name="update")
        return (add_to_metric_collections(metrics_collections, value),
                add_to_metric_collections(updates_collections, update))


def precision_at_k(labels: Any, predictions: Any, k: int, class_id: Optional[int] = None, weights: Any = None,
                   metrics_collections: Any = None, updates_collections: Any = None,
                   name: Optional[str] = None) -> tuple[Any, Any]:
    """precision_at_top_k of the k highest-scoring classes of `predictions` [..., num_classes]."""
    with name_scope(name, _at_k_name("precision", k, class_id), (predictions, labels, weights)) as scope:
        _, top_k_idx = top_k(predictions, k)
        return precision_at_top_k(labels, top_k_idx, k, class_id, weights, metrics_collections,
                                  updates_collections, name=scope)


def recall_at_k(labels: Any, predictions: Any, k: int, class_id: Optional[int] = None, weights: Any = None,
                metrics_collections: Any = None, updates_collections: Any = None,
                name: Optional[str] = None) -> tuple[Any, Any]:
    """recall_at_top_k of the k highest-scoring classes of `predictions` [..., num_classes]."""
    with name_scope(name, _at_k_name("recall", k, class_id), (predictions, labels, weights)) as scope:
        _, top_k_idx = top_k(predictions, k)
        return recall_at_top_k(labels, top_k_idx, k, class_id, weights, metrics_collections,
                               updates_collections, name=scope)


def sparse_precision_at_k(labels: Any, predictions: Any, k: int, class_id: Optional[int] = None,
                          weights: Any = None, metrics_collections: Any = None, updates_collections: Any = None,
                          name: Optional[str] = None) -> tuple[Any, Any]:
    """TF 1.x's deprecated name of precision_at_k."""
    return precision_at_k(labels, predictions, k, class_id, weights, metrics_collections, updates_collections,
                          name)


def _clean_out_of_range(labels: Any, num_classes: Any) -> Any:
    """Label ids >= num_classes become -1 (they can never be retrieved)."""
    is_sparse = isinstance(labels, (SparseTensor, SparseTensorValue))
    if isinstance(labels, SparseTensorValue):
        labels = SparseTensor.from_value(labels)
    values = labels.values if is_sparse else convert_to_tensor(labels)

    def clean() -> Any:
        return where_v2(greater_equal(values, num_classes), -1 * ones_like(values), values)

    values = cond(greater_equal(reduce_max(values), num_classes), clean, lambda: values)
    return SparseTensor(labels.indices, values, labels.dense_shape) if is_sparse else values


def _average_precision(labels: Any, predictions_idx: Any) -> Any:
    """Per row: the sum of precision@i over the ranks i holding a true label, divided by
    min(number of true labels, k)."""
    with name_scope(None, "average_precision", (predictions_idx, labels)) as scope:
        predictions_idx = cast(predictions_idx, dtypes.int64, name="predictions_idx")
        if predictions_idx.shape.ndims == 0:
            raise ValueError("The rank of `predictions_idx` must be at least 1.")
        k = predictions_idx.shape.as_list()[-1]
        if k is None:
            raise ValueError("The last dimension of predictions_idx must be set. Currently, it is None.")
        truth, is_sparse = _label_sets(labels, predictions_idx)
        relevant = cast(truth.contains(_IdSets(predictions_idx)), dtypes.float64, name="relevant_per_k")
        tp_per_k = cumsum(relevant, axis=-1, name="tp_per_k")
        retrieved_per_k = cumsum(ones_like(relevant), axis=-1, name="retrieved_per_k")
        precision_per_k = divide(tp_per_k, retrieved_per_k, name="precision_per_k")
        precision_sum = reduce_sum(multiply(precision_per_k, relevant), axis=(-1,), name="precision_sum")
        # TF counts a sparse row's distinct ids but a dense row's non-negative entries.
        if is_sparse:
            num_labels = _count(truth.first_occurrences())
        else:
            num_labels = _count(greater_equal(truth.ids, 0))
        num_relevant = minimum(num_labels, float(k), name="num_relevant")
        return divide(precision_sum, num_relevant, name=scope)


def average_precision_at_k(labels: Any, predictions: Any, k: int, weights: Any = None,
                           metrics_collections: Any = None, updates_collections: Any = None,
                           name: Optional[str] = None) -> tuple[Any, Any]:
    """Mean average precision@k over rows (weighted), kept as float64 `total` and `max` (the
    total weight) variables."""
    if k < 1:
        raise ValueError(f"Invalid k={k}. `k` should be >= 1.")
    with name_scope(name, _at_k_name("average_precision", k), (predictions, labels, weights)) as scope:
        predictions = convert_to_tensor(predictions)
        _, predictions_idx = top_k(predictions, k)
        labels = _clean_out_of_range(labels, cast(shape(predictions)[-1], dtypes.int64))
        with name_scope(scope):
            average_precision = _average_precision(labels, predictions_idx)
            if weights is not None:
                weights = broadcast_weights(cast(weights, dtypes.float64), average_precision)
                average_precision = multiply(average_precision, weights)
            with name_scope(None, "max", (average_precision,)) as max_scope:
                max_var = metric_variable([], dtypes.float64, name=max_scope)
                if weights is None:
                    batch_max = cast(size(average_precision, name="batch_max"), dtypes.float64)
                else:
                    batch_max = reduce_sum(weights, name="batch_max")
                max_update = assign_add(max_var, batch_max, name="update")
            with name_scope(None, "total", (average_precision,)) as total_scope:
                total_var = metric_variable([], dtypes.float64, name=total_scope)
                total_update = assign_add(total_var, reduce_sum(average_precision, name="batch_total"),
                                          name="update")
            value = div_no_nan(total_var, max_var, name="mean")
            update = div_no_nan(total_update, max_update, name=scope)
        return (add_to_metric_collections(metrics_collections, value),
                add_to_metric_collections(updates_collections, update))


def sparse_average_precision_at_k(labels: Any, predictions: Any, k: int, weights: Any = None,
                                  metrics_collections: Any = None, updates_collections: Any = None,
                                  name: Optional[str] = None) -> tuple[Any, Any]:
    """TF 1.x's deprecated name of average_precision_at_k."""
    return average_precision_at_k(labels, predictions, k, weights, metrics_collections, updates_collections, name)
