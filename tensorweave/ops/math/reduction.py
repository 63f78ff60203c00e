"""Reductions (Sum, Mean, Max, Min, Prod, All, Any), ArgMax/ArgMin, and the TF1 wrappers
reduce_* (axis / reduction_indices, keepdims / keep_dims) and count_nonzero; also the sums across
tensors and segments (AddN, UnsortedSegmentSum, whose wrapper add_n is in math_impl.py) and
BroadcastGradientArgs, which gradients use to undo broadcasting.

Kernels precompute the reduced axes when the axis input is a graph constant and the input rank
is known (the common case); otherwise they normalize and validate the fed axes once per
distinct value.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor, name_scope
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import OpDef, define_op, get_op_def
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import _util
from tensorweave.ops._util import format_dims, invalid, register_kernel
from tensorweave.ops.kernels.buffer_forwarding import forwardable
from tensorweave.ops.kernels.scatter import scatter_reduce
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.elementwise import not_equal

__all__ = ["reduce_sum", "reduce_mean", "reduce_max", "reduce_min", "reduce_prod", "reduce_all",
           "reduce_any", "count_nonzero", "argmax", "argmin", "arg_max", "arg_min",
           "unsorted_segment_sum"]

_NUMBERS = "numbertype"
_REALS = "realnumbertype"
# Spelled out: type groups can't be mixed with single types inside {...}.
_ALL_NUMBERS = ("float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, "
                "uint64, complex64, complex128")


# ---------------------------------------------------------------------------------------------
# Shape functions
# ---------------------------------------------------------------------------------------------
def _normalize_axes(values: Any, rank: int, error: Callable[[str], Exception]) -> tuple[int, ...]:
    axes: list[int] = []
    for a in np.asarray(values).reshape(-1).tolist():
        if not -rank <= a < rank:
            raise error(f"Invalid reduction dimension {a} for input with {rank} dimensions.")
        a %= rank
        if a in axes:
            raise error(f"Invalid reduction arguments: Axes contains duplicate dimension: {a}")
        axes.append(a)
    return tuple(sorted(axes))


def _reduction_shape(op: Operation) -> list[TensorShape]:
    x = op.inputs[0].shape
    keep = op._get_attr("keep_dims")
    axes = tensor_util.constant_value(op.inputs[1])
    if axes is None or x.ndims is None:
        return [unknown_shape(x.ndims) if keep and x.ndims is not None else unknown_shape()]
    values = np.asarray(axes).reshape(-1).tolist()
    rank = x.ndims
    for a in values:
        if not -rank <= a < rank:
            raise ValueError(f"Invalid reduction dimension {a} for input with {rank} dimensions. "
                             f"for '{op.name}' (op: '{op.type}') with input shapes: {x}, "
                             f"{op.inputs[1].shape}.")
    reduced = {a % rank for a in values}  # duplicates only fail at run time, as in TF
    dims = []
    for i, d in enumerate(x.dims):
        if i not in reduced:
            dims.append(d)
        elif keep:
            dims.append(1)
    return [TensorShape(dims)]


def _arg_shape(op: Operation) -> list[TensorShape]:
    x = op.inputs[0].shape
    axis = tensor_util.constant_value(op.inputs[1])
    if x.ndims is None:
        return [unknown_shape()]
    if axis is None:
        return [unknown_shape(max(x.ndims - 1, 0))]
    a = int(np.asarray(axis).reshape(-1)[0]) if np.size(axis) == 1 else None
    if a is None or not -x.ndims <= a < x.ndims:
        raise ValueError(f"Dimension ({a}) must be in the range [{-x.ndims}, {x.ndims}), where "
                         f"{x.ndims} is the number of dimensions in the input. for '{op.name}' "
                         f"(op: '{op.type}') with input shapes: {x}, {op.inputs[1].shape}.")
    dims = list(x.dims)
    del dims[a % x.ndims]
    return [TensorShape(dims)]


# ---------------------------------------------------------------------------------------------
# Reduction ops and kernels
# ---------------------------------------------------------------------------------------------
def _reduction_op(name: str, types: str) -> OpDef:
    input_type = "bool" if types == "bool" else "T"
    attrs = ["keep_dims: bool = false", "Tidx: {int32, int64} = int32"]
    if types != "bool":
        attrs.append(f"T: {types}")
    return define_op(name, inputs=[f"input: {input_type}", "reduction_indices: Tidx"],
                     outputs=[f"output: {input_type}"], attrs=attrs, shape_fn=_reduction_shape)


Sum = _reduction_op("Sum", _NUMBERS)
Mean = _reduction_op("Mean", _NUMBERS)
Prod = _reduction_op("Prod", _NUMBERS)
Max = _reduction_op("Max", _REALS)
Min = _reduction_op("Min", _REALS)
All = _reduction_op("All", "bool")
Any_ = _reduction_op("Any", "bool")
All.not_differentiable()
Any_.not_differentiable()


def _reduction_kernel(op: OpDef, make: Callable[[Any, Any], Callable[[Any, tuple], Any]]) -> None:
    """Registers a kernel from `make(ctx, np_dtype) -> reduce(x, axes)`; the axes are a sorted
    tuple of distinct non-negative dimensions."""

    @register_kernel(op)
    def build(ctx: KernelContext) -> Callable:
        reduce = make(ctx, ctx.output_dtypes[0].as_numpy_dtype)
        rank = ctx.op.inputs[0].shape.ndims
        const = tensor_util.constant_value(ctx.op.inputs[1])
        if const is not None and rank is not None:
            try:
                axes = _normalize_axes(const, rank, _runtime_axis_error)
            except errors.InvalidArgumentError as err:
                return _raiser(err)  # duplicate axes: an error of the step, not of the plan
            return lambda x, indices: reduce(x, axes)
        cache: dict[tuple, tuple[int, ...]] = {}

        def compute(x: Any, indices: Any) -> Any:
            key = (indices.tobytes(), x.ndim)
            axes = cache.get(key)
            if axes is None:
                axes = _normalize_axes(indices, x.ndim, _runtime_axis_error)
                if len(cache) < 64:
                    cache[key] = axes
            return reduce(x, axes)

        return compute


def _raiser(err: Exception) -> Callable:
    def compute(*args: Any) -> Any:
        raise err

    return compute


def _runtime_axis_error(message: str) -> errors.OpError:
    if message.startswith("Invalid reduction dimension"):  # TF's run-time wording
        message = message.replace("dimension ", "dimension (", 1).replace(
            " dimensions.", " dimension(s)")
    return invalid(message)


def _keep(ctx: KernelContext) -> bool:
    return bool(ctx.attr("keep_dims"))


def _make_sum(ctx: KernelContext, dtype: Any) -> Callable:
    add_reduce, keep = ctx.xp.add.reduce, _keep(ctx)
    return lambda x, axes: add_reduce(x, axis=axes, dtype=dtype, keepdims=keep)


def _make_prod(ctx: KernelContext, dtype: Any) -> Callable:
    mul_reduce, keep = ctx.xp.multiply.reduce, _keep(ctx)
    return lambda x, axes: mul_reduce(x, axis=axes, dtype=dtype, keepdims=keep)


def _identity_of(dtype: Any, lowest: bool) -> Any:
    """The value a max (lowest=True) or min of nothing is, as TF: -inf/+inf or the integer
    type's limit."""
    if np.issubdtype(dtype, np.floating):
        return -np.inf if lowest else np.inf
    info = np.iinfo(dtype)
    return info.min if lowest else info.max


