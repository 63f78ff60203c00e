"""Weight handling shared by the metrics: matching a weights tensor's rank to the predictions'
and TF's broadcast rule (scalar weights, or the values' rank with each dimension 1 or equal),
checked statically where shapes are known and by an Assert at run time where they are not."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework.graph import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array import expand_dims, ones_like, rank, shape, squeeze
from tensorweave.ops.control_flow import no_op
from tensorweave.ops.control_flow.cond import cond
from tensorweave.ops.debugging import Assert
from tensorweave.ops.math import equal, logical_or, multiply, reduce_all
from tensorweave.ops.math.confusion_matrix import remove_squeezable_dimensions as _squeeze_pair

__all__ = ["assert_broadcastable", "broadcast_weights", "remove_squeezable_dimensions"]

_MESSAGE = "weights can not be broadcast to values."


def remove_squeezable_dimensions(predictions: Any, labels: Any, weights: Any) -> tuple[Any, Any, Any]:
    """Squeezes the trailing size-1 dimension off predictions or labels when their ranks differ
    by one, then squeezes or expands the weights' last dimension to the predictions' rank
    (scalar weights stay scalar). Unknown ranks are resolved by tf.cond at run time."""
    predictions = convert_to_tensor(predictions)
    if labels is not None:
        labels, predictions = _squeeze_pair(labels, predictions)
        predictions.shape.assert_is_compatible_with(labels.shape)
    if weights is None:
        return predictions, labels, None
    weights = convert_to_tensor(weights)
    w_rank, p_rank = weights.shape.ndims, predictions.shape.ndims
    if w_rank == 0:
        return predictions, labels, weights
    if w_rank is not None and p_rank is not None:
        if w_rank - p_rank == 1:
            weights = squeeze(weights, [-1])
        elif p_rank - w_rank == 1:
            weights = expand_dims(weights, -1)
        return predictions, labels, weights
    rank_diff = rank(weights) - rank(predictions)
    w = weights
    can_squeeze = w_rank is None or w.shape.dims[-1].is_compatible_with(1)

    def adjust() -> Any:
        return cond(equal(rank_diff, 1), (lambda: squeeze(w, [-1])) if can_squeeze else (lambda: w),
                    lambda: cond(equal(rank_diff, -1), lambda: expand_dims(w, -1), lambda: w))

    weights = cond(equal(rank(w), 0), lambda: w, adjust)
    return predictions, labels, weights


def assert_broadcastable(weights: Any, values: Any) -> Any:
    """An op checking TF's broadcast rule; raises ValueError at build time when static shapes
    already break it (no op is needed when they satisfy it)."""
    with name_scope(None, "assert_broadcastable", (weights, values)) as scope:
        weights, values = convert_to_tensor(weights, name="weights"), convert_to_tensor(values, name="values")
        w_shape, v_shape = weights.shape, values.shape
        if w_shape.ndims == 0:
            return no_op(name="static_scalar_check_success")
        if w_shape.ndims is not None and v_shape.ndims is not None:
            if w_shape.ndims != v_shape.ndims:
                raise ValueError(f"{_MESSAGE} values.rank={v_shape.ndims}. weights.rank={w_shape.ndims}. "
                                 f"values.shape={v_shape}. weights.shape={w_shape}.")
            if w_shape.is_fully_defined() and v_shape.is_fully_defined():
                for w_dim, v_dim in zip(w_shape.as_list(), v_shape.as_list()):
                    if w_dim not in (1, v_dim):
                        raise ValueError(f"{_MESSAGE} values.shape={v_shape}. weights.shape={w_shape}.")
                return no_op(name="static_dims_check_success")
        w_dyn, v_dyn = shape(weights), shape(values)
        same_rank = equal(rank(weights), rank(values))
        ok = logical_or(equal(rank(weights), 0), cond(
            same_rank, lambda: reduce_all(logical_or(equal(w_dyn, 1), equal(w_dyn, v_dyn))),
            lambda: same_rank))
        return Assert(ok, [_MESSAGE, "weights.shape=", w_dyn, "values.shape=", v_dyn], name=scope)


def broadcast_weights(weights: Any, values: Any, name: Optional[str] = None) -> Any:
    """`weights` broadcast to the shape of `values` (checked by assert_broadcastable)."""
    with name_scope(name, "broadcast_weights", (weights, values)) as scope:
        values = convert_to_tensor(values, name="values")
        weights = convert_to_tensor(weights, dtype=values.dtype.base_dtype, name="weights")
        if (weights.shape.is_fully_defined() and values.shape.is_fully_defined()
                and weights.shape == values.shape):
            return weights
        with control_dependencies([assert_broadcastable(weights, values)]):
            return multiply(weights, ones_like(values), name=scope)
