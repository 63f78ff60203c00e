"""Linear algebra: matrix products and decompositions (MatMul, BatchMatMulV2, inverse, determinant, Cholesky, solve, diagonals), and what TF builds from them (eye, norm, einsum, tensordot)."""
