"""Sparse-to-dense conversion: the SparseToDense op, `tf.sparse_to_dense`,
`tf.sparse_tensor_to_dense` and `tf.sparse_placeholder` (TF1's sparse_ops)."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.sparse_tensor import SparseTensor, convert_to_tensor_or_sparse_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops._util import invalid

__all__ = ["sparse_to_dense", "sparse_tensor_to_dense", "sparse_placeholder"]


def _sparse_to_dense_shape(op: Any) -> list[TensorShape]:
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
def _sparse_to_dense_kernel(ctx: Any) -> Callable:
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


@SparseToDense.gradient
def _sparse_to_dense_grad(op: Any, grad: Any) -> list[Any]:
    """d sparse_values: the incoming gradient at each index (gathered from the flattened
    gradient at row-major linear positions); d default_value: the rest of the gradient's sum."""
    from tensorweave.ops import array as array_ops, math as math_ops
    from tensorweave.ops.array import creation as fill_ops, slicing as slicing_ops
    from tensorweave.ops.math import reduction as reduction_ops
    indices, output_shape, values = op.inputs[0], op.inputs[1], op.inputs[2]
    with name_scope("SparseToDenseGrad"):
        shape = math_ops.cast(output_shape, _dtypes.int64)
        rank = array_ops.size(shape)
        positions = fill_ops.range(rank)
        # strides[k] = prod(shape[k+1:]): a row-major position's weight for coordinate k.
        later = math_ops.greater(array_ops.expand_dims(positions, 0), array_ops.expand_dims(positions, 1))
        factors = math_ops.where(later, array_ops.tile(array_ops.expand_dims(shape, 0), [rank, 1]),
                                 fill_ops.ones_like(later, dtype=_dtypes.int64))
        strides = reduction_ops.reduce_prod(factors, axis=1)
        coords = array_ops.reshape(math_ops.cast(indices, _dtypes.int64), [-1, rank])
        linear = reduction_ops.reduce_sum(coords * strides, axis=1)
        values_grad = slicing_ops.gather(array_ops.reshape(grad, [-1]), linear)
        default_grad = reduction_ops.reduce_sum(grad) - reduction_ops.reduce_sum(values_grad)
        if values.shape.ndims == 0:  # one value broadcast to every index
            values_grad = reduction_ops.reduce_sum(values_grad)
    return [None, None, values_grad, default_grad]


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


def sparse_placeholder(dtype: Any, shape: Any = None, name: Optional[str] = None) -> SparseTensor:
    """A SparseTensor whose three parts must be fed (feed a tf.SparseTensorValue for it).
    A fully known `shape` makes `dense_shape` a constant."""
    from tensorweave.ops.array.constant_op import constant, placeholder
    from tensorweave.framework.tensor_shape import as_shape
    static = None if shape is None else as_shape(shape)
    rank = None if static is None else static.ndims
    with name_scope(name, "SparsePlaceholder"):
        values = placeholder(dtype, shape=[None], name="values")
        indices = placeholder(_dtypes.int64, shape=[None, rank], name="indices")
        if static is not None and static.is_fully_defined():
            dense_shape = constant(np.array(static.as_list(), dtype=np.int64), name="shape")
        else:
            dense_shape = placeholder(_dtypes.int64, shape=[rank], name="shape")
    return SparseTensor(indices, values, dense_shape)
