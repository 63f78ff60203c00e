"""Initializers for `tf.get_variable` and `tf.Variable` (TF1 tf.*_initializer), each a callable
`init(shape, dtype=None, partition_info=None) -> Tensor`."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_shape import as_shape
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.creation import ones, zeros
from tensorweave.ops.random.draws import random_normal, random_uniform, truncated_normal

__all__ = ["Initializer", "zeros_initializer", "ones_initializer", "constant_initializer",
           "random_uniform_initializer", "random_normal_initializer", "truncated_normal_initializer",
           "glorot_uniform_initializer", "glorot_normal_initializer", "variance_scaling_initializer",
           "uniform_unit_scaling_initializer"]


def _shape_list(shape: Any) -> list[int]:
    return as_shape(shape).as_list()


class Initializer:
    """Base class: subclasses build the initial value's ops for a shape and dtype."""

    dtype: Optional[_dtypes.DType] = None

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        raise TypeError(f"{type(self).__name__} must define __call__")  # abstract

    def get_config(self) -> dict:
        return {}

    def _dtype(self, dtype: Any) -> _dtypes.DType:
        return _dtypes.as_dtype(dtype if dtype is not None else (self.dtype or _dtypes.float32)).base_dtype


class zeros_initializer(Initializer):  # noqa: N801  (TF's names)
    def __init__(self, dtype: Any = _dtypes.float32) -> None:
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return zeros(_shape_list(shape), self._dtype(dtype))


class ones_initializer(Initializer):  # noqa: N801
    def __init__(self, dtype: Any = _dtypes.float32) -> None:
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return ones(_shape_list(shape), self._dtype(dtype))


class constant_initializer(Initializer):  # noqa: N801
    def __init__(self, value: Any = 0, dtype: Any = _dtypes.float32, verify_shape: bool = False) -> None:
        self.value = value
        self.dtype = _dtypes.as_dtype(dtype)
        self.verify_shape = verify_shape

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        dt = self._dtype(dtype)
        dims = _shape_list(shape)
        value = np.asarray(self.value, dtype=dt.as_numpy_dtype)
        # tf.constant's TF1 rule: fewer values than the shape holds repeat the last one.
        return constant(value, dtype=dt, shape=dims, verify_shape=self.verify_shape)


class random_uniform_initializer(Initializer):  # noqa: N801
    def __init__(self, minval: float = 0, maxval: Optional[float] = None, seed: Optional[int] = None,
                 dtype: Any = _dtypes.float32) -> None:
        self.minval, self.maxval, self.seed = minval, maxval, seed
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        dt = self._dtype(dtype)
        maxval = self.maxval if self.maxval is not None or not dt.is_floating else 1.0
        return random_uniform(_shape_list(shape), self.minval, maxval, dt, seed=self.seed)


class random_normal_initializer(Initializer):  # noqa: N801
    def __init__(self, mean: float = 0.0, stddev: float = 1.0, seed: Optional[int] = None,
                 dtype: Any = _dtypes.float32) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return random_normal(_shape_list(shape), self.mean, self.stddev, self._dtype(dtype), seed=self.seed)


class truncated_normal_initializer(Initializer):  # noqa: N801
    def __init__(self, mean: float = 0.0, stddev: float = 1.0, seed: Optional[int] = None,
                 dtype: Any = _dtypes.float32) -> None:
        self.mean, self.stddev, self.seed = mean, stddev, seed
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        return truncated_normal(_shape_list(shape), self.mean, self.stddev, self._dtype(dtype), seed=self.seed)


def _scale_shape(dims: list[int], partition_info: Any) -> list[int]:
    """The shape whose fans scale an initializer: the full variable's for a shard."""
    return list(partition_info.full_shape) if partition_info is not None else dims


def _fans(shape: list[int]) -> tuple[float, float]:
    if len(shape) < 1:
        return 1.0, 1.0
    if len(shape) == 1:
        return float(shape[0]), float(shape[0])
    if len(shape) == 2:
        return float(shape[0]), float(shape[1])
    receptive = float(np.prod(shape[:-2]))
    return shape[-2] * receptive, shape[-1] * receptive


class variance_scaling_initializer(Initializer):  # noqa: N801
    """Samples with variance `scale / n`, n being fan_in, fan_out or their average."""

    def __init__(self, scale: float = 1.0, mode: str = "fan_in", distribution: str = "truncated_normal",
                 seed: Optional[int] = None, dtype: Any = _dtypes.float32) -> None:
        if scale <= 0.0:
            raise ValueError("`scale` must be positive float.")
        if mode not in ("fan_in", "fan_out", "fan_avg"):
            raise ValueError(f"Invalid `mode` argument: {mode}")
        distribution = distribution.lower()
        if distribution == "normal":
            distribution = "truncated_normal"
        if distribution not in ("uniform", "truncated_normal", "untruncated_normal"):
            raise ValueError(f"Invalid `distribution` argument: {distribution}")
        self.scale, self.mode, self.distribution, self.seed = scale, mode, distribution, seed
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        dims = _shape_list(shape)
        dt = self._dtype(dtype)
        # a shard of a partitioned variable is scaled as the whole variable is
        fan_in, fan_out = _fans(_scale_shape(dims, partition_info))
        n = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2.0}[self.mode]
        scale = self.scale / max(1.0, n)
        if self.distribution == "truncated_normal":
            stddev = math.sqrt(scale) / 0.87962566103423978  # std of a unit normal truncated at 2
            return truncated_normal(dims, 0.0, stddev, dt, seed=self.seed)
        if self.distribution == "untruncated_normal":
            return random_normal(dims, 0.0, math.sqrt(scale), dt, seed=self.seed)
        limit = math.sqrt(3.0 * scale)
        return random_uniform(dims, -limit, limit, dt, seed=self.seed)


class glorot_uniform_initializer(variance_scaling_initializer):  # noqa: N801
    def __init__(self, seed: Optional[int] = None, dtype: Any = _dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", "uniform", seed, dtype)


class glorot_normal_initializer(variance_scaling_initializer):  # noqa: N801
    def __init__(self, seed: Optional[int] = None, dtype: Any = _dtypes.float32) -> None:
        super().__init__(1.0, "fan_avg", "truncated_normal", seed, dtype)


class uniform_unit_scaling_initializer(Initializer):  # noqa: N801
    def __init__(self, factor: float = 1.0, seed: Optional[int] = None, dtype: Any = _dtypes.float32) -> None:
        self.factor, self.seed = factor, seed
        self.dtype = _dtypes.as_dtype(dtype)

    def __call__(self, shape: Any, dtype: Any = None, partition_info: Any = None) -> Any:
        dims = _shape_list(shape)
        scale_dims = _scale_shape(dims, partition_info)
        # TF's estimate: the product of every dimension but the last (1 for a vector)
        input_size = float(np.prod(scale_dims[:-1])) if len(scale_dims) > 1 else 1.0
        limit = math.sqrt(3.0 / max(1.0, input_size)) * self.factor
        return random_uniform(dims, -limit, limit, self._dtype(dtype), seed=self.seed)
