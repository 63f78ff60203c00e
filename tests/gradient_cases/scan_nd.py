"""Gradient-check cases for cumulative sums and products (scan_ops.py) and n-dimensional
gathers and scatters (nd_indexing_ops.py)."""
import numpy as np

import tensorweave as tf
from tests.gradient_cases import GradCase

_ADDRESSES = np.array([[0, 1], [2, 0], [0, 1], [1, 2]], np.int32)   # (0, 1) twice: gradients add


def _positive(rng, shape):
    return [rng.uniform(0.5, 1.5, shape)]


CASES = [
    GradCase("cumsum", ("Cumsum",), lambda x: tf.cumsum(x, axis=1), [(2, 4)]),
    GradCase("cumsum_exclusive_reverse", ("Cumsum",),
             lambda x: tf.cumsum(x, axis=0, exclusive=True, reverse=True), [(3, 2)]),
    GradCase("cumsum_unknown_axis", ("Cumsum",),
             lambda x: tf.cumsum(x, axis=tf.placeholder_with_default(-1, [])), [(2, 3)]),
    GradCase("cumprod", ("Cumprod",), lambda x: tf.cumprod(x, axis=1), [(2, 4)],
             init=lambda rng: _positive(rng, (2, 4))),
    GradCase("cumprod_exclusive_reverse", ("Cumprod",),
             lambda x: tf.cumprod(x, axis=0, exclusive=True, reverse=True), [(3, 2)],
             init=lambda rng: _positive(rng, (3, 2))),
    GradCase("gather_nd_elements", ("GatherNd",), lambda p: tf.gather_nd(p, _ADDRESSES), [(3, 3)]),
    GradCase("gather_nd_slices", ("GatherNd",), lambda p: tf.gather_nd(p, [[[1], [0]], [[1], [1]]]),
             [(2, 3, 2)]),
    GradCase("scatter_nd", ("ScatterNd",), lambda u: tf.scatter_nd(_ADDRESSES, u, [3, 3]), [(4,)]),
    GradCase("scatter_nd_slices", ("ScatterNd",), lambda u: tf.scatter_nd([[2], [0], [2]], u, [4, 2]),
             [(3, 2)]),
]
