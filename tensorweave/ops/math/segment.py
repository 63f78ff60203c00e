"""Segment reductions (SegmentSum/Mean/Max/Min/Prod on sorted ids, UnsortedSegmentMax/Min/Prod),
Unique / UniqueWithCounts, and the conversion of `tf.IndexedSlices` to a dense tensor.

These are the pieces sparse training is built from (OSDI 4.2): optimizers deduplicate the rows
of an IndexedSlices gradient with `unique` and `unsorted_segment_sum`, and a sparse gradient
that meets a dense one is densified with `unsorted_segment_sum(values, indices, rows)`.

This module imports array_ops / math_ops only inside functions: array_ops re-exports `unique`,
so a module-level import here would make the two modules' import order matter.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
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
def _unique_shape(op: Any) -> list[TensorShape]:
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
def _unique_kernel(ctx: Any) -> Callable:
    idx_type = ctx.output_dtypes[1].as_numpy_dtype
    return lambda x: _unique_values(x, idx_type)


@UniqueWithCounts.kernel()
def _unique_with_counts_kernel(ctx: Any) -> Callable:
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
def _segment_shape(op: Any) -> list[TensorShape]:
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
    def build(ctx: Any) -> Callable:
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
# (UnsortedSegmentSum lives in reduction_ops.py)
# ---------------------------------------------------------------------------------------------
def _unsorted_segment_shape(op: Any) -> list[TensorShape]:
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
    def build(ctx: Any) -> Callable:
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
# Gradients
# ---------------------------------------------------------------------------------------------
def _ops() -> tuple[Any, Any]:
    from tensorweave.ops import array as array_ops, math as math_ops
    return array_ops, math_ops


@SegmentSum.gradient
def _segment_sum_grad(op: Any, grad: Any) -> list[Any]:
    array_ops, _ = _ops()
    return [array_ops.gather(grad, op.inputs[1]), None]


def _per_row_column(values: Any, like: Any) -> Any:
    """`values` (one per row) reshaped to [rows, 1, 1, ...] so it broadcasts against `like`."""
    array_ops, _ = _ops()
    rank = like.shape.ndims
    if rank is not None:
        return array_ops.reshape(values, [-1] + [1] * (rank - 1))
    ones = array_ops.ones(array_ops.expand_dims(array_ops.rank(like) - 1, 0), _dtypes.int32)
    return array_ops.reshape(values, array_ops.concat([[-1], ones], 0))


@SegmentMean.gradient
def _segment_mean_grad(op: Any, grad: Any) -> list[Any]:
    array_ops, math_ops = _ops()
    ids = op.inputs[1]
    counts = segment_sum(array_ops.ones_like(ids, dtype=grad.dtype), ids)
    scaled = math_ops.divide(grad, _per_row_column(counts, grad))
    return [array_ops.gather(scaled, ids), None]


def _gather_drop_negatives(params: Any, ids: Any, clipped: Any = None, positive: Any = None) -> tuple:
    """gather(params, ids) with zero rows where ids < 0 (unsorted segment ops drop those);
    also returns the clipped ids and the (broadcast) mask so callers can reuse them."""
    array_ops, math_ops = _ops()
    if clipped is None:
        clipped = math_ops.maximum(ids, array_ops.zeros_like(ids))
    gathered = array_ops.gather(params, clipped)
    if positive is None:
        positive = math_ops.greater_equal(ids, 0)
        extra = array_ops.ones(array_ops.expand_dims(array_ops.rank(gathered) - array_ops.rank(positive), 0),
                               _dtypes.int32)
        positive = array_ops.reshape(positive, array_ops.concat([array_ops.shape(positive), extra], 0))
        positive = math_ops.logical_and(positive, array_ops.ones_like(gathered, dtype=_dtypes.bool))
    return math_ops.where_v2(positive, gathered, array_ops.zeros_like(gathered)), clipped, positive


def _min_or_max_grad(op: Any, grad: Any, sorted_ids: bool) -> list[Any]:
    """The gradient goes to the elements equal to their segment's extremum, split evenly among ties."""
    array_ops, math_ops = _ops()
    data, ids = op.inputs[0], op.inputs[1]
    if sorted_ids:
        selected = math_ops.equal(data, array_ops.gather(op.outputs[0], ids))
        counts = segment_sum(math_ops.cast(selected, grad.dtype), ids)
        shares = array_ops.gather(math_ops.divide(grad, counts), ids)
        return [math_ops.where_v2(selected, shares, array_ops.zeros_like(data)), None]
    extremes, clipped, positive = _gather_drop_negatives(op.outputs[0], ids)
    selected = math_ops.logical_and(math_ops.equal(data, extremes), positive)
    counts = unsorted_segment_sum(math_ops.cast(selected, grad.dtype), ids, op.inputs[2])
    shares, _, _ = _gather_drop_negatives(math_ops.divide(grad, counts), None, clipped, positive)
    return [math_ops.where_v2(selected, shares, array_ops.zeros_like(shares)), None, None]


