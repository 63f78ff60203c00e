"""Array ops that create values: Fill, zeros/ones(_like) (ZerosLike, OnesLike), Range, LinSpace,
OneHot, and padding (Pad, PadV2, MirrorPad and MirrorPadGrad, the gradient of MirrorPad).

tf.range (which casts its arguments to one dtype), tf.sequence_mask and tf.meshgrid are built in
array_impl.py; the gradients are in grad.py."""
from __future__ import annotations

import math
from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor, is_tensor_like, name_scope
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorweave.ops import _util
from tensorweave.ops._util import (
    const_int, const_ints, fmt_shape, host_ints, index_input, invalid, shape_error)
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.joining import SequenceHoldingTensors
from tensorweave.ops.array.shaping import reshape, shape

__all__ = ["fill", "zeros", "ones", "zeros_like", "ones_like", "linspace", "lin_space", "one_hot",
           "pad"]

# Spelled out: op_def's parser can't mix a type group with other types inside braces.
_NUMBER_TYPES = ("float16, float32, float64, complex64, complex128, int8, int16, int32, int64, uint8, "
                 "uint16, uint32, uint64")
# Above this many elements zeros()/ones() build a Fill instead of a Const (as TF, so graphs
# stay small).
_SMALL_CONSTANT = 1000


def _require_rank(op: Operation, t: Tensor, rank: int) -> None:
    if t.shape.ndims is not None and t.shape.ndims != rank:
        raise shape_error(op, f"Shape must be rank {rank} but is rank {t.shape.ndims}")


# ---------------------------------------------------------------------------------------------
# Fill
# ---------------------------------------------------------------------------------------------
def _fill_shape(op: Operation) -> list[TensorShape]:
    dims_t, value_t = op.inputs
    _require_rank(op, value_t, 0)
    _require_rank(op, dims_t, 1)
    dims = const_ints(dims_t)
    if dims is not None and any(d < 0 for d in dims):
        raise shape_error(op, f"Fill dimensions must be >= 0, got {dims}")
    return [tensor_util.constant_value_as_shape(dims_t)]


Fill = define_op("Fill", inputs=["dims: index_type", "value: T"], outputs=["output: T"],
                 attrs=["T: type", "index_type: {int32, int64} = int32"], shape_fn=_fill_shape)


@Fill.kernel()
def _fill_kernel(ctx: KernelContext) -> Any:
    xp, np_t = ctx.xp, ctx.output_dtypes[0].as_numpy_dtype
    out_of_memory = _fill_allocation_error(ctx)

    def compute(dims: Any, value: Any) -> Any:
        if np.ndim(value) != 0:
            raise invalid(f"value must be a scalar, got shape {list(np.shape(value))}")
        if np.ndim(dims) != 1:
            raise invalid(f"dims must be a vector, got shape {list(np.shape(dims))}")
        shape_ = host_ints(dims)
        for i, d in enumerate(shape_):
            if d < 0:
                raise invalid(f"Fill dimensions must be >= 0, got dims[{i}] = {d}")
        try:
            return xp.full(shape_, value, dtype=np_t)
        except MemoryError:
            raise out_of_memory(shape_) from None

    return compute


def _fill_allocation_error(ctx: KernelContext) -> Any:
    """The error of a Fill too large to allocate, as TF 2.21 gives it
    (tests/data/tf_malformed_expected.json): ResourceExhaustedError "OOM when allocating" from
    the Fill kernel; but TF's graph optimizer first folds a Fill of constant inputs that feeds
    other nodes into a Const holding one value, and that Const's kernel fails to build it with
    InvalidArgumentError "Cannot parse tensor from proto" (a tf.Variable's huge initial value)."""
    op, dtype = ctx.op, ctx.output_dtypes[0]
    folded = bool(op.outputs[0].consumers()) and all(tensor_util.constant_value(t) is not None for t in op.inputs)
    type_name = {"float32": "float", "float64": "double", "float16": "half"}.get(dtype.name, dtype.name)
    device = getattr(ctx.device, "name", "CPU:0")

    def error(shape_: list[int]) -> Exception:
        dims = ",".join(str(d) for d in shape_)
        if folded:
            return errors.InvalidArgumentError(
                None, op, f"Cannot parse tensor from proto: dtype {dtype.name} shape [{dims}] (the Fill folded "
                "into a constant, as TF's graph optimizer does, is too large to allocate)")
        return errors.ResourceExhaustedError(
            None, op, f"OOM when allocating tensor with shape[{dims}] and type {type_name} on {device}")

    return error


