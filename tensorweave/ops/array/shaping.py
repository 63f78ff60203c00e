"""Array ops (white paper Table 1) that look at or change a tensor's shape: Identity and
StopGradient, the shape queries (Shape, ShapeN, Size, Rank), Reshape, ExpandDims, Squeeze, Tile
and BroadcastTo.

The rest of TF's array_ops family lives in the sibling modules (constant_op, joining, creation,
slicing, transposition, ...); the family package re-exports them all. The gradients are in
grad.py.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor, name_scope
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import _util
from tensorweave.ops._util import (
    canonical_axis, const_int, const_ints, fmt_shape, host_ints, index_input, invalid, shape_error)
from tensorweave.ops.array.constant_op import constant

__all__ = ["identity", "stop_gradient", "shape", "shape_n", "size", "rank", "reshape", "expand_dims",
           "squeeze", "tile", "broadcast_to"]


def _prod(values: Sequence[int]) -> int:
    n = 1
    for v in values:
        n *= v
    return n


# ---------------------------------------------------------------------------------------------
# Identity, StopGradient
# ---------------------------------------------------------------------------------------------
Identity = define_op("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
                     shape_fn=_util.unchanged, forwards_input=True)


@Identity.kernel()
def _identity_kernel(ctx: KernelContext) -> Any:
    return lambda x: x


def _forward_constant(t: Tensor) -> Any:
    return tensor_util.constant_value(t.op.inputs[0])


Identity.constant_value(_forward_constant)


def identity(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Returns a tensor with the same value as `input` (reads a variable's current value)."""
    return apply_op(Identity, name=name, input=input)


StopGradient = define_op("StopGradient", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
                         shape_fn=_util.unchanged, forwards_input=True)
StopGradient.kernel()(_identity_kernel)
StopGradient.constant_value(_forward_constant)
StopGradient.not_differentiable()


