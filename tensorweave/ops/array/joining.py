"""Array ops that join and split tensors: ConcatV2, Split, SplitV, Pack (tf.stack) and Unpack
(tf.unstack), plus TF's autopacking of lists that hold tensors (`tf.reshape(x, [n, -1])` with a
tensor `n` converts the list through a Pack). The gradients are in grad.py."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor, is_tensor_like, name_scope
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import (
    canonical_axis, const_int, const_ints, fmt_shape, host_ints, index_input, invalid, shape_error)
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.shaping import identity

__all__ = ["concat", "split", "stack", "unstack"]


# ---------------------------------------------------------------------------------------------
# ConcatV2
# ---------------------------------------------------------------------------------------------
def _concat_shape(op: Operation) -> list[TensorShape]:
    values, axis_t = op.inputs[:-1], op.inputs[-1]
    axis = const_int(axis_t)
    rank_ = None
    for t in values:
        if t.shape.ndims is not None:
            if rank_ is not None and t.shape.ndims != rank_:
                raise shape_error(op, f"Shape must be rank {rank_} but is rank {t.shape.ndims}")
            rank_ = t.shape.ndims
    if rank_ is None:
        return [unknown_shape()]
    if rank_ == 0:
        raise shape_error(op, "Can't concatenate scalars (use tf.stack instead)")
    if axis is None:
        return [unknown_shape(rank_)]
    if not -rank_ <= axis < rank_:
        raise shape_error(op, f"ConcatOp : Expected concatenating dimensions in the range "
                              f"[{-rank_}, {rank_}), but got {axis}")
    axis %= rank_
    dims: list[Optional[int]] = [None] * rank_
    total: Optional[int] = 0
    for t in values:
        if t.shape.ndims is None:
            total = None
            continue
        s = t.shape.as_list()
        total = None if total is None or s[axis] is None else total + s[axis]
        for d in range(rank_):
            if d == axis or s[d] is None:
                continue
            if dims[d] is not None and dims[d] != s[d]:
                merged = TensorShape(dims[:axis] + [None] + dims[axis + 1:])
                raise shape_error(op, f"Dimension {d} in both shapes must be equal, but are {dims[d]} and "
                                      f"{s[d]}. Shapes are {fmt_shape(merged)} and {fmt_shape(t.shape)}.")
            dims[d] = s[d]
    dims[axis] = total
    return [TensorShape(dims)]


ConcatV2 = define_op("ConcatV2", inputs=["values: N * T", "axis: Tidx"], outputs=["output: T"],
                     attrs=["N: int >= 2", "T: type", "Tidx: {int32, int64} = int32"],
                     shape_fn=_concat_shape)


def _concat_error(values: Sequence[Any], axis: int) -> errors.InvalidArgumentError:
    shapes = [np.shape(v) for v in values]
    first = shapes[0]
    fmt = lambda s: "[" + ",".join(str(d) for d in s) + "]"  # noqa: E731
    if len(first) == 0:
        return invalid("ConcatOp : Can't concatenate scalars (use tf.stack instead)")
    if not -len(first) <= axis < len(first):
        return invalid(f"ConcatOp : Expected concatenating dimensions in the range [{-len(first)}, "
                       f"{len(first)}), but got {axis}")
    for i, s in enumerate(shapes[1:], 1):
        if len(s) != len(first):
            return invalid(f"ConcatOp : Ranks of all input tensors should match: shape[0] = "
                           f"{fmt(first)} vs. shape[{i}] = {fmt(s)}")
        for d, (a, b) in enumerate(zip(first, s)):
            if d != axis % len(first) and a != b:
                return invalid(f"ConcatOp : Dimension {d} in both shapes must be equal: shape[0] = "
                               f"{fmt(first)} vs. shape[{i}] = {fmt(s)}")
    return invalid(f"ConcatOp : cannot concatenate shapes {[fmt(s) for s in shapes]}")


@ConcatV2.kernel()
def _concat_kernel(ctx: KernelContext) -> Any:
    xp = ctx.xp

    def compute(*inputs: Any) -> Any:
        values = inputs[:-1]
        axis = int(inputs[-1])
        try:
            return xp.concatenate(values, axis=axis)
        except (ValueError, IndexError):
            raise _concat_error(values, axis) from None

    return compute


def _concat_constant(t: Tensor) -> Optional[np.ndarray]:
    values = [tensor_util.constant_value(v) for v in t.op.inputs[:-1]]
    axis = const_int(t.op.inputs[-1])
    if axis is None or any(v is None for v in values):
        return None
    return np.concatenate(values, axis=axis)


def _concat_partial_shape(t: Tensor) -> TensorShape:
    result = TensorShape([])
    for v in t.op.inputs[:-1]:
        result = result.concatenate(tensor_util.constant_value_as_shape(v))
    return result


ConcatV2.constant_value(_concat_constant)
ConcatV2.partial_shape_value(_concat_partial_shape)


def concat(values: Any, axis: Any, name: str = "concat") -> Any:
    """Concatenates a list of tensors along dimension `axis` (negative counts from the end)."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:  # as TF: an Identity, after checking the axis is a scalar
        with name_scope(name):
            axis_t = convert_to_tensor(axis, name="concat_dim", dtype=_dtypes.int32)
            axis_t.shape.assert_has_rank(0)
            return identity(values[0], name=name)
    return apply_op(ConcatV2, name=name, values=list(values), axis=index_input(axis))