def _fill_constant(t: Tensor) -> Optional[np.ndarray]:
    dims = const_ints(t.op.inputs[0])
    value = tensor_util.constant_value(t.op.inputs[1])
    if dims is None or value is None or int(np.prod(dims)) > _SMALL_CONSTANT:
        return None
    return np.full(dims, value, dtype=t.dtype.as_numpy_dtype)


Fill.constant_value(_fill_constant)


def fill(dims: Any, value: Any, name: Optional[str] = None) -> Any:
    """A tensor of shape `dims` with every element equal to the scalar `value`."""
    return apply_op(Fill, name=name, dims=index_input(dims), value=value)


# ---------------------------------------------------------------------------------------------
# zeros, ones, ZerosLike, OnesLike
# ---------------------------------------------------------------------------------------------
def _zero(dtype: _dtypes.DType) -> Any:
    return False if dtype.is_bool else b"" if dtype == _dtypes.string else 0


def _one(dtype: _dtypes.DType) -> Any:
    if dtype == _dtypes.string:
        raise TypeError("Cannot create a tensor of ones with dtype string")
    return True if dtype.is_bool else 1


def _filled(shape_: Any, value: Any, dtype: _dtypes.DType, scope: str) -> Tensor:
    """TF's zeros()/ones(): a Const when the shape is static and small, else a Fill."""
    if not is_tensor_like(shape_) and not isinstance(shape_, SequenceHoldingTensors):
        static = as_shape(shape_)
        n = static.num_elements()
        if n is not None and n < _SMALL_CONSTANT:
            return constant(value, dtype=dtype, shape=static.as_list(), name=scope)
        if static.is_fully_defined():
            shape_ = static.as_list()
    shape_t = index_input(shape_)
    if shape_t.shape.ndims == 0:
        shape_t = reshape(shape_t, [-1])
    return fill(shape_t, constant(value, dtype=dtype), name=scope)


