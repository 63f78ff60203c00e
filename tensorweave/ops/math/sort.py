"""`tf.sort` and `tf.argsort`, built on TopKV2 over the whole sorted axis (as TF does), so the
sort's gradient is TopKV2's."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import tensor_util
from tensorweave.framework.graph import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.shaping import shape
from tensorweave.ops.array.transposition import transpose
from tensorweave.ops.math.elementwise import negative
from tensorweave.ops.nn.nn_ops import top_k

__all__ = ["sort", "argsort"]

_DIRECTIONS = ("ASCENDING", "DESCENDING")


def _sort_or_argsort(values: Any, axis: Any, direction: str, return_argsort: bool) -> Any:
    if direction not in _DIRECTIONS:
        raise ValueError(f"Argument `direction` should be one of {', '.join(_DIRECTIONS)}. "
                         f"Received: direction={direction}")
    values = convert_to_tensor(values, name="values")
    if not isinstance(axis, int):
        const = tensor_util.constant_value(convert_to_tensor(axis))
        if const is None or const.ndim != 0:
            raise ValueError(f"axis must be a constant scalar, got {axis}")
        axis = int(const)
    rank = values.shape.ndims
    if rank is None:
        raise ValueError(f"sort needs the rank of {values.name} to be known")
    if not -rank <= axis < rank:
        raise ValueError(f"axis {axis} is out of bounds for tensor of rank {rank}")
    axis %= rank
    perm = list(range(rank))
    perm[axis], perm[-1] = perm[-1], perm[axis]
    moved = values if axis == rank - 1 else transpose(values, perm)
    n = moved.shape[-1].value
    k = n if n is not None else shape(moved)[-1]
    ascending = direction == "ASCENDING"
    if ascending:
        # Reverses the order for TopKV2's descending sort; on integers -x - 1 is ~x, which
        # also maps the smallest value to the largest without overflow.
        moved = negative(moved) - 1 if moved.dtype.is_integer else negative(moved)
    top, indices = top_k(moved, k)
    result = indices if return_argsort else top
    if ascending and not return_argsort:
        result = negative(result) - 1 if result.dtype.is_integer else negative(result)
    return result if axis == rank - 1 else transpose(result, perm)


def sort(values: Any, axis: Any = -1, direction: str = "ASCENDING", name: Optional[str] = None) -> Any:
    """`values` sorted along `axis` (ASCENDING or DESCENDING)."""
    with name_scope(name, "sort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=False)


def argsort(values: Any, axis: Any = -1, direction: str = "ASCENDING", stable: bool = False,
            name: Optional[str] = None) -> Any:
    """The int32 indices that sort `values` along `axis`; equal values keep their order (so
    `stable` makes no difference)."""
    del stable  # TopKV2 already keeps equal values in index order
    with name_scope(name, "argsort"):
        return _sort_or_argsort(values, axis, direction, return_argsort=True)
