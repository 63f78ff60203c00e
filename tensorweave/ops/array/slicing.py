"""Array ops that select parts of a tensor: Slice, StridedSlice (and StridedSliceGrad, its
gradient), GatherV2, Where (coordinates of true elements), boolean_mask and ReverseV2.

Python indexing of tensors (`Tensor.__getitem__`) is built on StridedSlice in array_impl.py; the
gradients are in grad.py."""
from __future__ import annotations

import builtins
from typing import Any, NamedTuple, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor, is_tensor_like, name_scope
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorweave.ops._util import (
    canonical_axis, const_int, const_ints, host_ints, index_input, invalid, shape_error)
from tensorweave.ops.array.creation import _NUMBER_TYPES, ones_like
from tensorweave.ops.array.joining import concat
from tensorweave.ops.array.shaping import reshape, shape, size, squeeze

__all__ = ["slice", "strided_slice", "newaxis", "gather", "boolean_mask", "reverse", "reverse_v2"]

newaxis = None
builtins_slice = builtins.slice  # this module defines tf.slice


def _as_array(value: Any) -> Any:
    """numpy indexing gives a bare Python object (bytes) for one string element."""
    return value if isinstance(value, (np.ndarray, np.generic)) else np.asarray(value, dtype=object)


def _check_vector(op: Operation, t: Tensor) -> None:
    if t.shape.ndims is not None and t.shape.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {t.shape.ndims}")


# ---------------------------------------------------------------------------------------------
# Slice
# ---------------------------------------------------------------------------------------------
def _slice_shape(op: Operation) -> list[TensorShape]:
    x, begin_t, size_t = op.inputs
    _check_vector(op, begin_t)
    _check_vector(op, size_t)
    n = x.shape.ndims
    for t in (begin_t, size_t):
        length = t.shape[0].value if t.shape.ndims == 1 else None
        if length is not None:
            if n is not None and n != length:
                raise shape_error(op, f"Shape must be rank {length} but is rank {n}")
            n = length
    begin, sizes = const_ints(begin_t), const_ints(size_t)
    if n is None or sizes is None:
        return [unknown_shape(n)]
    dims = x.shape.as_list() if x.shape.ndims is not None else [None] * n
    out: list[Optional[int]] = []
    for i, (d, s) in enumerate(zip(dims, sizes)):
        b = begin[i] if begin is not None else None
        if b is not None and d is not None and not 0 <= b <= d:
            raise shape_error(op, f"Expected begin[{i}] in [0, {d}], but got {b}")
        if s == -1:
            out.append(None if b is None or d is None else d - b)
            continue
        if s < -1 or (b is not None and d is not None and b + s > d):
            raise shape_error(op, f"Expected size[{i}] in [0, {'?' if b is None or d is None else d - b}], "
                                  f"but got {s}")
        out.append(s)
    return [TensorShape(out)]


Slice = define_op("Slice", inputs=["input: T", "begin: Index", "size: Index"], outputs=["output: T"],
                  attrs=["T: type", "Index: {int32, int64}"], shape_fn=_slice_shape, forwards_input=True)


def _slice_index(shape_: Sequence[int], begin: list[int], sizes: list[int]) -> tuple:
    if len(begin) != len(shape_) or len(sizes) != len(shape_):
        raise invalid(f"Expected begin and size arguments to be 1-D tensors of size {len(shape_)}, but "
                      f"got shapes [{len(begin)}] and [{len(sizes)}] instead.")
    index = []
    for i, (d, b, s) in enumerate(zip(shape_, begin, sizes)):
        if not 0 <= b <= d:
            raise invalid(f"Expected begin[{i}] in [0, {d}], but got {b}")
        if s == -1:
            s = d - b
        if not 0 <= s <= d - b:
            raise invalid(f"Expected size[{i}] in [0, {d - b}], but got {s}")
        index.append(builtins_slice(b, b + s))
    return tuple(index)


@Slice.kernel()
def _slice_kernel(ctx: KernelContext) -> Any:
    wrap = _as_array if ctx.input_dtypes[0] == _dtypes.string else (lambda v: v)

    def compute(x: Any, begin: Any, size: Any) -> Any:
        return wrap(x[_slice_index(np.shape(x), host_ints(begin), host_ints(size))])

    return compute


