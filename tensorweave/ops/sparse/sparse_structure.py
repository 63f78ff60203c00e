"""Ops that move a SparseTensor's entries without computing on their values (TF1's sparse_ops):
SparseReorder, SparseReshape, SparseConcat, SparseSlice, SparseSplit, SparseFillEmptyRows, and the
gradient helpers SparseSliceGrad and SparseFillEmptyRowsGrad. Gradients are in grad.py.

A SparseTensor is three dense arrays (indices [N, R], values [N], dense_shape [R]). Kernels work
on whole index matrices: row-major order is a lexsort over the columns, positions are
`np.ravel_multi_index`, so no kernel loops over entries in Python.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import Dimension, TensorShape
from tensorweave.ops._util import const_ints, format_dims, invalid

__all__ = ["standard_order", "check_sparse_inputs", "check_in_bounds", "match_rows"]


# ---------------------------------------------------------------------------------------------
# Shared helpers (also used by the family's other tier-1 modules)
# ---------------------------------------------------------------------------------------------
def standard_order(indices: np.ndarray) -> np.ndarray:
    """The stable permutation that puts index rows in row-major (lexicographic) order."""
    if indices.shape[0] < 2 or indices.shape[1] == 0:
        return np.arange(indices.shape[0])
    return np.lexsort(indices.T[::-1])


def check_sparse_inputs(indices: np.ndarray, values: np.ndarray, shape: np.ndarray,
                        what: str = "input") -> None:
    """TF's checks on the three parts of a sparse operand: a matrix, a vector and a vector of
    matching sizes."""
    if indices.ndim != 2:
        raise invalid(f"{what} indices should be a matrix but received shape {format_dims(indices.shape)}")
    if values.ndim != 1:
        raise invalid(f"{what} values should be a vector but received shape {format_dims(values.shape)}")
    if shape.ndim != 1:
        raise invalid(f"{what} shape should be a vector but received shape {format_dims(shape.shape)}")
    if indices.shape[0] != values.shape[0]:
        raise invalid(f"Number of elements in {what} indices ({indices.shape[0]}) and values "
                      f"({values.shape[0]}) do not match")
    if indices.shape[1] != shape.shape[0]:
        raise invalid(f"{what} indices have {indices.shape[1]} columns but the shape has {shape.shape[0]} "
                      f"elements")


def check_in_bounds(indices: np.ndarray, shape: np.ndarray) -> None:
    """TF's SparseTensor check that every index row lies inside `shape`."""
    bad = np.flatnonzero(np.any((indices < 0) | (indices >= shape), axis=1))
    if bad.size:
        i = int(bad[0])
        raise invalid(f"Sparse index tuple indices[{i}, :] = [{', '.join(str(int(v)) for v in indices[i])}] is "
                      f"out of bounds")


def _matrix_rows(op: Operation, index: int) -> Dimension:
    shape = op.inputs[index].shape.with_rank(2)
    return shape.dims[0]


def _vector_len(op: Operation, index: int) -> Dimension:
    return op.inputs[index].shape.with_rank(1).dims[0]


# ---------------------------------------------------------------------------------------------
# SparseReorder
# ---------------------------------------------------------------------------------------------
def _reorder_shape(op: Operation) -> list[TensorShape]:
    rows = _matrix_rows(op, 0).merge_with(_vector_len(op, 1))
    return [TensorShape([rows, op.inputs[0].shape.with_rank(2).dims[1]]), TensorShape([rows])]


SparseReorder = define_op(
    "SparseReorder", inputs=["input_indices: int64", "input_values: T", "input_shape: int64"],
    outputs=["output_indices: int64", "output_values: T"], attrs=["T: type"], shape_fn=_reorder_shape)


@SparseReorder.kernel()
def _reorder_kernel(ctx: KernelContext) -> Callable:
    def compute(indices: Any, values: Any, shape: Any) -> Any:
        check_sparse_inputs(indices, values, shape)
        order = standard_order(indices)  # TF sorts without checking bounds here
        return indices[order], values[order]
    return compute