def _make_extremum(ufunc_name: str, lowest: bool) -> Callable:
    def make(ctx: KernelContext, dtype: Any) -> Callable:
        reduce, keep = getattr(ctx.xp, ufunc_name).reduce, _keep(ctx)
        initial = _identity_of(dtype, lowest)
        return lambda x, axes: reduce(x, axis=axes, keepdims=keep, initial=initial)

    return make


def _make_logical(ufunc_name: str) -> Callable:
    def make(ctx: KernelContext, dtype: Any) -> Callable:
        reduce, keep = getattr(ctx.xp, ufunc_name).reduce, _keep(ctx)
        return lambda x, axes: reduce(x, axis=axes, keepdims=keep)

    return make


def _make_mean(ctx: KernelContext, dtype: Any) -> Callable:
    xp, keep = ctx.xp, _keep(ctx)
    add_reduce = xp.add.reduce
    dt = np.dtype(dtype)

    def count(x: Any, axes: tuple) -> int:
        n = 1
        for a in axes:
            n *= x.shape[a]
        return n

    if dt.kind not in "iu":
        # TF sums in the input type (a float16 mean can overflow) and then divides.
        return lambda x, axes: xp.true_divide(add_reduce(x, axis=axes, dtype=dt, keepdims=keep),
                                              count(x, axes), dtype=dt)
    # Integer means are integers: sum in 64 bits (TF does not wrap int8..int32 sums here), then
    # divide rounding toward zero, as C does.
    acc = np.dtype(np.int64 if dt.kind == "i" else np.uint64)

    def int_mean(x: Any, axes: tuple) -> Any:
        total = add_reduce(x, axis=axes, dtype=acc, keepdims=keep)
        n = count(x, axes)
        if n == 0:
            return xp.zeros_like(total, dtype=dt)
        quotient = total // n
        if dt.kind == "i":
            quotient = quotient + ((total < 0) & (total % n != 0))
        return quotient.astype(dt)

    return int_mean