def slice(input_: Any, begin: Any, size: Any, name: Optional[str] = None) -> Any:  # noqa: A001
    """The part of `input_` starting at `begin` with `size` (-1: everything to the end)."""
    begin = index_input(begin)
    if not is_tensor_like(size):
        size = convert_to_tensor(size, dtype=begin.dtype.base_dtype)
    return apply_op(Slice, name=name, input=input_, begin=begin, size=size)


# ---------------------------------------------------------------------------------------------
# StridedSlice
# ---------------------------------------------------------------------------------------------
class _Masks(NamedTuple):
    begin: int
    end: int
    ellipsis: int
    new_axis: int
    shrink: int

    @classmethod
    def of(cls, op: Operation) -> "_Masks":
        names = ("begin", "end", "ellipsis", "new_axis", "shrink_axis")
        return cls(*(op._get_attr(f"{k}_mask") for k in names))


def _sliced_dims(dims: list[Optional[int]], begin: Optional[list[int]], end: Optional[list[int]],
                 strides: list[int], m: _Masks) -> list[Optional[int]]:
    """The output dims of a strided slice over dims that may be unknown (None), with begin/end
    possibly unknown; raises ValueError with TF's messages for invalid specs."""
    n_sparse, ndims = len(strides), len(dims)
    if bin(m.ellipsis & ((1 << n_sparse) - 1)).count("1") > 1:
        raise ValueError("Multiple ellipses in slice spec not allowed")
    real = sum(1 for i in range(n_sparse) if not (m.ellipsis >> i) & 1 and not (m.new_axis >> i) & 1)
    out: list[Optional[int]] = []
    d, saw_ellipsis = 0, False
    for i in range(n_sparse):
        if (m.ellipsis >> i) & 1:
            cover = max(ndims - real, 0)
            out.extend(dims[d:d + cover])
            d += cover
            saw_ellipsis = True
            continue
        if (m.new_axis >> i) & 1:
            out.append(1)
            continue
        if d >= ndims:
            raise ValueError(f"Index out of range using input dim {d}; input has only {ndims} dims")
        dim, s = dims[d], strides[i]
        if s == 0:
            raise ValueError(f"strides[{i}] must be non-zero")
        if (m.shrink >> i) & 1:
            if s < 0:
                raise ValueError("only stride 1 allowed on non-range indexing.")
            if begin is not None and dim is not None:
                fwd = begin[i] + dim if begin[i] < 0 else begin[i]
                if not 0 <= fwd < dim:
                    raise ValueError(f"slice index {fwd} of dimension {d} out of bounds.")
        else:
            b = None if (m.begin >> i) & 1 else (begin[i] if begin is not None else ...)
            e = None if (m.end >> i) & 1 else (end[i] if end is not None else ...)
            known = dim is not None and b is not ... and e is not ...
            out.append(len(range(dim)[builtins_slice(b, e, s)]) if known else None)
        d += 1
    if not saw_ellipsis:
        out.extend(dims[d:])
    return out


def _numpy_index(begin: list[int], end: list[int], strides: list[int], m: _Masks) -> tuple:
    """The sparse slice spec as a NumPy basic index: TF's masks mean exactly Python's
    `...`, `None`, integer and `start:stop:step` items (shrink ignores begin_mask and end)."""
    if not len(begin) == len(end) == len(strides):
        raise invalid(f"Expected begin, end, and strides to be 1D equal size tensors, but got shapes "
                      f"[{len(begin)}], [{len(end)}], and [{len(strides)}] instead.")
    index: list[Any] = []
    for i, s in enumerate(strides):
        if (m.ellipsis >> i) & 1:
            index.append(Ellipsis)
        elif (m.new_axis >> i) & 1:
            index.append(None)
        elif s == 0:
            raise invalid(f"strides[{i}] must be non-zero")
        elif (m.shrink >> i) & 1:
            if s < 0:
                raise invalid("only stride 1 allowed on non-range indexing.")
            index.append(begin[i])
        else:
            index.append(builtins_slice(None if (m.begin >> i) & 1 else begin[i],
                                        None if (m.end >> i) & 1 else end[i], s))
    if index.count(Ellipsis) > 1:
        raise invalid("Multiple ellipses in slice spec not allowed")
    return tuple(index)


