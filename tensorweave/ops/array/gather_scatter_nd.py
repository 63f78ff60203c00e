"""N-dimensional indexing: tf.gather_nd (GatherNd) reads the slices of `params` that rows of
`indices` address; tf.scatter_nd (ScatterNd) adds `updates` into a zero tensor at such
addresses. Each one's gradient is the other (grad.py)."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import host_ints, index_input, invalid, shape_error

__all__ = ["gather_nd", "scatter_nd"]

_NUMBERS = ("float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
            "complex64, complex128")


def _fmt(values: Any) -> str:
    return ",".join(str(int(v)) for v in values)


def _address_rows(indices: Any) -> Any:
    """`indices` as [N, k]: one address of k coordinates per row (k may be 0)."""
    return indices.reshape((math.prod(indices.shape[:-1]), indices.shape[-1]))


def _check_addresses(rows: Any, shape: tuple, what: str) -> None:
    """InvalidArgumentError naming the first row of `rows` ([N, k]) that is not an address in
    the first k dimensions of `shape` (TF's CPU kernels check every index)."""
    if rows.size == 0:
        return
    bad = (rows < 0) | (rows >= np.asarray(shape[:rows.shape[1]], dtype=np.int64))
    if bad.any():
        i = int(np.argmax(bad.any(axis=1)))
        raise invalid(f"indices[{i}] = [{', '.join(str(int(v)) for v in rows[i])}] does not index "
                      f"into {what} [{_fmt(shape)}]")


# -- GatherNd -----------------------------------------------------------------------------------
def _gather_nd_shape(op: Operation) -> list[TensorShape]:
    params, indices = op.inputs[0].shape, op.inputs[1].shape
    if indices.ndims == 0:
        raise shape_error(op, "Shape must be at least rank 1 but is rank 0")
    if indices.ndims is None or indices[-1].value is None or params.ndims is None:
        return [unknown_shape()]
    k = indices[-1].value
    if k > params.ndims:
        raise shape_error(op, f"indices.shape[-1] must be <= params.rank, but saw indices shape: "
                              f"{indices.as_list()} and params shape: {params.as_list()}")
    return [TensorShape(indices.dims[:-1] + params.dims[k:])]


GatherNd = define_op("GatherNd", inputs=["params: Tparams", "indices: Tindices"],
                     outputs=["output: Tparams"], attrs=["Tparams: type", "Tindices: {int32, int64}"],
                     shape_fn=_gather_nd_shape)


@GatherNd.kernel()
def _gather_nd_kernel(ctx: KernelContext) -> Any:
    xp = ctx.xp

    def compute(params: Any, indices: Any) -> Any:
        if indices.ndim == 0:
            raise invalid("indices must be at least a vector")
        k = indices.shape[-1]
        if k > params.ndim:
            raise invalid(f"index innermost dimension length must be <= params rank; saw: {k} vs. "
                          f"{params.ndim}")
        rows = _address_rows(indices)
        _check_addresses(rows, params.shape, "param shape")
        out_shape = indices.shape[:-1] + params.shape[k:]
        if k == 0:  # every (empty) address selects all of params
            return xp.array(xp.broadcast_to(params, (rows.shape[0],) + params.shape)).reshape(out_shape)
        return params[tuple(rows.T)].reshape(out_shape)

    return compute


def gather_nd(params: Any, indices: Any, name: Optional[str] = None, batch_dims: int = 0) -> Any:
    """Gathers the slices of `params` addressed by the innermost dimension of `indices`:
    output[i...] = params[indices[i..., :]], of shape indices.shape[:-1] + params.shape[k:]
    for k = indices.shape[-1]. Addresses outside `params` raise InvalidArgumentError."""
    if batch_dims != 0:
        raise ValueError(f"gather_nd supports batch_dims=0 only, got {batch_dims}")
    return apply_op(GatherNd, name=name, params=params, indices=index_input(indices))


# -- ScatterNd ----------------------------------------------------------------------------------
def _scatter_nd_shape(op: Operation) -> list[TensorShape]:
    indices, updates = op.inputs[0].shape, op.inputs[1].shape
    out = tensor_util.constant_value_as_shape(op.inputs[2])
    if indices.ndims == 0:
        raise shape_error(op, "Shape must be at least rank 1 but is rank 0")
    if indices.ndims is None or indices[-1].value is None or out.ndims is None or updates.ndims is None:
        return [out]
    k = indices[-1].value
    if k > out.ndims:
        raise shape_error(op, f"indices.shape[-1] must be <= shape.rank, got {k} and {out.ndims}")
    expected = TensorShape(indices.dims[:-1] + out.dims[k:])
    if not updates.is_compatible_with(expected):
        raise shape_error(op, f"updates has shape {updates.as_list()}, but indices and shape need "
                              f"{[d.value for d in expected.dims]}")
    return [out]


ScatterNd = define_op("ScatterNd", inputs=["indices: Tindices", "updates: T", "shape: Tindices"],
                      outputs=["output: T"], attrs=[f"T: {{{_NUMBERS}}}", "Tindices: {int32, int64}"],
                      shape_fn=_scatter_nd_shape)


@ScatterNd.kernel()
def _scatter_nd_kernel(ctx: KernelContext) -> Any:
    xp = ctx.xp
    dtype = ctx.output_dtypes[0].as_numpy_dtype

    def compute(indices: Any, updates: Any, shape: Any) -> Any:
        dims = tuple(host_ints(shape))
        if any(d < 0 for d in dims):
            raise invalid(f"shape must be non-negative, got [{_fmt(dims)}]")
        if indices.ndim == 0 or indices.shape[-1] > len(dims):
            raise invalid(f"indices must be at least a vector with innermost length <= rank of shape "
                          f"[{_fmt(dims)}], got indices shape [{_fmt(indices.shape)}]")
        k = indices.shape[-1]
        if updates.shape != indices.shape[:-1] + dims[k:]:
            raise invalid(f"updates has shape [{_fmt(updates.shape)}], but indices shape "
                          f"[{_fmt(indices.shape)}] and shape [{_fmt(dims)}] need "
                          f"[{_fmt(indices.shape[:-1] + dims[k:])}]")
        rows = _address_rows(indices)
        _check_addresses(rows, dims, "shape")
        out = xp.zeros(dims, dtype=dtype)
        if rows.shape[0] and k == 0:  # as TF's kernel: empty addresses name no element
            raise invalid("Indices and updates specified for empty output shape")
        if rows.shape[0]:
            # repeated addresses add up, one after another
            xp.add.at(out, tuple(rows.T), updates.reshape((rows.shape[0],) + dims[k:]))
        return out

    return compute


def scatter_nd(indices: Any, updates: Any, shape: Any, name: Optional[str] = None) -> Any:
    """A tensor of `shape`, zero except where rows of `indices` address slices, which hold the
    sum of the `updates` sent there (updates.shape = indices.shape[:-1] + shape[k:])."""
    return apply_op(ScatterNd, name=name, indices=index_input(indices), updates=updates,
                    shape=index_input(shape))