_reduction_kernel(Sum, _make_sum)
_reduction_kernel(Prod, _make_prod)
_reduction_kernel(Mean, _make_mean)
_reduction_kernel(Max, _make_extremum("maximum", lowest=True))
_reduction_kernel(Min, _make_extremum("minimum", lowest=False))
_reduction_kernel(All, _make_logical("logical_and"))
_reduction_kernel(Any_, _make_logical("logical_or"))


# ---------------------------------------------------------------------------------------------
# ArgMax / ArgMin
# ---------------------------------------------------------------------------------------------
ArgMax = define_op("ArgMax", inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                   attrs=[f"T: {{{_ALL_NUMBERS}, bool}}", "Tidx: {int32, int64} = int32",
                          "output_type: {int32, int64} = int64"], shape_fn=_arg_shape)
ArgMin = define_op("ArgMin", inputs=["input: T", "dimension: Tidx"], outputs=["output: output_type"],
                   attrs=[f"T: {{{_ALL_NUMBERS}, bool}}", "Tidx: {int32, int64} = int32",
                          "output_type: {int32, int64} = int64"], shape_fn=_arg_shape)
ArgMax.not_differentiable()
ArgMin.not_differentiable()


def _arg_axis(x: Any, dimension: Any) -> int:
    if np.ndim(dimension) != 0:
        raise invalid(f"dim must be a scalar, but received tensor of shape: "
                       f"{format_dims(np.shape(dimension))}")
    a = int(dimension)
    rank = x.ndim
    if not -rank <= a < rank:
        raise invalid(f"Expected dimension in the range [{-rank}, {rank}), but got {a}")
    a %= rank
    if x.shape[a] == 0:
        raise invalid(f"Reduction axis {a} is empty in shape {format_dims(x.shape)}")
    return a


def _arg_kernel(op: OpDef, fn_name: str) -> None:
    @register_kernel(op)
    def build(ctx: KernelContext) -> Callable:
        fn = getattr(ctx.xp, fn_name)
        out = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
        if out == np.dtype(np.intp):  # NumPy's own index type: no conversion needed
            find = fn
        else:
            def find(x: Any, axis: int) -> Any:
                return fn(x, axis=axis).astype(out)
        shape = ctx.op.inputs[0].shape
        const = tensor_util.constant_value(ctx.op.inputs[1])
        if const is not None and shape.ndims and np.ndim(const) == 0:
            a = int(const) % shape.ndims
            if shape.dims[a].value:  # static, valid and non-empty: nothing to check per step
                return lambda x, dimension: find(x, axis=a)
        return lambda x, dimension: find(x, axis=_arg_axis(x, dimension))


_arg_kernel(ArgMax, "argmax")
_arg_kernel(ArgMin, "argmin")


# ---------------------------------------------------------------------------------------------
# TF1 wrappers
# ---------------------------------------------------------------------------------------------
def _lookup(new_name: str, new_value: Any, old_name: str, old_value: Any) -> Any:
    """TF's deprecated_argument_lookup: one of the two spellings, never both."""
    if old_value is not None:
        if new_value is not None:
            raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
        return old_value
    return new_value


