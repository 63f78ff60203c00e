"""Arithmetic on SparseTensors (TF1's sparse_ops): SparseAdd (with its gradient helper
SparseAddGrad), SparseTensorDenseAdd, SparseReduceSum / SparseReduceMax and their *Sparse forms,
SparseTensorDenseMatMul, SparseSoftmax, SparseSparseMaximum / Minimum, SparseDenseCwiseMul /
Div / Add. Gradients are in grad.py.

Kernels group entries by their kept coordinates with `np.unique(..., axis=0)` and reduce with
`np.add.at` / `np.maximum.at`, so no kernel loops over entries in Python.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorweave.ops._util import const_ints, format_dims, invalid, shape_error
from tensorweave.framework import errors
from tensorweave.ops.sparse.sparse_structure import check_in_bounds, check_sparse_inputs, match_rows

__all__: list[str] = []

_NUMBER = "{float32, float64, int32, int64, uint8, int16, int8, complex64, complex128, uint16, float16}"
_REAL = "{float32, float64, int32, int64, uint8, int16, int8, uint16, float16}"


def _rank_of(op: Operation, matrix: int, vector: int) -> Dimension:
    return op.inputs[matrix].shape.with_rank(2).dims[1].merge_with(op.inputs[vector].shape.with_rank(1).dims[0])


# ---------------------------------------------------------------------------------------------
# SparseAdd, SparseAddGrad, SparseTensorDenseAdd
# ---------------------------------------------------------------------------------------------
def _add_shape(op: Operation) -> list[TensorShape]:
    rank = _rank_of(op, 0, 2).merge_with(_rank_of(op, 3, 5))
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


SparseAdd = define_op(
    "SparseAdd",
    inputs=["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64", "b_values: T",
            "b_shape: int64", "thresh: Treal"],
    outputs=["sum_indices: int64", "sum_values: T", "sum_shape: int64"],
    attrs=[f"T: {_NUMBER}", f"Treal: {_REAL}"], shape_fn=_add_shape)


def _union(a_idx: np.ndarray, a_val: np.ndarray, b_idx: np.ndarray, b_val: np.ndarray,
           combine: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Indices in either operand, sorted; values `combine`d where both have one, else the one
    present combined with zero; and which indices both operands hold."""
    both = np.concatenate([a_idx, b_idx], axis=0)
    if both.shape[0] == 0:
        return both.astype(np.int64), np.concatenate([a_val, b_val]), np.zeros(0, bool)
    keys, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    dtype = np.result_type(a_val, b_val)
    left = np.zeros(keys.shape[0], dtype)
    right = np.zeros(keys.shape[0], dtype)
    np.add.at(left, inverse[:a_idx.shape[0]], a_val)
    np.add.at(right, inverse[a_idx.shape[0]:], b_val)
    in_a = np.zeros(keys.shape[0], bool)
    in_a[inverse[:a_idx.shape[0]]] = True
    in_b = np.zeros(keys.shape[0], bool)
    in_b[inverse[a_idx.shape[0]:]] = True
    return keys.astype(np.int64), combine(left, right).astype(dtype), in_a & in_b


def _check_same_shape(a_shape: np.ndarray, b_shape: np.ndarray) -> None:
    if a_shape.shape != b_shape.shape or np.any(a_shape != b_shape):
        raise invalid(f"Operands do not have the same ranks; got shapes: {format_dims(a_shape)} and "
                      f"{format_dims(b_shape)}")


@SparseAdd.kernel()
def _add_kernel(ctx: KernelContext) -> Callable:
    def compute(a_idx: Any, a_val: Any, a_shape: Any, b_idx: Any, b_val: Any, b_shape: Any, thresh: Any) -> Any:
        check_sparse_inputs(a_idx, a_val, a_shape, "a")
        check_sparse_inputs(b_idx, b_val, b_shape, "b")
        if np.ndim(thresh) != 0:
            raise invalid(f"The magnitude threshold must be a scalar: got shape {format_dims(np.shape(thresh))}")
        _check_same_shape(a_shape, b_shape)
        idx, val, summed = _union(a_idx, a_val, b_idx, b_val, np.add)
        keep = ~summed | (np.abs(val) >= thresh)  # TF thresholds only the entries it summed
        return idx[keep], val[keep], a_shape.copy()
    return compute


