"""`tf.contrib.layers` regularizers: functions weights -> scalar penalty (or None), and
apply_regularization, which sums them into REGULARIZATION_LOSSES."""
from __future__ import annotations

import numbers
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array import constant
from tensorweave.ops.math import abs as _abs, add_n, multiply, reduce_sum
from tensorweave.ops.nn import l2_loss

__all__ = ["l1_regularizer", "l2_regularizer", "l1_l2_regularizer", "sum_regularizer", "apply_regularization"]


def _no_penalty(_: Any) -> None:
    return None


def _checked_scale(scale: Any) -> bool:
    """Validates a scale; False when it disables the regularizer (a scale of 0)."""
    if isinstance(scale, numbers.Integral):
        raise ValueError(f"scale cannot be an integer: {scale}")
    if isinstance(scale, numbers.Real):
        if scale < 0.0:
            raise ValueError(f"Setting a scale less than 0 on a regularizer: {scale:g}")
        if scale == 0.0:
            return False
    return True


def _scaled(scale: Any, scope: Optional[str], default_name: str, penalty: Callable) -> Callable:
    def regularizer(weights: Any, name: Optional[str] = None) -> Any:
        with _graph.name_scope(scope, default_name, [weights]) as name:
            my_scale = convert_to_tensor(scale, dtype=weights.dtype.base_dtype, name="scale")
            return multiply(my_scale, penalty(weights), name=name)
    return regularizer


def l1_regularizer(scale: float, scope: Optional[str] = None) -> Callable:
    """scale * sum(|w|)."""
    if not _checked_scale(scale):
        return _no_penalty
    return _scaled(scale, scope, "l1_regularizer", lambda w: reduce_sum(_abs(w)))


def l2_regularizer(scale: float, scope: Optional[str] = None) -> Callable:
    """scale * sum(w ** 2) / 2 (tf.nn.l2_loss)."""
    if not _checked_scale(scale):
        return _no_penalty
    return _scaled(scale, scope, "l2_regularizer", l2_loss)


def l1_l2_regularizer(scale_l1: float = 1.0, scale_l2: float = 1.0, scope: Optional[str] = None) -> Callable:
    """The sum of an L1 and an L2 regularizer."""
    if isinstance(scale_l1, numbers.Real) and isinstance(scale_l2, numbers.Real):
        if scale_l1 == 0.0 and scale_l2 == 0.0:
            return _no_penalty
    scope = scope or "l1_l2_regularizer"
    if isinstance(scale_l1, numbers.Real) and scale_l1 == 0.0:
        return l2_regularizer(scale_l2, scope)
    if isinstance(scale_l2, numbers.Real) and scale_l2 == 0.0:
        return l1_regularizer(scale_l1, scope)
    return sum_regularizer([l1_regularizer(scale_l1), l2_regularizer(scale_l2)], scope=scope)  # type: ignore


def sum_regularizer(regularizer_list: Sequence[Optional[Callable]], scope: Optional[str] = None
                    ) -> Optional[Callable]:
    """A regularizer adding the penalties of `regularizer_list` (None entries skipped)."""
    regularizers = [r for r in regularizer_list if r is not None]
    if not regularizers:
        return None

    def sum_reg(weights: Any) -> Any:
        with _graph.name_scope(scope, "sum_regularizer", [weights]) as name:
            penalties = [p for p in (r(weights) for r in regularizers) if p is not None]
            return add_n(penalties, name=name) if penalties else None
    return sum_reg


def apply_regularization(regularizer: Callable, weights_list: Optional[Sequence[Any]] = None) -> Any:
    """Sums `regularizer` over `weights_list` (default: the WEIGHTS collection), adds the sum
    to REGULARIZATION_LOSSES and returns it."""
    if not weights_list:
        weights_list = _graph.get_collection(GraphKeys.WEIGHTS)
    if not weights_list:
        raise ValueError("No weights to regularize.")
    with _graph.name_scope("get_regularization_penalty", values=weights_list) as scope:
        penalties = [regularizer(w) for w in weights_list]
        penalties = [p if p is not None else constant(0.0) for p in penalties]
        for p in penalties:
            if p.get_shape().ndims != 0:
                raise ValueError("regularizer must return a scalar Tensor instead of a Tensor with rank "
                                 f"{p.get_shape().ndims}.")
        total = add_n(penalties, name=scope)
        _graph.add_to_collection(GraphKeys.REGULARIZATION_LOSSES, total)
        return total