def _strided_slice_shape(op: Operation) -> list[TensorShape]:
    x, begin_t, end_t, strides_t = op.inputs
    for t in (begin_t, end_t, strides_t):
        _check_vector(op, t)
    strides = const_ints(strides_t)
    if x.shape.ndims is None or strides is None:
        return [unknown_shape()]
    try:
        dims = _sliced_dims(x.shape.as_list(), const_ints(begin_t), const_ints(end_t), strides,
                            _Masks.of(op))
    except ValueError as err:
        raise shape_error(op, str(err)) from None
    return [TensorShape(dims)]


StridedSlice = define_op(
    "StridedSlice", inputs=["input: T", "begin: Index", "end: Index", "strides: Index"],
    outputs=["output: T"],
    attrs=["T: type", "Index: {int32, int64}", "begin_mask: int = 0", "end_mask: int = 0",
           "ellipsis_mask: int = 0", "new_axis_mask: int = 0", "shrink_axis_mask: int = 0"],
    shape_fn=_strided_slice_shape, forwards_input=True)


def _cached_index(masks: _Masks) -> Any:
    """(begin, end, strides) -> the NumPy index, remembered per kernel: the spec is nearly
    always constant."""
    cache: dict[tuple, tuple] = {}

    def index_for(begin: Any, end: Any, strides: Any) -> tuple:
        b, e, s = host_ints(begin), host_ints(end), host_ints(strides)
        key = (*b, None, *e, None, *s)
        index = cache.get(key)
        if index is None:
            index = _numpy_index(b, e, s, masks)
            if len(cache) < 64:
                cache[key] = index
        return index

    return index_for


@StridedSlice.kernel()
def _strided_slice_kernel(ctx: KernelContext) -> Any:
    masks = _Masks.of(ctx.op)
    index_for = _cached_index(masks)

    def compute(x: Any, begin: Any, end: Any, strides: Any) -> Any:
        try:
            return x[index_for(begin, end, strides)]
        except IndexError:
            raise _slice_error(x, begin, end, strides, masks) from None

    def compute_strings(x: Any, begin: Any, end: Any, strides: Any) -> Any:
        try:
            return _as_array(x[index_for(begin, end, strides)])
        except IndexError:
            raise _slice_error(x, begin, end, strides, masks) from None

    return compute_strings if ctx.input_dtypes[0] == _dtypes.string else compute


def _slice_error(x: Any, begin: Any, end: Any, strides: Any, masks: _Masks) -> Exception:
    """TF's message for a spec NumPy rejected (out-of-range index, too many indices)."""
    try:
        _sliced_dims(list(np.shape(x)), host_ints(begin), host_ints(end), host_ints(strides), masks)
    except ValueError as err:
        return invalid(str(err))
    return invalid(f"Invalid strided slice of a tensor of shape {list(np.shape(x))}")


def _strided_slice_constant(t: Tensor) -> Optional[np.ndarray]:
    value = tensor_util.constant_value(t.op.inputs[0])
    spec = [const_ints(x) for x in t.op.inputs[1:]]
    if value is None or any(s is None for s in spec):
        return None
    return np.asarray(np.asarray(value)[_numpy_index(*spec, _Masks.of(t.op))])  # type: ignore[misc]


def _strided_slice_partial_shape(t: Tensor) -> TensorShape:
    """`tf.shape(x)[1:]` and the like on a partially known shape vector."""
    op, m = t.op, _Masks.of(t.op)
    fallback = unknown_shape(t.shape[0].value if t.shape.ndims == 1 else None)
    begin, end, strides = (const_ints(x) for x in op.inputs[1:])
    if m.ellipsis or m.new_axis or m.shrink or strides is None or len(strides) != 1:
        return fallback
    if (begin is None and not m.begin & 1) or (end is None and not m.end & 1):
        return fallback
    partial = tensor_util.constant_value_as_shape(op.inputs[0])
    if partial.ndims is None:
        return fallback
    sl = builtins_slice(None if m.begin & 1 else begin[0], None if m.end & 1 else end[0], strides[0])
    return TensorShape(partial.dims[sl])


StridedSlice.constant_value(_strided_slice_constant)
StridedSlice.partial_shape_value(_strided_slice_partial_shape)