SparseAddGrad = define_op(
    "SparseAddGrad",
    inputs=["backprop_val_grad: T", "a_indices: int64", "b_indices: int64", "sum_indices: int64"],
    outputs=["a_val_grad: T", "b_val_grad: T"], attrs=[f"T: {_NUMBER}"],
    shape_fn=lambda op: [TensorShape([op.inputs[1].shape.with_rank(2).dims[0]]),
                         TensorShape([op.inputs[2].shape.with_rank(2).dims[0]])])
SparseAddGrad.not_differentiable()


@SparseAddGrad.kernel()
def _add_grad_kernel(ctx: KernelContext) -> Callable:
    def compute(grad: Any, a_idx: Any, b_idx: Any, sum_idx: Any) -> Any:
        outs = []
        for idx in (a_idx, b_idx):
            where = match_rows(sum_idx, idx)  # -1: the sum dropped it (below thresh)
            out = np.zeros(idx.shape[0], grad.dtype)
            found = where >= 0
            out[found] = grad[where[found]]
            outs.append(out)
        return tuple(outs)
    return compute


SparseTensorDenseAdd = define_op(
    "SparseTensorDenseAdd", inputs=["a_indices: Tindices", "a_values: T", "a_shape: Tindices", "b: T"],
    outputs=["output: T"], attrs=[f"T: {_NUMBER}", "Tindices: {int32, int64}"],
    shape_fn=lambda op: [op.inputs[3].shape])


@SparseTensorDenseAdd.kernel()
def _dense_add_kernel(ctx: KernelContext) -> Callable:
    def compute(a_idx: Any, a_val: Any, a_shape: Any, b: Any) -> Any:
        check_sparse_inputs(a_idx, a_val, a_shape, "a")
        if a_shape.size != b.ndim:
            raise invalid(f"Dimensionality mismatch: b has {b.ndim} dims but a_shape has {a_shape.size} elements")
        for d, (sparse_side, dense_side) in enumerate(zip(a_shape, b.shape)):
            if sparse_side != dense_side:
                raise invalid(f"Dimension {d} does not equal (no broadcasting is supported): sparse side "
                              f"{int(sparse_side)} vs dense side {dense_side}")
        bad = np.flatnonzero(np.any((a_idx < 0) | (a_idx >= a_shape), axis=1))
        if bad.size:
            i = int(bad[0])
            raise invalid(f"Index {i} of a_indices = {format_dims(a_idx[i])} is out of bounds of "
                          f"b.shape = {format_dims(b.shape)}")
        out = b.copy()
        np.add.at(out, tuple(a_idx.T), a_val)
        return out
    return compute


# ---------------------------------------------------------------------------------------------
# SparseReduceSum / SparseReduceMax (dense output) and their *Sparse forms
# ---------------------------------------------------------------------------------------------
def _reduce_axes(axes: Any, rank: int) -> np.ndarray:
    axes = np.asarray(axes).reshape(-1).astype(np.int64)
    bad = (axes < -rank) | (axes >= rank)
    if np.any(bad):
        raise invalid(f"Invalid reduction dimension {int(axes[bad][0])}, for input with {rank} dimensions.")
    reduce = np.zeros(rank, bool)
    reduce[np.where(axes < 0, axes + rank, axes)] = True
    if axes.size == 0:
        reduce[:] = True  # no axes: reduce everything, as TF does
    return reduce