def sparse_reorder_op(indices: Any, values: Any, shape: Any, name: Optional[str] = None) -> Any:
    return apply_op(SparseReorder, name=name, input_indices=indices, input_values=values, input_shape=shape)


# ---------------------------------------------------------------------------------------------
# SparseReshape
# ---------------------------------------------------------------------------------------------
def _reshape_shape(op: Operation) -> list[TensorShape]:
    rows = _matrix_rows(op, 0)
    new_rank = _vector_len(op, 2)
    return [TensorShape([rows, new_rank]), TensorShape([new_rank])]


SparseReshape = define_op(
    "SparseReshape", inputs=["input_indices: int64", "input_shape: int64", "new_shape: int64"],
    outputs=["output_indices: int64", "output_shape: int64"], shape_fn=_reshape_shape)


def _strides(shape: np.ndarray) -> np.ndarray:
    dims = shape.astype(np.int64)
    return np.array([int(np.prod(dims[d + 1:])) for d in range(dims.size)], np.int64)


def resolve_reshape(old: np.ndarray, new: np.ndarray) -> np.ndarray:
    """The new dense shape with its one -1 filled in, checked against the old element count."""
    total = int(np.prod(old)) if old.size else 1
    unknown = np.flatnonzero(new == -1)
    if unknown.size > 1:
        raise invalid(f"only one output dimension may be -1, not both {unknown[0]} and {unknown[1]}")
    if np.any(new < -1):
        i = int(np.flatnonzero(new < -1)[0])
        raise invalid(f"size {i} must be non-negative, not {int(new[i])}")
    out = new.astype(np.int64).copy()
    known = int(np.prod(out[out != -1])) if out.size else 1
    if unknown.size:
        if known == 0 or total % known:
            raise invalid(f"Input to reshape is a SparseTensor with {total} dense values, but the requested "
                          f"shape requires a multiple of {known}. inputs_shape={format_dims(old)}")
        out[unknown[0]] = total // known
    elif known != total:
        raise invalid(f"Input to reshape is a tensor with {total} dense values, but the requested shape has "
                      f"{known}. inputs_shape={format_dims(old)} output_shape={format_dims(out)}")
    return out


@SparseReshape.kernel()
def _reshape_kernel(ctx: KernelContext) -> Callable:
    def compute(indices: Any, shape: Any, new_shape: Any) -> Any:
        if indices.ndim != 2:
            raise invalid(f"Input indices should be a matrix but received shape {format_dims(indices.shape)}")
        if shape.ndim != 1 or new_shape.ndim != 1:
            raise invalid("Input shape and target shape should be vectors")
        if indices.shape[1] != shape.shape[0]:
            raise invalid(f"Input shape should have {indices.shape[1]} entries, got {shape.shape[0]}")
        out_shape = resolve_reshape(shape, new_shape)
        # Row-major positions by strides, unchecked as in TF (an index past the shape maps on).
        linear = indices @ _strides(shape) if indices.shape[1] else np.zeros(indices.shape[0], np.int64)
        coords = np.empty((indices.shape[0], out_shape.size), np.int64)
        for d, stride in enumerate(_strides(out_shape)):
            coords[:, d], linear = np.divmod(linear, stride) if stride else (linear * 0, linear)
        return coords, out_shape
    return compute


def sparse_reshape_op(indices: Any, shape: Any, new_shape: Any, name: Optional[str] = None) -> Any:
    return apply_op(SparseReshape, name=name, input_indices=indices, input_shape=shape, new_shape=new_shape)


