"""The gradient of SparseToDense, with TensorFlow's formula; imported only by
tensorweave/gradients.py."""
from __future__ import annotations

from typing import Any

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Operation, name_scope
from tensorweave.ops import array as array_ops
from tensorweave.ops import math as math_ops
from tensorweave.ops.sparse.sparse_ops import SparseToDense


@SparseToDense.gradient
def _sparse_to_dense_grad(op: Operation, grad: Any) -> list[Any]:
    """d sparse_values: the incoming gradient at each index (gathered from the flattened
    gradient at row-major linear positions); d default_value: the rest of the gradient's sum."""
    indices, output_shape, values = op.inputs[0], op.inputs[1], op.inputs[2]
    with name_scope("SparseToDenseGrad"):
        shape = math_ops.cast(output_shape, _dtypes.int64)
        rank = array_ops.size(shape)
        positions = array_ops.range(rank)
        # strides[k] = prod(shape[k+1:]): a row-major position's weight for coordinate k.
        later = math_ops.greater(array_ops.expand_dims(positions, 0), array_ops.expand_dims(positions, 1))
        factors = math_ops.where(later, array_ops.tile(array_ops.expand_dims(shape, 0), [rank, 1]),
                                 array_ops.ones_like(later, dtype=_dtypes.int64))
        strides = math_ops.reduce_prod(factors, axis=1)
        coords = array_ops.reshape(math_ops.cast(indices, _dtypes.int64), [-1, rank])
        linear = math_ops.reduce_sum(coords * strides, axis=1)
        values_grad = array_ops.gather(array_ops.reshape(grad, [-1]), linear)
        default_grad = math_ops.reduce_sum(grad) - math_ops.reduce_sum(values_grad)
        if values.shape.ndims == 0:  # one value broadcast to every index
            values_grad = math_ops.reduce_sum(values_grad)
    return [None, None, values_grad, default_grad]
