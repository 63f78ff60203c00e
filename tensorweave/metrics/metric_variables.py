"""The local accumulators every streaming metric keeps (TF's metric_variable)."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework.graph import GraphKeys, add_to_collections
from tensorweave.ops.array import zeros
from tensorweave.ops.state import VariableV1

__all__ = ["metric_variable", "add_to_metric_collections"]


def metric_variable(shape: Any, dtype: Any, validate_shape: bool = True, name: Optional[str] = None) -> Any:
    """A zero-initialized, non-trainable variable in LOCAL_VARIABLES and METRIC_VARIABLES: metrics
    are reset by tf.local_variables_initializer and never saved with the model."""
    return VariableV1(lambda: zeros(shape, dtype), trainable=False,
                      collections=[GraphKeys.LOCAL_VARIABLES, GraphKeys.METRIC_VARIABLES],
                      validate_shape=validate_shape, name=name)


def add_to_metric_collections(collections: Any, value: Any) -> Any:
    """Adds `value` to each named collection (none when `collections` is empty) and returns it."""
    if collections:
        add_to_collections(collections, value)
    return value
