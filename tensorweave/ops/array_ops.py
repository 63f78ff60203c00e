"""Array ops (white paper Table 1): identity, shape queries, reshaping, transposition,
concatenation, splitting, stacking, tiling and broadcasting.

The rest of TF's array_ops family lives in two sibling modules: slicing_ops.py (Slice,
StridedSlice and `Tensor.__getitem__`, GatherV2, Where, boolean_mask, ReverseV2) and fill_ops.py
(Fill, zeros/ones(_like), Range, LinSpace, OneHot, Pad). Their names are also reachable as
attributes of this module (`array_ops.zeros`), as in TensorFlow.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Tensor, is_tensor_like, name_scope
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from tensorweave.framework.tensor_shape import Dimension, TensorShape, as_shape, unknown_shape
from tensorweave.ops import shape_fns
from tensorweave.ops.constant_op import constant

__all__ = ["identity", "stop_gradient", "shape", "shape_n", "size", "rank", "reshape", "transpose",
           "expand_dims", "squeeze", "concat", "split", "stack", "unstack", "tile", "broadcast_to"]


# ---------------------------------------------------------------------------------------------
# Helpers shared by the array-op modules
# ---------------------------------------------------------------------------------------------
def fmt_shape(shape: TensorShape) -> str:
    """A static shape as TF prints it in error messages: [2,?] or ? for unknown rank."""
    if shape.ndims is None:
        return "?"
    return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"


def shape_error(op: Any, message: str) -> ValueError:
    """ValueError raised by a shape function, worded like TF's graph-construction errors."""
    shapes = ", ".join(fmt_shape(t.shape) for t in op.inputs)
    return ValueError(f"{message} for '{op.name}' (op: '{op.type}') with input shapes: {shapes}.")


def invalid(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, message)


def const_ints(tensor: Tensor) -> Optional[list[int]]:
    """The value of an integer tensor known at graph-construction time, flattened, else None."""
    value = tensor_util.constant_value(tensor)
    if value is None:
        return None
    return [int(v) for v in np.reshape(value, -1)]


def const_int(tensor: Tensor) -> Optional[int]:
    values = const_ints(tensor)
    return values[0] if values is not None and len(values) == 1 else None


def host_ints(value: Any) -> list[int]:
    """A small integer array (shape, axis, perm ...) as a Python list."""
    return np.asarray(value).reshape(-1).tolist()


def index_input(value: Any, name: Optional[str] = None) -> Any:
    """Converts an index-like argument (shape, axis, perm, multiples) preferring int32, as TF
    does through the op's default `Tidx`/`Tshape` attr: `[]` is an empty int32 vector."""
    if is_tensor_like(value):
        return value
    return convert_to_tensor(value, name=name, preferred_dtype=_dtypes.int32)


def canonical_axis(axis: int, rank: int, op: Any = None, what: str = "axis") -> int:
    """`axis` in [-rank, rank) made non-negative; ValueError (shape fns) otherwise."""
    if not -rank <= axis < rank:
        message = f"{what} {axis} is out of range [{-rank}, {rank})"
        raise shape_error(op, message) if op is not None else ValueError(message)
    return axis + rank if axis < 0 else axis


def _prod(values: Sequence[int]) -> int:
    n = 1
    for v in values:
        n *= v
    return n


# ---------------------------------------------------------------------------------------------
# Identity, StopGradient
# ---------------------------------------------------------------------------------------------
Identity = define_op("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
                     shape_fn=shape_fns.unchanged, forwards_input=True)


@Identity.kernel()
def _identity_kernel(ctx: Any) -> Any:
    return lambda x: x


@Identity.gradient
def _identity_grad(op: Any, grad: Any) -> list[Any]:
    return [grad]


def _forward_constant(t: Tensor) -> Any:
    return tensor_util.constant_value(t.op.inputs[0])


Identity.registrations["constant_value"] = _forward_constant


