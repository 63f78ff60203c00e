"""Gradient-check cases for the matrix ops (gradients at the end of tensorweave/ops/linalg_ops.py).

Inverse, determinant, solve and Cholesky get well-conditioned inputs (Q + 3 I, or SPD
M M^T + n I); Cholesky's input is symmetrized inside the graph, since the op reads only the
lower triangle and a one-sided perturbation would leave the symmetric matrices."""
import numpy as np

import tensorweave as tf
from tests.gradient_cases import GradCase


def _well_conditioned(*shapes):
    """Square matrices Q + 3 I (Q uniform in [-1, 1]); other shapes plain uniform."""
    def init(rng):
        out = []
        for s in shapes:
            x = rng.uniform(-1.0, 1.0, s)
            if len(s) >= 2 and s[-1] == s[-2]:
                x = x + 3.0 * np.eye(s[-1])
            out.append(x)
        return out
    return init


def _spd(shape):
    def init(rng):
        m = rng.uniform(-1.0, 1.0, shape)
        return [m @ np.swapaxes(m, -1, -2) + shape[-1] * np.eye(shape[-1])]
    return init


def _symmetric(a):
    return 0.5 * (a + tf.matrix_transpose(a))


def _unknown_shape(t):
    return tf.placeholder_with_default(t, None)


MATMUL = [
    GradCase("linalg_matmul", ("MatMul",), tf.matmul, [(2, 3), (3, 2)]),
    GradCase("linalg_matmul_transpose_a", ("MatMul",), lambda a, b: tf.matmul(a, b, transpose_a=True),
             [(3, 2), (3, 4)]),
    GradCase("linalg_matmul_transpose_b", ("MatMul",), lambda a, b: tf.matmul(a, b, transpose_b=True),
             [(2, 3), (4, 3)]),
    GradCase("linalg_matmul_transpose_both", ("MatMul",),
             lambda a, b: tf.matmul(a, b, transpose_a=True, transpose_b=True), [(3, 2), (4, 3)]),
    GradCase("linalg_batch_matmul", ("BatchMatMulV2",), tf.matmul, [(2, 2, 3), (2, 3, 2)]),
    GradCase("linalg_batch_matmul_adjoint_a", ("BatchMatMulV2",),
             lambda a, b: tf.matmul(a, b, adjoint_a=True), [(2, 3, 2), (2, 3, 2)]),
    GradCase("linalg_batch_matmul_adjoint_b", ("BatchMatMulV2",),
             lambda a, b: tf.matmul(a, b, adjoint_b=True), [(2, 2, 3), (2, 2, 3)]),
    GradCase("linalg_batch_matmul_adjoint_both", ("BatchMatMulV2",),
             lambda a, b: tf.matmul(a, b, adjoint_a=True, adjoint_b=True), [(2, 3, 2), (2, 2, 3)]),
    GradCase("linalg_batch_matmul_broadcast_rank", ("BatchMatMulV2",), tf.matmul, [(2, 2, 3), (3, 2)]),
    GradCase("linalg_batch_matmul_broadcast_batch", ("BatchMatMulV2",), tf.matmul,
             [(2, 1, 2, 3), (3, 3, 2)]),
    GradCase("linalg_batch_matmul_broadcast_unknown", ("BatchMatMulV2",),
             lambda a, b: tf.matmul(_unknown_shape(a), b), [(1, 2, 3), (2, 3, 2)]),
]

SQUARE = [
    GradCase("linalg_matrix_inverse", ("MatrixInverse",), tf.matrix_inverse, [(3, 3)],
             init=_well_conditioned((3, 3))),
    GradCase("linalg_matrix_inverse_adjoint", ("MatrixInverse",),
             lambda a: tf.matrix_inverse(a, adjoint=True), [(3, 3)], init=_well_conditioned((3, 3))),
    GradCase("linalg_matrix_inverse_batch", ("MatrixInverse",), tf.matrix_inverse, [(2, 2, 2)],
             init=_well_conditioned((2, 2, 2))),
    GradCase("linalg_matrix_determinant", ("MatrixDeterminant",), tf.matrix_determinant, [(3, 3)],
             init=_well_conditioned((3, 3))),
    GradCase("linalg_matrix_determinant_batch", ("MatrixDeterminant",), tf.matrix_determinant,
             [(2, 2, 2)], init=_well_conditioned((2, 2, 2))),
    GradCase("linalg_cholesky", ("Cholesky",), lambda a: tf.cholesky(_symmetric(a)), [(3, 3)],
             init=_spd((3, 3))),
    GradCase("linalg_cholesky_batch", ("Cholesky",), lambda a: tf.cholesky(_symmetric(a)), [(2, 2, 2)],
             init=_spd((2, 2, 2))),
    GradCase("linalg_cholesky_unknown_shape", ("Cholesky",),
             lambda a: tf.cholesky(_unknown_shape(_symmetric(a))), [(3, 3)], init=_spd((3, 3))),
    GradCase("linalg_matrix_solve", ("MatrixSolve",), tf.matrix_solve, [(3, 3), (3, 2)],
             init=_well_conditioned((3, 3), (3, 2))),
    GradCase("linalg_matrix_solve_adjoint", ("MatrixSolve",),
             lambda a, b: tf.matrix_solve(a, b, adjoint=True), [(3, 3), (3, 1)],
             init=_well_conditioned((3, 3), (3, 1))),
    GradCase("linalg_matrix_solve_batch", ("MatrixSolve",), tf.matrix_solve, [(2, 2, 2), (2, 2, 3)],
             init=_well_conditioned((2, 2, 2), (2, 2, 3))),
]

DIAGONALS = [
    GradCase("linalg_diag", ("Diag",), tf.diag, [(3,)]),
    GradCase("linalg_diag_rank2", ("Diag",), tf.diag, [(2, 2)]),
    GradCase("linalg_diag_part", ("DiagPart",), tf.diag_part, [(3, 3)]),
    GradCase("linalg_diag_part_rank4", ("DiagPart",), tf.diag_part, [(2, 1, 2, 1)]),
    GradCase("linalg_matrix_diag", ("MatrixDiag",), tf.matrix_diag, [(2, 3)]),
    GradCase("linalg_matrix_diag_part", ("MatrixDiagPart",), tf.matrix_diag_part, [(2, 3, 3)]),
    GradCase("linalg_matrix_diag_part_wide", ("MatrixDiagPart",), tf.matrix_diag_part, [(2, 2, 4)]),
    GradCase("linalg_matrix_diag_part_tall", ("MatrixDiagPart",), tf.matrix_diag_part, [(4, 3)]),
    GradCase("linalg_matrix_diag_part_unknown_shape", ("MatrixDiagPart",),
             lambda a: tf.matrix_diag_part(_unknown_shape(a)), [(2, 3, 2)]),
    GradCase("linalg_trace", ("MatrixDiagPart", "Sum"), tf.trace, [(2, 3, 3)]),
]

CASES = MATMUL + SQUARE + DIAGONALS