# ---------------------------------------------------------------------------------------------
# SparseConcat
# ---------------------------------------------------------------------------------------------
def _concat_shape(op: Operation) -> list[TensorShape]:
    n = op._get_attr("N")
    rows: Optional[int] = 0
    rank = Dimension(None)
    for i in range(n):
        shape = op.inputs[i].shape.with_rank(2)
        rank = rank.merge_with(shape.dims[1])
        rows = None if rows is None or shape.dims[0].value is None else rows + shape.dims[0].value
    for i in range(n):
        op.inputs[n + i].shape.with_rank(1)
        rank = rank.merge_with(op.inputs[2 * n + i].shape.with_rank(1).dims[0])
    return [TensorShape([rows, rank]), TensorShape([rows]), TensorShape([rank])]


SparseConcat = define_op(
    "SparseConcat", inputs=["indices: N * int64", "values: N * T", "shapes: N * int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"],
    attrs=["concat_dim: int", "N: int >= 2", "T: type"], shape_fn=_concat_shape)


@SparseConcat.kernel()
def _concat_kernel(ctx: KernelContext) -> Callable:
    n, axis = ctx.attr("N"), ctx.attr("concat_dim")

    def compute(*args: Any) -> Any:
        indices, values, shapes = args[:n], args[n:2 * n], args[2 * n:]
        for i in range(n):
            check_sparse_inputs(indices[i], values[i], shapes[i], what=f"Input {i}")
        rank = shapes[0].shape[0]
        if not -rank <= axis < rank:
            raise invalid(f"Concat dimension must be in range [{-rank}, {rank}), got {axis}")
        dim = axis + rank if axis < 0 else axis
        offset, moved = 0, []
        for i in range(n):
            if shapes[i].shape[0] != rank:
                raise invalid(f"Ranks of all input tensors must match: expected {rank} but got "
                              f"{shapes[i].shape[0]} at position {i}")
            for d in range(rank):
                if d != dim and shapes[i][d] != shapes[0][d]:
                    raise invalid(f"Input shapes must match: expected {shapes[0][d]} for dimension {d} but "
                                  f"got {shapes[i][d]} at position {i}")
            shifted = indices[i].copy()
            shifted[:, dim] += offset
            offset += int(shapes[i][dim])
            moved.append(shifted)
        out_idx = np.concatenate(moved, axis=0)
        out_val = np.concatenate(values, axis=0)
        order = standard_order(out_idx)
        out_shape = shapes[0].copy()
        out_shape[dim] = offset
        return out_idx[order], out_val[order], out_shape
    return compute


def sparse_concat_op(axis: int, indices: Sequence[Any], values: Sequence[Any], shapes: Sequence[Any],
                     name: Optional[str] = None) -> Any:
    return apply_op(SparseConcat, name=name, indices=list(indices), values=list(values), shapes=list(shapes),
                    concat_dim=axis)


# ---------------------------------------------------------------------------------------------
# SparseSlice and SparseSliceGrad
# ---------------------------------------------------------------------------------------------
def _slice_shape(op: Operation) -> list[TensorShape]:
    rank = op.inputs[0].shape.with_rank(2).dims[1].merge_with(_vector_len(op, 2))
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([rank])]


SparseSlice = define_op(
    "SparseSlice", inputs=["indices: int64", "values: T", "shape: int64", "start: int64", "size: int64"],
    outputs=["output_indices: int64", "output_values: T", "output_shape: int64"], attrs=["T: type"],
    shape_fn=_slice_shape)


def slice_mask(indices: np.ndarray, start: np.ndarray, end: np.ndarray) -> np.ndarray:
    return np.all((indices >= start) & (indices < end), axis=1)


@SparseSlice.kernel()
def _slice_kernel(ctx: KernelContext) -> Callable:
    def compute(indices: Any, values: Any, shape: Any, start: Any, size: Any) -> Any:
        check_sparse_inputs(indices, values, shape)
        rank = shape.shape[0]
        if start.shape != (rank,) or size.shape != (rank,):
            raise invalid(f"Expected start and size to be vectors of length {rank}, got "
                          f"{format_dims(start.shape)} and {format_dims(size.shape)}")
        end = np.minimum(start + size, shape)
        keep = slice_mask(indices, start, end)
        out_shape = np.maximum(end - start, 0).astype(np.int64)
        return (indices[keep] - start).astype(np.int64), values[keep], out_shape
    return compute