@SegmentMax.gradient
def _segment_max_grad(op: Any, grad: Any) -> list[Any]:
    return _min_or_max_grad(op, grad, sorted_ids=True)


@SegmentMin.gradient
def _segment_min_grad(op: Any, grad: Any) -> list[Any]:
    return _min_or_max_grad(op, grad, sorted_ids=True)


@UnsortedSegmentMax.gradient
def _unsorted_segment_max_grad(op: Any, grad: Any) -> list[Any]:
    return _min_or_max_grad(op, grad, sorted_ids=False)


@UnsortedSegmentMin.gradient
def _unsorted_segment_min_grad(op: Any, grad: Any) -> list[Any]:
    return _min_or_max_grad(op, grad, sorted_ids=False)


def _prod_grad(op: Any, grad: Any, sorted_ids: bool) -> list[Any]:
    """d prod / d x_i = product of the other elements of x_i's segment. Computed without dividing
    by zero: a segment with two or more zeros has zero gradient everywhere; with exactly one
    zero, only that element gets a gradient (the product of the non-zero elements)."""
    array_ops, math_ops = _ops()
    data, ids = op.inputs[0], op.inputs[1]
    if sorted_ids:
        gather_ids = ids
        count_of = lambda x: segment_sum(x, ids)  # noqa: E731
        prod_of = lambda x: segment_prod(x, ids)  # noqa: E731
    else:
        num = op.inputs[2]
        gather_ids = math_ops.maximum(ids, array_ops.zeros_like(ids))
        count_of = lambda x: unsorted_segment_sum(x, ids, num)  # noqa: E731
        prod_of = lambda x: unsorted_segment_prod(x, ids, num)  # noqa: E731
    is_zero = math_ops.equal(data, array_ops.zeros_like(data))
    zeros_per_segment = count_of(math_ops.cast(is_zero, _dtypes.int32))
    grad = math_ops.where_v2(math_ops.greater(zeros_per_segment, 1), array_ops.zeros_like(grad), grad)
    nonzero_data = math_ops.where_v2(is_zero, array_ops.ones_like(data), data)
    nonzero_prod = array_ops.gather(prod_of(nonzero_data), gather_ids)
    quotient = math_ops.divide(array_ops.gather(op.outputs[0], gather_ids), nonzero_data)
    others = math_ops.where_v2(is_zero, nonzero_prod, quotient)
    if sorted_ids:
        return [array_ops.gather(grad, ids) * others, None]
    # elements with negative ids were dropped from the product: they get zero gradient
    gathered = _gather_drop_negatives(grad, ids, gather_ids)[0]
    return [gathered * others, None, None]


@SegmentProd.gradient
def _segment_prod_grad(op: Any, grad: Any) -> list[Any]:
    return _prod_grad(op, grad, sorted_ids=True)


@UnsortedSegmentProd.gradient
def _unsorted_segment_prod_grad(op: Any, grad: Any) -> list[Any]:
    return _prod_grad(op, grad, sorted_ids=False)


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
        from tensorweave.ops import array as array_ops  # installs Tensor.__getitem__
        rows = value.dense_shape[0]
        del array_ops
    dense = unsorted_segment_sum(value.values, value.indices, rows, name=name)
    full = tensor_util.constant_value_as_shape(value.dense_shape)
    if full.ndims is not None and dense.shape.is_compatible_with(full):
        dense.set_shape(full)
    return dense


register_tensor_conversion_function(IndexedSlices, _indexed_slices_to_tensor)
