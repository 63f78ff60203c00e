"""Static evaluation helpers for shape functions and wrappers: `constant_value` folds a tensor
to a NumPy value at graph-construction time when it can (Const, and ops that register a
`constant_value` rule such as Shape, Pack, Cast), else returns None."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework.graph import Tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape


def constant_value(tensor: Any, partial: bool = False) -> Optional[np.ndarray]:
    if not isinstance(tensor, Tensor):
        return np.asarray(tensor)
    rule = tensor.op.op_def.registration.constant_value
    if rule is None:
        return None
    try:
        return rule(tensor)
    except (ValueError, TypeError, IndexError):
        return None


def constant_value_as_shape(tensor: Tensor) -> TensorShape:
    """A shape tensor (e.g. Reshape's `shape` input) as a possibly-partial TensorShape."""
    value = constant_value(tensor)
    if value is not None:
        return TensorShape([None if d < 0 else int(d) for d in value.reshape(-1)])
    rule = tensor.op.op_def.registration.partial_shape_value
    if rule is not None:
        return rule(tensor)
    length = tensor.shape[0].value if tensor.shape.ndims == 1 else None
    return unknown_shape(length)


def make_ndarray(value: Any) -> np.ndarray:
    return np.asarray(value)
