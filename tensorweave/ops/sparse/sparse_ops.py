"""Sparse-to-dense conversion: the SparseToDense op, `tf.sparse_to_dense` and
`tf.sparse_tensor_to_dense` (TF1's sparse_ops). The gradient is in grad.py."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops._util import invalid

__all__ = ["sparse_to_dense", "sparse_tensor_to_dense"]


def _sparse_to_dense_shape(op: Operation) -> list[TensorShape]:
    indices, output_shape = op.inputs[0].shape, op.inputs[1].shape
    if indices.ndims is not None and indices.ndims > 2:
        raise ValueError(f"Shape must be at most rank 2 but is rank {indices.ndims} for "
                         f"'{op.name}' (op: 'SparseToDense').")
    output_shape.with_rank_at_most(1)
    return [tensor_util.constant_value_as_shape(op.inputs[1])]


SparseToDense = define_op(
    "SparseToDense",
    inputs=["sparse_indices: Tindices", "output_shape: Tindices", "sparse_values: T", "default_value: T"],
    outputs=["dense: T"],
    attrs=["validate_indices: bool = true", "T: type", "Tindices: {int32, int64}"],
    shape_fn=_sparse_to_dense_shape)


def _fmt(values: Any) -> str:
    return "[" + ",".join(str(int(v)) for v in values) + "]"


def _index_matrix(indices: Any, values: Any, default: Any, shape: Any) -> Any:
    """Indices as an [N, rank] matrix, after TF's checks on the inputs' shapes."""
    if indices.ndim > 2:
        raise invalid(f"sparse_indices should be a scalar, vector, or matrix, got shape {indices.shape}")
    if shape.ndim > 1:
        raise invalid(f"output_shape should be a scalar or vector, got shape {shape.shape}")
    n = indices.shape[0] if indices.ndim > 0 else 1
    rank = indices.shape[1] if indices.ndim > 1 else 1
    if not (values.ndim == 0 or (values.ndim == 1 and values.shape[0] == n)):
        raise invalid(f"sparse_values has incorrect shape {list(values.shape)}, should be [] or [{n}]")
    if np.ndim(default) != 0:
        raise invalid(f"default_value should be a scalar, got shape {list(np.shape(default))}")
    if shape.size != rank:
        raise invalid(f"output_shape has incorrect number of elements: {shape.size} should be: {rank}")
    return indices.reshape(n, rank)


def _check_indices(idx: Any, dims: Any, ordered: bool) -> None:
    """TF's validation: every index in bounds and, with `ordered`, strictly increasing in
    row-major order (no repeats)."""
    bad = np.flatnonzero(np.any((idx < 0) | (idx >= dims), axis=1))
    if bad.size:
        i = bad[0]
        if not ordered:
            raise invalid(f"Indices are not valid (out of bounds).  Shape: {_fmt(dims)}")
        raise invalid(f"indices[{i}] = {_fmt(idx[i])} is out of bounds: need 0 <= index < {_fmt(dims)}")
    if not ordered or idx.shape[0] < 2:
        return
    linear = np.ravel_multi_index(tuple(idx.T), tuple(int(d) for d in dims))
    steps = np.diff(linear)
    wrong = np.flatnonzero(steps <= 0)
    if wrong.size:
        i = wrong[0] + 1
        what = "is repeated" if steps[i - 1] == 0 else \
            "is out of order. Many sparse ops require sorted indices."
        raise invalid(f"indices[{i}] = {_fmt(idx[i])} {what}")


@SparseToDense.kernel()
def _sparse_to_dense_kernel(ctx: KernelContext) -> Callable:
    validate = ctx.attr("validate_indices")
    np_type = ctx.output_dtypes[0].as_numpy_dtype

    def compute(indices: Any, shape: Any, values: Any, default: Any) -> Any:
        idx = _index_matrix(indices, values, default, shape)
        dims = shape.reshape(-1).astype(np.int64)
        if np.any(dims < 0):
            raise invalid(f"output_shape has negative dimensions: {_fmt(dims)}")
        _check_indices(idx, dims, validate)
        out = np.full(tuple(int(d) for d in dims), default, dtype=np_type)
        out[tuple(idx.T)] = values
        return out

    return compute


def sparse_to_dense(sparse_indices: Any, output_shape: Any, sparse_values: Any, default_value: Any = 0,
                    validate_indices: bool = True, name: Optional[str] = None) -> Tensor:
    """A dense tensor of `output_shape` holding `sparse_values` at `sparse_indices` (a scalar,
    a vector of positions in a 1-D output, or an [N, rank] matrix) and `default_value`
    elsewhere. With `validate_indices`, indices must be in bounds, sorted and unique."""
    return apply_op(SparseToDense, name=name, sparse_indices=sparse_indices, output_shape=output_shape,
                    sparse_values=sparse_values, default_value=default_value,
                    validate_indices=validate_indices)


def sparse_tensor_to_dense(sp_input: Any, default_value: Any = 0, validate_indices: bool = True,
                           name: Optional[str] = None) -> Tensor:
    """The dense tensor a SparseTensor stands for; missing entries are `default_value`."""
    sp_input = convert_to_tensor_or_sparse_tensor(sp_input)
    if not isinstance(sp_input, SparseTensor):
        raise TypeError(f"Input must be a SparseTensor, got {type(sp_input).__name__}.")
    return sparse_to_dense(sp_input.indices, sp_input.dense_shape, sp_input.values,
                           default_value=default_value, validate_indices=validate_indices,
                           name=name or "SparseToDense")
