"""Math functions built from other families' ops, as TF's math_ops builds them: tf.where and
tf.where_v2 (Select/SelectV2, or the array family's Where with one argument), tf.add_n (an
Identity for one named input), tf.reduce_logsumexp (its shift under StopGradient) and tf.conj
(a ConjugateTranspose by the identity permutation, for want of a Conj op)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.array_impl import range as _range
from tensorweave.ops.array.shaping import identity, rank, stop_gradient
from tensorweave.ops.array.slicing import _where_indices
from tensorweave.ops.array.transposition import transpose
from tensorweave.ops.math.elementwise import add, exp, is_finite, log
from tensorweave.ops.math.reduction import AddN, _lookup, reduce_max, reduce_sum
from tensorweave.ops.math.select import Select, SelectV2

__all__ = ["where", "where_v2", "add_n", "reduce_logsumexp", "conj"]


def where(condition: Any, x: Any = None, y: Any = None, name: Optional[str] = None) -> Any:
    """TF1's tf.where: with x and y, picks from x where `condition` else from y (op Select;
    `condition` is a scalar, has x's shape, or is a vector over x's first dimension); with
    neither, returns the coordinates of the true elements."""
    if x is None and y is None:
        return _where_indices(condition, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply_op(Select, name=name, condition=condition, t=x, e=y)


def where_v2(condition: Any, x: Any = None, y: Any = None, name: Optional[str] = None) -> Any:
    """tf.where_v2: like where, but condition, x and y broadcast together (op SelectV2)."""
    if x is None and y is None:
        return _where_indices(condition, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply_op(SelectV2, name=name, condition=condition, t=x, e=y)


def add_n(inputs: Any, name: Optional[str] = None) -> Any:
    """Adds all input tensors element-wise; they must all have the same shape and dtype."""
    if isinstance(inputs, (Tensor, str, bytes)) or not hasattr(inputs, "__iter__"):
        raise ValueError("inputs must be an iterable of at least one Tensor/IndexedSlices with "
                         "the same dtype and shape")
    inputs = list(inputs)
    if not inputs:
        raise ValueError("inputs must be an iterable of at least one Tensor/IndexedSlices with "
                         "the same dtype and shape")
    if len(inputs) == 1:
        single = convert_to_tensor(inputs[0])
        if name:
            return identity(single, name=name)
        return single
    kinds = {t.dtype.base_dtype for t in inputs if isinstance(t, Tensor)}
    if len(kinds) > 1:
        raise TypeError(f"Tensors in list passed to 'inputs' of 'AddN' Op have types "
                        f"{sorted(d.name for d in kinds)} that don't all match.")
    return apply_op(AddN, name=name, inputs=inputs)


def reduce_logsumexp(input_tensor: Any, axis: Any = None, keepdims: Any = None,
                     name: Optional[str] = None, reduction_indices: Any = None,
                     keep_dims: Any = None) -> Any:
    """log(sum(exp(x))) across `axis`, computed stably by subtracting the (finite) maximum."""
    axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    with name_scope(name, "ReduceLogSumExp", [input_tensor]) as scope:
        x = convert_to_tensor(input_tensor)
        raw_max = reduce_max(x, axis, keepdims=True)
        zero = np.zeros((), x.dtype.base_dtype.as_numpy_dtype)
        shift = where_v2(is_finite(raw_max), raw_max, zero)
        shift = stop_gradient(shift)
        total = reduce_sum(exp(x - shift), axis, keepdims=keepdims)
        if not keepdims:
            shift = reduce_max(shift, axis, keepdims=False)  # drop the kept dims again
        return add(log(total), shift, name=scope)


def conj(x: Any) -> Any:
    """Complex conjugate; `x` itself for real tensors (TF's math_ops.conj). There is no Conj
    op yet, so a ConjugateTranspose with the identity permutation stands in for it."""
    x = convert_to_tensor(x)
    if not x.dtype.base_dtype.is_complex:
        return x
    ndims = x.shape.ndims
    perm: Any = list(range(ndims)) if ndims is not None else _range(0, rank(x), 1)
    return transpose(x, perm, conjugate=True)