def zeros(shape: Any, dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Any:
    """A tensor of `shape` filled with zeros."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with name_scope(name, "zeros", [shape]) as scope:
        return _filled(shape, _zero(dtype), dtype, scope)


def ones(shape: Any, dtype: Any = _dtypes.float32, name: Optional[str] = None) -> Any:
    """A tensor of `shape` filled with ones."""
    dtype = _dtypes.as_dtype(dtype).base_dtype
    with name_scope(name, "ones", [shape]) as scope:
        return _filled(shape, _one(dtype), dtype, scope)


ZerosLike = define_op("ZerosLike", inputs=["x: T"], outputs=["y: T"], attrs=["T: type"],
                      shape_fn=_util.unchanged)
OnesLike = define_op("OnesLike", inputs=["x: T"], outputs=["y: T"],
                     attrs=[f"T: {{{_NUMBER_TYPES}, bool}}"], shape_fn=_util.unchanged)


# As in TF: the result does not depend on the input's values.
ZerosLike.not_differentiable()
OnesLike.not_differentiable()


@ZerosLike.kernel()
def _zeros_like_kernel(ctx: KernelContext) -> Any:
    xp, dtype = ctx.xp, ctx.output_dtypes[0]
    np_t = dtype.as_numpy_dtype
    zero = _zero(dtype)
    return lambda x: xp.full(np.shape(x), zero, dtype=np_t)


@OnesLike.kernel()
def _ones_like_kernel(ctx: KernelContext) -> Any:
    xp, np_t = ctx.xp, ctx.output_dtypes[0].as_numpy_dtype
    return lambda x: xp.ones(np.shape(x), dtype=np_t)


def _like(tensor: Any, dtype: Any, name: Optional[str], optimize: bool, default_name: str,
          op_def: Any, make: Any) -> Tensor:
    with name_scope(name, default_name, [tensor]) as scope:
        t = convert_to_tensor(tensor, name="tensor")
        dtype = t.dtype.base_dtype if dtype is None else _dtypes.as_dtype(dtype).base_dtype
        if optimize and t.shape.is_fully_defined():
            return make(t.shape.as_list(), dtype=dtype, name=scope)
        if dtype != t.dtype.base_dtype:
            result = make(shape(t), dtype=dtype, name=scope)
            result.set_shape(t.shape)
            return result
        return apply_op(op_def, name=scope, x=t)


def zeros_like(tensor: Any, dtype: Any = None, name: Optional[str] = None, optimize: bool = True) -> Any:
    """Zeros with the shape of `tensor` (and its dtype unless `dtype` is given)."""
    return _like(tensor, dtype, name, optimize, "zeros_like", ZerosLike, zeros)


def ones_like(tensor: Any, dtype: Any = None, name: Optional[str] = None, optimize: bool = True) -> Any:
    """Ones with the shape of `tensor` (and its dtype unless `dtype` is given)."""
    return _like(tensor, dtype, name, optimize, "ones_like", OnesLike, ones)


# ---------------------------------------------------------------------------------------------
# Range, LinSpace
# ---------------------------------------------------------------------------------------------
def _range_size(start: Any, limit: Any, delta: Any, is_int: bool, error: Any) -> int:
    """Number of elements of range(start, limit, delta), computed as TF's kernel does (floats
    in the op's own precision)."""
    if delta == 0:
        raise error(f"Requires delta != 0: {delta}")
    if delta > 0 and start > limit:
        raise error(f"Requires start <= limit when delta > 0: {start}/{limit}")
    if delta < 0 and start < limit:
        raise error(f"Requires start >= limit when delta < 0: {start}/{limit}")
    if is_int:
        start, limit, delta = int(start), int(limit), int(delta)
        return (abs(limit - start) + abs(delta) - 1) // abs(delta)
    return int(math.ceil(abs((limit - start) / delta)))


def _range_shape(op: Operation) -> list[TensorShape]:
    for t in op.inputs:
        _require_rank(op, t, 0)
    values = [tensor_util.constant_value(t) for t in op.inputs]
    if any(v is None for v in values):
        return [unknown_shape(1)]
    dtype = op.outputs[0].dtype
    start, limit, delta = (np.asarray(v, dtype=dtype.as_numpy_dtype).reshape(()) for v in values)
    return [TensorShape([_range_size(start[()], limit[()], delta[()], dtype.is_integer,
                                     lambda m: shape_error(op, m))])]


Range = define_op("Range", inputs=["start: Tidx", "limit: Tidx", "delta: Tidx"], outputs=["output: Tidx"],
                  attrs=["Tidx: {float32, float64, int32, int64} = int32"], shape_fn=_range_shape)


@Range.kernel()
def _range_kernel(ctx: KernelContext) -> Any:
    xp, dtype = ctx.xp, ctx.output_dtypes[0]
    np_t, is_int = dtype.as_numpy_dtype, dtype.is_integer

    def compute(start: Any, limit: Any, delta: Any) -> Any:
        for value, what in ((start, "start"), (limit, "limit"), (delta, "delta")):
            if np.ndim(value) != 0:
                raise invalid(f"{what} must be a scalar, not shape {list(np.shape(value))}")
        s, l, d = np_t(start), np_t(limit), np_t(delta)
        n = _range_size(s, l, d, is_int, invalid)
        # TF's kernel computes start + i * delta in the output type (no accumulated error).
        return xp.arange(n, dtype=np_t) * d + s

    return compute


def _range_constant(t: Tensor) -> Optional[np.ndarray]:
    values = [tensor_util.constant_value(x) for x in t.op.inputs]
    if any(v is None for v in values):
        return None
    np_t = t.dtype.as_numpy_dtype
    s, l, d = (np_t(np.reshape(v, ())) for v in values)
    n = _range_size(s, l, d, t.dtype.is_integer, ValueError)
    return np.arange(n, dtype=np_t) * d + s


Range.constant_value(_range_constant)
Range.not_differentiable()
def _linspace_shape(op: Operation) -> list[TensorShape]:
    start, stop, num_t = op.inputs
    for t in op.inputs:
        _require_rank(op, t, 0)
    num = const_int(num_t)
    if num is not None and num <= 0:
        raise shape_error(op, f"Requires num > 0: {num}")
    return [TensorShape([num])]


LinSpace = define_op("LinSpace", inputs=["start: T", "stop: T", "num: Tidx"], outputs=["output: T"],
                     attrs=["T: {float32, float64}", "Tidx: {int32, int64} = int32"],
                     shape_fn=_linspace_shape)


LinSpace.not_differentiable()


@LinSpace.kernel()
def _linspace_kernel(ctx: KernelContext) -> Any:
    xp, np_t = ctx.xp, ctx.output_dtypes[0].as_numpy_dtype

    def compute(start: Any, stop: Any, num: Any) -> Any:
        n = int(num)
        if n <= 0:
            raise invalid(f"Requires num > 0: {n}")
        s = np_t(start)
        if n == 1:
            return xp.full((1,), s, dtype=np_t)
        # TF's kernel: start + i * step with step computed in the output type, and the last
        # element set to `stop` exactly.
        e = np_t(stop)
        out = xp.arange(n, dtype=np_t) * ((e - s) / np_t(n - 1)) + s
        out[-1] = e
        return out

    return compute


def linspace(start: Any, stop: Any, num: Any, name: Optional[str] = None) -> Any:
    """`num` evenly spaced values from `start` to `stop` inclusive."""
    return apply_op(LinSpace, name=name, start=start, stop=stop, num=num)


lin_space = linspace


# ---------------------------------------------------------------------------------------------
# OneHot
# ---------------------------------------------------------------------------------------------
def _one_hot_shape(op: Operation) -> list[TensorShape]:
    indices, depth_t, on_t, off_t = op.inputs
    axis = op._get_attr("axis")
    for t in (depth_t, on_t, off_t):
        _require_rank(op, t, 0)
    if axis < -1:
        raise shape_error(op, "axis must be >= -1")
    depth = const_int(depth_t)
    if depth is not None and depth < 0:
        raise shape_error(op, f"depth must be non-negative, got: {depth}")
    if indices.shape.ndims is None:
        return [unknown_shape()]
    dims = indices.shape.as_list()
    if axis > len(dims):
        raise shape_error(op, f"Expected axis to be -1 or between [0, {len(dims) + 1}).  But received: "
                              f"{axis}")
    pos = len(dims) if axis == -1 else axis
    return [TensorShape(dims[:pos] + [depth] + dims[pos:])]


OneHot = define_op("OneHot", inputs=["indices: TI", "depth: int32", "on_value: T", "off_value: T"],
                   outputs=["output: T"], attrs=["axis: int = -1", "T: type",
                                                 "TI: {uint8, int32, int64} = int64"],
                   shape_fn=_one_hot_shape)


OneHot.not_differentiable()  # TF's gradient gives None for every input


@OneHot.kernel()
def _one_hot_kernel(ctx: KernelContext) -> Any:
    xp, np_t, axis = ctx.xp, ctx.output_dtypes[0].as_numpy_dtype, ctx.attr("axis")

    def compute(indices: Any, depth: Any, on: Any, off: Any) -> Any:
        d = int(depth)
        if d < 0:
            raise invalid(f"depth must be non-negative, got: {d}")
        for v, what in ((on, "on_value"), (off, "off_value")):
            if np.ndim(v) != 0:
                raise invalid(f"{what} must be a scalar, but got: {list(np.shape(v))}")
        n = np.ndim(indices)
        if not -1 <= axis <= n:
            raise invalid(f"Expected axis to be -1 or between [0, {n + 1}).  But received: {axis}")
        # Indices outside [0, depth) (negative included) match no position: all-off rows.
        hot = xp.expand_dims(indices, -1) == xp.arange(d)
        out = xp.where(hot, np_t(on), np_t(off)).astype(np_t, copy=False)
        return out if axis in (-1, n) else xp.moveaxis(out, -1, axis)

    return compute


def one_hot(indices: Any, depth: Any, on_value: Any = None, off_value: Any = None, axis: Any = None,
            dtype: Any = None, name: Optional[str] = None) -> Any:
    """One-hot encoding: `on_value` where the index matches, `off_value` elsewhere (float32
    unless `dtype` or the on/off values say otherwise); out-of-range indices give off rows."""
    with name_scope(name, "one_hot", [indices, depth, on_value, off_value]) as scope:
        dtype = None if dtype is None else _dtypes.as_dtype(dtype).base_dtype

        def convert(value: Any, what: str) -> Optional[Tensor]:
            if value is None:
                return None
            return convert_to_tensor(value, name=what, preferred_dtype=dtype)

        on_t, off_t = convert(on_value, "on_value"), convert(off_value, "off_value")
        for t, what in ((on_t, "on_value"), (off_t, "off_value")):
            if t is not None and dtype is not None and t.dtype.base_dtype != dtype:
                raise TypeError(f"dtype {t.dtype.name} of {what} does not match dtype parameter {dtype.name}")
        if dtype is None:
            given = on_t if on_t is not None else off_t
            dtype = given.dtype.base_dtype if given is not None else _dtypes.float32
        on_t = on_t if on_t is not None else convert_to_tensor(1, dtype=dtype, name="on_value")
        off_t = off_t if off_t is not None else convert_to_tensor(0, dtype=dtype, name="off_value")
        if on_t.dtype.base_dtype != off_t.dtype.base_dtype:
            raise TypeError(f"dtype {on_t.dtype.name} of on_value does not match dtype "
                            f"{off_t.dtype.name} of off_value")
        return apply_op(OneHot, name=scope, indices=indices, depth=depth, on_value=on_t,
                        off_value=off_t, axis=-1 if axis is None else axis)


# ---------------------------------------------------------------------------------------------
# Pad, PadV2, MirrorPad
# ---------------------------------------------------------------------------------------------
def _pad_shape(op: Operation) -> list[TensorShape]:
    x, pads_t = op.inputs[0], op.inputs[1]
    _require_rank(op, pads_t, 2)
    if len(op.inputs) > 2:
        _require_rank(op, op.inputs[2], 0)
    n = x.shape.ndims
    if pads_t.shape.ndims == 2:
        rows, cols = pads_t.shape.as_list()
        if cols is not None and cols != 2:
            raise shape_error(op, f"Dimension must be 2 but is {cols}")
        if n is not None and rows is not None and rows != n:
            raise shape_error(op, f"Shape must be rank {rows} but is rank {n}")
        n = rows if n is None else n
    pads = const_ints(pads_t)
    if pads is None or n is None:
        return [unknown_shape(n)]
    if any(p < 0 for p in pads):
        raise shape_error(op, "Paddings must be non-negative")
    in_dims = x.shape.as_list() if x.shape.ndims is not None else [None] * n
    return [TensorShape([None if d is None else d + pads[2 * i] + pads[2 * i + 1]
                         for i, d in enumerate(in_dims)])]


_PAD_ATTRS = ["T: type", "Tpaddings: {int32, int64} = int32"]
Pad = define_op("Pad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
                attrs=_PAD_ATTRS, shape_fn=_pad_shape)
PadV2 = define_op("PadV2", inputs=["input: T", "paddings: Tpaddings", "constant_values: T"],
                  outputs=["output: T"], attrs=_PAD_ATTRS, shape_fn=_pad_shape)
MirrorPad = define_op("MirrorPad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
                      attrs=_PAD_ATTRS + ["mode: {'REFLECT', 'SYMMETRIC'}"], shape_fn=_pad_shape)


def _checked_paddings(x: Any, paddings: Any, mirror: Optional[str]) -> list[tuple[int, int]]:
    shape_ = np.shape(x)
    if np.ndim(paddings) != 2 or np.shape(paddings)[1] != 2 or np.shape(paddings)[0] != len(shape_):
        raise invalid(f"The first dimension of paddings must be the rank of inputs"
                      f"{list(np.shape(paddings))} {fmt_shape(TensorShape(shape_))}")
    pads = [(int(a), int(b)) for a, b in np.asarray(paddings).tolist()]
    for (a, b), d in zip(pads, shape_):
        if a < 0 or b < 0:
            raise invalid(f"Paddings must be non-negative: {a} {b}")
        if mirror == "reflect" and (a >= d or b >= d) and (a or b):
            raise invalid(f"paddings must be less than the dimension size: {a}, {b} not less than {d}")
        if mirror == "symmetric" and (a > d or b > d):
            raise invalid(f"paddings must be no greater than the dimension size: {a}, {b} greater than {d}")
    return pads


@Pad.kernel()
def _pad_kernel(ctx: KernelContext) -> Any:
    xp, zero = ctx.xp, _zero(ctx.output_dtypes[0])
    return lambda x, paddings: xp.pad(x, _checked_paddings(x, paddings, None), constant_values=zero)


@PadV2.kernel()
def _pad_v2_kernel(ctx: KernelContext) -> Any:
    xp = ctx.xp

    def compute(x: Any, paddings: Any, value: Any) -> Any:
        if np.ndim(value) != 0:
            raise invalid(f"constant_values must be a scalar. Found: {list(np.shape(value))}")
        return xp.pad(x, _checked_paddings(x, paddings, None), constant_values=value)

    return compute


@MirrorPad.kernel()
def _mirror_pad_kernel(ctx: KernelContext) -> Any:
    xp, mode = ctx.xp, ctx.attr("mode").lower()
    return lambda x, paddings: xp.pad(x, _checked_paddings(x, paddings, mode), mode=mode)


def pad(tensor: Any, paddings: Any, mode: str = "CONSTANT", name: Optional[str] = None,
        constant_values: Any = 0) -> Any:
    """Pads `tensor` with `paddings[i] = [before, after]` elements along each dimension; mode
    CONSTANT (with `constant_values`), REFLECT or SYMMETRIC (case-insensitive)."""
    mode = mode.upper()
    paddings = index_input(paddings)
    if mode == "CONSTANT":
        if not is_tensor_like(constant_values) and np.all(np.asarray(constant_values) == 0):
            return apply_op(Pad, name=name, input=tensor, paddings=paddings)
        return apply_op(PadV2, name=name, input=tensor, paddings=paddings, constant_values=constant_values)
    if mode in ("REFLECT", "SYMMETRIC"):
        return apply_op(MirrorPad, name=name, input=tensor, paddings=paddings, mode=mode)
    raise ValueError(f"Unknown padding mode: {mode}")


# MirrorPadGrad: the gradient of MirrorPad, each mirrored element's gradient added back onto
# the element it copies (TF's op of that name).
def _mirror_pad_grad_shape(op: Operation) -> list[TensorShape]:
    x, pads_t = op.inputs
    _require_rank(op, pads_t, 2)
    pads = const_ints(pads_t)
    n = x.shape.ndims
    if pads is None or n is None:
        return [unknown_shape(n)]
    if len(pads) != 2 * n:
        raise shape_error(op, f"Shape must be rank {len(pads) // 2} but is rank {n}")
    dims = x.shape.as_list()
    return [TensorShape([None if d is None else d - pads[2 * i] - pads[2 * i + 1]
                         for i, d in enumerate(dims)])]


MirrorPadGrad = define_op("MirrorPadGrad", inputs=["input: T", "paddings: Tpaddings"], outputs=["output: T"],
                          attrs=_PAD_ATTRS + ["mode: {'REFLECT', 'SYMMETRIC'}"],
                          shape_fn=_mirror_pad_grad_shape)


def _fold_axis(xp: Any, g: Any, axis: int, before: int, after: int, reflect: bool) -> Any:
    """Adds the padded ends of `g` along `axis` back onto the core they mirror."""
    g = xp.moveaxis(g, axis, 0)
    n = g.shape[0] - before - after
    if n <= 0:
        raise invalid(f"Total paddings must be less than the input dimension size: {before + after} was "
                      f"not less than {g.shape[0]}")
    if reflect and (before >= n or after >= n):
        raise invalid(f"paddings must be less than the output dimension size: {before}, {after} not less "
                      f"than {n}")
    if before > n or after > n:
        raise invalid(f"paddings must be no greater than the output dimension size: {before}, {after} "
                      f"greater than {n}")
    core = g[before:before + n].copy()
    shift = 1 if reflect else 0  # REFLECT skips the edge element, SYMMETRIC repeats it
    if before:  # padded[i] copies core[before - 1 - i + shift]
        core[shift:shift + before] += g[before - 1::-1]
    if after:  # padded[before + n + j] copies core[n - 1 - shift - j]
        core[n - shift - after:n - shift] += g[before + n:][::-1]
    return xp.moveaxis(core, 0, axis)


@MirrorPadGrad.kernel()
def _mirror_pad_grad_kernel(ctx: KernelContext) -> Any:
    xp, reflect = ctx.xp, ctx.attr("mode") == "REFLECT"

    def compute(g: Any, paddings: Any) -> Any:
        if np.ndim(paddings) != 2 or np.shape(paddings) != (np.ndim(g), 2):
            raise invalid(f"paddings must be a matrix with 2 columns and {np.ndim(g)} rows: "
                          f"{list(np.shape(paddings))}")
        pads = np.asarray(paddings).tolist()
        for i, (before, after) in enumerate(pads):
            if before < 0 or after < 0:
                raise invalid(f"Paddings must be non-negative: {before} {after}")
            if before or after:
                g = _fold_axis(xp, g, i, int(before), int(after), reflect)
        return xp.array(g, copy=True)  # unaliased even when nothing was padded

    return compute


