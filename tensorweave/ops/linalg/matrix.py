"""Matrix ops (white paper Table 1): MatMul, BatchMatMulV2, MatrixInverse, MatrixDeterminant,
Cholesky, MatrixSolve, Diag/DiagPart, MatrixDiag/MatrixDiagPart and their wrappers. tf.matmul
(which conjugates for adjoints), tf.trace and tf.matrix_transpose are built on them in
linalg_impl.py; the gradients are in grad.py.

Shape functions report errors in TF1's format ("... for 'MatMul' (op: 'MatMul') with input
shapes: [2,3], [4,5].").
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorweave.ops._util import fmt_shape, format_dims, invalid, shape_error, with_rank, with_rank_at_least
from tensorweave.ops.kernels.intra_op import ChunkRunner, MatMulSplitter, may_reorient, oriented_dot

__all__ = ["matrix_inverse", "matrix_determinant", "diag", "diag_part", "cholesky", "matrix_solve",
           "matrix_diag", "matrix_diag_part"]

_MATMUL_TYPES = "{float16, float32, float64, int32, int64, complex64, complex128}"
_LINALG_TYPES = "{float64, float32, float16, complex64, complex128}"
_DIAG_TYPES = "{float16, float32, float64, int32, int64, complex64, complex128}"


def merge_dims(op: Operation, a: Dimension, b: Dimension) -> Dimension:
    if a.value is not None and b.value is not None and a.value != b.value:
        raise shape_error(op, f"Dimensions must be equal, but are {a.value} and {b.value}")
    return a if a.value is not None else b


def _broadcast_batch(op: Operation, a: TensorShape, b: TensorShape) -> TensorShape:
    """Broadcasts two batch shapes as TF's BroadcastBinaryOpOutputShapeFnHelper does."""
    if a.ndims is None or b.ndims is None:
        return unknown_shape()
    da, db = a.as_list(), b.as_list()
    n = max(len(da), len(db))
    da, db = [1] * (n - len(da)) + da, [1] * (n - len(db)) + db
    out: list[Optional[int]] = []
    for x, y in zip(da, db):
        if x == 1 or (x is None and y is not None):  # an unknown dim broadcasts to a known y > 1
            out.append(y)
        elif y == 1 or y is None or x == y:
            out.append(x)
        else:
            raise shape_error(op, f"Dimensions must be equal, but are {x} and {y}")
    return TensorShape(out)


def _square_matrices_shape(op: Operation) -> TensorShape:
    """Input 0 as a batch of square matrices [..., M, M] (MatrixInverse, Cholesky, ...)."""
    shape = with_rank_at_least(op, op.inputs[0].shape, 2)
    if shape.ndims is None:
        return shape
    n = merge_dims(op, shape[-2], shape[-1])
    return shape[:-2].concatenate([n, n])


# -- MatMul / BatchMatMulV2 -------------------------------------------------------------------------
def _matmul_shape(op: Operation) -> list[TensorShape]:
    a = with_rank(op, op.inputs[0].shape, 2)
    b = with_rank(op, op.inputs[1].shape, 2)
    ta, tb = op._get_attr("transpose_a"), op._get_attr("transpose_b")
    rows, inner_a = (a[1], a[0]) if ta else (a[0], a[1])
    inner_b, cols = (b[1], b[0]) if tb else (b[0], b[1])
    merge_dims(op, inner_a, inner_b)
    return [TensorShape([rows, cols])]


MatMul = define_op("MatMul", inputs=["a: T", "b: T"], outputs=["product: T"],
                   attrs=["transpose_a: bool = false", "transpose_b: bool = false", f"T: {_MATMUL_TYPES}"],
                   shape_fn=_matmul_shape, expensive=True)


