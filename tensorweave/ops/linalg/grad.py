"""Gradients of the linear-algebra ops (matrix.py), with TensorFlow's formulas; imported only
by tensorweave/gradients.py. They are built from public ops, so they differentiate again."""
from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array as array_ops
from tensorweave.ops import math as m
from tensorweave.ops.linalg.linalg_impl import matmul, matrix_transpose
from tensorweave.ops.linalg.matrix import (
    BatchMatMulV2, Cholesky, Diag, DiagPart, MatMul, MatrixDeterminant, MatrixDiag, MatrixDiagPart,
    MatrixInverse, MatrixSolve, diag, diag_part, matrix_diag, matrix_diag_part, matrix_inverse,
    matrix_solve)
from tensorweave.ops.math.math_impl import conj


@MatMul.gradient(dense_grad=True)
def _matmul_grad(op: Operation, grad: Tensor) -> list[Any]:
    """The four transposition cases; complex inputs enter conjugated (adjoint, not transpose)."""
    ta, tb = op._get_attr("transpose_a"), op._get_attr("transpose_b")
    a, b = conj(op.inputs[0]), conj(op.inputs[1])
    if not ta and not tb:
        return [matmul(grad, b, transpose_b=True), matmul(a, grad, transpose_a=True)]
    if not ta and tb:
        return [matmul(grad, b), matmul(grad, a, transpose_a=True)]
    if ta and not tb:
        return [matmul(b, grad, transpose_b=True), matmul(a, grad)]
    return [matmul(b, grad, transpose_a=True, transpose_b=True),
            matmul(grad, a, transpose_a=True, transpose_b=True)]


# Batch dimensions broadcast: each input's gradient is computed at the broadcast batch shape
# (with the input's own matrix dims) and tf.gradients sums it down to the input's shape.
@BatchMatMulV2.gradient(dense_grad=True, broadcasts=True)
def _batch_matmul_grad(op: Operation, grad: Tensor) -> list[Any]:
    adj_x, adj_y = op._get_attr("adj_x"), op._get_attr("adj_y")
    x, y = op.inputs[0], op.inputs[1]
    if not adj_x and not adj_y:
        return [matmul(grad, y, adjoint_b=True), matmul(x, grad, adjoint_a=True)]
    if not adj_x and adj_y:
        return [matmul(grad, y), matmul(grad, x, adjoint_a=True)]
    if adj_x and not adj_y:
        return [matmul(y, grad, adjoint_b=True), matmul(x, grad)]
    return [matmul(y, grad, adjoint_a=True, adjoint_b=True), matmul(grad, x, adjoint_a=True, adjoint_b=True)]


@MatrixInverse.gradient(dense_grad=True)
def _matrix_inverse_grad(op: Operation, grad: Tensor) -> list[Any]:
    """d(C) = -C d(A') C for C = inv(A'), A' = A or adjoint(A): the gradient is -C^H G C^H,
    adjointed once more when the op inverted the adjoint."""
    c = op.outputs[0]
    result = -matmul(c, matmul(grad, c, adjoint_b=True), adjoint_a=True)
    return [matrix_transpose(result, conjugate=True) if op._get_attr("adjoint") else result]


@MatrixDeterminant.gradient(dense_grad=True)
def _matrix_determinant_grad(op: Operation, grad: Tensor) -> list[Any]:
    """d det(A) / dA = det(A) inv(A)^H (conjugated for complex A)."""
    a, det = op.inputs[0], op.outputs[0]
    multipliers = array_ops.expand_dims(array_ops.expand_dims(grad * conj(det), -1), -1)
    return [multipliers * matrix_inverse(a, adjoint=True)]


def _lower_half_mask(n: Any, dtype: Any) -> Any:
    """[n, n]: 1 below the diagonal, 1/2 on it, 0 above (TF's Phi for the Cholesky gradient)."""
    static = n if isinstance(n, int) else None
    if static is not None:
        mask = np.tril(np.ones((static, static))) - 0.5 * np.eye(static)
        return convert_to_tensor(mask.astype(dtype.as_numpy_dtype))
    r = array_ops.range(0, n, 1)
    rows, cols = array_ops.expand_dims(r, 1), array_ops.expand_dims(r, 0)
    lower = m.cast(m.greater_equal(rows, cols), dtype)
    return lower - 0.5 * m.cast(m.equal(rows, cols), dtype)


@Cholesky.gradient(dense_grad=True)
def _cholesky_grad(op: Operation, grad: Tensor) -> list[Any]:
    """A = L L^H: grad_A = sym(L^-H Phi(L^H G) L^-1), Phi taking the lower triangle with the
    diagonal halved and sym(X) = (X + X^H) / 2 (Murray 2016, as TF)."""
    l = op.outputs[0]  # noqa: E741
    n = l.shape[-1].value if l.shape.ndims is not None else None
    if n is None:
        n = array_ops.shape(l)[-1]
    l_inverse = matrix_inverse(l)
    middle = matmul(l, grad, adjoint_a=True) * _lower_half_mask(n, l.dtype.base_dtype)
    grad_a = matmul(matmul(l_inverse, middle, adjoint_a=True), l_inverse)
    return [0.5 * (grad_a + matrix_transpose(grad_a, conjugate=True))]


@MatrixSolve.gradient(dense_grad=True)
def _matrix_solve_grad(op: Operation, grad: Tensor) -> list[Any]:
    """X = A^-1 B: grad_B = A^-H G, grad_A = -grad_B X^H (adjointed when the op solved with A^H)."""
    a, c = op.inputs[0], op.outputs[0]
    adjoint = op._get_attr("adjoint")
    grad_b = matrix_solve(a, grad, adjoint=not adjoint)
    if adjoint:
        grad_a = -matmul(c, grad_b, adjoint_b=True)
    else:
        grad_a = -matmul(grad_b, c, adjoint_b=True)
    return [grad_a, grad_b]


@Diag.gradient(dense_grad=True)
def _diag_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [diag_part(grad)]


@DiagPart.gradient(dense_grad=True)
def _diag_part_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [diag(grad)]


@MatrixDiag.gradient(dense_grad=True)
def _matrix_diag_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [matrix_diag_part(grad)]


@MatrixDiagPart.gradient(dense_grad=True)
def _matrix_diag_part_grad(op: Operation, grad: Tensor) -> list[Any]:
    """The diagonal gradient on the diagonal of a zero matrix of the input's shape: for a
    non-square [..., M, N] input, matrix_diag(grad) ([..., k, k], k = min(M, N)) zero-padded."""
    x = op.inputs[0]
    rows_cols = x.shape[-2:] if x.shape.ndims is not None else None
    square = rows_cols is not None and rows_cols.is_fully_defined() and \
        rows_cols[0].value == rows_cols[1].value
    diagonal = matrix_diag(grad)
    if square:
        return [diagonal]
    shape = array_ops.shape(x)
    rows, cols = shape[-2], shape[-1]
    k = m.minimum(rows, cols)
    batch_rank = array_ops.rank(x) - 2
    paddings = array_ops.concat([array_ops.zeros(array_ops.stack([batch_rank, 2]), _dtypes.int32),
                                 [[0, rows - k], [0, cols - k]]], 0)
    result = array_ops.pad(diagonal, paddings)
    result.set_shape(x.shape)
    return [result]
