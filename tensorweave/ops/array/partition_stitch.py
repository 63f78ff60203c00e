"""DynamicPartition, DynamicStitch and ParallelDynamicStitch: how a sharded embedding lookup
routes ids to the shard that owns them and merges the rows back (OSDI 4.2, Figure 4).

`dynamic_partition(data, partitions, n)` splits the rows of `data` into n tensors by the
partition number of each row; `dynamic_stitch(indices, data)` is its inverse, writing the rows
of each data[i] to the output positions indices[i] (a later write to the same position wins).
The gradients are in grad.py.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import fmt_shape, invalid, shape_error

__all__ = ["dynamic_partition", "dynamic_stitch"]  # parallel_dynamic_stitch: not in TF1's namespace


def _dims(shape: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


# ---------------------------------------------------------------------------------------------
# DynamicPartition
# ---------------------------------------------------------------------------------------------
def _partition_shape(op: Operation) -> list[TensorShape]:
    data, parts = op.inputs[0].shape, op.inputs[1].shape
    n = op._get_attr("num_partitions")
    if data.ndims is None or parts.ndims is None:
        return [unknown_shape()] * n
    if data.ndims < parts.ndims:
        raise shape_error(op, f"Shape must be at least rank {parts.ndims} but is rank {data.ndims}")
    for d, p in zip(data.dims[:parts.ndims], parts.dims):
        if d is not None and p is not None and d != p:
            raise shape_error(op, f"Dimensions must be equal, but are {d} and {p}")
    return [TensorShape([None] + data.dims[parts.ndims:])] * n


DynamicPartition = define_op(
    "DynamicPartition", inputs=["data: T", "partitions: int32"], outputs=["outputs: num_partitions * T"],
    attrs=["num_partitions: int >= 1", "T: type"], shape_fn=_partition_shape)

# Up to this many partitions one boolean mask per partition is cheaper than a stable sort.
_FEW_PARTITIONS = 8


@DynamicPartition.kernel()
def _dynamic_partition_kernel(ctx: KernelContext) -> Callable:
    n = ctx.attr("num_partitions")

    def compute(data: Any, partitions: Any) -> Any:
        k = partitions.ndim
        if data.shape[:k] != partitions.shape:
            raise invalid(f"data.shape must start with partitions.shape, got data.shape = "
                           f"{_dims(data.shape)}, partitions.shape = {_dims(partitions.shape)}")
        flat_p = partitions.reshape(-1)
        flat_d = data.reshape((-1,) + data.shape[k:])
        if flat_p.size:
            bad = (flat_p < 0) | (flat_p >= n)
            if bad.any():
                i = int(np.argmax(bad))
                where = ",".join(str(int(j)) for j in np.unravel_index(i, partitions.shape)) if k else ""
                raise invalid(f"partitions{'[' + where + ']' if k else ''} = {int(flat_p[i])} is not "
                               f"in [0, {n})")
        if n <= _FEW_PARTITIONS:
            return [flat_d[flat_p == i] for i in range(n)]
        order = np.argsort(flat_p, kind="stable")
        ends = np.cumsum(np.bincount(flat_p, minlength=n))
        return np.split(flat_d[order], ends[:-1])

    return compute


def dynamic_partition(data: Any, partitions: Any, num_partitions: int, name: Optional[str] = None) -> Any:
    """Splits `data` into `num_partitions` tensors: output i holds the slices data[j] with
    partitions[j] == i, in their original order."""
    if isinstance(num_partitions, int) and num_partitions < 1:  # the attr's minimum, checked early
        raise ValueError(f"Attr 'num_partitions' of 'DynamicPartition' Op passed {num_partitions} less "
                         f"than minimum 1.")
    return apply_op(DynamicPartition, name=name, data=data, partitions=partitions,
                    num_partitions=num_partitions)


# ---------------------------------------------------------------------------------------------
# DynamicStitch, ParallelDynamicStitch
# ---------------------------------------------------------------------------------------------
def _stitch_shape(op: Operation) -> list[TensorShape]:
    n = op._get_attr("N")
    indices, data = op.inputs[:n], op.inputs[n:]
    element = unknown_shape()
    largest = -1
    all_constant = True
    for i, (idx, d) in enumerate(zip(indices, data)):
        ishape, dshape = idx.shape, d.shape
        if ishape.ndims is not None and dshape.ndims is not None:
            if dshape.ndims < ishape.ndims:
                raise shape_error(op, f"Shape must be at least rank {ishape.ndims} but is rank {dshape.ndims}")
            for a, b in zip(ishape.dims, dshape.dims[:ishape.ndims]):
                if a is not None and b is not None and a != b:
                    raise shape_error(op, f"Dimensions must be equal, but are {a} and {b}")
            extra = TensorShape(dshape.dims[ishape.ndims:])
            if element.ndims is not None and element.ndims != extra.ndims:
                raise shape_error(op, f"Shapes must be equal rank, but are {element.ndims} and {extra.ndims}")
            try:
                element = element.merge_with(extra)
            except ValueError:
                raise shape_error(op, f"Incompatible element shapes {fmt_shape(element)} and "
                                      f"{fmt_shape(extra)} of data[{i}]") from None
        value = tensor_util.constant_value(idx)
        if value is None:
            all_constant = False
        elif np.size(value):
            largest = max(largest, int(np.max(value)))
    if element.ndims is None:
        return [unknown_shape()]
    return [TensorShape([largest + 1 if all_constant else None] + element.dims)]


_STITCH_SIGNATURE = dict(inputs=["indices: N * int32", "data: N * T"], outputs=["merged: T"],
                         attrs=["N: int >= 1", "T: type"], shape_fn=_stitch_shape)
DynamicStitch = define_op("DynamicStitch", **_STITCH_SIGNATURE)
# TF's parallel variant may apply duplicate indices in any order; this one is the same kernel.
ParallelDynamicStitch = define_op("ParallelDynamicStitch", **_STITCH_SIGNATURE)


def _stitch_kernel(ctx: KernelContext) -> Callable:
    n = ctx.attr("N")
    np_t = ctx.output_dtypes[0].as_numpy_dtype
    fill = b"" if np.dtype(np_t) == object else 0  # rows no index names stay zero / empty

    def compute(*args: Any) -> Any:
        indices, data = args[:n], args[n:]
        largest = -1
        for i, (idx, d) in enumerate(zip(indices, data)):
            if d.shape[:idx.ndim] != idx.shape:
                raise invalid(f"data[{i}].shape = {_dims(d.shape)} does not start with indices[{i}].shape "
                               f"= {_dims(idx.shape)}")
            if idx.size:
                largest = max(largest, int(idx.max()))
        element = data[0].shape[indices[0].ndim:]
        out = np.full((largest + 1,) + element, fill, dtype=np_t)
        for i, (idx, d) in enumerate(zip(indices, data)):
            if d.shape[idx.ndim:] != element:
                raise invalid(f"Need data[{i}].shape[{idx.ndim}:] = data[0].shape[{indices[0].ndim}:], got "
                               f"data[{i}].shape = {_dims(d.shape)}, data[0].shape = {_dims(data[0].shape)}")
            if not idx.size:
                continue
            flat = idx.reshape(-1)
            if flat.min() < 0:
                raise invalid(f"indices[{int(np.argmax(flat < 0))}] is out of range")
            out[flat] = d.reshape((-1,) + element)  # NumPy assigns in order: later writes win
        return out

    return compute


DynamicStitch.kernel()(_stitch_kernel)
ParallelDynamicStitch.kernel()(_stitch_kernel)


def _check_lists(indices: Any, data: Any, op_name: str) -> tuple[list, list]:
    if isinstance(indices, Tensor) or isinstance(data, Tensor):
        raise TypeError(f"Expected list for 'indices' and 'data' arguments to '{op_name}' Op.")
    indices, data = list(indices), list(data)
    if len(indices) != len(data):
        raise ValueError(f"List argument 'data' to '{op_name}' Op with length {len(data)} must match "
                         f"length {len(indices)} of argument 'indices'.")
    return indices, data


def dynamic_stitch(indices: Any, data: Any, name: Optional[str] = None) -> Any:
    """merged[indices[i][j]] = data[i][j]; the output has max(indices) + 1 rows."""
    indices, data = _check_lists(indices, data, "DynamicStitch")
    return apply_op(DynamicStitch, name=name, indices=indices, data=data)


def parallel_dynamic_stitch(indices: Any, data: Any, name: Optional[str] = None) -> Any:
    """dynamic_stitch whose result is unspecified where an index repeats (TF's parallel kernel)."""
    indices, data = _check_lists(indices, data, "ParallelDynamicStitch")
    return apply_op(ParallelDynamicStitch, name=name, indices=indices, data=data)