def _all_axes(x: Any) -> Any:
    """The axis input reducing everything: a constant when the rank is known, else
    range(rank(x)) computed in the graph."""
    # Const, Rank and Range are the array family's ops: looked up by name, so that the reduce_*
    # wrappers (which every family uses) need no import of another family.
    rank = x.shape.ndims
    if rank is not None:
        return apply_op(get_op_def("Const"), name="Const", value=np.arange(rank, dtype=np.int32),
                        dtype=_dtypes.int32)
    rank_t = apply_op(get_op_def("Rank"), input=x)
    return apply_op(get_op_def("Range"), start=0, limit=rank_t, delta=1)


def _axis_value(axis: Any) -> Any:
    """A Python axis list: [] must still become int32 (TF infers it from Tidx's default)."""
    if isinstance(axis, Tensor) or hasattr(axis, "_as_graph_element"):
        return axis
    value = np.asarray(axis)
    return value.astype(np.int32) if value.size == 0 else axis


def _reduce(op: OpDef, input_tensor: Any, axis: Any, keepdims: Any, name: Optional[str],
            reduction_indices: Any, keep_dims: Any, dtype: Any = None) -> Any:
    axis = _lookup("axis", axis, "reduction_indices", reduction_indices)
    keepdims = bool(_lookup("keepdims", keepdims, "keep_dims", keep_dims))
    x = convert_to_tensor(input_tensor, dtype=dtype)
    indices = _all_axes(x) if axis is None else _axis_value(axis)
    result = apply_op(op, name=name or op.name, input=x, reduction_indices=indices,
                      keep_dims=keepdims)
    if axis is None and not keepdims:
        result.set_shape(())  # everything reduced, whatever the rank was
    return result


