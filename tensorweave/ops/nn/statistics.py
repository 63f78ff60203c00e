"""Moments from sufficient statistics (TF1's nn_impl): `tf.nn.sufficient_statistics`,
`tf.nn.normalize_moments` and `tf.nn.weighted_moments` (frequency-weighted mean and variance).

Tier 2: built on other families' wrappers.
"""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.creation import zeros_like
from tensorweave.ops.array.shaping import shape, squeeze
from tensorweave.ops.array.slicing import gather
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.elementwise import add, multiply, reciprocal, square, squared_difference, subtract
from tensorweave.ops.math.reduction import reduce_prod, reduce_sum

__all__ = ["sufficient_statistics", "normalize_moments", "weighted_moments"]


def _keep(keepdims: Any, keep_dims: Any) -> bool:
    if keepdims is not None and keep_dims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    return bool(keepdims if keepdims is not None else keep_dims)


def sufficient_statistics(x: Any, axes: Any, shift: Any = None, keep_dims: Any = None, name: Optional[str] = None,
                          keepdims: Any = None) -> tuple[Any, Any, Any, Any]:
    """(count, sum(x - shift), sum((x - shift) ** 2), shift) over `axes`; the count is a
    constant when those dimensions are known."""
    axes = sorted(set(int(a) for a in axes))
    keep = _keep(keepdims, keep_dims)
    with name_scope(name, "sufficient_statistics", [x, shift]):
        x = convert_to_tensor(x, name="x")
        x_shape = x.shape
        if x_shape.ndims is not None and all(x_shape.dims[d].value is not None for d in axes):
            total = 1
            for d in axes:
                total *= x_shape.dims[d].value
            counts = constant(total, dtype=x.dtype)
        else:
            counts = reduce_prod(gather(cast(shape(x), x.dtype), axes), name="count")
        if shift is not None:
            shift = convert_to_tensor(shift, name="shift")
            m_ss, v_ss = subtract(x, shift), squared_difference(x, shift)
        else:
            m_ss, v_ss = x, square(x)
        m_ss = reduce_sum(m_ss, axes, keepdims=keep, name="mean_ss")
        v_ss = reduce_sum(v_ss, axes, keepdims=keep, name="var_ss")
    return counts, m_ss, v_ss, shift


def normalize_moments(counts: Any, mean_ss: Any, variance_ss: Any, shift: Any,
                      name: Optional[str] = None) -> tuple[Any, Any]:
    """(mean, variance) from sufficient statistics: the variance is E[(x-shift)^2] - E[x-shift]^2."""
    with name_scope(name, "normalize", [counts, mean_ss, variance_ss, shift]):
        divisor = reciprocal(counts, name="divisor")
        if shift is not None:
            shifted_mean = multiply(mean_ss, divisor, name="shifted_mean")
            mean = add(shifted_mean, shift, name="mean")
        else:
            shifted_mean = multiply(mean_ss, divisor, name="mean")
            mean = shifted_mean
        variance = subtract(multiply(variance_ss, divisor), square(shifted_mean), name="variance")
    return mean, variance


def weighted_moments(x: Any, axes: Any, frequency_weights: Any, name: Optional[str] = None, keep_dims: Any = None,
                     keepdims: Any = None) -> tuple[Any, Any]:
    """(mean, variance) of `x` over `axes`, each element counted `frequency_weights` times
    (the weights broadcast against x)."""
    keep = _keep(keepdims, keep_dims)
    with name_scope(name, "weighted_moments", [x, frequency_weights, axes]):
        x = convert_to_tensor(x, name="x")
        weights = convert_to_tensor(frequency_weights, name="frequency_weights")
        half = x.dtype.base_dtype == _dtypes.float16
        if half:
            x = cast(x, _dtypes.float32)
        if weights.dtype != x.dtype:
            weights = cast(weights, x.dtype)
        weighted_sum = reduce_sum(weights * x, axes, name="weighted_input_sum", keepdims=True)
        total_weight = reduce_sum(weights + zeros_like(x), axes, name="sum_of_weights", keepdims=True)
        divisor = reciprocal(total_weight, name="inv_weight_sum")
        mean = multiply(weighted_sum, divisor)
        distsq = reduce_sum(weights * squared_difference(x, mean), axes, name="weighted_distsq", keepdims=True)
        variance = multiply(distsq, divisor)
        if not keep:
            mean, variance = squeeze(mean, axis=axes), squeeze(variance, axis=axes)
        if half:
            mean, variance = cast(mean, _dtypes.float16), cast(variance, _dtypes.float16)
        return mean, variance
