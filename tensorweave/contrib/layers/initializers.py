"""`tf.contrib.layers` initializers: xavier_initializer and contrib's own
variance_scaling_initializer (factor / mode / uniform, unlike tf.variance_scaling_initializer:
its normal draws are truncated with stddev sqrt(1.3 * factor / n), no 0.8796 correction)."""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_shape import as_shape
from tensorweave.ops.random import random_uniform, truncated_normal

__all__ = ["xavier_initializer", "xavier_initializer_conv2d", "variance_scaling_initializer"]

_MODES = ("FAN_IN", "FAN_OUT", "FAN_AVG")


def xavier_initializer(uniform: bool = True, seed: Optional[int] = None,
                       dtype: Any = _dtypes.float32) -> Callable:
    """Glorot & Bengio's initializer: variance 1 / average(fan_in, fan_out)."""
    return variance_scaling_initializer(factor=1.0, mode="FAN_AVG", uniform=uniform, seed=seed, dtype=dtype)


xavier_initializer_conv2d = xavier_initializer


def _fans(shape: list[int]) -> tuple[float, float]:
    if not shape:
        return 1.0, 1.0
    fan_in = float(shape[-2]) if len(shape) > 1 else float(shape[-1])
    fan_out = float(shape[-1])
    for dim in shape[:-2]:  # a convolution's receptive field
        fan_in *= dim
        fan_out *= dim
    return fan_in, fan_out


def variance_scaling_initializer(factor: float = 2.0, mode: str = "FAN_IN", uniform: bool = False,
                                 seed: Optional[int] = None, dtype: Any = _dtypes.float32) -> Callable:
    """Draws with variance factor / n, n the fan-in, fan-out or their average (He et al. with the
    defaults): uniform in [-sqrt(3 factor / n), sqrt(3 factor / n)], or a truncated normal with
    stddev sqrt(1.3 factor / n)."""
    default_dtype = _dtypes.as_dtype(dtype)
    if not default_dtype.is_floating:
        raise TypeError("Cannot create initializer for non-floating point type.")
    if mode not in _MODES:
        raise TypeError(f"Unknown mode {mode} [FAN_IN, FAN_OUT, FAN_AVG]")

    def _initializer(shape: Any, dtype: Any = default_dtype, partition_info: Any = None) -> Any:
        dtype = _dtypes.as_dtype(dtype if dtype is not None else default_dtype).base_dtype
        if not dtype.is_floating:
            raise TypeError("Cannot create initializer for non-floating point type.")
        dims: list[int] = as_shape(shape).as_list()  # type: ignore[assignment]  # fully defined here
        fan_in, fan_out = _fans(dims)
        n = {"FAN_IN": fan_in, "FAN_OUT": fan_out, "FAN_AVG": (fan_in + fan_out) / 2.0}[mode]
        if uniform:
            limit = math.sqrt(3.0 * factor / n)
            return random_uniform(dims, -limit, limit, dtype, seed=seed)
        return truncated_normal(dims, 0.0, math.sqrt(1.3 * factor / n), dtype, seed=seed)

    return _initializer
