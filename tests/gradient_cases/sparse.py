"""Gradient cases: SparseToDense (values and default value; one value broadcast to every index)."""
from tensorweave.ops.sparse import sparse_ops
from tests.gradient_cases import GradCase

CASES = [
    GradCase("sparse_to_dense_2d", ("SparseToDense",),
             lambda v, d: sparse_ops.sparse_to_dense([[0, 1], [1, 0], [2, 3]], [3, 4], v, d) * 1.5,
             [(3,), ()]),
    GradCase("sparse_to_dense_1d_vector_indices", ("SparseToDense",),
             lambda v, d: sparse_ops.sparse_to_dense([0, 2, 5], [6], v, d), [(3,), ()]),
    GradCase("sparse_to_dense_scalar_value", ("SparseToDense",),
             lambda v, d: sparse_ops.sparse_to_dense([[0, 0, 1], [1, 1, 0]], [2, 2, 2], v, d), [(), ()]),
]
