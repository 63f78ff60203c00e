"""`tf.einsum` and `tf.tensordot`, built from Transpose, Reshape, MatMul and reductions (as TF1's
Python implementations were), so their gradients are those of the ops they are made of."""
from __future__ import annotations

import re
import string
from typing import Any, Optional, Sequence, Union

import numpy as np

from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.joining import stack
from tensorweave.ops.array.shaping import identity, reshape, shape
from tensorweave.ops.array.transposition import transpose
from tensorweave.ops.linalg.linalg_impl import matmul
from tensorweave.ops.linalg.matrix import matrix_diag_part
from tensorweave.ops.math.elementwise import multiply
from tensorweave.ops.math.reduction import reduce_sum

__all__ = ["einsum", "tensordot"]

Dim = Union[int, Tensor]


def _dims(t: Tensor, axes: Sequence[int]) -> list[Dim]:
    """The sizes of `t` along `axes`: ints where known statically, scalar tensors otherwise."""
    static = t.shape.as_list() if t.shape.ndims is not None else None
    dynamic = None
    out: list[Dim] = []
    for a in axes:
        if static is not None and static[a] is not None:
            out.append(static[a])
        else:
            dynamic = shape(t) if dynamic is None else dynamic
            out.append(dynamic[a])
    return out


def _prod(dims: Sequence[Dim]) -> Dim:
    if all(isinstance(d, int) for d in dims):
        return int(np.prod(dims, dtype=np.int64))
    out: Dim = 1
    for d in dims:
        out = d if isinstance(out, int) and out == 1 else multiply(out, d)
    return out


def _shape(dims: Sequence[Dim]) -> Any:
    if all(isinstance(d, int) for d in dims):
        return list(dims)
    return stack([convert_to_tensor(d, name="dim") if isinstance(d, int) else d for d in dims])


def _reshape(t: Tensor, dims: Sequence[Dim]) -> Tensor:
    if t.shape.is_fully_defined() and all(isinstance(d, int) for d in dims) and t.shape.as_list() == list(dims):
        return t
    return reshape(t, _shape(dims))


def _transpose(t: Tensor, perm: Sequence[int]) -> Tensor:
    return t if list(perm) == list(range(len(perm))) else transpose(t, list(perm))


# ---------------------------------------------------------------------------------------------
# tensordot
# ---------------------------------------------------------------------------------------------
def _tensordot_axes(a: Tensor, axes: Any) -> tuple[list[int], list[int]]:
    if isinstance(axes, (int, np.integer)):
        axes = int(axes)
        if axes < 0:
            raise ValueError(f"`axes` must be at least 0. Received: {axes}.")
        rank = a.shape.ndims
        if rank is None:
            raise ValueError("tensordot with an integer `axes` needs the rank of `a` to be known")
        if axes > rank:
            raise ValueError(f"`axes` must not be larger than the number of dimensions of tensor {a}.  "
                             f"Received {axes}, vs tensor dimensions {rank}.")
        return list(range(rank - axes, rank)), list(range(axes))
    if isinstance(axes, Tensor):
        value = tensor_util.constant_value(axes)
        if value is None:
            raise ValueError("tensordot needs `axes` known at graph-construction time")
        axes = value.tolist()
    if not isinstance(axes, (list, tuple, np.ndarray)) or len(axes) != 2:
        raise ValueError(f"`axes` must be an integer or have length 2. Received {axes}.")
    a_axes, b_axes = axes[0], axes[1]
    a_axes = [int(a_axes)] if isinstance(a_axes, (int, np.integer)) else [int(x) for x in a_axes]
    b_axes = [int(b_axes)] if isinstance(b_axes, (int, np.integer)) else [int(x) for x in b_axes]
    if len(a_axes) != len(b_axes):
        raise ValueError(f"Different number of contraction axes `a` and `b`, {len(a_axes)} != {len(b_axes)}.")
    return a_axes, b_axes


