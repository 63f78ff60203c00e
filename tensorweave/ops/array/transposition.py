"""Array ops that permute dimensions: Transpose, ConjugateTranspose and InvertPermutation.

Apart from shaping.py because a transpose of unknown rank reverses range(rank) at run time,
with the Range op of creation.py and the ReverseV2 op of slicing.py, both of which build on
shaping.py. The gradients are in grad.py.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.framework.graph import Operation, Tensor, name_scope
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import const_ints, host_ints, index_input, invalid, shape_error
from tensorweave.ops.array.creation import Range
from tensorweave.ops.array.shaping import rank
from tensorweave.ops.array.slicing import reverse

__all__ = ["transpose", "invert_permutation"]


# ---------------------------------------------------------------------------------------------
# Transpose, ConjugateTranspose
# ---------------------------------------------------------------------------------------------
def _transpose_shape(op: Operation) -> list[TensorShape]:
    in_shape, perm_t = op.inputs[0].shape, op.inputs[1]
    if perm_t.shape.ndims is not None and perm_t.shape.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {perm_t.shape.ndims}")
    perm = const_ints(perm_t)
    rank_ = in_shape.ndims
    if perm is None:
        if rank_ is None and perm_t.shape.ndims == 1:
            rank_ = perm_t.shape[0].value
        return [unknown_shape(rank_)]
    if rank_ is None:
        return [unknown_shape(len(perm))]
    if len(perm) != rank_:
        raise shape_error(op, f"Dimension must be {rank_} but is {len(perm)}")
    dims = []
    for p in perm:
        if not -rank_ <= p < rank_:
            raise shape_error(op, f"perm dim {p} is out of range of input rank {rank_}")
        dims.append(in_shape[p])
    return [TensorShape(dims)]


_TRANSPOSE_ATTRS = ["T: type", "Tperm: {int32, int64} = int32"]
Transpose = define_op("Transpose", inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
                      attrs=_TRANSPOSE_ATTRS, shape_fn=_transpose_shape, forwards_input=True)
ConjugateTranspose = define_op("ConjugateTranspose", inputs=["x: T", "perm: Tperm"], outputs=["y: T"],
                               attrs=_TRANSPOSE_ATTRS, shape_fn=_transpose_shape)


def _checked_perm(perm: list[int], ndim: int) -> list[int]:
    if len(perm) != ndim:
        raise invalid(f"transpose expects a vector of size {ndim}. But input(1) is a vector of size "
                      f"{len(perm)}")
    canon = [p + ndim if p < 0 else p for p in perm]
    for i in range(ndim):
        if i not in canon:
            raise invalid(f"{i} is missing from {{{','.join(str(p) for p in perm)}}}.")
    return canon


def _make_transpose_kernel(conjugate: bool) -> Any:
    def build(ctx: KernelContext) -> Any:
        xp = ctx.xp
        conj = conjugate and ctx.input_dtypes[0].is_complex

        def compute(x: Any, perm: Any) -> Any:
            p = host_ints(perm)
            try:
                y = x.transpose(p)
            except ValueError:  # NumPy rejects bad perms too; report TF's message
                _checked_perm(p, np.ndim(x))
                raise
            return xp.conj(y) if conj else y

        return compute

    return build


Transpose.kernel()(_make_transpose_kernel(False))
ConjugateTranspose.kernel()(_make_transpose_kernel(True))


def transpose(a: Any, perm: Any = None, name: str = "transpose", conjugate: bool = False) -> Any:
    """Permutes the dimensions of `a`; `perm` defaults to reversing them."""
    with name_scope(name, "transpose", [a]) as scope:
        a = convert_to_tensor(a, name="a")
        if perm is None:
            ndims = a.shape.ndims
            if ndims is not None:
                perm = list(range(ndims - 1, -1, -1))
            else:  # unknown rank: reverse(range(rank)) at run time
                perm = reverse(apply_op(Range, start=0, limit=rank(a), delta=1), [0])
        op = ConjugateTranspose if conjugate and a.dtype.is_complex else Transpose
        return apply_op(op, name=scope, x=a, perm=index_input(perm, "perm"))


def _invert_permutation_shape(op: Operation) -> list[TensorShape]:
    x = op.inputs[0].shape
    if x.ndims is not None and x.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {x.ndims}")
    return [TensorShape([x[0].value if x.ndims == 1 else None])]


InvertPermutation = define_op("InvertPermutation", inputs=["x: T"], outputs=["y: T"],
                              attrs=["T: {int32, int64} = int32"], shape_fn=_invert_permutation_shape)


def _inverse_permutation(perm: Sequence[int], error: Any) -> list[int]:
    n = len(perm)
    inverse = [-1] * n
    for i, d in enumerate(perm):
        if not 0 <= d < n:
            raise error(f"{d} is not between 0 and {n}")
        if inverse[d] != -1:
            raise error(f"{d} is duplicated in the input.")
        inverse[d] = i
    return inverse


@InvertPermutation.kernel()
def _invert_permutation_kernel(ctx: KernelContext) -> Any:
    np_t = ctx.output_dtypes[0].as_numpy_dtype

    def compute(x: Any) -> Any:
        if np.ndim(x) != 1:
            raise invalid("invert_permutation expects a 1D vector.")
        return np.array(_inverse_permutation(host_ints(x), invalid), dtype=np_t)

    return compute


def _invert_permutation_constant(t: Tensor) -> Optional[np.ndarray]:
    perm = const_ints(t.op.inputs[0])
    if perm is None or t.op.inputs[0].shape.ndims != 1:
        return None
    try:
        return np.array(_inverse_permutation(perm, ValueError), dtype=t.dtype.as_numpy_dtype)
    except ValueError:  # not a permutation: the kernel reports it at run time
        return None


InvertPermutation.constant_value(_invert_permutation_constant)
InvertPermutation.not_differentiable()


def invert_permutation(x: Any, name: Optional[str] = None) -> Any:
    """y[x[i]] = i: the inverse of the permutation `x` of 0 .. n-1."""
    return apply_op(InvertPermutation, name=name, x=index_input(x))
