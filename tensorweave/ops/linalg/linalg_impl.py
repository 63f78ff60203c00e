"""Linear-algebra functions built from other families' ops, as TF builds them: tf.matmul
(MatMul or BatchMatMulV2, conjugating an operand where an adjoint must become a transpose or the
reverse), tf.trace, tf.matrix_transpose, tf.eye (identity matrices, batched and rectangular)
and tf.norm (vector p-norms and the Frobenius, 1 and inf matrix norms)."""
from __future__ import annotations

import numbers
from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.array_impl import range as _range
from tensorweave.ops.array.creation import ones, pad
from tensorweave.ops.array.joining import concat, stack
from tensorweave.ops.array.shaping import rank, squeeze
from tensorweave.ops.array.transposition import transpose
from tensorweave.ops.linalg.matrix import BatchMatMulV2, MatMul, matrix_diag, matrix_diag_part
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.elementwise import abs as _abs, minimum, pow as _pow, sqrt
from tensorweave.ops.math.math_impl import conj
from tensorweave.ops.math.reduction import reduce_max, reduce_sum

__all__ = ["matmul", "trace", "matrix_transpose", "eye", "norm"]


def matmul(a: Any, b: Any, transpose_a: bool = False, transpose_b: bool = False, adjoint_a: bool = False,
           adjoint_b: bool = False, a_is_sparse: bool = False, b_is_sparse: bool = False,
           name: Optional[str] = None) -> Any:
    """Matrix product a @ b (TF1's tf.matmul): rank-2 operands use MatMul, anything else
    BatchMatMulV2 (broadcasting batch dims). The sparsity hints do not change the result."""
    if getattr(type(a), "_eager", False) and type(b) is type(a) and name is None and not (
            transpose_a or transpose_b or adjoint_a or adjoint_b) and a.shape.ndims == 2 and b.shape.ndims == 2:
        # Two eager tensors' plain product: the name scope would name nothing (eager scopes
        # name no ops) and nothing converts, so the op goes straight to its call plan.
        return apply_op(MatMul, a=a, b=b, transpose_a=False, transpose_b=False)
    with name_scope(name, "MatMul", [a, b]) as scope:
        if transpose_a and adjoint_a:
            raise ValueError("Only one of transpose_a and adjoint_a can be True.")
        if transpose_b and adjoint_b:
            raise ValueError("Only one of transpose_b and adjoint_b can be True.")
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, dtype_hint=a.dtype.base_dtype, name="b")
        rank_a, rank_b = a.shape.ndims, b.shape.ndims
        if rank_a is None or rank_a > 2 or rank_b is None or rank_b > 2:
            # BatchMatMulV2 only knows adjoints: a transpose is the adjoint of the conjugate.
            if transpose_a:
                a, adjoint_a = conj(a), True
            if transpose_b:
                b, adjoint_b = conj(b), True
            return apply_op(BatchMatMulV2, name=scope, x=a, y=b, adj_x=adjoint_a, adj_y=adjoint_b)
        # MatMul only knows transposes: an adjoint is the transpose of the conjugate.
        if adjoint_a:
            a, transpose_a = conj(a), True
        if adjoint_b:
            b, transpose_b = conj(b), True
        return apply_op(MatMul, name=scope, a=a, b=b, transpose_a=transpose_a, transpose_b=transpose_b)


def trace(x: Any, name: Optional[str] = None) -> Any:
    """Sum of the main diagonal of each matrix: reduce_sum(matrix_diag_part(x), [-1])."""
    with name_scope(name, "Trace", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return reduce_sum(matrix_diag_part(x), [-1], name=scope)


def matrix_transpose(a: Any, name: str = "matrix_transpose", conjugate: bool = False) -> Any:
    """Swaps the last two dimensions (TF1's tf.matrix_transpose), via Transpose with a perm."""
    with name_scope(name, None, [a]):
        a = convert_to_tensor(a, name="a")
        ndims = a.shape.ndims
        if ndims is not None:
            if ndims < 2:
                raise ValueError(f"Argument 'a' should be a (batch) matrix, with rank >= 2.  "
                                 f"Found: {a.shape}")
            perm: Any = list(range(ndims - 2)) + [ndims - 1, ndims - 2]
        else:  # the perm is computed in the graph: range(rank - 2) + [rank - 1, rank - 2]
            r = rank(a)
            perm = concat((_range(0, r - 2, 1), [r - 1, r - 2]), 0)
        if conjugate and a.dtype.base_dtype.is_complex:
            return transpose(a, perm=perm, conjugate=True)
        return transpose(a, perm=perm)


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
        size = min(rows, cols) if isinstance(rows, int) and isinstance(cols, int) else minimum(rows, cols)
        diag_shape = stack(batch + [size]) if isinstance(size, Tensor) else batch + [size]
        identity = matrix_diag(ones(diag_shape, dtype=dtype), name="diag")
        if square:
            return identity
        # the square identity of the smaller side, padded with zero rows or columns
        padding = [[0, 0]] * len(batch) + [[0, rows - size], [0, cols - size]]
        return pad(identity, padding, name="set_diag")


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
            squares = x * conj(x)
            result = sqrt(reduce_sum(squares, axes, keepdims=True))
        else:
            magnitude = _abs(x)
            if matrix:
                rows, cols = axes
                # 1: the largest column sum; inf: the largest row sum
                summed, kept = (rows, cols) if ord == 1 else (cols, rows)
                result = reduce_max(reduce_sum(magnitude, summed, keepdims=True),
                                             kept, keepdims=True)
            elif ord == np.inf:
                result = reduce_max(magnitude, axes, keepdims=True)
            elif ord == 1:
                result = reduce_sum(magnitude, axes, keepdims=True)
            else:
                p = cast(ord, magnitude.dtype.base_dtype)
                result = _pow(reduce_sum(_pow(magnitude, p), axes, keepdims=True),
                                      1.0 / p)
        if not keepdims:
            result = squeeze(result, axes)
        return result


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