# ---------------------------------------------------------------------------------------------
# Split, SplitV
# ---------------------------------------------------------------------------------------------
def _split_shape(op: Operation) -> list[TensorShape]:
    axis_t, value = op.inputs
    num = op._get_attr("num_split")
    in_shape = value.shape
    axis = const_int(axis_t)
    if in_shape.ndims is None or axis is None:
        return [unknown_shape(in_shape.ndims)] * num
    axis = canonical_axis(axis, in_shape.ndims, op)
    dims = in_shape.as_list()
    if dims[axis] is not None:
        if dims[axis] % num:
            raise shape_error(op, f"Dimension size must be evenly divisible by {num} but is {dims[axis]}")
        dims[axis] //= num
    return [TensorShape(dims)] * num


def _split_v_shape(op: Operation) -> list[TensorShape]:
    value, sizes_t, axis_t = op.inputs
    num = op._get_attr("num_split")
    in_shape = value.shape
    axis, sizes = const_int(axis_t), const_ints(sizes_t)
    if in_shape.ndims is None or axis is None:
        return [unknown_shape(in_shape.ndims)] * num
    axis = canonical_axis(axis, in_shape.ndims, op)
    dims = in_shape.as_list()
    if sizes is None:
        return [TensorShape(dims[:axis] + [None] + dims[axis + 1:])] * num
    if len(sizes) != num:
        raise shape_error(op, f"Length of size_splits should be equal to num_split ({len(sizes)} vs {num})")
    sizes = _resolve_split_sizes(sizes, dims[axis], lambda m: shape_error(op, m))
    return [TensorShape(dims[:axis] + [s] + dims[axis + 1:]) for s in sizes]


def _resolve_split_sizes(sizes: list[int], dim: Optional[int], error: Any) -> list[Any]:
    """Fills in the one -1 entry of `size_splits`; checks the sizes add up to `dim`."""
    unknown = [i for i, s in enumerate(sizes) if s == -1]
    if len(unknown) > 1:
        raise error(f"Only one dimensions can have a value of -1. Second one found at dimension {unknown[1]}")
    if any(s < -1 for s in sizes):
        raise error(f"size_splits must be non-negative or -1, got {sizes}")
    known = sum(s for s in sizes if s != -1)
    out: list[Any] = list(sizes)
    if dim is None:
        if unknown:
            out[unknown[0]] = None
        return out
    if (unknown and known > dim) or (not unknown and known != dim):
        raise error(f"Determined shape must either match input shape along split_dim exactly if fully "
                    f"specified, or be less than the size of the input along split_dim if not fully "
                    f"specified.  Got: {known}")
    if unknown:
        out[unknown[0]] = dim - known
    return out


Split = define_op("Split", inputs=["split_dim: int32", "value: T"], outputs=["output: num_split * T"],
                  attrs=["num_split: int >= 1", "T: type"], shape_fn=_split_shape, forwards_input=True)