def reduce_sum(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: Optional[str] = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Any:
    """Sum of elements across `axis` (all of them if None); keepdims keeps reduced dims as 1."""
    return _reduce(Sum, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_mean(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: Optional[str] = None,
                reduction_indices: Any = None, keep_dims: Any = None) -> Any:
    """Mean across `axis`; integer inputs give integer means rounded toward zero, as TF."""
    return _reduce(Mean, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_max(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: Optional[str] = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Any:
    """Maximum across `axis` (NaN propagates; an empty reduction gives the lowest value)."""
    return _reduce(Max, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_min(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: Optional[str] = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Any:
    """Minimum across `axis` (NaN propagates; an empty reduction gives the highest value)."""
    return _reduce(Min, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_prod(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: Optional[str] = None,
                reduction_indices: Any = None, keep_dims: Any = None) -> Any:
    """Product of elements across `axis`."""
    return _reduce(Prod, input_tensor, axis, keepdims, name, reduction_indices, keep_dims)


def reduce_all(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: Optional[str] = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Any:
    """Logical AND across `axis` (bool input)."""
    return _reduce(All, input_tensor, axis, keepdims, name, reduction_indices, keep_dims,
                   dtype=_bool_if_python(input_tensor))


def reduce_any(input_tensor: Any, axis: Any = None, keepdims: Any = None, name: Optional[str] = None,
               reduction_indices: Any = None, keep_dims: Any = None) -> Any:
    """Logical OR across `axis` (bool input)."""
    return _reduce(Any_, input_tensor, axis, keepdims, name, reduction_indices, keep_dims,
                   dtype=_bool_if_python(input_tensor))


def _bool_if_python(value: Any) -> Any:
    return None if hasattr(value, "dtype") else _dtypes.bool


def count_nonzero(input_tensor: Any = None, axis: Any = None, keepdims: Any = None,
                  dtype: Any = _dtypes.int64, name: Optional[str] = None,
                  reduction_indices: Any = None, keep_dims: Any = None,
                  input: Any = None) -> Any:  # noqa: A002  (TF's argument name)
    """Number of nonzero elements across `axis` (non-empty strings for tf.string)."""
    input_tensor = _lookup("input", input, "input_tensor", input_tensor)
    with name_scope(name, "count_nonzero", [input_tensor]):
        x = convert_to_tensor(input_tensor, name="input")
        dtype_in = x.dtype.base_dtype
        zero = b"" if dtype_in == _dtypes.string else np.zeros((), dtype_in.as_numpy_dtype)
        nonzero = cast(not_equal(x, zero), _dtypes.int64)
        counts = reduce_sum(nonzero, axis=axis, keepdims=keepdims,
                            reduction_indices=reduction_indices, keep_dims=keep_dims)
        return cast(counts, dtype)


def _arg(op: OpDef, input: Any, axis: Any, name: Optional[str], dimension: Any,  # noqa: A002
         output_type: Any) -> Any:
    axis = _lookup("axis", axis, "dimension", dimension)
    return apply_op(op, name=name, input=input, dimension=0 if axis is None else axis,
                    output_type=output_type)


def argmax(input: Any, axis: Any = None, name: Optional[str] = None, dimension: Any = None,  # noqa: A002
           output_type: Any = _dtypes.int64) -> Any:
    """Index of the largest value along `axis` (default 0); first one on ties."""
    return _arg(ArgMax, input, axis, name, dimension, output_type)


def argmin(input: Any, axis: Any = None, name: Optional[str] = None, dimension: Any = None,  # noqa: A002
           output_type: Any = _dtypes.int64) -> Any:
    """Index of the smallest value along `axis` (default 0); first one on ties."""
    return _arg(ArgMin, input, axis, name, dimension, output_type)


def arg_max(input: Any, dimension: Any, output_type: Any = _dtypes.int64,  # noqa: A002
            name: Optional[str] = None) -> Any:
    """Deprecated TF1 spelling of argmax (the raw ArgMax op)."""
    return apply_op(ArgMax, name=name, input=input, dimension=dimension, output_type=output_type)


def arg_min(input: Any, dimension: Any, output_type: Any = _dtypes.int64,  # noqa: A002
            name: Optional[str] = None) -> Any:
    """Deprecated TF1 spelling of argmin (the raw ArgMin op)."""
    return apply_op(ArgMin, name=name, input=input, dimension=dimension, output_type=output_type)


# ---------------------------------------------------------------------------------------------
# Sums across tensors and segments; broadcast reduction indices for gradients
# ---------------------------------------------------------------------------------------------
def _add_n_shape(op: Operation) -> list[TensorShape]:
    try:
        return _util.merge_all_inputs(op)
    except ValueError as err:
        raise ValueError(f"{err} From merging shape 0 with other shapes.") from None


AddN = define_op("AddN", inputs=["inputs: N * T"], outputs=["sum: T"],
                 attrs=["N: int >= 1", "T: numbertype"], shape_fn=_add_n_shape)


def _check_add_n_shapes(xs: tuple, node_name: str) -> None:
    shape = xs[0].shape
    for i, x in enumerate(xs):
        if x.shape != shape:
            raise invalid(f"Inputs to operation {node_name} of type AddN must have the same size and "
                           f"shape.  Input 0: {format_dims(shape)} != input {i}: {format_dims(x.shape)}")


@register_kernel(AddN)
def _add_n_kernel(ctx: KernelContext) -> Callable:
    checked = not all(t.shape.is_fully_defined() for t in ctx.op.inputs)
    node_name = ctx.node_name
    dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype) if ctx.xp is np else None
    add = ctx.xp.add

    def compute(*xs: Any) -> Any:
        if checked:
            _check_add_n_shapes(xs, node_name)
        if len(xs) == 1:
            return xs[0]  # as TF: the sum of one tensor is that tensor
        # The sum goes into the first or second input when nothing else holds it (buffer
        # forwarding), else into a new array; either way ((x0 + x1) + x2) + ..., as before.
        shape = np.shape(xs[0])
        if dtype is not None and forwardable(xs[0], shape, dtype):
            total = add(xs[0], xs[1], out=xs[0])
        elif dtype is not None and forwardable(xs[1], shape, dtype):
            total = add(xs[0], xs[1], out=xs[1])
        else:
            total = xs[0] + xs[1]
        for i in range(2, len(xs)):
            total += xs[i]  # `total` is ours: accumulate in place
        return total

    return compute


def _segment_sum_shape(op: Operation) -> list[TensorShape]:
    data, ids = op.inputs[0].shape, op.inputs[1].shape
    num = tensor_util.constant_value(op.inputs[2])
    if data.ndims is None or ids.ndims is None:
        return [unknown_shape()]
    if ids.ndims > data.ndims or not TensorShape(data.dims[:ids.ndims]).is_compatible_with(ids):
        raise ValueError(f"segment_ids.shape = {ids} must be a prefix of data.shape = {data} for "
                         f"'{op.name}' (op: 'UnsortedSegmentSum').")
    first = None if num is None or np.size(num) != 1 else int(np.asarray(num).reshape(-1)[0])
    return [TensorShape([first] + data.dims[ids.ndims:])]


UnsortedSegmentSum = define_op(
    "UnsortedSegmentSum", inputs=["data: T", "segment_ids: Tindices", "num_segments: Tnumsegments"],
    outputs=["output: T"], attrs=["T: numbertype", "Tindices: {int32, int64}",
                                  "Tnumsegments: {int32, int64} = int32"],
    shape_fn=_segment_sum_shape)


@register_kernel(UnsortedSegmentSum)
def _unsorted_segment_sum_kernel(ctx: KernelContext) -> Callable:
    xp = ctx.xp
    dtype = ctx.output_dtypes[0].as_numpy_dtype

    def compute(data: Any, ids: Any, num_segments: Any) -> Any:
        n = int(num_segments)
        if data.shape[:ids.ndim] != ids.shape:
            raise invalid(f"data.shape = {format_dims(data.shape)} does not start with segment_ids.shape "
                           f"= {format_dims(ids.shape)}")
        if n < 0:
            raise invalid(f"Input num_segments == {n} must not be negative.")
        out = xp.zeros((n,) + data.shape[ids.ndim:], dtype=dtype)
        if ids.size:
            if ids.max() >= n:
                bad = int(xp.argmax(ids.reshape(-1) >= n))
                raise invalid(f"segment_ids[{bad}] = {int(ids.reshape(-1)[bad])} is out of range "
                               f"[0, {n})")
            inner = math.prod(out.shape[1:])
            scatter_reduce(xp.add, out, ids.reshape(-1), data.reshape((ids.size, inner)))
        return out

    return compute


def unsorted_segment_sum(data: Any, segment_ids: Any, num_segments: Any,
                         name: Optional[str] = None) -> Any:
    """output[i] = sum of data[j...] over j with segment_ids[j...] == i (negative ids dropped)."""
    return apply_op(UnsortedSegmentSum, name=name, data=data, segment_ids=segment_ids,
                    num_segments=num_segments)


BroadcastGradientArgs = define_op(
    "BroadcastGradientArgs", inputs=["s0: T", "s1: T"], outputs=["r0: T", "r1: T"],
    attrs=["T: {int32, int64} = int32"],
    shape_fn=lambda op: [TensorShape([None]), TensorShape([None])])
BroadcastGradientArgs.not_differentiable()


@register_kernel(BroadcastGradientArgs)
def _broadcast_gradient_args_kernel(ctx: KernelContext) -> Callable:
    dtype = ctx.output_dtypes[0].as_numpy_dtype

    def compute(s0: Any, s1: Any) -> Any:
        a, b = [int(d) for d in np.asarray(s0)], [int(d) for d in np.asarray(s1)]
        n = max(len(a), len(b))
        pa, pb = [1] * (n - len(a)) + a, [1] * (n - len(b)) + b
        r0, r1 = [], []
        for i, (x, y) in enumerate(zip(pa, pb)):
            if x != y and x != 1 and y != 1:
                raise invalid(f"Incompatible shapes: {format_dims(a)} vs. {format_dims(b)}")
            if x == 1:
                r0.append(i)  # x was broadcast along i: its gradient sums over i
            if y == 1:
                r1.append(i)
        return np.array(r0, dtype=dtype), np.array(r1, dtype=dtype)

    return compute


def broadcast_gradient_args(s0: Any, s1: Any, name: Optional[str] = None) -> Any:
    """Reduction indices for the gradients of two broadcast operands with shapes s0 and s1."""
    return apply_op(BroadcastGradientArgs, name=name, s0=s0, s1=s1)