SparseSliceGrad = define_op(
    "SparseSliceGrad",
    inputs=["backprop_val_grad: T", "input_indices: int64", "input_start: int64", "output_indices: int64"],
    outputs=["val_grad: T"], attrs=["T: {float16, float32, float64, int32, int64, complex64, complex128}"],
    shape_fn=lambda op: [TensorShape([_matrix_rows(op, 1)])])
SparseSliceGrad.not_differentiable()


@SparseSliceGrad.kernel()
def _slice_grad_kernel(ctx: KernelContext) -> Callable:
    def compute(grad: Any, indices: Any, start: Any, out_indices: Any) -> Any:
        out = np.zeros(indices.shape[0], dtype=grad.dtype)
        if out_indices.shape[0]:
            # The slice kept its entries in input order: the k-th kept input row is output row k.
            shifted = indices - start
            kept = np.flatnonzero(np.all(shifted >= 0, axis=1))
            matches = match_rows(shifted[kept], out_indices)
            if np.any(matches < 0):
                raise invalid("Elements of backprop_val_grad aren't all propagated. Num elements: "
                              f"{grad.shape[0]}, used: {int(np.sum(matches >= 0))}")
            out[kept[matches]] = grad
        return out
    return compute


def match_rows(candidates: np.ndarray, wanted: np.ndarray) -> np.ndarray:
    """For each row of `wanted`, the position of an equal row in `candidates` (-1 if none)."""
    if candidates.shape[0] == 0:
        return np.full(wanted.shape[0], -1, np.int64)
    both = np.concatenate([candidates, wanted], axis=0)
    _, inverse = np.unique(both, axis=0, return_inverse=True)
    inverse = inverse.reshape(-1)
    first = np.full(int(inverse.max()) + 1, -1, np.int64)
    first[inverse[:candidates.shape[0]][::-1]] = np.arange(candidates.shape[0])[::-1]
    return first[inverse[candidates.shape[0]:]]


# ---------------------------------------------------------------------------------------------
# SparseSplit
# ---------------------------------------------------------------------------------------------
def _split_shape(op: Operation) -> list[TensorShape]:
    n = op._get_attr("num_split")
    rank = op.inputs[1].shape.with_rank(2).dims[1].merge_with(_vector_len(op, 3))
    return [TensorShape([None, rank])] * n + [TensorShape([None])] * n + [TensorShape([rank])] * n


SparseSplit = define_op(
    "SparseSplit", inputs=["split_dim: int64", "indices: int64", "values: T", "shape: int64"],
    outputs=["output_indices: num_split * int64", "output_values: num_split * T",
             "output_shape: num_split * int64"],
    attrs=["num_split: int >= 1", "T: type"], shape_fn=_split_shape)


@SparseSplit.kernel()
def _split_kernel(ctx: KernelContext) -> Callable:
    num = ctx.attr("num_split")

    def compute(split_dim: Any, indices: Any, values: Any, shape: Any) -> Any:
        check_sparse_inputs(indices, values, shape)
        rank = shape.shape[0]
        axis = int(split_dim)
        if not -rank <= axis < rank:
            raise invalid(f"Input split_dim should be between {-rank} and {rank}, got {axis}")
        axis = axis + rank if axis < 0 else axis
        size = int(shape[axis])
        if num > size:
            raise invalid(f"Input num_split should be between 1 and the splitting dimension size ({size}), "
                          f"got {num}")
        check_in_bounds(indices, shape)
        base, extra = divmod(size, num)
        starts = np.array([i * base + min(i, extra) for i in range(num + 1)], np.int64)
        order = standard_order(indices)
        indices, values = indices[order], values[order]
        piece = np.searchsorted(starts, indices[:, axis], side="right") - 1
        outs_i, outs_v, outs_s = [], [], []
        for i in range(num):
            keep = piece == i
            idx = indices[keep].copy()
            idx[:, axis] -= starts[i]
            piece_shape = shape.copy()
            piece_shape[axis] = starts[i + 1] - starts[i]
            outs_i.append(idx)
            outs_v.append(values[keep])
            outs_s.append(piece_shape)
        return tuple(outs_i + outs_v + outs_s)
    return compute