def strided_slice(input_: Any, begin: Any, end: Any, strides: Any = None, begin_mask: int = 0,
                  end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                  shrink_axis_mask: int = 0, var: Any = None, name: Optional[str] = None) -> Any:
    """Python-style extended slicing of `input_` (see TF's tf.strided_slice for the masks)."""
    begin = index_input(begin)
    index_dtype = begin.dtype.base_dtype
    end = end if is_tensor_like(end) else convert_to_tensor(end, dtype=index_dtype)
    if strides is None:
        n = const_ints(begin)
        strides = [1] * len(n) if n is not None else ones_like(begin)
    strides = strides if is_tensor_like(strides) else convert_to_tensor(strides, dtype=index_dtype)
    return apply_op(StridedSlice, name=name, input=input_, begin=begin, end=end, strides=strides,
                    begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                    new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)


# StridedSliceGrad: the gradient of a strided slice, dy scattered into zeros of `shape` at the
# positions the slice read (TF's op of that name, which tf.gradients uses).
def _strided_slice_grad_shape(op: Operation) -> list[TensorShape]:
    for t in op.inputs[:4]:
        _check_vector(op, t)
    return [tensor_util.constant_value_as_shape(op.inputs[0])]


StridedSliceGrad = define_op(
    "StridedSliceGrad", inputs=["shape: Index", "begin: Index", "end: Index", "strides: Index", "dy: T"],
    outputs=["output: T"],
    attrs=["T: type", "Index: {int32, int64}", "begin_mask: int = 0", "end_mask: int = 0",
           "ellipsis_mask: int = 0", "new_axis_mask: int = 0", "shrink_axis_mask: int = 0"],
    shape_fn=_strided_slice_grad_shape)


@StridedSliceGrad.kernel()
def _strided_slice_grad_kernel(ctx: KernelContext) -> Any:
    masks, xp = _Masks.of(ctx.op), ctx.xp
    np_t = ctx.output_dtypes[0].as_numpy_dtype
    index_for = _cached_index(masks)

    def compute(shape_: Any, begin: Any, end: Any, strides: Any, dy: Any) -> Any:
        dims = host_ints(shape_)
        if any(d < 0 for d in dims):
            raise invalid(f"Dimensions must be non-negative, got shape {dims}")
        out = xp.zeros(dims, dtype=np_t)
        index = index_for(begin, end, strides)
        try:
            target = np.shape(out[index])
        except IndexError:
            raise _slice_error(out, begin, end, strides, masks) from None
        if np.shape(dy) != target:
            raise invalid(f"shape of dy was {_fmt_dims(np.shape(dy))} instead of {_fmt_dims(target)}")
        out[index] = dy
        return out

    return compute


def _fmt_dims(dims: Sequence[int]) -> str:
    return "[" + ",".join(str(d) for d in dims) + "]"


def strided_slice_grad(shape: Any, begin: Any, end: Any, strides: Any, dy: Any, begin_mask: int = 0,
                       end_mask: int = 0, ellipsis_mask: int = 0, new_axis_mask: int = 0,
                       shrink_axis_mask: int = 0, name: Optional[str] = None) -> Any:
    """Zeros of `shape` with `dy` written where strided_slice(zeros, begin, end, ...) reads."""
    return apply_op(StridedSliceGrad, name=name, shape=shape, begin=begin, end=end, strides=strides, dy=dy,
                    begin_mask=begin_mask, end_mask=end_mask, ellipsis_mask=ellipsis_mask,
                    new_axis_mask=new_axis_mask, shrink_axis_mask=shrink_axis_mask)


