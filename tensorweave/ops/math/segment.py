"""Segment reductions (SegmentSum/Mean/Max/Min/Prod on sorted ids, UnsortedSegmentMax/Min/Prod),
Unique / UniqueWithCounts, and the conversion of `tf.IndexedSlices` to a dense tensor.

These are the pieces sparse training is built from (OSDI 4.2): optimizers deduplicate the rows
of an IndexedSlices gradient with `unique` and `unsorted_segment_sum`, and a sparse gradient
that meets a dense one is densified with `unsorted_segment_sum(values, indices, rows)`. Their
gradients are in grad.py.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import register_tensor_conversion_function
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import quiet_numpy_warnings
from tensorweave.ops.kernels.scatter import scatter_reduce
from tensorweave.ops.math.reduction import unsorted_segment_sum
from tensorweave.ops._util import fmt_shape, invalid, shape_error

__all__ = ["unique", "unique_with_counts", "segment_sum", "segment_mean", "segment_max", "segment_min",
           "segment_prod", "unsorted_segment_max", "unsorted_segment_min", "unsorted_segment_prod"]


# ---------------------------------------------------------------------------------------------
# Unique, UniqueWithCounts
# ---------------------------------------------------------------------------------------------
def _unique_shape(op: Operation) -> list[TensorShape]:
    x = op.inputs[0].shape
    if x.ndims is not None and x.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {x.ndims}")
    x = x if x.ndims is not None else unknown_shape(1)
    return [TensorShape([None]), x] + [TensorShape([None])] * (len(op.outputs) - 2)


Unique = define_op("Unique", inputs=["x: T"], outputs=["y: T", "idx: out_idx"],
                   attrs=["T: type", "out_idx: {int32, int64} = int32"], shape_fn=_unique_shape)
UniqueWithCounts = define_op("UniqueWithCounts", inputs=["x: T"],
                             outputs=["y: T", "idx: out_idx", "count: out_idx"],
                             attrs=["T: type", "out_idx: {int32, int64} = int32"], shape_fn=_unique_shape)
Unique.not_differentiable()  # TF registers no gradient for either
UniqueWithCounts.not_differentiable()

# Below this many elements a dict walk beats np.unique (which sorts); embedding batches are small.
_SMALL_UNIQUE = 128


def _unique_values(x: Any, idx_type: Any) -> tuple[Any, Any]:
    """(y, idx) with y in order of first occurrence, as TF's hash-map kernel produces; every NaN
    is its own value (NaN != NaN), and 0.0 and -0.0 are one value."""
    if x.ndim != 1:
        raise invalid("unique expects a 1D vector.")
    n = x.shape[0]
    if n <= _SMALL_UNIQUE or x.dtype == object:
        values = x.tolist()
        seen = dict.fromkeys(values)  # keeps first-occurrence order
        if len(seen) == n:  # the common case for a batch of ids: nothing repeats
            return x.copy(), np.arange(n, dtype=idx_type)
        for position, value in enumerate(seen):
            seen[value] = position
        idx = np.fromiter(map(seen.__getitem__, values), dtype=idx_type, count=n)
        return np.array(list(seen), dtype=x.dtype), idx
    _, first, inverse = np.unique(x, return_index=True, return_inverse=True, equal_nan=False)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.shape[0])
    return x[first[order]], rank[inverse.reshape(-1)].astype(idx_type, copy=False)


@Unique.kernel()
def _unique_kernel(ctx: KernelContext) -> Callable:
    idx_type = ctx.output_dtypes[1].as_numpy_dtype
    return lambda x: _unique_values(x, idx_type)


@UniqueWithCounts.kernel()
def _unique_with_counts_kernel(ctx: KernelContext) -> Callable:
    idx_type = ctx.output_dtypes[1].as_numpy_dtype

    def compute(x: Any) -> Any:
        y, idx = _unique_values(x, idx_type)
        return y, idx, np.bincount(idx, minlength=y.shape[0]).astype(idx_type, copy=False)

    return compute


def unique(x: Any, out_idx: Any = _dtypes.int32, name: Optional[str] = None) -> Any:
    """The distinct values of 1-D `x` in order of first occurrence, and for each element of `x`
    the position of its value in them."""
    return apply_op(Unique, name=name, x=x, out_idx=_dtypes.as_dtype(out_idx))


def unique_with_counts(x: Any, out_idx: Any = _dtypes.int32, name: Optional[str] = None) -> Any:
    """`unique`, plus how many times each distinct value occurs."""
    return apply_op(UniqueWithCounts, name=name, x=x, out_idx=_dtypes.as_dtype(out_idx))


# ---------------------------------------------------------------------------------------------
# Sorted segment reductions: SegmentSum, SegmentMean, SegmentMax, SegmentMin, SegmentProd
# ---------------------------------------------------------------------------------------------
def _segment_shape(op: Operation) -> list[TensorShape]:
    data, ids = op.inputs[0].shape, op.inputs[1].shape
    if data.ndims is not None and data.ndims < 1:
        raise shape_error(op, f"Shape must be at least rank 1 but is rank {data.ndims}")
    if ids.ndims is not None and ids.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {ids.ndims}")
    if data.ndims is None:
        return [unknown_shape()]
    return [TensorShape([None] + data.dims[1:])]


def _segment_runs(data: Any, ids: Any) -> tuple[int, Any, Any]:
    """Validates sorted segment ids as TF's kernel does; returns (output rows, start of each run
    of equal ids, the id of each run)."""
    if ids.ndim != 1:
        raise invalid("segment_ids should be a vector.")
    n = ids.shape[0]
    if data.ndim == 0 or data.shape[0] != n:
        raise invalid("segment_ids should be the same size as dimension 0 of input.")
    if n == 0:
        return 0, None, None
    rows = int(ids[-1]) + 1
    if rows <= 0:
        raise invalid("segment ids must be >= 0")
    starts = np.flatnonzero(ids[1:] != ids[:-1]) + 1
    starts = np.concatenate([np.zeros(1, starts.dtype), starts])
    heads = ids[starts]
    # TF walks the runs in order: run k fails on a decrease to run k+1, else on a bad id.
    decreasing = np.append(heads[:-1] > heads[1:], False)
    negative = heads < 0
    bad = decreasing | negative
    if bad.any():
        k = int(np.argmax(bad))
        if decreasing[k]:
            raise invalid("segment ids are not increasing")
        raise invalid(f"Segment id {int(heads[k])} out of range [0, {rows}), possibly because "
                       f"'segment_ids' input is not sorted.")
    return rows, starts, heads


def _make_segment_kernel(ufunc: Any, empty: int, mean: bool = False) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        quiet_numpy_warnings()
        dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
        integer = dtype.kind in "iu"

        def compute(data: Any, ids: Any) -> Any:
            rows, starts, heads = _segment_runs(data, ids)
            out = np.full((rows,) + data.shape[1:], empty, dtype=dtype)
            if rows == 0:
                return out
            values = ufunc.reduceat(data, starts, axis=0)
            if mean:
                counts = np.diff(np.append(starts, data.shape[0])).reshape((-1,) + (1,) * (data.ndim - 1))
                if integer:  # C++ integer division truncates toward zero
                    q = values // counts
                    values = q + ((values % counts != 0) & (values < 0))
                else:
                    values = values / counts
            out[heads] = values
            return out

        return compute

    return build


_SEGMENT_OPS = {}
for _name, _types, _ufunc, _empty, _mean in (
        ("SegmentSum", "numbertype", np.add, 0, False),
        ("SegmentMean", "numbertype", np.add, 0, True),
        ("SegmentProd", "numbertype", np.multiply, 1, False),
        ("SegmentMax", "realnumbertype", np.maximum, 0, False),
        ("SegmentMin", "realnumbertype", np.minimum, 0, False)):
    _SEGMENT_OPS[_name] = define_op(
        _name, inputs=["data: T", "segment_ids: Tindices"], outputs=["output: T"],
        attrs=[f"T: {_types}", "Tindices: {int32, int64}"], shape_fn=_segment_shape)
    _SEGMENT_OPS[_name].kernel()(_make_segment_kernel(_ufunc, _empty, _mean))
SegmentSum = _SEGMENT_OPS["SegmentSum"]
SegmentMean = _SEGMENT_OPS["SegmentMean"]
SegmentProd = _SEGMENT_OPS["SegmentProd"]
SegmentMax = _SEGMENT_OPS["SegmentMax"]
SegmentMin = _SEGMENT_OPS["SegmentMin"]


def segment_sum(data: Any, segment_ids: Any, name: Optional[str] = None) -> Any:
    """output[i] = sum of data[j] over j with segment_ids[j] == i; ids sorted, >= 0."""
    return apply_op(SegmentSum, name=name, data=data, segment_ids=segment_ids)


def segment_mean(data: Any, segment_ids: Any, name: Optional[str] = None) -> Any:
    """Mean of each segment (0 for empty segments); ids sorted."""
    return apply_op(SegmentMean, name=name, data=data, segment_ids=segment_ids)


def segment_prod(data: Any, segment_ids: Any, name: Optional[str] = None) -> Any:
    """Product of each segment (1 for empty segments); ids sorted."""
    return apply_op(SegmentProd, name=name, data=data, segment_ids=segment_ids)


def segment_max(data: Any, segment_ids: Any, name: Optional[str] = None) -> Any:
    """Maximum of each segment (0 for empty segments); ids sorted."""
    return apply_op(SegmentMax, name=name, data=data, segment_ids=segment_ids)


def segment_min(data: Any, segment_ids: Any, name: Optional[str] = None) -> Any:
    """Minimum of each segment (0 for empty segments); ids sorted."""
    return apply_op(SegmentMin, name=name, data=data, segment_ids=segment_ids)


# ---------------------------------------------------------------------------------------------
# Unsorted segment reductions: UnsortedSegmentMax, UnsortedSegmentMin, UnsortedSegmentProd
# (UnsortedSegmentSum lives in reduction.py)
# ---------------------------------------------------------------------------------------------
def _unsorted_segment_shape(op: Operation) -> list[TensorShape]:
    data, ids, num_t = op.inputs[0].shape, op.inputs[1].shape, op.inputs[2]
    if num_t.shape.ndims is not None and num_t.shape.ndims != 0:
        raise shape_error(op, f"Shape must be rank 0 but is rank {num_t.shape.ndims}")
    num = tensor_util.constant_value(num_t)
    first = None if num is None or np.size(num) != 1 else int(np.reshape(num, -1)[0])
    if data.ndims is None or ids.ndims is None:
        return [unknown_shape()]
    if ids.ndims > data.ndims:
        raise shape_error(op, f"Shape must be at least rank {ids.ndims} but is rank {data.ndims}")
    for d, i in zip(data.dims[:ids.ndims], ids.dims):
        if d is not None and i is not None and d != i:
            raise shape_error(op, f"Dimensions must be equal, but are {d} and {i}")
    return [TensorShape([first] + data.dims[ids.ndims:])]


def _make_unsorted_kernel(ufunc: Any, empty: str) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        quiet_numpy_warnings()
        dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
        info = np.finfo(dtype) if dtype.kind == "f" else np.iinfo(dtype) if dtype.kind in "iu" else None
        fill = {"lowest": info.min if info else 0, "highest": info.max if info else 0, "one": 1}[empty]

        def compute(data: Any, ids: Any, num_segments: Any) -> Any:
            n = int(num_segments)
            if n < 0:
                raise invalid(f"Input num_segments == {n} must not be negative.")
            if data.shape[:ids.ndim] != ids.shape:
                raise invalid(f"data.shape = {fmt_shape(data.shape)} does not start with segment_ids.shape "
                               f"= {fmt_shape(ids.shape)}")
            out = np.full((n,) + data.shape[ids.ndim:], fill, dtype=dtype)
            if ids.size:
                flat = ids.reshape(-1)
                if flat.max() >= n:
                    bad = int(np.argmax(flat >= n))
                    raise invalid(f"segment_ids[{bad}] = {int(flat[bad])} is out of range [0, {n})")
                inner = int(np.prod(data.shape[ids.ndim:], dtype=np.int64))
                scatter_reduce(ufunc, out, flat, data.reshape((flat.shape[0], inner)))
            return out

        return compute

    return build


_UNSORTED_OPS = {}
for _name, _ufunc, _empty in (("UnsortedSegmentMax", np.maximum, "lowest"),
                              ("UnsortedSegmentMin", np.minimum, "highest"),
                              ("UnsortedSegmentProd", np.multiply, "one")):
    _types = "numbertype" if _name == "UnsortedSegmentProd" else "realnumbertype"
    _UNSORTED_OPS[_name] = define_op(
        _name, inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
        outputs=["output: T"], attrs=[f"T: {_types}", "Tindices: {int32, int64}",
                                      "Tnumsegments: {int32, int64} = int32"],
        shape_fn=_unsorted_segment_shape)
    _UNSORTED_OPS[_name].kernel()(_make_unsorted_kernel(_ufunc, _empty))
UnsortedSegmentMax = _UNSORTED_OPS["UnsortedSegmentMax"]
UnsortedSegmentMin = _UNSORTED_OPS["UnsortedSegmentMin"]
UnsortedSegmentProd = _UNSORTED_OPS["UnsortedSegmentProd"]


def unsorted_segment_max(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None) -> Any:
    """Maximum per segment, ids in any order (negative ids dropped; empty segments: lowest value)."""
    return apply_op(UnsortedSegmentMax, name=name, data=data, segment_ids=segment_ids,
                    num_segments=num_segments)


def unsorted_segment_min(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None) -> Any:
    """Minimum per segment, ids in any order (negative ids dropped; empty segments: highest value)."""
    return apply_op(UnsortedSegmentMin, name=name, data=data, segment_ids=segment_ids,
                    num_segments=num_segments)


def unsorted_segment_prod(data: Any, segment_ids: Any, num_segments: Any, name: Optional[str] = None) -> Any:
    """Product per segment, ids in any order (negative ids dropped; empty segments: 1)."""
    return apply_op(UnsortedSegmentProd, name=name, data=data, segment_ids=segment_ids,
                    num_segments=num_segments)


# ---------------------------------------------------------------------------------------------
# IndexedSlices -> dense Tensor
# ---------------------------------------------------------------------------------------------
def _indexed_slices_to_tensor(value: IndexedSlices, dtype: Any = None, name: Optional[str] = None,
                              as_ref: bool = False) -> Tensor:
    """Densifies a sparse gradient: rows of `values` summed into `dense_shape[0]` rows (the
    indices may repeat, as the gradient of a gather with repeated ids does)."""
    del as_ref
    if dtype is not None and not _dtypes.as_dtype(dtype).is_compatible_with(value.dtype.base_dtype):
        raise ValueError(f"Tensor conversion requested dtype {_dtypes.as_dtype(dtype).name} for "
                         f"IndexedSlices with dtype {value.dtype.name}")
    if value.dense_shape is None:
        raise ValueError(f"Tensor conversion requested for IndexedSlices without dense_shape: {value}")
    static = tensor_util.constant_value(value.dense_shape)
    if static is not None:
        rows: Any = int(np.reshape(static, -1)[0])
    else:
        # Tensor.__getitem__ is the array family's; the math package imports it (math_impl.py)
        rows = value.dense_shape[0]
    dense = unsorted_segment_sum(value.values, value.indices, rows, name=name)
    full = tensor_util.constant_value_as_shape(value.dense_shape)
    if full.ndims is not None and dense.shape.is_compatible_with(full):
        dense.set_shape(full)
    return dense


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)