def _statically_checked(op: Operation, ranks: tuple[int, int], inner_dims: tuple[int, int]) -> bool:
    """True when shape inference already proved both operands have exactly `ranks` and equal
    inner dimensions (feeds are checked against static shapes, so this holds at run time)."""
    sa, sb = op.inputs[0].shape, op.inputs[1].shape
    if sa.ndims != ranks[0] or sb.ndims != ranks[1]:
        return False
    return sa[inner_dims[0]].value is not None and sb[inner_dims[1]].value is not None


@MatMul.kernel()
def _matmul_kernel(ctx: KernelContext) -> Callable[..., Any]:
    ta, tb = ctx.attr("transpose_a"), ctx.attr("transpose_b")
    dims = _static_dims(ctx.op, ta, tb)  # (m, k, n), None where unknown
    fast = _matmul_variant(ctx.xp, ta, tb, dims)
    split = MatMulSplitter(ChunkRunner.for_kernel(ctx))
    small = None not in dims and dims[0] * dims[1] * dims[2] < split.min_macs
    if split.parts > 1 and ctx.xp is np and not small:
        fast = _split_large(fast, split, ta, tb)
    if _statically_checked(ctx.op, (2, 2), (0 if ta else 1, 1 if tb else 0)):
        return fast
    inner_a, inner_b = (0 if ta else 1), (1 if tb else 0)

    def compute(a: Any, b: Any) -> Any:
        if a.ndim != 2:
            raise invalid(f"In[0] is not a matrix. Instead it has shape {format_dims(a.shape)}")
        if b.ndim != 2:
            raise invalid(f"In[1] is not a matrix. Instead it has shape {format_dims(b.shape)}")
        if a.shape[inner_a] != b.shape[inner_b]:
            raise invalid(f"Matrix size-incompatible: In[0]: {format_dims(a.shape)}, "
                           f"In[1]: {format_dims(b.shape)}")
        return fast(a, b)

    return compute


def _static_dims(op: Operation, ta: bool, tb: bool) -> tuple[Optional[int], Optional[int], Optional[int]]:
    sa, sb = op.inputs[0].shape, op.inputs[1].shape
    if sa.ndims != 2 or sb.ndims != 2:
        return None, None, None
    (m, k), n = ((sa[1], sa[0]) if ta else (sa[0], sa[1])), (sb[0] if tb else sb[1])
    return m.value, k.value, n.value


# Products this small are called the cheapest way (np.dot's call costs least); the wrappers
# below pay for themselves only on larger ones.
_TINY_MACS = 1 << 20


def _matmul_variant(xp: Any, ta: bool, tb: bool, dims: tuple) -> Callable[..., Any]:
    """The product for one transposition case, chosen once; .T is a view BLAS reads in place.
    A transposed left operand goes to np.matmul (faster than np.dot there: [400x20]@[20x800]
    120 against 145 us); a transposed right one to oriented_dot (intra_op.py) unless the static
    shapes say it would not reorient the product."""
    dot, matmul = xp.dot, xp.matmul
    m, k, n = dims
    tiny = None not in dims and m * k * n < _TINY_MACS
    if not ta and not tb:
        return dot
    if not tb:
        return (lambda a, b: dot(a.T, b)) if tiny or xp is not np else (lambda a, b: matmul(a.T, b))
    # (a tiny product gains nothing from reorienting: [8x64]@[64x64]^T 5.3 us by np.dot, 8.5 us
    # reoriented, the transposing copy included)
    never_reoriented = xp is not np or tiny or (m is not None and n is not None and not may_reorient(m, n))
    if never_reoriented:
        return (lambda a, b: dot(a, b.T)) if not ta else (lambda a, b: dot(a.T, b.T))
    if not ta:
        return lambda a, b: oriented_dot(a, b.T)
    return lambda a, b: oriented_dot(a.T, b.T)


def _split_large(whole: Callable[..., Any], split: MatMulSplitter, ta: bool, tb: bool) -> Callable[..., Any]:
    """Products above the splitter's size run on several threads; the rest as one BLAS call."""

    def compute(a: Any, b: Any) -> Any:
        a2, b2 = (a.T if ta else a), (b.T if tb else b)
        if split.wants_split(a2, b2):
            return split(a2, b2)
        return whole(a, b)

    return compute


