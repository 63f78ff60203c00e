"""Array functions built with the math family's ops, as TF builds them: tf.range (its arguments
cast to the widest of their dtypes), tf.sequence_mask (a comparison with a range), tf.meshgrid
(products with ones) and Python indexing of tensors, `Tensor.__getitem__` (one StridedSlice,
its index tensors cast to one dtype; a boolean mask is a boolean_mask).

Tier 2: the array package re-exports these; other families' tier-2 modules import them from
here."""
from __future__ import annotations

import builtins
import sys
from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Tensor, is_tensor_like, name_scope
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor, python_value_to_ndarray
from tensorweave.framework.tensor_shape import Dimension
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.creation import Range, ones
from tensorweave.ops.array.joining import stack
from tensorweave.ops.array.shaping import expand_dims, reshape, size
from tensorweave.ops.array.slicing import StridedSlice, boolean_mask
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.elementwise import less, maximum
from tensorweave.ops.math.reduction import reduce_max

__all__ = ["range", "sequence_mask", "meshgrid"]


# ---------------------------------------------------------------------------------------------
# range, sequence_mask, meshgrid
# ---------------------------------------------------------------------------------------------
_RANGE_DTYPES = (_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64)


def range(start: Any, limit: Any = None, delta: Any = 1, dtype: Any = None,  # noqa: A001
          name: str = "range") -> Any:
    """A 1-D sequence start, start + delta, ... up to but excluding limit. Without `dtype`
    the widest of the arguments' types wins (int32 < int64 < float32 < float64)."""
    if limit is None:
        start, limit = 0, start
    with name_scope(name, "Range", [start, limit, delta]) as scope:
        args = {"start": start, "limit": limit, "delta": delta}
        if dtype is not None:
            dtype = _dtypes.as_dtype(dtype).base_dtype
            tensors = {k: convert_to_tensor(v, dtype=dtype, name=k) for k, v in args.items()}
        else:
            kinds = {k: (convert_to_tensor(v).dtype.base_dtype if is_tensor_like(v)
                         else _dtypes.from_numpy(python_value_to_ndarray(v).dtype)) for k, v in args.items()}
            for k, dt in kinds.items():
                if dt not in _RANGE_DTYPES:
                    raise TypeError(f"Range's {k} has dtype {dt.name}; expected one of int32, int64, "
                                    f"float32, float64")
            dtype = builtins.max(kinds.values(), key=_RANGE_DTYPES.index)
            tensors = {}
            for k, v in args.items():
                t = convert_to_tensor(v, dtype=None if is_tensor_like(v) else dtype, name=k)
                tensors[k] = t if t.dtype.base_dtype == dtype else cast(t, dtype)
        return apply_op(Range, name=scope, **tensors)


def sequence_mask(lengths: Any, maxlen: Any = None, dtype: Any = _dtypes.bool,
                  name: Optional[str] = None) -> Any:
    """mask[i..., j] = j < lengths[i...], for j in range(maxlen) (default: max(lengths))."""
    with name_scope(name, "SequenceMask", [lengths, maxlen]):
        lengths = convert_to_tensor(lengths)
        if maxlen is None:
            maxlen = reduce_max(lengths)
            maxlen = maximum(constant(0, dtype=maxlen.dtype), maxlen)
        else:
            maxlen = convert_to_tensor(maxlen)
        if maxlen.shape.ndims is not None and maxlen.shape.ndims != 0:
            raise ValueError("maxlen must be scalar for sequence_mask")
        index_dtype = maxlen.dtype.base_dtype
        row = apply_op(Range, start=constant(0, dtype=index_dtype), limit=maxlen,
                       delta=constant(1, dtype=index_dtype))
        column = expand_dims(lengths, -1)
        if lengths.dtype.base_dtype != index_dtype:
            column = cast(column, index_dtype)
        result = less(row, column)
        dtype = _dtypes.as_dtype(dtype).base_dtype if dtype is not None else None
        return result if dtype is None or dtype == _dtypes.bool else cast(result, dtype)


def meshgrid(*args: Any, **kwargs: Any) -> list[Any]:
    """Coordinate grids from N 1-D tensors: each output has shape (len(args[0]), ...,
    len(args[N-1])), with the first two dimensions swapped for indexing='xy' (the default)."""
    indexing = kwargs.pop("indexing", "xy")
    name = kwargs.pop("name", "meshgrid")
    if kwargs:
        raise TypeError(f"'{next(iter(kwargs))}' is an invalid keyword argument for this function")
    if indexing not in ("xy", "ij"):
        raise ValueError(f"Argument `indexing` parameter must be either 'xy' or 'ij', got '{indexing}'")
    with name_scope(name, "meshgrid", list(args)):
        n = len(args)
        tensors = [convert_to_tensor(a) for a in args]
        reshaped = [reshape(t, [1] * i + [-1] + [1] * (n - i - 1)) for i, t in enumerate(tensors)]
        if indexing == "xy" and n > 1:
            reshaped[0] = reshape(tensors[0], [1, -1] + [1] * (n - 2))
            reshaped[1] = reshape(tensors[1], [-1, 1] + [1] * (n - 2))
        sizes = [size(t) for t in tensors]
        if indexing == "xy" and n > 1:
            sizes[0], sizes[1] = sizes[1], sizes[0]
        static = [t.shape.num_elements() for t in tensors]
        if indexing == "xy" and n > 1:
            static[0], static[1] = static[1], static[0]
        shape = static if all(s is not None for s in static) else stack(sizes)
        return [r * ones(shape, r.dtype) for r in reshaped]


