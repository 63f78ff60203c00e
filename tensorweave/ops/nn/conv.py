"""2-D convolution (white paper Table 1: Conv2D): Conv2D, Conv2DBackpropInput and
Conv2DBackpropFilter, and the TF1 wrappers tf.nn.conv2d, conv2d_backprop_input,
conv2d_backprop_filter, conv2d_transpose and atrous_conv2d. conv1d and convolution (which reshape
with array ops) are in nn_impl.py; the gradients in grad.py.

Kernels compute in NHWC (NCHW inputs are transposed in and out), with SAME, VALID and EXPLICIT
padding, strides, dilations and grouped filters (input depth a multiple of the filter depth, as
TF's CPU kernels allow). The arithmetic is in conv_kernels.ConvEngine: im2col plus BLAS, with the
batch split over the device's thread pool. float16 is computed in float32 and rounded once.
Depthwise convolution is in depthwise_conv.py, pooling in pooling.py.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import tensor_util
from tensorweave.framework.graph import name_scope, Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import shape_error
from tensorweave.ops.kernels.conv_geometry import (
    convert_padding, Geometry, get_sequence, node_window_attrs, spatial_dims, static_output_shape,
    to_data_format, WindowAttrs)
from tensorweave.ops._util import invalid, unimplemented
from tensorweave.ops.kernels.conv import ConvEngine
from tensorweave.ops.kernels.intra_op import ChunkRunner
from tensorweave.ops._util import format_dims

__all__ = ["conv2d", "conv2d_backprop_input", "conv2d_backprop_filter", "conv2d_transpose",
           "atrous_conv2d", "atrous_conv2d_transpose"]

_CONV_ATTRS = ["strides: list(int)", "use_cudnn_on_gpu: bool = true",
               "padding: {'SAME', 'VALID', 'EXPLICIT'}", "explicit_paddings: list(int) = []",
               "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "dilations: list(int) = [1, 1, 1, 1]"]
_WINDOW_NAMES = ("dilations", "explicit_paddings")


# ---------------------------------------------------------------------------------------------
# Shape functions
# ---------------------------------------------------------------------------------------------
def static_attrs(op: Operation, names: Sequence[str] = _WINDOW_NAMES) -> WindowAttrs:
    """The node's window attrs, checked at graph construction (ValueError naming the node)."""
    return node_window_attrs(op._get_attr, op.type, lambda msg: shape_error(op, msg), names)


def with_rank4(op: Operation, shape: TensorShape) -> TensorShape:
    if shape.ndims is None:
        return unknown_shape(4)
    if shape.ndims != 4:
        raise shape_error(op, f"Shape must be rank 4 but is rank {shape.ndims}")
    return shape