def _batch_matmul_shape(op: Operation) -> list[TensorShape]:
    a = with_rank_at_least(op, op.inputs[0].shape, 2)
    b = with_rank_at_least(op, op.inputs[1].shape, 2)
    adj_x, adj_y = op._get_attr("adj_x"), op._get_attr("adj_y")
    rows = a[-1] if adj_x else a[-2]
    cols = b[-2] if adj_y else b[-1]
    merge_dims(op, a[-2] if adj_x else a[-1], b[-1] if adj_y else b[-2])
    if a.ndims is None or b.ndims is None:
        return [unknown_shape()]
    return [_broadcast_batch(op, a[:-2], b[:-2]).concatenate([rows, cols])]


BatchMatMulV2 = define_op("BatchMatMulV2", inputs=["x: T", "y: T"], outputs=["output: T"],
                          attrs=[f"T: {_MATMUL_TYPES}", "adj_x: bool = false", "adj_y: bool = false"],
                          shape_fn=_batch_matmul_shape, expensive=True)


def _adjoint_fn(xp: Any, adjoint: bool, is_complex: bool) -> Optional[Callable[[Any], Any]]:
    if not adjoint:
        return None
    if is_complex:
        return lambda m: xp.conj(m).swapaxes(-1, -2)
    return lambda m: m.swapaxes(-1, -2)


def _batch_matmul_error(x: Any, y: Any, adj_x: bool, adj_y: bool) -> errors.InvalidArgumentError:
    for i, v in enumerate((x, y)):
        if v.ndim < 2:
            return invalid(f"In[{i}] ndims must be >= 2: {v.ndim}")
    if x.shape[-2 if adj_x else -1] != y.shape[-1 if adj_y else -2]:
        return invalid(f"Matrix size-incompatible: In[0]: {format_dims(x.shape)}, "
                        f"In[1]: {format_dims(y.shape)}")
    return invalid(f"In[0] and In[1] must have compatible batch dimensions: "
                    f"{format_dims(x.shape)} vs. {format_dims(y.shape)}")


@BatchMatMulV2.kernel()
def _batch_matmul_kernel(ctx: KernelContext) -> Callable[..., Any]:
    xp = ctx.xp
    adj_x, adj_y = ctx.attr("adj_x"), ctx.attr("adj_y")
    is_complex = ctx.attr("T").is_complex
    fx, fy = _adjoint_fn(xp, adj_x, is_complex), _adjoint_fn(xp, adj_y, is_complex)
    matmul = xp.matmul
    split = MatMulSplitter(ChunkRunner.for_kernel(ctx)) if xp is np else None

    def compute(x: Any, y: Any) -> Any:
        # np.matmul would accept 1-D operands with vector semantics, which TF rejects.
        if x.ndim < 2 or y.ndim < 2:
            raise _batch_matmul_error(x, y, adj_x, adj_y)
        x = x if fx is None else fx(x)
        y = y if fy is None else fy(y)
        try:
            if split is not None and x.shape[-1] == y.shape[-2] and split.wants_split(x, y):
                return split(x, y)
            return matmul(x, y)
        except ValueError:
            raise _batch_matmul_error(x, y, adj_x, adj_y) from None

    return compute


# -- square-matrix decompositions --------------------------------------------------------------------
def _work_dtype(ctx: KernelContext) -> tuple[Any, Any]:
    """(dtype LAPACK computes in, output dtype): NumPy's linalg has no float16 routines."""
    out = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
    return (np.dtype(np.float32) if out == np.float16 else out), out


def _check_square(x: Any, index: int = 0) -> None:
    if x.ndim < 2:
        raise invalid(f"Input tensor {index} must have rank >= 2, got {x.ndim}")
    if x.shape[-1] != x.shape[-2]:
        raise invalid("Input matrix must be square.")