def identity(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Returns a tensor with the same value as `input` (reads a variable's current value)."""
    return apply_op(Identity, name=name, input=input)


StopGradient = define_op("StopGradient", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
                         shape_fn=shape_fns.unchanged, forwards_input=True)
StopGradient.kernel()(_identity_kernel)
StopGradient.registrations["constant_value"] = _forward_constant


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
                 attrs=["T: type", "out_type: {int32, int64} = int32"], shape_fn=shape_fns.scalar)
Rank = define_op("Rank", inputs=["input: T"], outputs=["output: int32"], attrs=["T: type"],
                 shape_fn=shape_fns.scalar)


@Shape.kernel()
def _shape_kernel(ctx: Any) -> Any:
    np_t = ctx.output_dtypes[0].as_numpy_dtype
    return lambda x: np.array(np.shape(x), dtype=np_t)


@ShapeN.kernel()
def _shape_n_kernel(ctx: Any) -> Any:
    np_t = ctx.output_dtypes[0].as_numpy_dtype
    return lambda *xs: tuple(np.array(np.shape(x), dtype=np_t) for x in xs)


@Size.kernel()
def _size_kernel(ctx: Any) -> Any:
    np_t = ctx.output_dtypes[0].as_numpy_dtype
    return lambda x: np.array(np.size(x), dtype=np_t)


@Rank.kernel()
def _rank_kernel(ctx: Any) -> Any:
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


for _op in (Shape, ShapeN):
    _op.registrations["constant_value"] = _shape_constant
    _op.registrations["partial_shape_value"] = lambda t: t.op.inputs[t.value_index].shape
Size.registrations["constant_value"] = _size_constant
Rank.registrations["constant_value"] = _rank_constant


def shape(input: Any, name: Optional[str] = None, out_type: Any = _dtypes.int32) -> Any:  # noqa: A002
    """The shape of `input` as a 1-D tensor; a constant when the static shape is fully known."""
    with name_scope(name, "Shape", [input]) as scope:
        x = convert_to_tensor(input)
        out_type = _dtypes.as_dtype(out_type)
        if x.shape.is_fully_defined():
            return constant(x.shape.as_list(), dtype=out_type, name=scope)
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
def _reshape_shape(op: Any) -> list[TensorShape]:
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
def _reshape_kernel(ctx: Any) -> Any:
    xp = ctx.xp
    fixed = const_ints(ctx.op.inputs[1])

    def compute(x: Any, shape: Any) -> Any:
        dims = fixed if fixed is not None else host_ints(shape)
        if np.ndim(shape) > 1:
            raise invalid(f"shape must be a vector of {{int32,int64}}, got shape {list(np.shape(shape))}")
        try:
            return xp.reshape(x, dims)
        except ValueError:
            raise _reshape_error(int(np.size(x)), dims) from None

    return compute


def _reshape_constant(t: Tensor) -> Optional[np.ndarray]:
    value = tensor_util.constant_value(t.op.inputs[0])
    dims = const_ints(t.op.inputs[1])
    return None if value is None or dims is None else np.reshape(value, dims)


Reshape.registrations["constant_value"] = _reshape_constant


def reshape(tensor: Any, shape: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Reshapes `tensor` to `shape`; one dimension may be -1 and is then inferred."""
    return apply_op(Reshape, name=name, tensor=tensor, shape=index_input(shape))


# ---------------------------------------------------------------------------------------------
# Transpose, ConjugateTranspose
# ---------------------------------------------------------------------------------------------
def _transpose_shape(op: Any) -> list[TensorShape]:
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
    def build(ctx: Any) -> Any:
        xp = ctx.xp
        fixed = const_ints(ctx.op.inputs[1])
        conj = conjugate and ctx.input_dtypes[0].is_complex

        def compute(x: Any, perm: Any) -> Any:
            p = _checked_perm(fixed if fixed is not None else host_ints(perm), np.ndim(x))
            y = xp.transpose(x, p)
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
                from tensorweave.ops import fill_ops, slicing_ops
                perm = slicing_ops.reverse(fill_ops.range(0, rank(a), 1), [0])
        op = ConjugateTranspose if conjugate and a.dtype.is_complex else Transpose
        return apply_op(op, name=scope, x=a, perm=index_input(perm, "perm"))


# ---------------------------------------------------------------------------------------------
# ExpandDims, Squeeze
# ---------------------------------------------------------------------------------------------
def _expand_dims_shape(op: Any) -> list[TensorShape]:
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
def _expand_dims_kernel(ctx: Any) -> Any:
    xp = ctx.xp
    fixed = const_int(ctx.op.inputs[1])

    def compute(x: Any, dim: Any) -> Any:
        d = fixed if fixed is not None else int(np.reshape(dim, -1)[0])
        n = np.ndim(x)
        if not -n - 1 <= d <= n:
            raise invalid(f"Tried to expand dim index {d} for tensor with {n} dimensions.")
        return xp.expand_dims(x, d)

    return compute


def expand_dims(input: Any, axis: Any = None, name: Optional[str] = None, dim: Any = None) -> Any:  # noqa: A002
    """Inserts a dimension of size 1 at `axis` (TF1 also accepts the deprecated `dim`)."""
    if dim is not None:
        if axis is not None:
            raise ValueError("Cannot specify both 'axis' and 'dim'")
        axis = dim
    if axis is None:
        raise ValueError("Must specify an axis argument to tf.expand_dims()")
    return apply_op(ExpandDims, name=name, input=input, dim=index_input(axis))


def _squeeze_shape(op: Any) -> list[TensorShape]:
    in_shape = op.inputs[0].shape
    axes = op.get_attr("squeeze_dims")
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
def _squeeze_kernel(ctx: Any) -> Any:
    xp = ctx.xp
    axes = tuple(ctx.attr("squeeze_dims"))

    def compute(x: Any) -> Any:
        if not axes:
            return xp.squeeze(x)
        shape_ = np.shape(x)
        n = len(shape_)
        for a in axes:
            if not -n <= a < n:
                raise invalid(f"Tried to squeeze dim index {a} for tensor with {n} dimensions.")
            if shape_[a] != 1:
                raise invalid(f"Can not squeeze dim[{a % n}], expected a dimension of 1, got {shape_[a]}")
        return xp.squeeze(x, axis=axes)

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
# ConcatV2
# ---------------------------------------------------------------------------------------------
def _concat_shape(op: Any) -> list[TensorShape]:
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
def _concat_kernel(ctx: Any) -> Any:
    xp = ctx.xp
    fixed = const_int(ctx.op.inputs[-1])

    def compute(*inputs: Any) -> Any:
        values = inputs[:-1]
        axis = fixed if fixed is not None else int(inputs[-1])
        try:
            if np.ndim(values[0]) == 0:
                raise ValueError
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


ConcatV2.registrations["constant_value"] = _concat_constant
ConcatV2.registrations["partial_shape_value"] = _concat_partial_shape


def concat(values: Any, axis: Any, name: str = "concat") -> Any:
    """Concatenates a list of tensors along dimension `axis` (negative counts from the end)."""
    if not isinstance(values, (list, tuple)):
        values = [values]
    if len(values) == 1:  # as TF: an Identity, after checking the axis is a scalar
        with name_scope(name) as scope:
            axis_t = convert_to_tensor(axis, name="concat_dim", dtype=_dtypes.int32)
            axis_t.shape.assert_has_rank(0)
            return identity(values[0], name=name)
    return apply_op(ConcatV2, name=name, values=list(values), axis=index_input(axis))


# ---------------------------------------------------------------------------------------------
# Split, SplitV
# ---------------------------------------------------------------------------------------------
def _split_shape(op: Any) -> list[TensorShape]:
    axis_t, value = op.inputs
    num = op.get_attr("num_split")
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


def _split_v_shape(op: Any) -> list[TensorShape]:
    value, sizes_t, axis_t = op.inputs
    num = op.get_attr("num_split")
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


@Split.kernel()
def _split_kernel(ctx: Any) -> Any:
    xp, num = ctx.xp, ctx.attr("num_split")

    def compute(axis: Any, value: Any) -> Any:
        shape_ = np.shape(value)
        a = int(axis)
        if not -len(shape_) <= a < len(shape_):
            raise invalid(f"-input rank(-{len(shape_)}) <= split_dim < input rank ({len(shape_)}), "
                          f"but got {a}")
        if shape_[a] % num:
            raise invalid(f"Number of ways to split should evenly divide the split dimension, but got "
                          f"split_dim {a % len(shape_)} (size = {shape_[a]}) and num_split {num}")
        return tuple(xp.split(value, num, axis=a))

    return compute


@SplitV.kernel()
def _split_v_kernel(ctx: Any) -> Any:
    xp = ctx.xp

    def compute(value: Any, sizes: Any, axis: Any) -> Any:
        shape_ = np.shape(value)
        a = int(axis)
        if not -len(shape_) <= a < len(shape_):
            raise invalid(f"-input rank(-{len(shape_)}) <= split_dim < input rank ({len(shape_)}), "
                          f"but got {a}")
        resolved = _resolve_split_sizes(host_ints(sizes), shape_[a], invalid)
        return tuple(xp.split(value, np.cumsum(resolved[:-1]).tolist(), axis=a))

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
def _pack_shape(op: Any) -> list[TensorShape]:
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
    axis = op.get_attr("axis")
    n = merged.ndims + 1
    if not -n <= axis < n:
        raise shape_error(op, f"Invalid axis: {axis}; must be in [{-n},{n})")
    axis %= n
    dims = merged.as_list()
    return [TensorShape(dims[:axis] + [len(op.inputs)] + dims[axis:])]


Pack = define_op("Pack", inputs=["values: N * T"], outputs=["output: T"],
                 attrs=["N: int >= 1", "T: type", "axis: int = 0"], shape_fn=_pack_shape)


@Pack.kernel()
def _pack_kernel(ctx: Any) -> Any:
    xp, axis = ctx.xp, ctx.attr("axis")

    def compute(*values: Any) -> Any:
        try:
            return xp.stack(values, axis=axis)
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
    return np.stack(values, axis=t.op.get_attr("axis"))


def scalar_dim_value(t: Tensor) -> Optional[int]:
    """A scalar int tensor's value if static, seeing through `tf.shape(x)[i]` on a partially
    known shape (how TF's shape refiner gives `reshape(x, [tf.shape(x)[0], 3])` rank info)."""
    value = tensor_util.constant_value(t)
    if value is not None:
        v = int(np.reshape(value, -1)[0]) if np.size(value) == 1 else None
        return None if v is None or v < 0 else v
    op = t.op
    if op.type == "StridedSlice" and op.get_attr("shrink_axis_mask") == 1 and \
            op.get_attr("ellipsis_mask") == 0 and op.get_attr("new_axis_mask") == 0:
        index = const_int(op.inputs[1])
        partial = tensor_util.constant_value_as_shape(op.inputs[0])
        if index is not None and partial.ndims is not None and -partial.ndims <= index < partial.ndims:
            return partial[index].value
    return None


def _pack_partial_shape(t: Tensor) -> TensorShape:
    if t.op.get_attr("axis") != 0 or any(v.shape.ndims not in (0, None) for v in t.op.inputs):
        return unknown_shape(t.shape[0].value if t.shape.ndims == 1 else None)
    return TensorShape([scalar_dim_value(v) for v in t.op.inputs])


Pack.registrations["constant_value"] = _pack_constant
Pack.registrations["partial_shape_value"] = _pack_partial_shape


def _unpack_shape(op: Any) -> list[TensorShape]:
    in_shape, num, axis = op.inputs[0].shape, op.get_attr("num"), op.get_attr("axis")
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
def _unpack_kernel(ctx: Any) -> Any:
    xp, num, axis = ctx.xp, ctx.attr("num"), ctx.attr("axis")

    def compute(value: Any) -> Any:
        shape_ = np.shape(value)
        a = axis + len(shape_) if axis < 0 else axis
        if shape_[a] != num:
            raise invalid(f"Input shape axis {a} must equal {num}, got shape {list(shape_)}")
        moved = xp.moveaxis(value, a, 0) if a else value
        return tuple(moved[i] for i in range(num))

    return compute


def _unpack_constant(t: Tensor) -> Optional[np.ndarray]:
    value = tensor_util.constant_value(t.op.inputs[0])
    if value is None:
        return None
    return np.take(value, t.value_index, axis=t.op.get_attr("axis"))


Unpack.registrations["constant_value"] = _unpack_constant


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


class _SequenceHoldingTensors(metaclass=_HoldsTensorsMeta):
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


register_tensor_conversion_function(_SequenceHoldingTensors, _autopacking_conversion, 99)


# ---------------------------------------------------------------------------------------------
# Tile, BroadcastTo
# ---------------------------------------------------------------------------------------------
def _tile_shape(op: Any) -> list[TensorShape]:
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
def _tile_kernel(ctx: Any) -> Any:
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


def _broadcast_to_shape(op: Any) -> list[TensorShape]:
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
            raise shape_error(op, f"Dimensions must be equal, but are {t} and {d}")
    return [TensorShape(out)]


BroadcastTo = define_op("BroadcastTo", inputs=["input: T", "shape: Tidx"], outputs=["output: T"],
                        attrs=["T: type", "Tidx: {int32, int64} = int32"], shape_fn=_broadcast_to_shape)


@BroadcastTo.kernel()
def _broadcast_to_kernel(ctx: Any) -> Any:
    xp = ctx.xp

    def compute(x: Any, shape_: Any) -> Any:
        dims = host_ints(shape_)
        try:
            # TF materializes the result; a copy also keeps the output writable and unaliased.
            return xp.array(xp.broadcast_to(x, dims), copy=True)
        except ValueError:
            in_dims = ",".join(str(d) for d in np.shape(x))
            raise invalid(f"Incompatible shapes: [{in_dims}] vs. [{','.join(map(str, dims))}]") from None

    return compute


def broadcast_to(input: Any, shape: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Broadcasts `input` to `shape` with NumPy broadcasting rules."""
    return apply_op(BroadcastTo, name=name, input=input, shape=index_input(shape))


# The sibling modules define the rest of the family; importing them registers their ops and
# Tensor.__getitem__ whenever this module is imported.
from tensorweave.ops import fill_ops as _fill_ops  # noqa: E402
from tensorweave.ops import slicing_ops as _slicing_ops  # noqa: E402


def __getattr__(name: str) -> Any:
    for module in (_fill_ops, _slicing_ops):
        if hasattr(module, name):
            return getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