def _conv_output_shape(op: Operation, attrs: WindowAttrs, x: TensorShape, f: TensorShape) -> TensorShape:
    _, _, c_axis = spatial_dims(attrs.data_format)
    in_c, f_in, f_out = x.dims[c_axis].value, f.dims[2].value, f.dims[3].value
    if in_c is not None and f_in is not None:
        if f_in == 0 or in_c % f_in:
            raise shape_error(op, f"Depth of input ({in_c}) is not a multiple of input depth of filter ({f_in})")
        if f_out is not None and f_out % (in_c // f_in):
            raise shape_error(op, f"Depth of output ({f_out}) is not a multiple of the number of groups "
                                  f"({in_c // f_in})")
    return static_output_shape(op, attrs, x, (f.dims[0], f.dims[1]), f.dims[3])


def _conv2d_shape(op: Operation) -> list[TensorShape]:
    x, f = with_rank4(op, op.inputs[0].shape), with_rank4(op, op.inputs[1].shape)
    return [_conv_output_shape(op, static_attrs(op), x, f)]


def sizes_shape(op: Operation, index: int) -> TensorShape:
    """The shape named by a sizes input (input_sizes / filter_sizes), as far as it is known."""
    sizes = op.inputs[index]
    if sizes.shape.ndims is not None and sizes.shape.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {sizes.shape.ndims}")
    shape = tensor_util.constant_value_as_shape(sizes)
    if shape.ndims is not None and shape.ndims not in (2, 4):
        raise shape_error(op, f"{op.inputs[index].name.split(':')[0]} must have 4 elements (or 2 spatial "
                              f"sizes), but got {shape.ndims}")
    return shape


def _backprop_input_shape(op: Operation) -> list[TensorShape]:
    attrs = static_attrs(op)
    f, dy = with_rank4(op, op.inputs[1].shape), with_rank4(op, op.inputs[2].shape)
    h_axis, w_axis, c_axis = spatial_dims(attrs.data_format)
    if not dy.dims[c_axis].is_compatible_with(f.dims[3]):
        raise shape_error(op, f"Depth of out_backprop ({dy.dims[c_axis].value}) does not match the "
                              f"filter's output depth ({f.dims[3].value})")
    sizes = sizes_shape(op, 0)
    if sizes.ndims == 2:  # spatial sizes only: batch and depth come from the other inputs
        nhwc = [dy.dims[0], sizes.dims[0], sizes.dims[1], f.dims[2]]
        return [TensorShape(to_data_format(nhwc, attrs.data_format))]
    return [sizes if sizes.ndims is not None else unknown_shape(4)]


def _backprop_filter_shape(op: Operation) -> list[TensorShape]:
    static_attrs(op)
    with_rank4(op, op.inputs[0].shape)
    with_rank4(op, op.inputs[2].shape)
    sizes = sizes_shape(op, 1)
    if sizes.ndims == 2:
        raise shape_error(op, "filter_sizes must have 4 elements")
    return [sizes if sizes.ndims is not None else unknown_shape(4)]


Conv2D = define_op("Conv2D", inputs=["input: T", "filter: T"], outputs=["output: T"],
                   attrs=["T: {float16, float32, float64, int32}"] + _CONV_ATTRS,
                   shape_fn=_conv2d_shape, expensive=True)
Conv2DBackpropInput = define_op(
    "Conv2DBackpropInput", inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=["T: {float16, float32, float64, int32}"] + _CONV_ATTRS,
    shape_fn=_backprop_input_shape, expensive=True)
Conv2DBackpropFilter = define_op(
    "Conv2DBackpropFilter", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"], attrs=["T: {float16, float32, float64}"] + _CONV_ATTRS,
    shape_fn=_backprop_filter_shape, expensive=True)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------
def kernel_attrs(ctx: KernelContext, names: Sequence[str] = _WINDOW_NAMES) -> WindowAttrs:
    """The node's window attrs as its kernel checks them (TF rejects batch/depth strides and
    dilations when the kernel is built)."""
    attrs = node_window_attrs(ctx.attr, ctx.op.type, invalid, names)
    if attrs.outer_strides != (1, 1):
        raise unimplemented("Current implementation does not yet support strides in the batch and "
                            "depth dimensions.")
    if attrs.outer_dilations != (1, 1):
        raise invalid("Current implementation does not yet support dilations in the batch and depth "
                      "dimensions.")
    return attrs


def compute_dtype(dtype: Any) -> np.dtype:
    """float16 convolutions accumulate in float32 (BLAS has no half sgemm)."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


class LayoutIO:
    """Moves arrays between the node's data format and dtype and the NHWC compute layout."""

    def __init__(self, data_format: str, dtype: Any) -> None:
        self.nchw = data_format == "NCHW"
        self.dtype = np.dtype(dtype)
        self.work = compute_dtype(dtype)

    def to_nhwc_shape(self, shape: Sequence[int]) -> tuple[int, int, int, int]:
        n, a, b, c = (int(d) for d in shape)
        return (n, b, c, a) if self.nchw else (n, a, b, c)

    def arg(self, x: np.ndarray) -> np.ndarray:
        if self.nchw:
            x = x.transpose(0, 2, 3, 1)
        return x.astype(self.work) if x.dtype != self.work else x

    def param(self, f: np.ndarray) -> np.ndarray:
        return f.astype(self.work) if f.dtype != self.work else f

    def result(self, y: np.ndarray, spatial: bool = True) -> np.ndarray:
        if self.nchw and spatial:
            y = np.ascontiguousarray(y.transpose(0, 3, 1, 2))
        return y.astype(self.dtype) if y.dtype != self.dtype else y


class ConvPlan:
    """One Conv2D-family node at one set of shapes: validation, layout, filter groups."""

    def __init__(self, attrs: WindowAttrs, io: LayoutIO, x_nhwc: Sequence[int], f_shape: Sequence[int],
                 runner: ChunkRunner) -> None:
        if len(x_nhwc) != 4:
            raise invalid(f"input must be 4-dimensional{format_dims(x_nhwc)}")
        if len(f_shape) != 4:
            raise invalid(f"filter must be 4-dimensional: {format_dims(f_shape)}")
        n, h, w, c = x_nhwc
        kh, kw, f_in, f_out = (int(d) for d in f_shape)
        if f_in <= 0 or c % f_in:
            raise invalid(f"input depth must be evenly divisible by filter depth: {c} vs {f_in}")
        self.groups = c // f_in
        if f_out % self.groups:
            raise invalid(f"output depth must be evenly divisible by number of groups: {f_out} vs {self.groups}")
        self.io = io
        self.geometry = Geometry.make(attrs, (n, h, w, f_in), (kh, kw))
        self.out_c = f_out
        self.engine = ConvEngine(self.geometry, f_out // self.groups, io.work, runner)

    @property
    def out_shape(self) -> tuple[int, int, int, int]:
        g = self.geometry
        return (g.n, g.out_h, g.out_w, self.out_c)

    def _per_group(self, fn: Callable[[np.ndarray, np.ndarray], np.ndarray], a: np.ndarray, b: np.ndarray,
                   out_shape: tuple[int, ...]) -> np.ndarray:
        """Runs `fn` on each filter group: the group's slice of the last axis of `a` and `b`,
        written into the group's slice of the last axis of the result."""
        if self.groups == 1:
            return fn(a, b)
        out = np.empty(out_shape, self.io.work)
        step_a, step_b, step_out = (d // self.groups for d in (a.shape[-1], b.shape[-1], out_shape[-1]))
        for i in range(self.groups):
            out[..., i * step_out:(i + 1) * step_out] = fn(
                np.ascontiguousarray(a[..., i * step_a:(i + 1) * step_a]),
                np.ascontiguousarray(b[..., i * step_b:(i + 1) * step_b]))
        return out

    def forward(self, x: np.ndarray, f: np.ndarray) -> np.ndarray:
        x, f = self.io.arg(x), self.io.param(f)
        return self.io.result(self._per_group(self.engine.forward, x, f, self.out_shape))

    def input_grad(self, dy: np.ndarray, f: np.ndarray) -> np.ndarray:
        dy, f = self.io.arg(dy), self.io.param(f)
        g = self.geometry
        return self.io.result(self._per_group(self.engine.input_grad, dy, f, (g.n, g.h, g.w, g.c * self.groups)))

    def filter_grad(self, x: np.ndarray, dy: np.ndarray) -> np.ndarray:
        x, dy = self.io.arg(x), self.io.arg(dy)
        g = self.geometry
        grad = self._per_group(self.engine.filter_grad, x, dy, (g.kh, g.kw, g.c, self.out_c))
        return self.io.result(grad, spatial=False)

    def check_out_backprop(self, op_type: str, dy_shape: Sequence[int]) -> None:
        """TF's check that out_backprop has the shape the forward convolution would produce."""
        if len(dy_shape) != 4:
            raise invalid(f"{op_type}: out_backprop must be 4-dimensional")
        got = self.io.to_nhwc_shape(dy_shape)
        want = self.out_shape
        g = self.geometry
        names = ("batch", "rows", "cols", "depth")
        for axis in range(4):
            if got[axis] != want[axis]:
                detail = ""
                if axis in (1, 2):
                    size, k, s, d = ((g.h, g.kh, g.sh, g.dh) if axis == 1 else (g.w, g.kw, g.sw, g.dw))
                    detail = (f" spatial_dim: {axis} input: {size} filter: {k} output: {got[axis]} "
                              f"stride: {s} dilation: {d}")
                raise invalid(f"{op_type}: Size of out_backprop doesn't match computed: actual = {got[axis]}, "
                              f"computed = {want[axis]}{detail}" if axis in (1, 2) else
                              f"{op_type}: out_backprop {names[axis]} is {got[axis]}, expected {want[axis]}")


class PlanCache:
    """Plans keyed by the shapes they were built for: built once, looked up every step."""

    def __init__(self, make: Callable[..., Any]) -> None:
        self._make = make
        self._plans: dict[Any, Any] = {}

    def get(self, *key: Any) -> Any:
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= 16:  # shapes that change every step must not pile up
                self._plans.clear()
            plan = self._plans[key] = self._make(*key)
        return plan


def sizes_value(sizes: np.ndarray, what: str, op_type: str) -> tuple[int, ...]:
    sizes = np.asarray(sizes)
    if sizes.ndim != 1 or sizes.shape[0] not in (2, 4):
        raise invalid(f"{op_type}: {what} must be a vector of 4 elements (or 2 spatial sizes), "
                      f"got shape {format_dims(sizes.shape)}")
    if (sizes < 0).any():
        raise invalid(f"{op_type}: {what} must be non-negative, got {sizes.tolist()}")
    return tuple(int(v) for v in sizes)


@Conv2D.kernel()
def _conv2d_kernel(ctx: KernelContext) -> Callable[..., Any]:
    attrs = kernel_attrs(ctx)
    io = LayoutIO(attrs.data_format, ctx.output_dtypes[0].as_numpy_dtype)
    runner = ChunkRunner.for_kernel(ctx)
    plans = PlanCache(lambda xs, fs: ConvPlan(attrs, io, io.to_nhwc_shape(xs) if len(xs) == 4 else xs, fs, runner))

    def compute(x: np.ndarray, f: np.ndarray) -> np.ndarray:
        return plans.get(x.shape, f.shape).forward(x, f)

    return compute


@Conv2DBackpropInput.kernel()
def _conv2d_backprop_input_kernel(ctx: KernelContext) -> Callable[..., Any]:
    attrs = kernel_attrs(ctx)
    io = LayoutIO(attrs.data_format, ctx.output_dtypes[0].as_numpy_dtype)
    runner = ChunkRunner.for_kernel(ctx)
    op_type = ctx.op.type

    def make(sizes: tuple[int, ...], fs: tuple[int, ...], dys: tuple[int, ...]) -> ConvPlan:
        if len(fs) != 4:
            raise invalid(f"{op_type}: filter must be 4-dimensional: {format_dims(fs)}")
        if len(sizes) == 2:  # spatial sizes: batch from out_backprop, depth from the filter
            sizes = tuple(to_data_format([dys[0] if dys else 0, sizes[0], sizes[1], fs[2]], attrs.data_format))
        plan = ConvPlan(attrs, io, io.to_nhwc_shape(sizes), fs, runner)
        plan.check_out_backprop(op_type, dys)
        return plan

    plans = PlanCache(make)

    def compute(sizes: np.ndarray, f: np.ndarray, dy: np.ndarray) -> np.ndarray:
        return plans.get(sizes_value(sizes, "input_sizes", op_type), f.shape, dy.shape).input_grad(dy, f)

    return compute


@Conv2DBackpropFilter.kernel()
def _conv2d_backprop_filter_kernel(ctx: KernelContext) -> Callable[..., Any]:
    attrs = kernel_attrs(ctx)
    io = LayoutIO(attrs.data_format, ctx.output_dtypes[0].as_numpy_dtype)
    runner = ChunkRunner.for_kernel(ctx)
    op_type = ctx.op.type

    def make(xs: tuple[int, ...], sizes: tuple[int, ...], dys: tuple[int, ...]) -> ConvPlan:
        if len(sizes) != 4:
            raise invalid(f"{op_type}: filter_sizes must have 4 elements, got {len(sizes)}")
        if len(xs) != 4:
            raise invalid(f"{op_type}: input must be 4-dimensional{format_dims(xs)}")
        plan = ConvPlan(attrs, io, io.to_nhwc_shape(xs), sizes, runner)
        plan.check_out_backprop(op_type, dys)
        return plan

    plans = PlanCache(make)

    def compute(x: np.ndarray, sizes: np.ndarray, dy: np.ndarray) -> np.ndarray:
        return plans.get(x.shape, sizes_value(sizes, "filter_sizes", op_type), dy.shape).filter_grad(x, dy)

    return compute


# ---------------------------------------------------------------------------------------------
# TF1 wrappers
# ---------------------------------------------------------------------------------------------
def pick(new: Any, new_name: str, old: Any, old_name: str) -> Any:
    """TF's deprecated_argument_lookup: one of two spellings of an argument."""
    if new is not None and old is not None:
        raise ValueError(f"Cannot specify both '{new_name}' and '{old_name}'")
    return new if new is not None else old


def window_kwargs(strides: Any, padding: Any, data_format: Optional[str], dilations: Any,
                  n: int = 2) -> dict[str, Any]:
    """strides / dilations / padding as the ops' attrs (ints and spatial-only lists expanded,
    a list of pairs meaning EXPLICIT padding)."""
    data_format = data_format or "NHWC"
    channel_index = 1 if data_format.startswith("NC") else n + 1
    padding, explicit = convert_padding(padding, n + 2)
    return {"strides": get_sequence(strides, n, channel_index, "strides"),
            "dilations": get_sequence(dilations, n, channel_index, "dilations"),
            "padding": padding, "explicit_paddings": explicit, "data_format": data_format}


def conv2d(input: Any, filter: Any = None, strides: Any = None, padding: Any = None,  # noqa: A002
           use_cudnn_on_gpu: bool = True, data_format: str = "NHWC", dilations: Any = (1, 1, 1, 1),
           name: Optional[str] = None, filters: Any = None) -> Any:
    """Computes a 2-D convolution of a 4-D `input` [batch, height, width, in_channels] (NHWC) with
    a `filter` [filter_height, filter_width, in_channels, out_channels]; `padding` is "SAME",
    "VALID" or a list of [before, after] pairs (explicit padding)."""
    filter = pick(filters, "filters", filter, "filter")  # noqa: A001
    return apply_op(Conv2D, name=name, input=input, filter=filter, use_cudnn_on_gpu=use_cudnn_on_gpu,
                    **window_kwargs(strides, padding, data_format, dilations))


def conv2d_backprop_input(input_sizes: Any, filter: Any = None, out_backprop: Any = None,  # noqa: A002
                          strides: Any = None, padding: Any = None, use_cudnn_on_gpu: bool = True,
                          data_format: str = "NHWC", dilations: Any = (1, 1, 1, 1),
                          name: Optional[str] = None, filters: Any = None) -> Any:
    """The gradient of conv2d with respect to its input, of shape `input_sizes`."""
    filter = pick(filters, "filters", filter, "filter")  # noqa: A001
    return apply_op(Conv2DBackpropInput, name=name, input_sizes=input_sizes, filter=filter,
                    out_backprop=out_backprop, use_cudnn_on_gpu=use_cudnn_on_gpu,
                    **window_kwargs(strides, padding, data_format, dilations))


def conv2d_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any, strides: Any,  # noqa: A002
                           padding: Any, use_cudnn_on_gpu: bool = True, data_format: str = "NHWC",
                           dilations: Any = (1, 1, 1, 1), name: Optional[str] = None) -> Any:
    """The gradient of conv2d with respect to its filter, of shape `filter_sizes`."""
    return apply_op(Conv2DBackpropFilter, name=name, input=input, filter_sizes=filter_sizes,
                    out_backprop=out_backprop, use_cudnn_on_gpu=use_cudnn_on_gpu,
                    **window_kwargs(strides, padding, data_format, dilations))


def conv2d_transpose(value: Any = None, filter: Any = None, output_shape: Any = None,  # noqa: A002
                     strides: Any = None, padding: Any = "SAME", data_format: str = "NHWC",
                     name: Optional[str] = None, input: Any = None, filters: Any = None,  # noqa: A002
                     dilations: Any = None) -> Any:
    """The transpose of conv2d ("deconvolution"): conv2d_backprop_input of `value` with `filter`
    [height, width, output_channels, in_channels], producing `output_shape`."""
    value = pick(input, "input", value, "value")
    filter = pick(filters, "filters", filter, "filter")  # noqa: A001
    with name_scope(name, "conv2d_transpose", [value, filter, output_shape]) as scope:
        value, filter = convert_to_tensor(value, name="value"), convert_to_tensor(filter, name="filter")  # noqa: A001
        axis = 1 if (data_format or "NHWC") == "NCHW" else 3
        if value.shape.ndims == 4 and filter.shape.ndims == 4 and \
                not value.shape[axis].is_compatible_with(filter.shape[3]):
            raise ValueError(f"input channels does not match filter's input channels, "
                             f"{value.shape[axis].value} != {filter.shape[3].value}")
        check_output_shape(output_shape, filter, axis)
        return apply_op(Conv2DBackpropInput, name=scope, input_sizes=output_shape, filter=filter,
                        out_backprop=value, **window_kwargs(strides, padding, data_format, dilations))


def atrous_conv2d(value: Any, filters: Any, rate: int, padding: str, name: Optional[str] = None) -> Any:
    """Dilated ("atrous") convolution: conv2d sampling the input every `rate` pixels."""
    if int(rate) < 1:
        raise ValueError(f"rate {rate} cannot be less than one")
    return apply_op(Conv2D, name=name, input=value, filter=filters,
                    **window_kwargs(1, padding, "NHWC", [1, int(rate), int(rate), 1]))


def check_output_shape(output_shape: Any, filters: Any, axis: int) -> None:
    """TF's graph-time checks of a transposed convolution's `output_shape`: a 4-vector whose
    channel entry (when given as a list) is the filter's output channels."""
    shape_t = convert_to_tensor(output_shape, name="output_shape")
    if not shape_t.shape.is_compatible_with([4]):
        raise ValueError(f"output_shape must have shape (4,), got {shape_t.shape}")
    if isinstance(output_shape, (list, tuple, np.ndarray)) and filters.shape.ndims == 4 and \
            not filters.shape[2].is_compatible_with(int(output_shape[axis])):
        raise ValueError(f"output_shape does not match filter's output channels, {int(output_shape[axis])} != "
                         f"{filters.shape[2].value}")


def atrous_conv2d_transpose(value: Any, filters: Any, output_shape: Any, rate: int, padding: str,
                            name: Optional[str] = None) -> Any:
    """The transpose of atrous_conv2d: conv2d_backprop_input of `value` with `filters`
    [height, width, out_channels, in_channels] dilated by `rate`, producing `output_shape`."""
    with name_scope(name, "atrous_conv2d_transpose", [value, filters, output_shape]) as scope:
        value, filters = convert_to_tensor(value, name="value"), convert_to_tensor(filters, name="filters")
        if value.shape.ndims == 4 and filters.shape.ndims == 4 and \
                not value.shape[3].is_compatible_with(filters.shape[3]):
            raise ValueError(f"value's input channels does not match filters' input channels, "
                             f"{value.shape[3].value} != {filters.shape[3].value}")
        if int(rate) < 1:
            raise ValueError(f"rate {rate} cannot be less than one")
        if padding not in ("SAME", "VALID"):
            raise ValueError(f"padding must be either VALID or SAME: {padding}")
        check_output_shape(output_shape, filters, 3)
        return apply_op(Conv2DBackpropInput, name=scope, input_sizes=output_shape, filter=filters,
                        out_backprop=value,
                        **window_kwargs(1, padding, "NHWC", [1, int(rate), int(rate), 1]))
