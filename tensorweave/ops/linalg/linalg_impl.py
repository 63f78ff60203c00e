"""Linear-algebra functions built from other ops, as TF builds them: tf.eye (identity
matrices, batched and rectangular) and tf.norm (vector p-norms and the Frobenius, 1 and inf
matrix norms)."""
from __future__ import annotations

import numbers
from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array as array_ops, math as math_ops
from tensorweave.ops.linalg import matrix as linalg_ops

__all__ = ["eye", "norm"]


def eye(num_rows: Any, num_columns: Any = None, batch_shape: Any = None, dtype: Any = _dtypes.float32,
        name: Optional[str] = None) -> Any:
    """A [*batch_shape, num_rows, num_columns] tensor of identity matrices (ones on the main
    diagonal, zeros elsewhere); `num_columns` defaults to `num_rows`."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with name_scope(name, "eye", [num_rows, num_columns, batch_shape]):
        square = num_columns is None
        batch = [] if batch_shape is None else list(batch_shape)
        rows = _dimension(num_rows, "num_rows")
        cols = rows if square else _dimension(num_columns, "num_columns")
        size = min(rows, cols) if isinstance(rows, int) and isinstance(cols, int) else math_ops.minimum(rows, cols)
        diag_shape = array_ops.stack(batch + [size]) if isinstance(size, Tensor) else batch + [size]
        identity = linalg_ops.matrix_diag(array_ops.ones(diag_shape, dtype=dtype), name="diag")
        if square:
            return identity
        # the square identity of the smaller side, padded with zero rows or columns
        padding = [[0, 0]] * len(batch) + [[0, rows - size], [0, cols - size]]
        return array_ops.pad(identity, padding, name="set_diag")


def _dimension(value: Any, what: str) -> Any:
    if isinstance(value, (numbers.Integral, np.integer)) and not isinstance(value, bool):
        if value < 0:
            raise ValueError(f"{what} must be non-negative, got {value}")
        return int(value)
    tensor = convert_to_tensor(value, name=what)
    if not tensor.dtype.base_dtype.is_integer or tensor.shape.ndims not in (None, 0):
        raise TypeError(f"{what} must be a non-negative integer scalar, got {value!r}")
    return tensor


_MATRIX_ORDS = ("euclidean", "fro", 1, np.inf)


def norm(tensor: Any, ord: Any = "euclidean", axis: Any = None, keepdims: Optional[bool] = None,  # noqa: A002
         name: Optional[str] = None, keep_dims: Optional[bool] = None) -> Any:
    """The norm of `tensor` over `axis`: a vector norm over one axis (or all of them, for
    axis=None), a matrix norm over a pair of axes. `ord` is 'euclidean' (= 'fro'), 1, 2,
    np.inf or any p > 0 for vectors; 'euclidean'/'fro', 1 or np.inf for matrices."""
    if keep_dims is not None:
        if keepdims is not None:
            raise ValueError("Cannot specify both 'keep_dims' and 'keepdims'")
        keepdims = keep_dims
    keepdims = bool(keepdims)
    matrix = _is_matrix_norm(axis)
    _check_ord(ord, matrix)
    with name_scope(name, "norm", [tensor]):
        x = convert_to_tensor(tensor, name="tensor")
        axes = list(axis) if matrix else axis
        if ord in ("euclidean", "fro", 2, 2.0):
            squares = x * _conj(x)
            result = math_ops.sqrt(math_ops.reduce_sum(squares, axes, keepdims=True))
        else:
            magnitude = math_ops.abs(x)
            if matrix:
                rows, cols = axes
                # 1: the largest column sum; inf: the largest row sum
                summed, kept = (rows, cols) if ord == 1 else (cols, rows)
                result = math_ops.reduce_max(math_ops.reduce_sum(magnitude, summed, keepdims=True),
                                             kept, keepdims=True)
            elif ord == np.inf:
                result = math_ops.reduce_max(magnitude, axes, keepdims=True)
            elif ord == 1:
                result = math_ops.reduce_sum(magnitude, axes, keepdims=True)
            else:
                p = math_ops.cast(ord, magnitude.dtype.base_dtype)
                result = math_ops.pow(math_ops.reduce_sum(math_ops.pow(magnitude, p), axes, keepdims=True),
                                      1.0 / p)
        if not keepdims:
            result = array_ops.squeeze(result, axes)
        return result


def _conj(x: Tensor) -> Tensor:
    from tensorweave.ops.math.grad import conj
    return conj(x)


def _is_matrix_norm(axis: Any) -> bool:
    if axis is None or isinstance(axis, (numbers.Integral, np.integer)):
        return False
    if isinstance(axis, (list, tuple)) and len(axis) == 2 and axis[0] != axis[1] and all(
            isinstance(a, (numbers.Integral, np.integer)) for a in axis):
        return True
    if isinstance(axis, (list, tuple)) and len(axis) == 1 and isinstance(axis[0], (numbers.Integral, np.integer)):
        return False
    raise ValueError(f"'axis' must be None, an integer, or a tuple of 2 unique integers, got {axis}")


def _check_ord(ord: Any, matrix: bool) -> None:  # noqa: A002
    if matrix:
        if ord not in _MATRIX_ORDS:
            raise ValueError(f"'ord' must be a supported matrix norm in {list(_MATRIX_ORDS)}, got {ord}")
        return
    if ord in ("euclidean", "fro"):
        return
    if not isinstance(ord, (numbers.Real, np.floating, np.integer)) or isinstance(ord, bool) or not ord > 0:
        raise ValueError(f"'ord' must be a supported vector norm, got {ord}")