def _grouped(indices: np.ndarray, values: np.ndarray, shape: np.ndarray, axes: Any,
             reducer: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """(reduce mask, kept index rows (sorted, unique), their reduced values, kept shape)."""
    check_sparse_inputs(indices, values, shape)
    reduce = _reduce_axes(axes, shape.shape[0])
    kept = indices[:, ~reduce]
    if kept.shape[0] == 0:
        return reduce, kept.astype(np.int64), values[:0], shape[~reduce]
    if kept.shape[1] == 0:  # every axis reduced: one group
        keys, inverse = np.zeros((1, 0), np.int64), np.zeros(kept.shape[0], np.int64)
    else:
        keys, inverse = np.unique(kept, axis=0, return_inverse=True)
        inverse = inverse.reshape(-1)
    if reducer is np.add:
        out = np.zeros(keys.shape[0], values.dtype)
    else:
        out = np.full(keys.shape[0], _lowest(values.dtype), values.dtype)
    reducer.at(out, inverse, values)
    return reduce, keys.astype(np.int64), out, shape[~reduce]


def _lowest(dtype: np.dtype) -> Any:
    return -np.inf if np.issubdtype(dtype, np.floating) else np.iinfo(dtype).min


def _reduce_dense_shape(op: Operation) -> list[TensorShape]:
    _rank_of(op, 0, 2)
    shape, axes = const_ints(op.inputs[2]), const_ints(op.inputs[3])
    if shape is None or axes is None:
        return [unknown_shape()]
    rank = len(shape)
    if any(not -rank <= a < rank for a in axes):
        raise shape_error(op, f"Invalid reduction dimension, for input with {rank} dimensions")
    reduce = {a % rank for a in axes} if axes else set(range(rank))
    keep = op._get_attr("keep_dims")
    return [TensorShape([1 if d in reduce else s for d, s in enumerate(shape) if keep or d not in reduce])]


def _reduce_sparse_shape(op: Operation) -> list[TensorShape]:
    _rank_of(op, 0, 2)
    (dense,) = _reduce_dense_shape(op)
    rank = dense.ndims
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


_REDUCE_INPUTS = ["input_indices: int64", "input_values: T", "input_shape: int64", "reduction_axes: int32"]
_SPARSE_OUT = ["output_indices: int64", "output_values: T", "output_shape: int64"]
SparseReduceSum = define_op("SparseReduceSum", inputs=_REDUCE_INPUTS, outputs=["output: T"],
                            attrs=["keep_dims: bool = false", f"T: {_NUMBER}"], shape_fn=_reduce_dense_shape)
SparseReduceMax = define_op("SparseReduceMax", inputs=_REDUCE_INPUTS, outputs=["output: T"],
                            attrs=["keep_dims: bool = false", f"T: {_REAL}"], shape_fn=_reduce_dense_shape)
SparseReduceSumSparse = define_op("SparseReduceSumSparse", inputs=_REDUCE_INPUTS, outputs=_SPARSE_OUT,
                                  attrs=["keep_dims: bool = false", f"T: {_NUMBER}"],
                                  shape_fn=_reduce_sparse_shape)
SparseReduceMaxSparse = define_op("SparseReduceMaxSparse", inputs=_REDUCE_INPUTS, outputs=_SPARSE_OUT,
                                  attrs=["keep_dims: bool = false", f"T: {_REAL}"],
                                  shape_fn=_reduce_sparse_shape)
SparseReduceMax.not_differentiable()
SparseReduceMaxSparse.not_differentiable()
SparseReduceSumSparse.not_differentiable()


def _reduce_dense_kernel(reducer: Any) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        keep_dims = ctx.attr("keep_dims")

        def compute(indices: Any, values: Any, shape: Any, axes: Any) -> Any:
            reduce, keys, out, kept_shape = _grouped(indices, values, shape, axes, reducer)
            dense = np.zeros(tuple(int(d) for d in kept_shape), values.dtype)
            if keys.shape[0] and keys.shape[1]:
                strides = np.array([int(np.prod(kept_shape[d + 1:])) for d in range(kept_shape.size)], np.int64)
                written = keys @ strides
                if np.any(written >= dense.size) or np.any(keys < 0):
                    bad = int(written[np.argmax((written >= dense.size) | np.any(keys < 0, axis=1))])
                    raise errors.InternalError(None, None, f"Obtained a write index of {bad} which is outside of "
                                                           f"bounds of [0, {dense.size})")
            if keys.shape[0]:
                dense[tuple(keys.T)] = out if keys.shape[1] else out[0]  # empty groups stay 0, as in TF
            if keep_dims:
                dense = dense.reshape(tuple(1 if r else int(d) for r, d in zip(reduce, shape)))
            return dense
        return compute
    return build


def _reduce_sparse_kernel(reducer: Any) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        keep_dims = ctx.attr("keep_dims")

        def compute(indices: Any, values: Any, shape: Any, axes: Any) -> Any:
            reduce, keys, out, kept_shape = _grouped(indices, values, shape, axes, reducer)
            if keep_dims:
                full = np.zeros((keys.shape[0], shape.shape[0]), np.int64)
                full[:, ~reduce] = keys
                return full, out, np.where(reduce, 1, shape).astype(np.int64)
            return keys, out, kept_shape.astype(np.int64)
        return compute
    return build


SparseReduceSum.kernel()(_reduce_dense_kernel(np.add))
SparseReduceMax.kernel()(_reduce_dense_kernel(np.maximum))
SparseReduceSumSparse.kernel()(_reduce_sparse_kernel(np.add))
SparseReduceMaxSparse.kernel()(_reduce_sparse_kernel(np.maximum))


# ---------------------------------------------------------------------------------------------
# SparseTensorDenseMatMul
# ---------------------------------------------------------------------------------------------
def _sp_matmul_shape(op: Operation) -> list[TensorShape]:
    op.inputs[0].shape.with_rank(2)
    b = op.inputs[3].shape.with_rank(2)
    a_shape = const_ints(op.inputs[2])
    adj_a, adj_b = op._get_attr("adjoint_a"), op._get_attr("adjoint_b")
    rows = None if a_shape is None else a_shape[1 if adj_a else 0]
    inner_a = None if a_shape is None else a_shape[0 if adj_a else 1]
    inner_b = b.dims[1 if adj_b else 0]
    if inner_a is not None and inner_b.value is not None and inner_a != inner_b.value:
        raise shape_error(op, f"Dimensions must be equal, but are {inner_a} and {inner_b.value}")
    return [TensorShape([rows, b.dims[0 if adj_b else 1]])]


SparseTensorDenseMatMul = define_op(
    "SparseTensorDenseMatMul", inputs=["a_indices: Tindices", "a_values: T", "a_shape: int64", "b: T"],
    outputs=["product: T"],
    attrs=["T: type", "Tindices: {int32, int64} = int64", "adjoint_a: bool = false",
           "adjoint_b: bool = false"], shape_fn=_sp_matmul_shape)


@SparseTensorDenseMatMul.kernel()
def _sp_matmul_kernel(ctx: KernelContext) -> Callable:
    adj_a, adj_b = ctx.attr("adjoint_a"), ctx.attr("adjoint_b")

    def compute(a_idx: Any, a_val: Any, a_shape: Any, b: Any) -> Any:
        if a_idx.ndim != 2 or a_idx.shape[1] != 2:
            raise invalid(f"Tensor 'a_indices' is not a matrix of shape [nnz, 2]: {format_dims(a_idx.shape)}")
        if a_shape.shape != (2,) or b.ndim != 2:
            raise invalid(f"Tensor 'a_shape' is not a vector of 2 elements: {format_dims(a_shape.shape)}")
        if a_val.shape != (a_idx.shape[0],):
            raise invalid(f"Number of rows of a_indices does not match number of entries in a_values: "
                          f"{a_idx.shape[0]} vs. {a_val.size}")
        bm = np.conj(b.T) if adj_b else b
        rows_col, inner_col = (1, 0) if adj_a else (0, 1)
        out_rows, inner = int(a_shape[rows_col]), int(a_shape[inner_col])
        if inner != bm.shape[0]:
            raise invalid(f"Cannot multiply A and B because inner dimension does not match: {inner} vs. "
                          f"{bm.shape[0]}.  Did you forget a transpose?  Dimensions of A: "
                          f"[{int(a_shape[0])}, {int(a_shape[1])}).  Dimensions of B: {format_dims(b.shape)}")
        rows, cols = a_idx[:, rows_col], a_idx[:, inner_col]
        for name, which, limit in (("m", rows, out_rows), ("k", cols, inner)):
            bad = np.flatnonzero((which < 0) | (which >= limit))
            if bad.size:
                j = int(bad[0])
                col = rows_col if name == "m" else inner_col
                raise invalid(f"{name} ({int(which[j])}) from index[{j},{col}] out of bounds (>={limit})")
        vals = np.conj(a_val) if adj_a else a_val
        out = np.zeros((out_rows, bm.shape[1]), dtype=np.result_type(a_val, b))
        if rows.size:
            # Products grouped by output row and summed per group (np.add.reduceat over the
            # row-sorted products: much faster than a scatter-add).
            order = np.argsort(rows, kind="stable")
            sorted_rows = rows[order]
            products = vals[order, None] * bm[cols[order]]
            starts = np.flatnonzero(np.r_[True, sorted_rows[1:] != sorted_rows[:-1]])
            out[sorted_rows[starts]] = np.add.reduceat(products, starts, axis=0)
        return out
    return compute


# ---------------------------------------------------------------------------------------------
# SparseSoftmax
# ---------------------------------------------------------------------------------------------
SparseSoftmax = define_op(
    "SparseSoftmax", inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64"], outputs=["output: T"],
    attrs=["T: {float16, float32, float64}"],
    shape_fn=lambda op: [TensorShape([op.inputs[1].shape.with_rank(1).dims[0]])])


@SparseSoftmax.kernel()
def _softmax_kernel(ctx: KernelContext) -> Callable:
    def compute(indices: Any, values: Any, shape: Any) -> Any:
        check_sparse_inputs(indices, values, shape)
        if shape.shape[0] < 2:
            raise invalid(f"Input should have rank >= 2, but received shape: {' '.join(str(int(d)) for d in shape)}")
        if values.size == 0:
            return values.copy()
        _, group = np.unique(indices[:, :-1], axis=0, return_inverse=True)
        group = group.reshape(-1)
        peak = np.full(int(group.max()) + 1, -np.inf, values.dtype)
        np.maximum.at(peak, group, values)
        e = np.exp(values - peak[group])
        total = np.zeros_like(peak)
        np.add.at(total, group, e)
        return (e / total[group]).astype(values.dtype)
    return compute


# ---------------------------------------------------------------------------------------------
# SparseSparseMaximum / SparseSparseMinimum
# ---------------------------------------------------------------------------------------------
def _minmax_shape(op: Operation) -> list[TensorShape]:
    rank = _rank_of(op, 0, 2).merge_with(_rank_of(op, 3, 5))
    return [TensorShape([None, rank]), TensorShape([None])]


_MINMAX = dict(inputs=["a_indices: int64", "a_values: T", "a_shape: int64", "b_indices: int64",
                       "b_values: T", "b_shape: int64"],
               outputs=["output_indices: int64", "output_values: T"], attrs=[f"T: {_REAL}"],
               shape_fn=_minmax_shape)
SparseSparseMaximum = define_op("SparseSparseMaximum", **_MINMAX)  # type: ignore[arg-type]
SparseSparseMinimum = define_op("SparseSparseMinimum", **_MINMAX)  # type: ignore[arg-type]


def _minmax_kernel(combine: Any) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        def compute(a_idx: Any, a_val: Any, a_shape: Any, b_idx: Any, b_val: Any, b_shape: Any) -> Any:
            check_sparse_inputs(a_idx, a_val, a_shape, "a")
            check_sparse_inputs(b_idx, b_val, b_shape, "b")
            _check_same_shape(a_shape, b_shape)
            check_in_bounds(a_idx, a_shape)
            check_in_bounds(b_idx, b_shape)
            idx, val, _ = _union(a_idx, a_val, b_idx, b_val, combine)  # a missing entry counts as 0
            return idx, val
        return compute
    return build


SparseSparseMaximum.kernel()(_minmax_kernel(np.maximum))
SparseSparseMinimum.kernel()(_minmax_kernel(np.minimum))


# ---------------------------------------------------------------------------------------------
# SparseDenseCwiseMul / Div / Add: the dense side broadcast to the sparse side's shape
# ---------------------------------------------------------------------------------------------
_CWISE = dict(inputs=["sp_indices: int64", "sp_values: T", "sp_shape: int64", "dense: T"],
              outputs=["output: T"], attrs=[f"T: {_NUMBER}"],
              shape_fn=lambda op: [TensorShape([op.inputs[1].shape.with_rank(1).dims[0]])])
SparseDenseCwiseMul = define_op("SparseDenseCwiseMul", **_CWISE)  # type: ignore[arg-type]
SparseDenseCwiseDiv = define_op("SparseDenseCwiseDiv", **_CWISE)  # type: ignore[arg-type]
SparseDenseCwiseAdd = define_op("SparseDenseCwiseAdd", **_CWISE)  # type: ignore[arg-type]


def _cwise_kernel(fn: Any) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        def compute(indices: Any, values: Any, shape: Any, dense: Any) -> Any:
            check_sparse_inputs(indices, values, shape)
            dims = tuple(int(d) for d in shape)
            if dense.ndim > len(dims) or any(d not in (1, s) for d, s in zip(dense.shape[::-1], dims[::-1])):
                raise invalid(f"SparseDenseBinaryOpShared broadcasts dense to sparse only; got incompatible "
                              f"shapes: [{','.join(str(d) for d in dims)}] vs. {format_dims(dense.shape)}")
            if np.any((indices < 0) | (indices >= np.array(dims, np.int64))):
                raise invalid("Provided indices are out-of-bounds w.r.t. dense side with broadcasted shape")
            full = np.broadcast_to(dense, dims)
            with np.errstate(divide="ignore", invalid="ignore"):
                return fn(values, full[tuple(indices.T)]).astype(values.dtype)
        return compute
    return build


def _divide(x: Any, y: Any) -> Any:
    return np.floor_divide(x, y) if np.issubdtype(x.dtype, np.integer) else x / y


SparseDenseCwiseMul.kernel()(_cwise_kernel(np.multiply))
SparseDenseCwiseDiv.kernel()(_cwise_kernel(_divide))
SparseDenseCwiseAdd.kernel()(_cwise_kernel(np.add))
