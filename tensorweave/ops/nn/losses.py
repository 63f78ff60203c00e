"""`tf.losses`: weighted, reduced training losses built on the `tf.nn` ops, and the LOSSES
collection helpers (add_loss, get_losses, get_total_loss, regularization losses).

As in TensorFlow, a loss is computed element-wise, multiplied by `weights` (a scalar or a
tensor of the losses' rank whose dimensions are 1 or equal to the losses'), reduced as
`reduction` says, computed in float32 and cast back to the input's dtype, and added to
`loss_collection`.
"""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import GraphKeys, add_to_collection, get_collection, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.creation import ones_like
from tensorweave.ops.array.shaping import shape, size, squeeze, stop_gradient
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.elementwise import (  # noqa: A004
    abs, div_no_nan, log, minimum, multiply, not_equal, squared_difference, subtract)
from tensorweave.ops.math.math_impl import add_n
from tensorweave.ops.math.reduction import reduce_sum
from tensorweave.ops.nn.nn_impl import (
    sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2,
    sparse_softmax_cross_entropy_with_logits)
from tensorweave.ops.nn.nn_ops import relu

__all__ = ["Reduction", "absolute_difference", "add_loss", "compute_weighted_loss", "get_losses",
           "get_regularization_loss", "get_regularization_losses", "get_total_loss", "hinge_loss",
           "huber_loss", "log_loss", "mean_squared_error", "sigmoid_cross_entropy",
           "softmax_cross_entropy", "sparse_softmax_cross_entropy"]


class Reduction:
    """How a weighted loss tensor becomes the returned loss."""

    NONE = "none"                                    # the weighted losses, unreduced
    SUM = "weighted_sum"                             # their sum
    MEAN = "weighted_mean"                           # sum / sum of the (broadcast) weights
    SUM_OVER_BATCH_SIZE = "weighted_sum_over_batch_size"   # sum / number of elements
    SUM_BY_NONZERO_WEIGHTS = "weighted_sum_by_nonzero_weights"  # sum / number of nonzero weights
    SUM_OVER_NONZERO_WEIGHTS = SUM_BY_NONZERO_WEIGHTS

    @classmethod
    def all(cls) -> tuple[str, ...]:
        return (cls.NONE, cls.SUM, cls.MEAN, cls.SUM_OVER_BATCH_SIZE, cls.SUM_OVER_NONZERO_WEIGHTS,
                cls.SUM_BY_NONZERO_WEIGHTS)

    @classmethod
    def validate(cls, key: str) -> None:
        if key not in cls.all():
            raise ValueError(f"Invalid Reduction Key {key}. Key should be one of {cls.all()}.")


# ---------------------------------------------------------------------------------------------
# Collections
# ---------------------------------------------------------------------------------------------
def add_loss(loss: Any, loss_collection: Optional[str] = GraphKeys.LOSSES) -> None:
    """Adds `loss` to `loss_collection` (nothing when the collection is None)."""
    if loss_collection:
        add_to_collection(loss_collection, loss)


def get_losses(scope: Optional[str] = None, loss_collection: str = GraphKeys.LOSSES) -> list[Any]:
    """The losses in `loss_collection` whose names match the regex `scope`."""
    return get_collection(loss_collection, scope)


def get_regularization_losses(scope: Optional[str] = None) -> list[Any]:
    """The REGULARIZATION_LOSSES collection (filtered by the regex `scope`)."""
    return get_collection(GraphKeys.REGULARIZATION_LOSSES, scope)


def get_regularization_loss(scope: Optional[str] = None, name: str = "total_regularization_loss") -> Any:
    """The sum of the regularization losses, or the constant 0.0 when there are none."""
    losses = get_regularization_losses(scope)
    if losses:
        return add_n(losses, name=name)
    return constant(0.0)


def get_total_loss(add_regularization_losses: bool = True, name: str = "total_loss",
                   scope: Optional[str] = None) -> Any:
    """The sum of the LOSSES collection (plus the regularization losses); ValueError when
    there are no losses at all."""
    losses = get_losses(scope=scope)
    if add_regularization_losses:
        losses = losses + get_regularization_losses(scope)
    if not losses:
        raise ValueError("No losses found in the LOSSES (or REGULARIZATION_LOSSES) collection.")
    return add_n(losses, name=name)


# ---------------------------------------------------------------------------------------------
# Weighting and reduction
# ---------------------------------------------------------------------------------------------
def _check_broadcastable(weights: Any, values: Any) -> None:
    """TF's rule, checked on static shapes: scalar weights, or the values' rank with each
    dimension 1 or equal."""
    w, v = weights.shape, values.shape
    if w.ndims is None or v.ndims is None or w.ndims == 0:
        return
    ok = w.ndims == v.ndims and all(
        a is None or b is None or a == 1 or a == b for a, b in zip(w.as_list(), v.as_list()))
    if not ok:
        raise ValueError(f"weights can not be broadcast to values. values.rank={v.ndims}. weights.rank="
                         f"{w.ndims}. values.shape={v}. weights.shape={w}.")