# ---------------------------------------------------------------------------------------------
# GatherV2
# ---------------------------------------------------------------------------------------------
def _gather_shape(op: Operation) -> list[TensorShape]:
    params, indices, axis_t = op.inputs[0].shape, op.inputs[1].shape, op.inputs[2]
    batch_dims = op._get_attr("batch_dims")
    if axis_t.shape.ndims is not None and axis_t.shape.ndims != 0:
        raise shape_error(op, f"Shape must be rank 0 but is rank {axis_t.shape.ndims}")
    axis = const_int(axis_t)
    if params.ndims is None or indices.ndims is None or axis is None:
        known = params.ndims is not None and indices.ndims is not None
        return [unknown_shape(params.ndims + indices.ndims - 1 - batch_dims if known else None)]
    if params.ndims == 0:
        raise shape_error(op, "Shape must be at least rank 1 but is rank 0")
    axis = canonical_axis(axis, params.ndims, op)
    if batch_dims < 0:
        batch_dims += indices.ndims
    if batch_dims > axis or batch_dims > indices.ndims:
        raise shape_error(op, f"batch_dims ({batch_dims}) must be less than or equal to axis ({axis}) "
                              f"and rank(indices) ({indices.ndims})")
    p, i = params.as_list(), indices.as_list()
    return [TensorShape(p[:axis] + i[batch_dims:] + p[axis + 1:])]


GatherV2 = define_op(
    "GatherV2", inputs=["params: Tparams", "indices: Tindices", "axis: Taxis"], outputs=["output: Tparams"],
    attrs=["batch_dims: int = 0", "Tparams: type", "Tindices: {int32, int64}", "Taxis: {int32, int64}"],
    shape_fn=_gather_shape)


def _check_gather_indices(indices: Any, limit: int) -> None:
    if np.size(indices) == 0:
        return
    if indices.min() < 0 or indices.max() >= limit:
        bad = np.argwhere((indices < 0) | (indices >= limit))[0]
        where = ",".join(str(int(b)) for b in bad)
        raise invalid(f"indices[{where}] = {indices[tuple(bad)]} is not in [0, {limit})")


@GatherV2.kernel()
def _gather_kernel(ctx: KernelContext) -> Any:
    xp, batch_dims = ctx.xp, ctx.attr("batch_dims")
    wrap = _as_array if ctx.input_dtypes[0] == _dtypes.string else (lambda v: v)

    def compute(params: Any, indices: Any, axis: Any) -> Any:
        a = int(axis)
        n = params.ndim
        if not -n <= a < n:
            raise invalid(f"Expected axis in the range [{-n}, {n}), but got {a}")
        a %= n
        if batch_dims:
            _check_gather_indices(indices, params.shape[a])
            return _batched_gather(xp, params, indices, a, batch_dims % max(indices.ndim, 1))
        # np.take raises for indices >= limit but wraps negative ones, which TF rejects
        if indices.size and indices.min() < 0:
            _check_gather_indices(indices, params.shape[a])
        try:
            return wrap(xp.take(params, indices, axis=a))
        except IndexError:
            _check_gather_indices(indices, params.shape[a])
            raise

    return compute


def _batched_gather(xp: Any, params: Any, indices: Any, axis: int, batch_dims: int) -> Any:
    batch_shape = np.shape(params)[:batch_dims]
    if np.shape(indices)[:batch_dims] != batch_shape:
        raise invalid(f"params.shape[:{batch_dims}] {list(batch_shape)} should equal indices.shape"
                      f"[:{batch_dims}] {list(np.shape(indices)[:batch_dims])}")
    flat_p = xp.reshape(params, (-1,) + np.shape(params)[batch_dims:])
    flat_i = xp.reshape(indices, (-1,) + np.shape(indices)[batch_dims:])
    inner = axis - batch_dims
    out_tail = np.shape(params)[batch_dims:][:inner] + np.shape(indices)[batch_dims:] + \
        np.shape(params)[axis + 1:]
    parts = [xp.take(flat_p[k], flat_i[k], axis=inner) for k in range(flat_p.shape[0])]
    stacked = xp.stack(parts) if parts else xp.empty((0,) + out_tail, dtype=params.dtype)
    return xp.reshape(stacked, batch_shape + out_tail)


def gather(params: Any, indices: Any, validate_indices: Any = None, name: Optional[str] = None,
           axis: Any = None, batch_dims: int = 0) -> Any:
    """Gathers slices of `params` along `axis` at `indices` (out-of-range: InvalidArgumentError)."""
    del validate_indices  # TF always validates on CPU
    return apply_op(GatherV2, name=name, params=params, indices=index_input(indices),
                    axis=index_input(0 if axis is None else axis), batch_dims=batch_dims)