def stop_gradient(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Passes `input` through; gradients do not flow back through it."""
    return apply_op(StopGradient, name=name, input=input)


# ---------------------------------------------------------------------------------------------
# Shape, ShapeN, Size, Rank
# ---------------------------------------------------------------------------------------------
def _vector_of_rank(t: Tensor) -> TensorShape:
    return TensorShape([t.shape.ndims])


Shape = define_op("Shape", inputs=["input: T"], outputs=["output: out_type"],
                  attrs=["T: type", "out_type: {int32, int64} = int32"],
                  shape_fn=lambda op: [_vector_of_rank(op.inputs[0])])
ShapeN = define_op("ShapeN", inputs=["input: N * T"], outputs=["output: N * out_type"],
                   attrs=["N: int >= 1", "T: type", "out_type: {int32, int64} = int32"],
                   shape_fn=lambda op: [_vector_of_rank(t) for t in op.inputs])
Size = define_op("Size", inputs=["input: T"], outputs=["output: out_type"],
                 attrs=["T: type", "out_type: {int32, int64} = int32"], shape_fn=_util.scalar)
Rank = define_op("Rank", inputs=["input: T"], outputs=["output: int32"], attrs=["T: type"],
                 shape_fn=_util.scalar)


@Shape.kernel()
def _shape_kernel(ctx: KernelContext) -> Any:
    np_t = ctx.output_dtypes[0].as_numpy_dtype
    return lambda x: np.array(np.shape(x), dtype=np_t)


@ShapeN.kernel()
def _shape_n_kernel(ctx: KernelContext) -> Any:
    np_t = ctx.output_dtypes[0].as_numpy_dtype
    return lambda *xs: tuple(np.array(np.shape(x), dtype=np_t) for x in xs)


@Size.kernel()
def _size_kernel(ctx: KernelContext) -> Any:
    np_t = ctx.output_dtypes[0].as_numpy_dtype
    return lambda x: np.array(np.size(x), dtype=np_t)


@Rank.kernel()
def _rank_kernel(ctx: KernelContext) -> Any:
    return lambda x: np.array(np.ndim(x), dtype=np.int32)


def _shape_constant(t: Tensor) -> Optional[np.ndarray]:
    s = t.op.inputs[t.value_index].shape
    return np.array(s.as_list(), dtype=t.dtype.as_numpy_dtype) if s.is_fully_defined() else None


def _size_constant(t: Tensor) -> Optional[np.ndarray]:
    n = t.op.inputs[0].shape.num_elements()
    return None if n is None else np.array(n, dtype=t.dtype.as_numpy_dtype)


def _rank_constant(t: Tensor) -> Optional[np.ndarray]:
    n = t.op.inputs[0].shape.ndims
    return None if n is None else np.array(n, dtype=np.int32)


def _shape_partial_shape(t: Tensor) -> TensorShape:
    return t.op.inputs[t.value_index].shape


for _op in (Shape, ShapeN):
    _op.constant_value(_shape_constant)
    _op.partial_shape_value(_shape_partial_shape)
Size.constant_value(_size_constant)
Rank.constant_value(_rank_constant)
for _op in (Shape, ShapeN, Size, Rank):
    _op.not_differentiable()


def shape(input: Any, name: Optional[str] = None, out_type: Any = _dtypes.int32) -> Any:  # noqa: A002
    """The shape of `input` as a 1-D tensor; a constant when the static shape is fully known."""
    with name_scope(name, "Shape", [input]) as scope:
        x = convert_to_tensor(input)
        out_type = _dtypes.as_dtype(out_type)
        if x.shape.is_fully_defined():  # (an array, so a scalar's [] is an int vector)
            return constant(np.array(x.shape.as_list(), dtype=out_type.as_numpy_dtype), name=scope)
        return apply_op(Shape, name=scope, input=x, out_type=out_type)


def shape_n(input: Any, out_type: Any = _dtypes.int32, name: Optional[str] = None) -> Any:  # noqa: A002
    """The shapes of a list of tensors."""
    return apply_op(ShapeN, name=name, input=list(input), out_type=_dtypes.as_dtype(out_type))


def size(input: Any, name: Optional[str] = None, out_type: Any = _dtypes.int32) -> Any:  # noqa: A002
    """The number of elements of `input`; a constant when the static shape is fully known."""
    with name_scope(name, "Size", [input]) as scope:
        x = convert_to_tensor(input)
        out_type = _dtypes.as_dtype(out_type)
        n = x.shape.num_elements()
        if n is not None:
            return constant(n, dtype=out_type, name=scope)
        return apply_op(Size, name=scope, input=x, out_type=out_type)


def rank(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """The number of dimensions of `input`; a constant when the static rank is known."""
    with name_scope(name, "Rank", [input]) as scope:
        x = convert_to_tensor(input)
        if x.shape.ndims is not None:
            return constant(x.shape.ndims, dtype=_dtypes.int32, name=scope)
        return apply_op(Rank, name=scope, input=x)


# ---------------------------------------------------------------------------------------------
# Reshape
# ---------------------------------------------------------------------------------------------
def _reshape_shape(op: Operation) -> list[TensorShape]:
    in_shape, shape_t = op.inputs[0].shape, op.inputs[1]
    if shape_t.shape.ndims is not None and shape_t.shape.ndims > 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {shape_t.shape.ndims}")
    values = const_ints(shape_t)
    if values is not None:
        for v in values:
            if v < -1:
                raise ValueError(f"Invalid value in tensor used for shape: {v}")
    out = tensor_util.constant_value_as_shape(shape_t)
    if out.ndims is None or in_shape.ndims is None:
        return [out]
    dims = out.as_list()
    num_in = in_shape.num_elements()
    unknown = [i for i, d in enumerate(dims) if d is None]
    known_out = _prod([d for d in dims if d is not None])
    if not unknown:
        if num_in is not None and num_in != known_out:
            raise shape_error(op, f"Cannot reshape a tensor with {num_in} elements to shape "
                                  f"{fmt_shape(out)} ({known_out} elements)")
        return [out]
    if num_in is not None and len(unknown) == 1 and known_out > 0:
        if num_in % known_out:
            raise shape_error(op, f"Dimension size must be evenly divisible by {known_out} but is {num_in}")
        dims[unknown[0]] = num_in // known_out
    return [TensorShape(dims)]


Reshape = define_op("Reshape", inputs=["tensor: T", "shape: Tshape"], outputs=["output: T"],
                    attrs=["T: type", "Tshape: {int32, int64} = int32"], shape_fn=_reshape_shape,
                    forwards_input=True)


def _reshape_error(num: int, dims: list[int]) -> errors.InvalidArgumentError:
    unknown = [i for i, d in enumerate(dims) if d == -1]
    for i, d in enumerate(dims):
        if d < -1:
            return invalid(f"Size {i} must be non-negative, not {d}")
    if len(unknown) > 1:
        return invalid(f"Only one input size may be -1, not both {unknown[0]} and {unknown[1]}")
    known = _prod([d for d in dims if d != -1])
    if unknown:
        if known == 0:
            return invalid("Reshape cannot infer the missing input size for an empty tensor unless "
                           "all specified input sizes are non-zero")
        return invalid(f"Input to reshape is a tensor with {num} values, but the requested shape "
                       f"requires a multiple of {known}")
    return invalid(f"Input to reshape is a tensor with {num} values, but the requested shape has {known}")


@Reshape.kernel()
def _reshape_kernel(ctx: KernelContext) -> Any:
    def compute(x: Any, shape: Any) -> Any:
        dims = host_ints(shape)
        try:
            return x.reshape(dims)
        except ValueError:
            if np.ndim(shape) > 1:
                raise invalid(f"shape must be a vector of {{int32,int64}}, got shape "
                              f"{list(np.shape(shape))}") from None
            raise _reshape_error(int(np.size(x)), dims) from None

    return compute


def _reshape_constant(t: Tensor) -> Optional[np.ndarray]:
    value = tensor_util.constant_value(t.op.inputs[0])
    dims = const_ints(t.op.inputs[1])
    return None if value is None or dims is None else np.reshape(value, dims)


Reshape.constant_value(_reshape_constant)


def reshape(tensor: Any, shape: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Reshapes `tensor` to `shape`; one dimension may be -1 and is then inferred."""
    return apply_op(Reshape, name=name, tensor=tensor, shape=index_input(shape))


# ---------------------------------------------------------------------------------------------
# ExpandDims, Squeeze
# ---------------------------------------------------------------------------------------------
def _expand_dims_shape(op: Operation) -> list[TensorShape]:
    in_shape, dim_t = op.inputs[0].shape, op.inputs[1]
    dim = const_int(dim_t)
    if dim is None or in_shape.ndims is None:
        return [unknown_shape(None if in_shape.ndims is None else in_shape.ndims + 1)]
    n = in_shape.ndims
    if not -n - 1 <= dim <= n:
        raise shape_error(op, f"dim {dim} not in the interval [{-n - 1}, {n}].")
    if dim < 0:
        dim += n + 1
    dims = in_shape.as_list()
    return [TensorShape(dims[:dim] + [1] + dims[dim:])]


ExpandDims = define_op("ExpandDims", inputs=["input: T", "dim: Tdim"], outputs=["output: T"],
                       attrs=["T: type", "Tdim: {int32, int64} = int32"], shape_fn=_expand_dims_shape,
                       forwards_input=True)


@ExpandDims.kernel()
def _expand_dims_kernel(ctx: KernelContext) -> Any:
    def compute(x: Any, dim: Any) -> Any:
        d = int(dim) if dim.ndim == 0 else host_ints(dim)[0]
        s = x.shape
        n = len(s)
        if not -n - 1 <= d <= n:
            raise invalid(f"Tried to expand dim index {d} for tensor with {n} dimensions.")
        if d < 0:
            d += n + 1
        return x.reshape(s[:d] + (1,) + s[d:])  # a view, cheaper than np.expand_dims

    return compute


def expand_dims(input: Any, axis: Any = None, name: Optional[str] = None,  # noqa: A002
                dim: Any = None) -> Any:
    """Inserts a dimension of size 1 at `axis` (TF1 also accepts the deprecated `dim`)."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op(ExpandDims, name=name, input=input, dim=index_input(axis))


def _squeeze_shape(op: Operation) -> list[TensorShape]:
    in_shape = op.inputs[0].shape
    axes = op._get_attr("squeeze_dims")
    if in_shape.ndims is None:
        return [unknown_shape()]
    n = in_shape.ndims
    wanted = {canonical_axis(a, n, op, "dim") for a in axes}
    dims = []
    for i, d in enumerate(in_shape.as_list()):
        if wanted:
            if i in wanted:
                if d is not None and d != 1:
                    raise shape_error(op, f"Can not squeeze dim[{i}], expected a dimension of 1, got {d}")
                continue
        elif d is None:
            return [unknown_shape()]  # might or might not be 1
        elif d == 1:
            continue
        dims.append(d)
    return [TensorShape(dims)]


Squeeze = define_op("Squeeze", inputs=["input: T"], outputs=["output: T"],
                    attrs=["T: type", "squeeze_dims: list(int) = []"], shape_fn=_squeeze_shape,
                    forwards_input=True)


@Squeeze.kernel()
def _squeeze_kernel(ctx: KernelContext) -> Any:
    axes = tuple(ctx.attr("squeeze_dims"))

    def compute(x: Any) -> Any:
        if not axes:
            return x.squeeze()
        try:
            return x.squeeze(axis=axes)
        except ValueError:  # report which dim, as TF does
            shape_ = x.shape
            n = len(shape_)
            for a in axes:
                if not -n <= a < n:
                    raise invalid(f"Tried to squeeze dim index {a} for tensor with {n} dimensions.") from None
                if shape_[a] != 1:
                    raise invalid(f"Can not squeeze dim[{a % n}], expected a dimension of 1, got "
                                  f"{shape_[a]}") from None
            raise

    return compute


def squeeze(input: Any, axis: Any = None, name: Optional[str] = None,  # noqa: A002
            squeeze_dims: Any = None) -> Any:
    """Removes dimensions of size 1 (all of them, or those listed in `axis`)."""
    if squeeze_dims is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'squeeze_dims' and 'axis'")
        axis = squeeze_dims
    if np.isscalar(axis) or isinstance(axis, (int, np.integer)):
        axis = [axis]
    return apply_op(Squeeze, name=name, input=input, squeeze_dims=[int(a) for a in (axis or [])])


# ---------------------------------------------------------------------------------------------
# Tile, BroadcastTo
# ---------------------------------------------------------------------------------------------
def _tile_shape(op: Operation) -> list[TensorShape]:
    in_shape, mult_t = op.inputs[0].shape, op.inputs[1]
    if mult_t.shape.ndims is not None and mult_t.shape.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {mult_t.shape.ndims}")
    n = in_shape.ndims
    if n is None and mult_t.shape.ndims == 1:
        n = mult_t.shape[0].value
    if n is not None and mult_t.shape.ndims == 1 and mult_t.shape[0].value not in (None, n):
        raise shape_error(op, f"Shape must be rank {n} but is rank {mult_t.shape[0].value}")
    mult = const_ints(mult_t)
    if n is None:
        return [unknown_shape()]
    if mult is None:
        return [unknown_shape(n)]
    in_dims = in_shape.as_list() if in_shape.ndims is not None else [None] * n
    return [TensorShape([None if d is None else d * m for d, m in zip(in_dims, mult)])]


Tile = define_op("Tile", inputs=["input: T", "multiples: Tmultiples"], outputs=["output: T"],
                 attrs=["T: type", "Tmultiples: {int32, int64} = int32"], shape_fn=_tile_shape)


@Tile.kernel()
def _tile_kernel(ctx: KernelContext) -> Any:
    xp = ctx.xp

    def compute(x: Any, multiples: Any) -> Any:
        mult = host_ints(multiples)
        if len(mult) != np.ndim(x):
            raise invalid(f"Expected multiples argument to be a vector of length {np.ndim(x)} but got "
                          f"length {len(mult)}")
        for i, m in enumerate(mult):
            if m < 0:
                raise invalid(f"Expected multiples[{i}] >= 0, but got {m}")
        return xp.tile(x, mult) if mult else xp.array(x, copy=True)

    return compute


def tile(input: Any, multiples: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Repeats `input` `multiples[i]` times along dimension i."""
    return apply_op(Tile, name=name, input=input, multiples=index_input(multiples))


def _broadcast_to_shape(op: Operation) -> list[TensorShape]:
    target = tensor_util.constant_value_as_shape(op.inputs[1])
    in_shape = op.inputs[0].shape
    if target.ndims is None or in_shape.ndims is None:
        return [target]
    if in_shape.ndims > target.ndims:
        raise shape_error(op, f"Rank of input ({in_shape.ndims}) must be no greater than rank of output "
                              f"shape ({target.ndims}).")
    out = target.as_list()
    offset = target.ndims - in_shape.ndims
    for i, d in enumerate(in_shape.as_list()):
        t = out[offset + i]
        if d is not None and t is not None and d != 1 and d != t:
            raise shape_error(op, f"Dimensions must be equal, but are {d} and {t}")
    return [TensorShape(out)]


BroadcastTo = define_op("BroadcastTo", inputs=["input: T", "shape: Tidx"], outputs=["output: T"],
                        attrs=["T: type", "Tidx: {int32, int64} = int32"], shape_fn=_broadcast_to_shape)


@BroadcastTo.kernel()
def _broadcast_to_kernel(ctx: KernelContext) -> Any:
    xp = ctx.xp

    empty = xp.empty

    def compute(x: Any, shape_: Any) -> Any:
        dims = host_ints(shape_)
        try:
            if x.ndim > len(dims):  # assignment would drop leading 1s; BroadcastTo must not
                raise ValueError
            # TF materializes the result (a fresh, writable array); filling an empty array
            # broadcasts 4x faster than copying np.broadcast_to's view.
            out = empty(dims, x.dtype)
            out[...] = x
            return out
        except ValueError:
            in_dims = ",".join(str(d) for d in np.shape(x))
            raise invalid(f"Incompatible shapes: [{in_dims}] vs. [{','.join(map(str, dims))}]") from None

    return compute


def broadcast_to(input: Any, shape: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Broadcasts `input` to `shape` with NumPy broadcasting rules."""
    return apply_op(BroadcastTo, name=name, input=input, shape=index_input(shape))
