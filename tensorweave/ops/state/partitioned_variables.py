"""Partitioners (TF1 tf.fixed_size_partitioner, tf.variable_axis_size_partitioner,
tf.min_max_variable_partitioner) and tf.create_partitioned_variables.

A partitioner is a callable `(shape, dtype) -> [partitions per axis]` that `get_variable` and
`variable_scope(partitioner=)` call once for a new variable; at most one axis may get more than
one partition (white paper 4.7 / OSDI 4.2: a large table split across parameter servers).
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.state import variable_scope as vs

__all__ = ["fixed_size_partitioner", "variable_axis_size_partitioner", "min_max_variable_partitioner",
           "create_partitioned_variables"]

Partitioner = Callable[..., list]


def _element_bytes(dtype: _dtypes.DType, bytes_per_string_element: int) -> int:
    # strings have no fixed size: the caller's estimate stands in for one element
    return bytes_per_string_element if dtype.base_dtype == _dtypes.string else dtype.size


def variable_axis_size_partitioner(max_shard_bytes: int, axis: int = 0, bytes_per_string_element: int = 16,
                                   max_shards: Optional[int] = None) -> Partitioner:
    """A partitioner that splits `axis` into as few shards as keep each under `max_shard_bytes`
    (every slice of the axis its own shard when even one slice is larger), at most `max_shards`."""
    if max_shard_bytes < 1 or bytes_per_string_element < 1:
        raise ValueError("Both max_shard_bytes and bytes_per_string_element must be positive.")
    if max_shards and max_shards < 1:
        raise ValueError("max_shards must be positive.")

    def _partitioner(shape: Any, dtype: Any) -> list:
        if not isinstance(shape, TensorShape):
            raise ValueError(f"shape is not a TensorShape: {shape}")
        if not shape.is_fully_defined():
            raise ValueError(f"shape is not fully defined: {shape}")
        if not isinstance(dtype, _dtypes.DType):
            raise ValueError(f"dtype is not a DType: {dtype}")
        axis_len = shape.dims[axis].value
        bytes_per_slice = 1.0 * (shape.num_elements() / axis_len) * _element_bytes(dtype, bytes_per_string_element)
        slices_per_shard = max(1, math.floor(max_shard_bytes / bytes_per_slice))
        axis_shards = int(math.ceil(1.0 * axis_len / slices_per_shard))
        if max_shards:
            axis_shards = min(max_shards, axis_shards)
        partitions = [1] * shape.ndims
        partitions[axis] = axis_shards
        return partitions

    return _partitioner


def min_max_variable_partitioner(max_partitions: int = 1, axis: int = 0, min_slice_size: int = 256 << 10,
                                 bytes_per_string_element: int = 16) -> Partitioner:
    """A partitioner giving each shard at least `min_slice_size` bytes, in at most
    `max_partitions` shards (and never more shards than the axis has rows)."""

    def _partitioner(shape: Any, dtype: Any) -> list:
        if axis >= len(shape):
            raise ValueError(f"Can not partition variable along axis {axis} when shape is only {shape}")
        total_bytes = shape.num_elements() * _element_bytes(_dtypes.as_dtype(dtype), bytes_per_string_element)
        wanted = int(math.ceil(total_bytes / min_slice_size))
        partitions = [1] * len(shape)
        partitions[axis] = max(1, min(shape.dims[axis].value, max_partitions, wanted))
        return partitions

    return _partitioner


def fixed_size_partitioner(num_shards: int, axis: int = 0) -> Partitioner:
    """A partitioner splitting `axis` into `num_shards` shards (fewer if the axis is shorter)."""

    def _partitioner(shape: Any, **unused_args: Any) -> list:
        partitions = [1] * len(shape)
        partitions[axis] = min(num_shards, shape.dims[axis].value)
        return partitions

    return _partitioner


def create_partitioned_variables(shape: Sequence[int], slicing: Sequence[int], initializer: Any,
                                 dtype: Any = _dtypes.float32, trainable: bool = True,
                                 collections: Optional[Sequence[str]] = None, name: Optional[str] = None,
                                 reuse: Any = None) -> list:
    """The shards of a variable of `shape` split as `slicing` says (deprecated in TF1 in favour of
    get_variable with a partitioner, kept for programs that use it)."""
    if len(shape) != len(slicing):
        raise ValueError(f"The 'shape' and 'slicing' of a partitioned Variable must have the length: "
                         f"shape: {shape}, slicing: {slicing}")
    if len(shape) < 1:
        raise ValueError(f"A partitioned Variable must have rank at least 1: shape: {shape}")
    with vs.variable_scope(name, "PartitionedVariable", reuse=reuse):
        partitioned = vs.get_variable_scope().get_variable(
            None, shape=shape, dtype=dtype, initializer=initializer, trainable=trainable,
            collections=collections, partitioner=lambda **unused: list(slicing))
    return list(partitioned)
