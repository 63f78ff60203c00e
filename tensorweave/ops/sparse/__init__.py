"""Sparse tensors (TF1's sparse_ops): the SparseToDense op and `tf.sparse_to_dense`,
`tf.sparse_tensor_to_dense` (tier 1, sparse_ops.py), and `tf.sparse_placeholder`, built here from
the array family's placeholders. The gradient is in grad.py."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_shape import as_shape
from tensorweave.ops.array.constant_op import constant, placeholder
from tensorweave.ops.sparse.sparse_ops import sparse_tensor_to_dense, sparse_to_dense

__all__ = ["sparse_to_dense", "sparse_tensor_to_dense", "sparse_placeholder"]


def sparse_placeholder(dtype: Any, shape: Any = None, name: Optional[str] = None) -> SparseTensor:
    """A SparseTensor whose three parts must be fed (feed a tf.SparseTensorValue for it).
    A fully known `shape` makes `dense_shape` a constant."""
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