SplitV = define_op("SplitV", inputs=["value: T", "size_splits: Tlen", "split_dim: int32"],
                   outputs=["output: num_split * T"],
                   attrs=["num_split: int >= 1", "T: type", "Tlen: {int32, int64} = int64"],
                   shape_fn=_split_v_shape, forwards_input=True)


def _split_axis(shape_: tuple, axis: Any) -> int:
    a, n = int(axis), len(shape_)
    if not -n <= a < n:
        raise invalid(f"-input rank(-{n}) <= split_dim < input rank ({n}), but got {a}")
    return a + n if a < 0 else a


def _pieces(value: Any, axis: int, sizes: Sequence[int]) -> tuple:
    """Views of consecutive `sizes`-long pieces along `axis` (cheaper than np.split)."""
    lead = (slice(None),) * axis
    out, start = [], 0
    for s in sizes:
        out.append(value[lead + (slice(start, start + s),)])
        start += s
    return tuple(out)


@Split.kernel()
def _split_kernel(ctx: KernelContext) -> Any:
    num = ctx.attr("num_split")

    def compute(axis: Any, value: Any) -> Any:
        shape_ = value.shape
        a = _split_axis(shape_, axis)
        if shape_[a] % num:
            raise invalid(f"Number of ways to split should evenly divide the split dimension, but got "
                          f"split_dim {a} (size = {shape_[a]}) and num_split {num}")
        return _pieces(value, a, [shape_[a] // num] * num)

    return compute


@SplitV.kernel()
def _split_v_kernel(ctx: KernelContext) -> Any:
    def compute(value: Any, sizes: Any, axis: Any) -> Any:
        shape_ = value.shape
        a = _split_axis(shape_, axis)
        return _pieces(value, a, _resolve_split_sizes(host_ints(sizes), shape_[a], invalid))

    return compute


def split(value: Any, num_or_size_splits: Any, axis: Any = 0, num: Optional[int] = None,
          name: str = "split") -> Any:
    """Splits `value` along `axis` into `num_or_size_splits` equal parts, or parts of the
    given sizes (one of which may be -1). Returns a list of tensors."""
    if isinstance(num_or_size_splits, (int, np.integer)) and not isinstance(num_or_size_splits, bool):
        return apply_op(Split, name=name, split_dim=axis, value=value, num_split=int(num_or_size_splits))
    size_splits = index_input(num_or_size_splits)
    if size_splits.shape.ndims == 0:
        count = const_int(size_splits)
        if count is None:
            raise ValueError("Cannot infer num from a non-constant scalar num_or_size_splits")
        return apply_op(Split, name=name, split_dim=axis, value=value, num_split=count)
    if num is None:
        num = size_splits.shape[0].value if size_splits.shape.ndims == 1 else None
        if num is None:
            raise ValueError(f"Cannot infer num from shape {num_or_size_splits}")
    return apply_op(SplitV, name=name, value=value, size_splits=size_splits, split_dim=axis, num_split=num)


# ---------------------------------------------------------------------------------------------
# Pack, Unpack
# ---------------------------------------------------------------------------------------------
def _pack_shape(op: Operation) -> list[TensorShape]:
    merged = unknown_shape()
    for i, t in enumerate(op.inputs):
        if merged.ndims is not None and t.shape.ndims is not None and merged.ndims != t.shape.ndims:
            raise shape_error(op, f"Shapes must be equal rank, but are {merged.ndims} and "
                                  f"{t.shape.ndims}\n\tFrom merging shape 0 with other shapes.")
        try:
            merged = merged.merge_with(t.shape)
        except ValueError:
            raise shape_error(op, f"Shapes {fmt_shape(merged)} and {fmt_shape(t.shape)} are not "
                                  f"compatible\n\tFrom merging shape {i} with other shapes.") from None
    if merged.ndims is None:
        return [unknown_shape()]
    axis = op._get_attr("axis")
    n = merged.ndims + 1
    if not -n <= axis < n:
        raise shape_error(op, f"Invalid axis: {axis}; must be in [{-n},{n})")
    axis %= n
    dims = merged.as_list()
    return [TensorShape(dims[:axis] + [len(op.inputs)] + dims[axis:])]


Pack = define_op("Pack", inputs=["values: N * T"], outputs=["output: T"],
                 attrs=["N: int >= 1", "T: type", "axis: int = 0"], shape_fn=_pack_shape)


@Pack.kernel()
def _pack_kernel(ctx: KernelContext) -> Any:
    xp, axis = ctx.xp, ctx.attr("axis")

    def compute(*values: Any) -> Any:
        try:  # insert the new axis by reshaping (views), then one concatenate: cheaper than np.stack
            if axis == 0:
                return xp.concatenate([v[None] for v in values])
            ins = axis + values[0].ndim + 1 if axis < 0 else axis
            expanded = [v.reshape(v.shape[:ins] + (1,) + v.shape[ins:]) for v in values]
            return xp.concatenate(expanded, axis=ins)
        except ValueError:
            first = np.shape(values[0])
            for i, v in enumerate(values):
                if np.shape(v) != first:
                    raise invalid(f"Shapes of all inputs must match: values[0].shape = {list(first)} != "
                                  f"values[{i}].shape = {list(np.shape(v))}") from None
            raise

    return compute


def _pack_constant(t: Tensor) -> Optional[np.ndarray]:
    values = [tensor_util.constant_value(v) for v in t.op.inputs]
    if any(v is None for v in values):
        return None
    return np.stack(values, axis=t.op._get_attr("axis"))


def scalar_dim_value(t: Tensor) -> Optional[int]:
    """A scalar int tensor's value if static, seeing through `tf.shape(x)[i]` on a partially
    known shape (how TF's shape refiner gives `reshape(x, [tf.shape(x)[0], 3])` rank info)."""
    value = tensor_util.constant_value(t)
    if value is not None:
        v = int(np.reshape(value, -1)[0]) if np.size(value) == 1 else None
        return None if v is None or v < 0 else v
    op = t.op
    if op.type == "StridedSlice" and op._get_attr("shrink_axis_mask") == 1 and \
            op._get_attr("ellipsis_mask") == 0 and op._get_attr("new_axis_mask") == 0:
        index = const_int(op.inputs[1])
        partial = tensor_util.constant_value_as_shape(op.inputs[0])
        if index is not None and partial.ndims is not None and -partial.ndims <= index < partial.ndims:
            return partial[index].value
    return None


def _pack_partial_shape(t: Tensor) -> TensorShape:
    if t.op._get_attr("axis") != 0 or any(v.shape.ndims not in (0, None) for v in t.op.inputs):
        return unknown_shape(t.shape[0].value if t.shape.ndims == 1 else None)
    return TensorShape([scalar_dim_value(v) for v in t.op.inputs])


Pack.constant_value(_pack_constant)
Pack.partial_shape_value(_pack_partial_shape)


def _unpack_shape(op: Operation) -> list[TensorShape]:
    in_shape, num, axis = op.inputs[0].shape, op._get_attr("num"), op._get_attr("axis")
    if in_shape.ndims is None:
        return [unknown_shape()] * num
    axis = canonical_axis(axis, in_shape.ndims, op)
    dims = in_shape.as_list()
    if dims[axis] is not None and dims[axis] != num:
        raise shape_error(op, f"Dimension must be {num} but is {dims[axis]}")
    return [TensorShape(dims[:axis] + dims[axis + 1:])] * num


Unpack = define_op("Unpack", inputs=["value: T"], outputs=["output: num * T"],
                   attrs=["num: int >= 0", "T: type", "axis: int = 0"], shape_fn=_unpack_shape,
                   forwards_input=True)


@Unpack.kernel()
def _unpack_kernel(ctx: KernelContext) -> Any:
    num, axis = ctx.attr("num"), ctx.attr("axis")
    strings = ctx.input_dtypes[0] == _dtypes.string

    def compute(value: Any) -> Any:
        shape_ = value.shape
        a = axis + len(shape_) if axis < 0 else axis
        if shape_[a] != num:
            raise invalid(f"Input shape axis {a} must equal {num}, got shape {list(shape_)}")
        if strings and len(shape_) == 1:  # one element of an object array is a bare bytes
            return tuple(np.asarray(value[i], dtype=object) for i in range(num))
        if a == 0:
            return tuple(value[i] for i in range(num))
        lead = (slice(None),) * a
        return tuple(value[lead + (i,)] for i in range(num))

    return compute


def _unpack_constant(t: Tensor) -> Optional[np.ndarray]:
    value = tensor_util.constant_value(t.op.inputs[0])
    if value is None:
        return None
    return np.take(value, t.value_index, axis=t.op._get_attr("axis"))


Unpack.constant_value(_unpack_constant)


def stack(values: Any, axis: int = 0, name: str = "stack") -> Any:
    """Stacks a list of rank-R tensors into one rank-(R+1) tensor along `axis`."""
    if axis == 0:
        try:  # a list of constants becomes one Const; with tensors, an autopacked Pack
            return convert_to_tensor(values, name=name)
        except (TypeError, ValueError):
            pass
    values = list(values)
    first = convert_to_tensor(values[0]) if values and is_tensor_like(values[0]) else None
    if first is not None and first.shape.ndims is not None:
        n = first.shape.ndims + 1
        if not -n <= axis < n:
            raise ValueError(f"axis = {axis} not in [{-n}, {n})")
    return apply_op(Pack, name=name, values=values, axis=axis)


def unstack(value: Any, num: Optional[int] = None, axis: int = 0, name: str = "unstack") -> Any:
    """Unpacks dimension `axis` of `value` into a list of `num` tensors."""
    value = convert_to_tensor(value)
    s = value.shape
    if s.ndims is not None:
        if not -s.ndims <= axis < s.ndims:
            raise ValueError(f"axis = {axis} not in [{-s.ndims}, {s.ndims})")
    if num is None:
        num = s[axis].value if s.ndims is not None else None
        if num is None:
            raise ValueError(f"Cannot infer num from shape {s}")
    return apply_op(Unpack, name=name, value=value, num=num, axis=axis)


# Lists and tuples holding tensors convert to a Pack of their elements (TF's autopacking), so
# `tf.reshape(x, [tf.shape(x)[0], -1])` works. Lists of plain numbers keep the Const path.
class _HoldsTensorsMeta(type):
    def __instancecheck__(cls, value: Any) -> bool:
        return isinstance(value, (list, tuple)) and _holds_tensor(value)


class SequenceHoldingTensors(metaclass=_HoldsTensorsMeta):
    pass


def _holds_tensor(seq: Any) -> bool:
    for v in seq:
        if is_tensor_like(v) or (isinstance(v, (list, tuple)) and _holds_tensor(v)):
            return True
    return False


def _first_tensor_dtype(seq: Any) -> Optional[_dtypes.DType]:
    for v in seq:
        if is_tensor_like(v):
            return convert_to_tensor(v).dtype.base_dtype
        if isinstance(v, (list, tuple)):
            dt = _first_tensor_dtype(v)
            if dt is not None:
                return dt
    return None


def _autopack(seq: Any, dtype: Optional[_dtypes.DType], name: str) -> Any:
    elems: list[Any] = []
    must_pack = False
    with name_scope(name) as scope:
        for i, elem in enumerate(seq):
            if is_tensor_like(elem):
                t = convert_to_tensor(elem)
                if dtype is not None and t.dtype.base_dtype != dtype:
                    raise TypeError(f"Cannot convert a list containing a tensor of dtype {t.dtype.name} "
                                    f"to {dtype.name} (Tensor is: {t!r})")
                elems.append(t)
                must_pack = True
            elif isinstance(elem, (list, tuple)):
                packed = _autopack(elem, dtype, str(i))
                must_pack = must_pack or isinstance(packed, Tensor)
                elems.append(packed)
            else:
                elems.append(elem)
        if not must_pack:
            return elems
        tensors = [e if isinstance(e, Tensor) else constant(e, dtype=dtype, name=str(i))
                   for i, e in enumerate(elems)]
        return apply_op(Pack, name=scope, values=tensors)


def _autopacking_conversion(value: Any, dtype: Any = None, name: Optional[str] = None,
                            as_ref: bool = False) -> Tensor:
    dtype = _dtypes.as_dtype(dtype).base_dtype if dtype is not None else _first_tensor_dtype(value)
    return _autopack(value, dtype, name or "packed")


register_tensor_conversion_function(SequenceHoldingTensors, _autopacking_conversion, 99)