def _canonical(axes: list[int], t: Tensor) -> list[int]:
    rank = t.shape.ndims
    if rank is None:
        raise ValueError(f"tensordot needs the rank of {t.name} to be known")
    for a in axes:
        if not -rank <= a < rank:
            raise ValueError(f"axis {a} is out of range for tensor {t.name} of rank {rank}")
    return [a % rank for a in axes]


def tensordot(a: Any, b: Any, axes: Any, name: Optional[str] = None) -> Any:
    """Sums the products of `a` and `b` over the axes `axes` ([a_axes, b_axes], or an int N
    meaning the last N axes of `a` against the first N of `b`)."""
    with name_scope(name, "Tensordot", [a, b, axes]) as scope:
        a = convert_to_tensor(a, name="a")
        b = convert_to_tensor(b, name="b", dtype_hint=a.dtype.base_dtype)
        a_axes, b_axes = _tensordot_axes(a, axes)
        a_axes, b_axes = _canonical(a_axes, a), _canonical(b_axes, b)
        a_free = [i for i in range(a.shape.ndims) if i not in a_axes]
        b_free = [i for i in range(b.shape.ndims) if i not in b_axes]
        a_free_dims, b_free_dims = _dims(a, a_free), _dims(b, b_free)
        a2 = _reshape(_transpose(a, a_free + a_axes), [_prod(a_free_dims), _prod(_dims(a, a_axes))])
        b2 = _reshape(_transpose(b, b_axes + b_free), [_prod(_dims(b, b_axes)), _prod(b_free_dims)])
        product = matmul(a2, b2)
        out_dims = a_free_dims + b_free_dims
        if all(isinstance(d, int) for d in out_dims) and product.shape.as_list() == out_dims:
            return product
        return reshape(product, _shape(out_dims), name=scope)


# ---------------------------------------------------------------------------------------------
# einsum
# ---------------------------------------------------------------------------------------------
_LABELS = re.compile(r"^([a-zA-Z]|\.\.\.)*$")


def _parse_equation(equation: str, ranks: list[Optional[int]]) -> tuple[list[str], str]:
    """Input and output label strings, with each '...' replaced by fresh labels (digits) for
    the broadcast dimensions, right-aligned across the operands as NumPy does."""
    equation = equation.replace(" ", "")
    if "->" in equation:
        lhs, output = equation.split("->", 1)
        explicit = True
    else:
        lhs, output, explicit = equation, "", False
    inputs = lhs.split(",")
    if len(inputs) != len(ranks):
        raise ValueError(f'Got {len(ranks)} inputs for equation "{equation}", expecting {len(inputs)}')
    for part in inputs + [output]:
        if not _LABELS.match(part):
            raise ValueError(f"Invalid einsum equation {equation!r}: subscripts must be letters or '...'")
    ellipsis_rank = 0
    for part, rank in zip(inputs, ranks):
        if "..." in part:
            if rank is None:
                raise ValueError(f"einsum with '...' needs inputs of known rank (equation {equation!r})")
            ellipsis_rank = max(ellipsis_rank, rank - len(part.replace("...", "")))
    fresh = string.digits[:ellipsis_rank] if ellipsis_rank <= 10 else None
    if fresh is None:
        raise ValueError("einsum supports at most 10 broadcast ('...') dimensions")
    expanded = []
    for part, rank in zip(inputs, ranks):
        if "..." in part:
            n = rank - len(part.replace("...", ""))
            part = part.replace("...", fresh[ellipsis_rank - n:])
        expanded.append(part)
    if not explicit:
        counts = {c: "".join(expanded).count(c) for c in "".join(expanded)}
        output = fresh + "".join(sorted(c for c, n in counts.items() if n == 1 and c.isalpha()))
    else:
        output = output.replace("...", fresh)
    for c in output:
        if not any(c in part for part in expanded):
            raise ValueError(f"Output subscripts contain the label {c} not present in the input subscripts.")
    if len(set(output)) != len(output):
        raise ValueError(f"Output subscripts of equation {equation!r} repeat a label.")
    return expanded, output