MatrixInverse = define_op("MatrixInverse", inputs=["input: T"], outputs=["output: T"],
                          attrs=["adjoint: bool = false", f"T: {_LINALG_TYPES}"],
                          shape_fn=lambda op: [_square_matrices_shape(op)], expensive=True)


@MatrixInverse.kernel()
def _matrix_inverse_kernel(ctx: KernelContext) -> Callable[..., Any]:
    xp = ctx.xp
    work, out = _work_dtype(ctx)
    adjoint = _adjoint_fn(xp, ctx.attr("adjoint"), ctx.attr("T").is_complex)
    inv = xp.linalg.inv

    def compute(x: Any) -> Any:
        _check_square(x)
        try:
            result = inv(x.astype(work, copy=False))
        except np.linalg.LinAlgError:
            raise invalid("Input is not invertible.") from None
        # inv(adjoint(x)) == adjoint(inv(x)).
        if adjoint is not None:
            result = xp.ascontiguousarray(adjoint(result))
        return result.astype(out, copy=False)

    return compute


def matrix_inverse(input: Any, adjoint: bool = False, name: Optional[str] = None) -> Any:  # noqa: A002
    """Inverse of each square matrix in `input` (of its adjoint if `adjoint`)."""
    return apply_op(MatrixInverse, name=name, input=input, adjoint=adjoint)


def _determinant_shape(op: Operation) -> list[TensorShape]:
    shape = with_rank_at_least(op, op.inputs[0].shape, 2)
    if shape.ndims is None:
        return [shape]
    merge_dims(op, shape[-1], shape[-2])
    return [shape[:-2]]


MatrixDeterminant = define_op("MatrixDeterminant", inputs=["input: T"], outputs=["output: T"],
                              attrs=["T: {float16, float32, float64, complex64, complex128}"],
                              shape_fn=_determinant_shape)


@MatrixDeterminant.kernel()
def _matrix_determinant_kernel(ctx: KernelContext) -> Callable[..., Any]:
    work, out = _work_dtype(ctx)
    det, asarray = ctx.xp.linalg.det, ctx.xp.asarray

    def compute(x: Any) -> Any:
        _check_square(x)
        return asarray(det(x.astype(work, copy=False)), dtype=out)

    return compute