def _num_present(losses: Any, weights: Any) -> Any:
    """The number of elements whose (broadcast) weight is nonzero."""
    with name_scope(None, "num_present", (losses, weights)) as scope:
        present = cast(not_equal(weights, 0.0), _dtypes.float32)
        present = present * ones_like(losses)  # broadcast to the losses' shape
        return reduce_sum(present, name=scope)


def compute_weighted_loss(losses: Any, weights: Any = 1.0, scope: Optional[str] = None,
                          loss_collection: Optional[str] = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """Multiplies `losses` by `weights` and reduces them as `reduction` says (see Reduction);
    the result has the losses' dtype and is added to `loss_collection`."""
    Reduction.validate(reduction)
    with name_scope(scope, "weighted_loss", (losses, weights)):
        losses = convert_to_tensor(losses)
        input_dtype = losses.dtype.base_dtype
        losses = cast(losses, _dtypes.float32)
        weights = cast(convert_to_tensor(weights), _dtypes.float32)
        _check_broadcastable(weights, losses)
        weighted = multiply(losses, weights)
        if reduction == Reduction.NONE:
            loss = weighted
        else:
            loss = reduce_sum(weighted)
            if reduction == Reduction.MEAN:
                denominator = reduce_sum(ones_like(losses) * weights)
            elif reduction == Reduction.SUM_BY_NONZERO_WEIGHTS:
                denominator = _num_present(losses, weights)
            elif reduction == Reduction.SUM_OVER_BATCH_SIZE:
                denominator = cast(size(losses), _dtypes.float32)
            else:
                denominator = None
            if denominator is not None:
                loss = div_no_nan(loss, denominator, name="value")  # 0 when nothing counts
        loss = cast(loss, input_dtype)
        add_loss(loss, loss_collection)
        return loss


# ---------------------------------------------------------------------------------------------
# Losses
# ---------------------------------------------------------------------------------------------
def _require(labels: Any, predictions: Any, what: str = "predictions") -> None:
    if labels is None:
        raise ValueError("labels must not be None.")
    if predictions is None:
        raise ValueError(f"{what} must not be None.")


def _float_pair(labels: Any, predictions: Any) -> tuple[Any, Any]:
    predictions = cast(predictions, _dtypes.float32)
    labels = cast(labels, _dtypes.float32)
    if not predictions.shape.is_compatible_with(labels.shape):
        raise ValueError(f"Shapes {predictions.shape} and {labels.shape} are incompatible")
    return labels, predictions


def _pairwise_loss(default_name: str, labels: Any, predictions: Any, weights: Any, scope: Optional[str],
                   loss_collection: Optional[str], reduction: str, fn: Any, what: str = "predictions") -> Any:
    """`fn(labels, predictions)` element-wise on float32 copies of both, then weighted and
    reduced by compute_weighted_loss."""
    _require(labels, predictions, what)
    with name_scope(scope, default_name, (predictions, labels, weights)) as scope:
        labels, predictions = _float_pair(labels, predictions)
        return compute_weighted_loss(fn(labels, predictions), weights, scope, loss_collection,
                                     reduction=reduction)


def mean_squared_error(labels: Any, predictions: Any, weights: Any = 1.0, scope: Optional[str] = None,
                       loss_collection: Optional[str] = GraphKeys.LOSSES,
                       reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """Weighted (predictions - labels) ** 2, reduced (float32)."""
    return _pairwise_loss("mean_squared_error", labels, predictions, weights, scope, loss_collection, reduction,
                          lambda z, p: squared_difference(p, z))


def absolute_difference(labels: Any, predictions: Any, weights: Any = 1.0, scope: Optional[str] = None,
                        loss_collection: Optional[str] = GraphKeys.LOSSES,
                        reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """Weighted |predictions - labels|, reduced (float32)."""
    return _pairwise_loss("absolute_difference", labels, predictions, weights, scope, loss_collection, reduction,
                          lambda z, p: abs(subtract(p, z)))


def huber_loss(labels: Any, predictions: Any, weights: Any = 1.0, delta: float = 1.0,
               scope: Optional[str] = None, loss_collection: Optional[str] = GraphKeys.LOSSES,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """0.5 * e ** 2 for |e| <= delta, else 0.5 * delta ** 2 + delta * (|e| - delta), where
    e = predictions - labels; weighted and reduced."""
    def huber(z: Any, p: Any) -> Any:
        abs_error = abs(subtract(p, z))
        quadratic = minimum(abs_error, delta)
        return 0.5 * quadratic * quadratic + delta * subtract(abs_error, quadratic)

    return _pairwise_loss("huber_loss", labels, predictions, weights, scope, loss_collection, reduction, huber)


def log_loss(labels: Any, predictions: Any, weights: Any = 1.0, epsilon: float = 1e-7,
             scope: Optional[str] = None, loss_collection: Optional[str] = GraphKeys.LOSSES,
             reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """-labels * log(predictions + eps) - (1 - labels) * log(1 - predictions + eps)."""
    return _pairwise_loss("log_loss", labels, predictions, weights, scope, loss_collection, reduction,
                          lambda z, p: -z * log(p + epsilon) - (1 - z) * log(1 - p + epsilon))


def hinge_loss(labels: Any, logits: Any, weights: Any = 1.0, scope: Optional[str] = None,
               loss_collection: Optional[str] = GraphKeys.LOSSES,
               reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """max(0, 1 - (2 * labels - 1) * logits) for 0/1 labels."""
    def hinge(z: Any, x: Any) -> Any:
        ones = ones_like(z)
        return relu(subtract(ones, multiply(subtract(2 * z, ones), x)))

    return _pairwise_loss("hinge_loss", labels, logits, weights, scope, loss_collection, reduction, hinge,
                          what="logits")


def softmax_cross_entropy(onehot_labels: Any, logits: Any, weights: Any = 1.0, label_smoothing: float = 0,
                          scope: Optional[str] = None, loss_collection: Optional[str] = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """Softmax cross entropy of one-hot labels, weighted per example and reduced. With
    label_smoothing s the labels become labels * (1 - s) + s / num_classes."""
    _require(onehot_labels, logits, "logits")
    with name_scope(scope, "softmax_cross_entropy_loss", (logits, onehot_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        onehot_labels = cast(onehot_labels, logits.dtype.base_dtype)
        if not logits.shape.is_compatible_with(onehot_labels.shape):
            raise ValueError(f"Shapes {logits.shape} and {onehot_labels.shape} are incompatible")
        if label_smoothing > 0:
            num_classes = cast(shape(onehot_labels)[-1], logits.dtype.base_dtype)
            onehot_labels = onehot_labels * (1.0 - label_smoothing) + label_smoothing / num_classes
        onehot_labels = stop_gradient(onehot_labels, name="labels_stop_gradient")
        losses = softmax_cross_entropy_with_logits_v2(labels=onehot_labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def _squeeze_labels_and_weights(labels: Any, logits: Any, weights: Any) -> tuple[Any, Any]:
    """Class-id labels of shape [batch, 1] (and weights one rank above the labels) lose their
    trailing size-1 dimension, as TF's remove_squeezable_dimensions does."""
    labels = convert_to_tensor(labels)
    lr, gr = labels.shape.ndims, logits.shape.ndims
    if lr is not None and gr is not None and lr == gr and labels.shape.dims[-1].value in (1, None):
        labels = squeeze(labels, [-1])
    weights = convert_to_tensor(weights)
    lr, wr = labels.shape.ndims, weights.shape.ndims
    if lr is not None and wr is not None and wr - lr == 1:
        weights = squeeze(weights, [-1])
    return labels, weights


def sparse_softmax_cross_entropy(labels: Any, logits: Any, weights: Any = 1.0, scope: Optional[str] = None,
                                 loss_collection: Optional[str] = GraphKeys.LOSSES,
                                 reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """Softmax cross entropy of integer class labels ([batch] or [batch, 1]), weighted per
    example and reduced."""
    _require(labels, logits, "logits")
    with name_scope(scope, "sparse_softmax_cross_entropy_loss", (logits, labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        labels, weights = _squeeze_labels_and_weights(labels, logits, weights)
        losses = sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)


def sigmoid_cross_entropy(multi_class_labels: Any, logits: Any, weights: Any = 1.0, label_smoothing: float = 0,
                          scope: Optional[str] = None, loss_collection: Optional[str] = GraphKeys.LOSSES,
                          reduction: str = Reduction.SUM_BY_NONZERO_WEIGHTS) -> Any:
    """Element-wise sigmoid cross entropy of 0/1 labels, weighted and reduced. With
    label_smoothing s the labels become labels * (1 - s) + 0.5 * s."""
    _require(multi_class_labels, logits, "logits")
    with name_scope(scope, "sigmoid_cross_entropy_loss", (logits, multi_class_labels, weights)) as scope:
        logits = convert_to_tensor(logits)
        labels = cast(multi_class_labels, logits.dtype.base_dtype)
        if not logits.shape.is_compatible_with(labels.shape):
            raise ValueError(f"Shapes {logits.shape} and {labels.shape} are incompatible")
        if label_smoothing > 0:
            labels = labels * (1 - label_smoothing) + 0.5 * label_smoothing
        losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="xentropy")
        return compute_weighted_loss(losses, weights, scope, loss_collection, reduction=reduction)