# ---------------------------------------------------------------------------------------------
# SparseFillEmptyRows and SparseFillEmptyRowsGrad
# ---------------------------------------------------------------------------------------------
def _fill_shape(op: Operation) -> list[TensorShape]:
    rank = op.inputs[0].shape.with_rank(2).dims[1].merge_with(_vector_len(op, 2))
    rows = _matrix_rows(op, 0).merge_with(_vector_len(op, 1))
    op.inputs[3].shape.with_rank(0)
    dense = const_ints(op.inputs[2])
    dense_rows = dense[0] if dense else None
    return [TensorShape([None, rank]), TensorShape([None]), TensorShape([dense_rows]), TensorShape([rows])]


SparseFillEmptyRows = define_op(
    "SparseFillEmptyRows", inputs=["indices: int64", "values: T", "dense_shape: int64", "default_value: T"],
    outputs=["output_indices: int64", "output_values: T", "empty_row_indicator: bool",
             "reverse_index_map: int64"], attrs=["T: type"], shape_fn=_fill_shape)


@SparseFillEmptyRows.kernel()
def _fill_kernel(ctx: KernelContext) -> Callable:
    def compute(indices: Any, values: Any, dense_shape: Any, default: Any) -> Any:
        check_sparse_inputs(indices, values, dense_shape)
        if np.ndim(default) != 0:
            raise invalid(f"default_value must be a scalar, saw: {format_dims(np.shape(default))}")
        if dense_shape.shape[0] == 0:
            raise invalid("dense_shape must be a vector of length >= 1")
        rows = int(dense_shape[0])
        bad = np.flatnonzero((indices[:, 0] < 0) | (indices[:, 0] >= rows)) if indices.size else []
        if len(bad):
            i = int(bad[0])
            raise invalid(f"indices({i}, 0) is invalid: {int(indices[i, 0])} >= {rows}")
        counts = np.bincount(indices[:, 0], minlength=rows) if rows else np.zeros(0, np.int64)
        empty = counts == 0
        empty_rows = np.flatnonzero(empty)
        filler = np.zeros((empty_rows.size, indices.shape[1]), np.int64)
        filler[:, 0] = empty_rows
        # Stable by row: entries keep their order inside a row; a filler goes at its row.
        all_idx = np.concatenate([indices, filler], axis=0)
        all_val = np.concatenate([values, np.full(empty_rows.size, default, dtype=values.dtype)])
        order = np.argsort(all_idx[:, 0], kind="stable")
        position = np.empty_like(order)
        position[order] = np.arange(order.size)
        return all_idx[order], all_val[order], empty, position[:indices.shape[0]].astype(np.int64)
    return compute


SparseFillEmptyRowsGrad = define_op(
    "SparseFillEmptyRowsGrad", inputs=["reverse_index_map: int64", "grad_values: T"],
    outputs=["d_values: T", "d_default_value: T"], attrs=["T: type"],
    shape_fn=lambda op: [TensorShape([_vector_len(op, 0)]), TensorShape([])])
SparseFillEmptyRowsGrad.not_differentiable()


@SparseFillEmptyRowsGrad.kernel()
def _fill_grad_kernel(ctx: KernelContext) -> Callable:
    def compute(reverse: Any, grad: Any) -> Any:
        d_values = grad[reverse]
        return d_values, np.asarray(grad.sum() - d_values.sum(), dtype=grad.dtype)
    return compute