def matrix_determinant(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Determinant of each square matrix in `input`."""
    return apply_op(MatrixDeterminant, name=name, input=input)


Cholesky = define_op("Cholesky", inputs=["input: T"], outputs=["output: T"], attrs=[f"T: {_LINALG_TYPES}"],
                     shape_fn=lambda op: [_square_matrices_shape(op)], expensive=True)


@Cholesky.kernel()
def _cholesky_kernel(ctx: KernelContext) -> Callable[..., Any]:
    work, out = _work_dtype(ctx)
    chol = ctx.xp.linalg.cholesky

    def compute(x: Any) -> Any:
        _check_square(x)
        try:  # like TF, only the lower triangle of the input is read
            return chol(x.astype(work, copy=False)).astype(out, copy=False)
        except np.linalg.LinAlgError:
            raise invalid("Cholesky decomposition was not successful. "
                           "The input might not be valid.") from None

    return compute


def cholesky(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Lower-triangular Cholesky factor of each Hermitian positive-definite matrix."""
    return apply_op(Cholesky, name=name, input=input)


def _matrix_solve_shape(op: Operation) -> list[TensorShape]:
    lhs = with_rank_at_least(op, op.inputs[0].shape, 2)
    rhs = with_rank_at_least(op, op.inputs[1].shape, 2)
    batch_l, batch_r = lhs[:-2], rhs[:-2]
    if batch_l.ndims is not None and batch_r.ndims is not None:
        if batch_l.ndims != batch_r.ndims:
            raise shape_error(op, f"Shapes must be equal rank, but are {batch_l.ndims} and {batch_r.ndims}")
        for i, (x, y) in enumerate(zip(batch_l.as_list(), batch_r.as_list())):
            if x is not None and y is not None and x != y:
                raise shape_error(op, f"Dimension {i} in both shapes must be equal, but are {x} and {y}. "
                                      f"Shapes are {fmt_shape(batch_l)} and {fmt_shape(batch_r)}.")
    batch = batch_l.merge_with(batch_r)
    m = merge_dims(op, lhs[-2], lhs[-1])
    m = merge_dims(op, m, rhs[-2])
    return [batch.concatenate([m, rhs[-1]])]


MatrixSolve = define_op("MatrixSolve", inputs=["matrix: T", "rhs: T"], outputs=["output: T"],
                        attrs=["adjoint: bool = false", f"T: {_LINALG_TYPES}"],
                        shape_fn=_matrix_solve_shape, expensive=True)


def _check_solve_inputs(matrix: Any, rhs: Any) -> None:
    for i, v in enumerate((matrix, rhs)):
        if v.ndim < 2:
            raise invalid(f"Input tensor {i} must have rank >= 2, got {v.ndim}")
    if matrix.shape[:-2] != rhs.shape[:-2]:
        raise invalid("All input tensors must have the same outer dimensions.")
    if matrix.shape[-1] != matrix.shape[-2]:
        raise invalid("First input (lhs) must be a square matrix.")
    if matrix.shape[-2] != rhs.shape[-2]:
        raise invalid("Input matrix and rhs are incompatible.")


@MatrixSolve.kernel()
def _matrix_solve_kernel(ctx: KernelContext) -> Callable[..., Any]:
    work, out = _work_dtype(ctx)
    adjoint = _adjoint_fn(ctx.xp, ctx.attr("adjoint"), ctx.attr("T").is_complex)
    solve = ctx.xp.linalg.solve

    def compute(matrix: Any, rhs: Any) -> Any:
        _check_solve_inputs(matrix, rhs)
        a = matrix.astype(work, copy=False)
        try:
            result = solve(a if adjoint is None else adjoint(a), rhs.astype(work, copy=False))
        except np.linalg.LinAlgError:
            raise invalid("Input matrix is not invertible.") from None
        return result.astype(out, copy=False)

    return compute


def matrix_solve(matrix: Any, rhs: Any, adjoint: bool = False, name: Optional[str] = None) -> Any:
    """Solves matrix @ output = rhs for each matrix in the batch (adjoint(matrix) if `adjoint`)."""
    return apply_op(MatrixSolve, name=name, matrix=matrix, rhs=rhs, adjoint=adjoint)


# -- diagonals ---------------------------------------------------------------------------------------
def _diag_shape(op: Operation) -> list[TensorShape]:
    shape = with_rank_at_least(op, op.inputs[0].shape, 1)
    return [shape.concatenate(shape)]


Diag = define_op("Diag", inputs=["diagonal: T"], outputs=["output: T"], attrs=[f"T: {_DIAG_TYPES}"],
                 shape_fn=_diag_shape)


@Diag.kernel()
def _diag_kernel(ctx: KernelContext) -> Callable[..., Any]:
    zeros = ctx.xp.zeros

    def compute(x: Any) -> Any:
        if x.ndim < 1:
            raise invalid(f"Input must be at least rank 1, got {x.ndim}")
        n = x.size
        out = zeros((n, n), dtype=x.dtype)
        out.reshape(-1)[::n + 1] = x.reshape(-1)  # the flat stride of the diagonal is n + 1
        return out.reshape(x.shape + x.shape)

    return compute


def diag(diagonal: Any, name: Optional[str] = None) -> Any:
    """A rank-2k tensor with `diagonal` (rank k) on its diagonal and zeros elsewhere."""
    return apply_op(Diag, name=name, diagonal=diagonal)


def _diag_part_shape(op: Operation) -> list[TensorShape]:
    shape = op.inputs[0].shape
    if shape.ndims is None:
        return [shape]
    rank = shape.ndims
    if rank % 2 or rank == 0:
        raise shape_error(op, f"Input must have even and non-zero rank, input rank is {rank}")
    half = rank // 2
    return [TensorShape([merge_dims(op, shape[i], shape[i + half]) for i in range(half)])]


DiagPart = define_op("DiagPart", inputs=["input: T"], outputs=["diagonal: T"], attrs=[f"T: {_DIAG_TYPES}"],
                     shape_fn=_diag_part_shape)


@DiagPart.kernel()
def _diag_part_kernel(ctx: KernelContext) -> Callable[..., Any]:
    def compute(x: Any) -> Any:
        rank = x.ndim
        if rank % 2 or rank == 0:
            raise invalid(f"The rank of the tensor should be even and positive, got shape "
                           f"{format_dims(x.shape)}")
        half = rank // 2
        for i in range(half):
            if x.shape[i] != x.shape[i + half]:
                raise invalid(f"Invalid shape {format_dims(x.shape)}: dimensions {i} and {i + half} "
                               f"do not match.")
        n = int(np.prod(x.shape[:half]))
        return x.reshape(n, n).diagonal().reshape(x.shape[:half]).copy()

    return compute


def diag_part(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """The diagonal of a rank-2k tensor (the inverse of `diag`)."""
    return apply_op(DiagPart, name=name, input=input)


def _matrix_diag_shape(op: Operation) -> list[TensorShape]:
    shape = with_rank_at_least(op, op.inputs[0].shape, 1)
    if shape.ndims is None:
        return [shape]
    return [shape.concatenate([shape[-1]])]


MatrixDiag = define_op("MatrixDiag", inputs=["diagonal: T"], outputs=["output: T"], attrs=["T: type"],
                       shape_fn=_matrix_diag_shape)


@MatrixDiag.kernel()
def _matrix_diag_kernel(ctx: KernelContext) -> Callable[..., Any]:
    xp = ctx.xp
    np_dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
    fill = b"" if np_dtype.kind == "O" else 0  # strings pad with empty strings, numbers with zeros

    def compute(x: Any) -> Any:
        if x.ndim < 1:
            raise invalid(f"diagonal must be at least 1-dim, received shape: {format_dims(x.shape)}")
        n = x.shape[-1]
        out = xp.full(x.shape[:-1] + (n * n,), fill, dtype=np_dtype)
        out[..., ::n + 1] = x
        return out.reshape(x.shape + (n,))

    return compute


def matrix_diag(diagonal: Any, name: Optional[str] = None) -> Any:
    """Batched diagonal matrices: [..., N] -> [..., N, N]."""
    return apply_op(MatrixDiag, name=name, diagonal=diagonal)


def _matrix_diag_part_shape(op: Operation) -> list[TensorShape]:
    shape = with_rank_at_least(op, op.inputs[0].shape, 2)
    if shape.ndims is None:
        return [shape]
    rows, cols = shape[-2].value, shape[-1].value
    if rows is not None and cols is not None:
        size: Optional[int] = min(rows, cols)
    else:
        size = 0 if 0 in (rows, cols) else None
    return [shape[:-2].concatenate([size])]


MatrixDiagPart = define_op("MatrixDiagPart", inputs=["input: T"], outputs=["diagonal: T"],
                           attrs=["T: type"], shape_fn=_matrix_diag_part_shape)


@MatrixDiagPart.kernel()
def _matrix_diag_part_kernel(ctx: KernelContext) -> Callable[..., Any]:
    diagonal = ctx.xp.diagonal

    def compute(x: Any) -> Any:
        if x.ndim < 2:
            raise invalid(f"input must be at least 2-dim, received shape: {format_dims(x.shape)}")
        return diagonal(x, axis1=-2, axis2=-1).copy()  # diagonal() is a read-only view

    return compute


def matrix_diag_part(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Batched main diagonals: [..., M, N] -> [..., min(M, N)]."""
    return apply_op(MatrixDiagPart, name=name, input=input)