def _take_diagonals(t: Tensor, labels: str) -> tuple[Tensor, str]:
    """Repeated labels within one operand ('ii->i') select its diagonal."""
    while len(set(labels)) != len(labels):
        c = next(c for c in labels if labels.count(c) > 1)
        i, j = labels.index(c), labels.index(c, labels.index(c) + 1)
        rest = [k for k in range(len(labels)) if k not in (i, j)]
        t = matrix_diag_part(_transpose(t, rest + [i, j]))
        labels = "".join(labels[k] for k in rest) + c
    return t, labels


def _sum_out(t: Tensor, labels: str, keep: set[str]) -> tuple[Tensor, str]:
    axes = [i for i, c in enumerate(labels) if c not in keep]
    if not axes:
        return t, labels
    return reduce_sum(t, axes), "".join(c for c in labels if c in keep)


def _contract(a: Tensor, la: str, b: Tensor, lb: str, keep: set[str]) -> tuple[Tensor, str]:
    """One pairwise contraction as a (batch) matmul: [batch, free_a, sum] x [batch, sum, free_b]."""
    a, la = _sum_out(a, la, keep | set(lb))
    b, lb = _sum_out(b, lb, keep | set(la))
    batch = [c for c in la if c in lb and c in keep]
    summed = [c for c in la if c in lb and c not in keep]
    free_a = [c for c in la if c not in lb]
    free_b = [c for c in lb if c not in la]
    a_t = _transpose(a, [la.index(c) for c in batch + free_a + summed])
    b_t = _transpose(b, [lb.index(c) for c in batch + summed + free_b])
    a_batch = _dims(a_t, range(len(batch)))
    b_batch = _dims(b_t, range(len(batch)))
    fa = _dims(a_t, range(len(batch), len(batch) + len(free_a)))
    fb = _dims(b_t, range(len(batch) + len(summed), len(lb)))
    s = _dims(a_t, range(len(batch) + len(free_a), len(la)))
    a3 = _reshape(a_t, a_batch + [_prod(fa), _prod(s)])
    b3 = _reshape(b_t, b_batch + [_prod(s), _prod(fb)])
    product = matmul(a3, b3)
    batch_dims = _dims(product, range(len(batch)))
    return _reshape(product, batch_dims + fa + fb), "".join(batch + free_a + free_b)


def einsum(equation: str, *inputs: Any, **kwargs: Any) -> Any:
    """Einstein summation: e.g. einsum('ij,jk->ik', a, b) is matmul(a, b), einsum('ij->ji', a)
    a transpose, einsum('bi,bi->b', a, b) a batched dot product. Labels that are left out of the
    output are summed over; '...' stands for broadcast leading dimensions."""
    name = kwargs.pop("name", None)
    if kwargs:
        raise TypeError(f"Invalid keyword arguments for einsum: {', '.join(kwargs)}")
    with name_scope(name, "einsum", list(inputs)) as scope:
        tensors = [convert_to_tensor(x, name="input") for x in inputs]
        labels, output = _parse_equation(equation, [t.shape.ndims for t in tensors])
        for k, (t, lab) in enumerate(zip(tensors, labels)):
            if t.shape.ndims is not None and t.shape.ndims != len(lab):
                raise ValueError(f"Shape must be rank {len(lab)} but is rank {t.shape.ndims}\n\t for {k}th input "
                                 f"and equation: {equation}")
        pairs = [_take_diagonals(t, lab) for t, lab in zip(tensors, labels)]
        result, res_labels = pairs[0]
        for k in range(1, len(pairs)):
            later = set(output).union(*[set(lab) for _, lab in pairs[k + 1:]])
            result, res_labels = _contract(result, res_labels, pairs[k][0], pairs[k][1], later)
        result, res_labels = _sum_out(result, res_labels, set(output))
        perm = [res_labels.index(c) for c in output]
        if perm == list(range(len(perm))):
            return identity(result, name=scope)
        return transpose(result, perm, name=scope)
