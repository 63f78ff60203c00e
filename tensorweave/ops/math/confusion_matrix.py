"""tf.math.confusion_matrix and the label/prediction rank matching it (and tf.metrics) use,
composed from ops: the matrix is one ScatterNd, which sums the weights of repeated
(label, prediction) pairs as TF's sparse-add does.

Not imported by the math family's __init__: it builds a tf.cond for unknown ranks, and
control_flow/cond.py imports the math package.
"""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_util import get_static_value
from tensorweave.ops.array.creation import ones_like
from tensorweave.ops.array.gather_scatter_nd import scatter_nd
from tensorweave.ops.array.joining import stack
from tensorweave.ops.array.shaping import identity, rank, squeeze
from tensorweave.ops.control_flow.cond import cond
from tensorweave.ops.debugging.check_ops import assert_less, assert_non_negative
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.elementwise import equal, maximum
from tensorweave.ops.math.reduction import reduce_max

__all__ = ["confusion_matrix", "remove_squeezable_dimensions"]


def remove_squeezable_dimensions(labels: Any, predictions: Any, expected_rank_diff: int = 0,
                                 name: Optional[str] = None) -> tuple[Any, Any]:
    """Drops a trailing size-1 dimension from `predictions` or `labels` when their ranks differ
    by one more (or one less) than `expected_rank_diff`; static ranks decide at build time,
    unknown ones through a tf.cond."""
    with name_scope(name, "remove_squeezable_dimensions", [labels, predictions]):
        predictions = convert_to_tensor(predictions)
        labels = convert_to_tensor(labels)
        p_shape, l_shape = predictions.shape, labels.shape
        if p_shape.ndims is not None and l_shape.ndims is not None:
            diff = p_shape.ndims - l_shape.ndims
            if diff == expected_rank_diff + 1 and p_shape.dims[-1].is_compatible_with(1):
                predictions = squeeze(predictions, [-1])
            elif diff == expected_rank_diff - 1 and l_shape.dims[-1].is_compatible_with(1):
                labels = squeeze(labels, [-1])
            return labels, predictions
        rank_diff = rank(predictions) - rank(labels)
        if p_shape.ndims is None or p_shape.dims[-1].is_compatible_with(1):
            predictions = cond(equal(expected_rank_diff + 1, rank_diff),
                               lambda: squeeze(predictions, [-1]), lambda: predictions)
        if l_shape.ndims is None or l_shape.dims[-1].is_compatible_with(1):
            labels = cond(equal(expected_rank_diff - 1, rank_diff),
                          lambda: squeeze(labels, [-1]), lambda: labels)
        return labels, predictions


def confusion_matrix(labels: Any, predictions: Any, num_classes: Any = None, weights: Any = None,
                     dtype: Any = _dtypes.int32, name: Optional[str] = None) -> Any:
    """The [num_classes, num_classes] matrix whose (i, j) entry sums the weights (1 each by
    default) of the examples with label i and prediction j. Without num_classes it is one more
    than the largest label or prediction. Negative or too large ids fail at run time."""
    with name_scope(name, "confusion_matrix", (predictions, labels, num_classes, weights)) as scope:
        labels, predictions = convert_to_tensor(labels), convert_to_tensor(predictions)
        # Known ids give a static [n, n] shape, as TF's constant-folding shape inference does.
        known = [get_static_value(t) for t in (labels, predictions)]
        labels, predictions = remove_squeezable_dimensions(
            cast(labels, _dtypes.int64), cast(predictions, _dtypes.int64))
        predictions.shape.assert_is_compatible_with(labels.shape)
        checks = [assert_non_negative(labels, message="`labels` contains negative values"),
                  assert_non_negative(predictions, message="`predictions` contains negative values")]
        with control_dependencies(checks):
            labels, predictions = identity(labels), identity(predictions)
        if num_classes is None:
            if all(v is not None and v.size for v in known):
                num_classes = cast(int(max(v.max() for v in known)) + 1, _dtypes.int64)
            else:
                num_classes = maximum(reduce_max(predictions), reduce_max(labels)) + 1
        else:
            num_classes = cast(num_classes, _dtypes.int64)
            checks = [assert_less(labels, num_classes, message="`labels` out of bound"),
                      assert_less(predictions, num_classes, message="`predictions` out of bound")]
            with control_dependencies(checks):
                labels, predictions = identity(labels), identity(predictions)
        if weights is not None:
            weights = convert_to_tensor(weights, name="weights")
            predictions.shape.assert_is_compatible_with(weights.shape)
            values = cast(weights, dtype)
        else:
            values = ones_like(predictions, dtype=dtype)
        indices = stack([labels, predictions], axis=1)
        return scatter_nd(indices, values, stack([num_classes, num_classes]), name=scope)