# ---------------------------------------------------------------------------------------------
# Tensor.__getitem__
# ---------------------------------------------------------------------------------------------
_SLICE_TYPE_ERROR = ("Only integers, slices (`:`), ellipsis (`...`), tf.newaxis (`None`) and scalar "
                     "tf.int32/tf.int64 tensors are valid indices")


def _check_index(idx: Any) -> Any:
    """A valid index item as int or scalar int Tensor; TypeError otherwise (TF's message)."""
    if isinstance(idx, (int, np.integer)) and not isinstance(idx, (bool, np.bool_)):
        return int(idx)
    if isinstance(idx, Dimension):
        return int(idx)
    if is_tensor_like(idx):
        t = convert_to_tensor(idx)
        if t.dtype.base_dtype in (_dtypes.int32, _dtypes.int64) and t.shape.ndims != 1:
            return t
    raise TypeError(f"{_SLICE_TYPE_ERROR}, got {idx!r}")


def _pack_indices(values: list[Any], dtype: _dtypes.DType, name: str) -> Tensor:
    """One index vector for begin/end/strides: a Const when all are Python ints, else a Pack."""
    tensors = [v for v in values if isinstance(v, Tensor)]
    if not tensors:
        return convert_to_tensor(np.array(values, dtype=dtype.as_numpy_dtype), name=name)
    items = [v if not isinstance(v, Tensor) or v.dtype.base_dtype == dtype
             else cast(v, dtype) for v in values]
    return stack([convert_to_tensor(v, dtype=dtype) if not isinstance(v, Tensor) else v
                            for v in items], name=name)


def _slice_helper(tensor: Tensor, slice_spec: Any, var: Any = None) -> Tensor:
    """`tensor[slice_spec]`: Python indexing (ints, slices with steps, Ellipsis, tf.newaxis,
    scalar int tensors) as one StridedSlice; a boolean tensor/array is a boolean_mask."""
    if isinstance(slice_spec, (bool, np.bool_)) or (
            isinstance(slice_spec, Tensor) and slice_spec.dtype.base_dtype == _dtypes.bool) or (
            isinstance(slice_spec, np.ndarray) and slice_spec.dtype == np.bool_):
        return boolean_mask(tensor, slice_spec)
    if not isinstance(slice_spec, (list, tuple)):
        slice_spec = [slice_spec]
    begin: list[Any] = []
    end: list[Any] = []
    strides: list[Any] = []
    masks = {"begin_mask": 0, "end_mask": 0, "ellipsis_mask": 0, "new_axis_mask": 0, "shrink_axis_mask": 0}
    for i, s in enumerate(slice_spec):
        bit = 1 << i
        if isinstance(s, slice):
            start, stop = s.start, s.stop
            if start is not None and not (isinstance(start, int) and start == sys.maxsize):
                begin.append(_check_index(start))
            else:
                begin.append(0)
                masks["begin_mask"] |= bit
            if stop is not None and not (isinstance(stop, int) and stop == sys.maxsize):
                end.append(_check_index(stop))
            else:
                end.append(0)
                masks["end_mask"] |= bit
            strides.append(1 if s.step is None else _check_index(s.step))
        elif s is Ellipsis or s is None:
            begin.append(0)
            end.append(0)
            strides.append(1)
            masks["ellipsis_mask" if s is Ellipsis else "new_axis_mask"] |= bit
        else:
            index = _check_index(s)
            begin.append(index)
            end.append(index + 1 if isinstance(index, int) else index)  # shrink ignores `end`
            strides.append(1)
            masks["shrink_axis_mask"] |= bit
    with name_scope(None, "strided_slice", [tensor]) as scope:
        if begin:
            # int64 for all three when any index tensor is int64 (they share the Index attr)
            wide = any(isinstance(v, Tensor) and v.dtype.base_dtype == _dtypes.int64
                       for v in begin + end + strides)
            dtype = _dtypes.int64 if wide else _dtypes.int32
            packed = [_pack_indices(v, dtype, n)
                      for v, n in ((begin, "stack"), (end, "stack_1"), (strides, "stack_2"))]
        else:
            packed = [convert_to_tensor(np.zeros([0], np.int32))] * 3
        return apply_op(StridedSlice, name=scope, input=tensor, begin=packed[0], end=packed[1],
                        strides=packed[2], **masks)


Tensor._override_operator("__getitem__", _slice_helper)


Tensor._override_operator("__getitem__", _slice_helper)