# ---------------------------------------------------------------------------------------------
# Where (one argument): coordinates of the true / non-zero elements
# ---------------------------------------------------------------------------------------------
Where = define_op("Where", inputs=["input: T"], outputs=["index: int64"],
                  attrs=[f"T: {{{_NUMBER_TYPES}, bool}} = bool"],
                  shape_fn=lambda op: [TensorShape([None, op.inputs[0].shape.ndims])])


@Where.kernel()
def _where_kernel(ctx: KernelContext) -> Any:
    xp = ctx.xp
    return lambda x: xp.argwhere(x).astype(np.int64, copy=False)


Where.not_differentiable()


def _where_indices(condition: Any, name: Optional[str] = None) -> Any:
    """tf.where(condition) with one argument: int64 [num_true, rank] coordinates."""
    return apply_op(Where, name=name or "Where", input=condition)


def boolean_mask(tensor: Any, mask: Any, name: str = "boolean_mask", axis: Any = None) -> Any:
    """The elements (slices along `axis`) of `tensor` where the boolean `mask` is True; the
    mask covers dimensions axis .. axis + rank(mask) - 1, which flatten into one."""
    with name_scope(name, values=[tensor, mask]):
        tensor = convert_to_tensor(tensor, name="tensor")
        mask = convert_to_tensor(mask, name="mask")
        mask_shape, tensor_shape = mask.shape, tensor.shape
        if mask_shape.ndims == 0:
            raise ValueError("mask cannot be scalar.")
        if mask_shape.ndims is None:
            raise ValueError("Number of mask dimensions must be specified, even if some dimensions are "
                             "None.  E.g. shape=[None] is ok, but shape=None is not.")
        k = mask_shape.ndims
        axis = 0 if axis is None else int(axis)
        tensor_shape[axis:axis + k].assert_is_compatible_with(mask_shape)
        first_dim = tensor_shape[axis:axis + k].num_elements()
        head, tail = tensor_shape[:axis], tensor_shape[axis + k:]
        static = head.is_fully_defined() and tail.is_fully_defined()
        if static and (first_dim is not None or 0 not in head.as_list() + tail.as_list()):
            new_shape: Any = head.as_list() + [-1 if first_dim is None else first_dim] + tail.as_list()
        else:
            full = shape(tensor)
            new_shape = concat([full[:axis], [size(mask)], full[axis + k:]], 0)
        flat = reshape(tensor, new_shape)
        flat.set_shape(as_shape(head).concatenate([first_dim]).concatenate(tail))
        indices = squeeze(_where_indices(reshape(mask, [-1])), axis=[1])
        return gather(flat, indices, axis=axis)


# ---------------------------------------------------------------------------------------------
# ReverseV2
# ---------------------------------------------------------------------------------------------
def _reverse_axes(axes: list[int], rank: int, error: Any) -> tuple[int, ...]:
    seen: set[int] = set()
    for i, a in enumerate(axes):
        if not -rank <= a < rank:
            raise error(f"'axis'[{i}] = {a} is out of valid range [0, {rank - 1}")
        canon = a % rank
        if canon in seen:
            raise error(f"axis {canon} specified more than once.")
        seen.add(canon)
    return tuple(sorted(seen))


def _reverse_shape(op: Operation) -> list[TensorShape]:
    x, axis_t = op.inputs
    _check_vector(op, axis_t)
    axes = const_ints(axis_t)
    if axes is not None and x.shape.ndims is not None:
        _reverse_axes(axes, x.shape.ndims, lambda m: shape_error(op, m))
    return [x.shape]


ReverseV2 = define_op("ReverseV2", inputs=["tensor: T", "axis: Tidx"], outputs=["output: T"],
                      attrs=["Tidx: {int32, int64} = int32", "T: type"], shape_fn=_reverse_shape,
                      forwards_input=True)


@ReverseV2.kernel()
def _reverse_kernel(ctx: KernelContext) -> Any:
    xp = ctx.xp

    def compute(x: Any, axis: Any) -> Any:
        axes = _reverse_axes(host_ints(axis), np.ndim(x), invalid)
        return xp.flip(x, axis=axes) if axes else x

    return compute


def reverse(tensor: Any, axis: Any, name: Optional[str] = None) -> Any:
    """Reverses `tensor` along the dimensions listed in `axis`."""
    return apply_op(ReverseV2, name=name, tensor=tensor, axis=index_input(axis))


reverse_v2 = reverse


