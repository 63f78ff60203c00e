"""Depthwise convolution: DepthwiseConv2dNative and its two backprop ops (their gradients are in
grad.py), and the TF1 wrappers tf.nn.depthwise_conv2d (with `rate`), depthwise_conv2d_native(+ backprops)
and separable_conv2d.

Each input channel c is convolved with its own `channel_multiplier` filters; output channel
c * multiplier + m holds filter m of channel c. There is no matmul to hand this to, so the kernels
loop over the KH*KW filter taps, each tap one broadcast multiply-add over a strided window view.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.graph import name_scope, Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import shape_error
from tensorweave.ops.kernels.conv_geometry import Geometry, get_sequence, spatial_dims, WindowAttrs
from tensorweave.ops._util import invalid
from tensorweave.ops.kernels.conv_geometry import static_output_shape, to_data_format
from tensorweave.ops.kernels.conv import padded_window_source, windows
from tensorweave.ops.nn.conv import (
    kernel_attrs, LayoutIO, pick, PlanCache, sizes_shape, sizes_value,
    static_attrs, window_kwargs, with_rank4)
from tensorweave.ops._util import format_dims
from tensorweave.ops.nn import conv as conv_ops

__all__ = ["depthwise_conv2d", "depthwise_conv2d_native", "depthwise_conv2d_native_backprop_input",
           "depthwise_conv2d_native_backprop_filter", "separable_conv2d"]

_ATTRS = ["T: {float16, float32, float64}", "strides: list(int)",
          "padding: {'SAME', 'VALID', 'EXPLICIT'}", "explicit_paddings: list(int) = []",
          "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "dilations: list(int) = [1, 1, 1, 1]"]


# ---------------------------------------------------------------------------------------------
# Shape functions
# ---------------------------------------------------------------------------------------------
def _depthwise_shape(op: Operation) -> list[TensorShape]:
    attrs = static_attrs(op)
    x, f = with_rank4(op, op.inputs[0].shape), with_rank4(op, op.inputs[1].shape)
    _, _, c_axis = spatial_dims(attrs.data_format)
    in_c, f_in, mult = x.dims[c_axis], f.dims[2], f.dims[3]
    if in_c.value is not None and f_in.value is not None and in_c.value != f_in.value:
        raise shape_error(op, f"Dimensions must be equal, but are {in_c.value} and {f_in.value}")
    channels = in_c if in_c.value is not None else f_in
    out_c = None if channels.value is None or mult.value is None else channels.value * mult.value
    return [static_output_shape(op, attrs, x, (f.dims[0], f.dims[1]), out_c)]


def _depthwise_input_shape(op: Operation) -> list[TensorShape]:
    attrs = static_attrs(op)
    f, dy = with_rank4(op, op.inputs[1].shape), with_rank4(op, op.inputs[2].shape)
    sizes = sizes_shape(op, 0)
    if sizes.ndims == 2:
        return [TensorShape(to_data_format([dy.dims[0], sizes.dims[0], sizes.dims[1], f.dims[2]],
                                           attrs.data_format))]
    return [sizes if sizes.ndims is not None else unknown_shape(4)]


def _depthwise_filter_shape(op: Operation) -> list[TensorShape]:
    static_attrs(op)
    with_rank4(op, op.inputs[0].shape)
    with_rank4(op, op.inputs[2].shape)
    sizes = sizes_shape(op, 1)
    if sizes.ndims == 2:
        raise shape_error(op, "filter_sizes must have 4 elements")
    return [sizes if sizes.ndims is not None else unknown_shape(4)]


DepthwiseConv2dNative = define_op(
    "DepthwiseConv2dNative", inputs=["input: T", "filter: T"], outputs=["output: T"], attrs=_ATTRS,
    shape_fn=_depthwise_shape, expensive=True)
DepthwiseConv2dNativeBackpropInput = define_op(
    "DepthwiseConv2dNativeBackpropInput", inputs=["input_sizes: int32", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=_ATTRS, shape_fn=_depthwise_input_shape, expensive=True)
DepthwiseConv2dNativeBackpropFilter = define_op(
    "DepthwiseConv2dNativeBackpropFilter", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"], attrs=_ATTRS, shape_fn=_depthwise_filter_shape, expensive=True)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------
class DepthwisePlan:
    """One depthwise node at one set of shapes (NHWC compute, see LayoutIO)."""

    def __init__(self, attrs: WindowAttrs, io: LayoutIO, op_type: str, x_nhwc: tuple[int, ...],
                 f_shape: tuple[int, ...]) -> None:
        if len(x_nhwc) != 4:
            raise invalid(f"{op_type}: input must be 4-dimensional{format_dims(x_nhwc)}")
        if len(f_shape) != 4:
            raise invalid(f"{op_type}: filter must be 4-dimensional{format_dims(f_shape)}")
        kh, kw, f_in, mult = f_shape
        if f_in != x_nhwc[3]:
            raise invalid(f"{op_type}: input and filter must have the same depth: {x_nhwc[3]} vs {f_in}")
        self.io, self.mult, self.op_type = io, mult, op_type
        self.g = Geometry.make(attrs, x_nhwc, (kh, kw))

    def out_shape(self) -> tuple[int, int, int, int]:
        g = self.g
        return (g.n, g.out_h, g.out_w, g.c * self.mult)

    def _taps(self, x: np.ndarray) -> np.ndarray:
        g = self.g
        return windows(padded_window_source(x, g, 0, g.n, 0, g.out_h), g, g.out_h)

    def forward(self, x: np.ndarray, f: np.ndarray) -> np.ndarray:
        x, f = self.io.arg(x), self.io.param(f)
        g = self.g
        out = np.zeros((g.n, g.out_h, g.out_w, g.c, self.mult), self.io.work)
        if out.size:
            taps = self._taps(x)
            for i in range(g.kh):
                for j in range(g.kw):
                    out += taps[:, :, :, i, j, :, None] * f[i, j]
        return self.io.result(out.reshape(self.out_shape()))

    def filter_grad(self, x: np.ndarray, dy: np.ndarray) -> np.ndarray:
        x, dy = self.io.arg(x), self.io.arg(dy)
        g = self.g
        grad = np.zeros((g.kh, g.kw, g.c, self.mult), self.io.work)
        if dy.size and x.size:
            taps = self._taps(x)
            dy5 = dy.reshape(g.n, g.out_h, g.out_w, g.c, self.mult)
            for i in range(g.kh):
                for j in range(g.kw):
                    grad[i, j] = np.einsum("nhwc,nhwcm->cm", taps[:, :, :, i, j, :], dy5)
        return self.io.result(grad, spatial=False)

    def input_grad(self, dy: np.ndarray, f: np.ndarray) -> np.ndarray:
        dy, f = self.io.arg(dy), self.io.param(f)
        g = self.g
        acc = np.zeros((g.n, g.h + g.pad_top + g.pad_bottom, g.w + g.pad_left + g.pad_right, g.c),
                       self.io.work)
        dy5 = dy.reshape(g.n, g.out_h, g.out_w, g.c, self.mult)
        h_end, w_end = (g.out_h - 1) * g.sh + 1, (g.out_w - 1) * g.sw + 1
        if dy.size:
            for i in range(g.kh):
                for j in range(g.kw):
                    top, left = i * g.dh, j * g.dw
                    acc[:, top:top + h_end:g.sh, left:left + w_end:g.sw] += \
                        np.einsum("nhwcm,cm->nhwc", dy5, f[i, j])
        dx = acc[:, g.pad_top:g.pad_top + g.h, g.pad_left:g.pad_left + g.w]
        return self.io.result(np.ascontiguousarray(dx))

    def check_out_backprop(self, dy_shape: tuple[int, ...]) -> None:
        got = self.io.to_nhwc_shape(dy_shape) if len(dy_shape) == 4 else dy_shape
        if tuple(got) != self.out_shape():
            raise invalid(f"{self.op_type}: out_backprop has shape {format_dims(got)} (NHWC) but the "
                          f"forward convolution produces {format_dims(self.out_shape())}")


def _setup(ctx: KernelContext) -> tuple[WindowAttrs, LayoutIO, str]:
    attrs = kernel_attrs(ctx)
    return attrs, LayoutIO(attrs.data_format, ctx.output_dtypes[0].as_numpy_dtype), ctx.op.type


@DepthwiseConv2dNative.kernel()
def _depthwise_kernel(ctx: KernelContext) -> Callable[..., Any]:
    attrs, io, op_type = _setup(ctx)
    plans = PlanCache(lambda xs, fs: DepthwisePlan(attrs, io, op_type, io.to_nhwc_shape(xs)
                                                   if len(xs) == 4 else xs, fs))
    return lambda x, f: plans.get(x.shape, f.shape).forward(x, f)


@DepthwiseConv2dNativeBackpropInput.kernel()
def _depthwise_input_kernel(ctx: KernelContext) -> Callable[..., Any]:
    attrs, io, op_type = _setup(ctx)

    def make(sizes: tuple[int, ...], fs: tuple[int, ...], dys: tuple[int, ...]) -> DepthwisePlan:
        if len(sizes) == 2 and len(fs) == 4:
            sizes = tuple(to_data_format([dys[0] if dys else 0, sizes[0], sizes[1], fs[2]], attrs.data_format))
        plan = DepthwisePlan(attrs, io, op_type, io.to_nhwc_shape(sizes), fs)
        plan.check_out_backprop(dys)
        return plan

    plans = PlanCache(make)

    def compute(sizes: np.ndarray, f: np.ndarray, dy: np.ndarray) -> np.ndarray:
        return plans.get(sizes_value(sizes, "input_sizes", op_type), f.shape, dy.shape).input_grad(dy, f)

    return compute


@DepthwiseConv2dNativeBackpropFilter.kernel()
def _depthwise_filter_kernel(ctx: KernelContext) -> Callable[..., Any]:
    attrs, io, op_type = _setup(ctx)

    def make(xs: tuple[int, ...], sizes: tuple[int, ...], dys: tuple[int, ...]) -> DepthwisePlan:
        if len(sizes) != 4:
            raise invalid(f"{op_type}: filter_sizes must have 4 elements, got {len(sizes)}")
        plan = DepthwisePlan(attrs, io, op_type, io.to_nhwc_shape(xs) if len(xs) == 4 else xs, sizes)
        plan.check_out_backprop(dys)
        return plan

    plans = PlanCache(make)

    def compute(x: np.ndarray, sizes: np.ndarray, dy: np.ndarray) -> np.ndarray:
        return plans.get(x.shape, sizes_value(sizes, "filter_sizes", op_type), dy.shape).filter_grad(x, dy)

    return compute


# ---------------------------------------------------------------------------------------------
# TF1 wrappers
# ---------------------------------------------------------------------------------------------
def depthwise_conv2d_native(input: Any, filter: Any, strides: Any, padding: Any,  # noqa: A002
                            data_format: str = "NHWC", dilations: Any = (1, 1, 1, 1),
                            name: Optional[str] = None) -> Any:
    """Depthwise 2-D convolution of `input` [batch, height, width, in_channels] with `filter`
    [height, width, in_channels, channel_multiplier]: in_channels * channel_multiplier outputs."""
    return apply_op(DepthwiseConv2dNative, name=name, input=input, filter=filter,
                    **window_kwargs(strides, padding, data_format, dilations))


def depthwise_conv2d_native_backprop_input(input_sizes: Any, filter: Any, out_backprop: Any,  # noqa: A002
                                           strides: Any, padding: Any, data_format: str = "NHWC",
                                           dilations: Any = (1, 1, 1, 1), name: Optional[str] = None) -> Any:
    """The gradient of depthwise_conv2d_native with respect to its input."""
    return apply_op(DepthwiseConv2dNativeBackpropInput, name=name, input_sizes=input_sizes, filter=filter,
                    out_backprop=out_backprop, **window_kwargs(strides, padding, data_format, dilations))


def depthwise_conv2d_native_backprop_filter(input: Any, filter_sizes: Any, out_backprop: Any,  # noqa: A002
                                            strides: Any, padding: Any, data_format: str = "NHWC",
                                            dilations: Any = (1, 1, 1, 1), name: Optional[str] = None) -> Any:
    """The gradient of depthwise_conv2d_native with respect to its filter."""
    return apply_op(DepthwiseConv2dNativeBackpropFilter, name=name, input=input, filter_sizes=filter_sizes,
                    out_backprop=out_backprop, **window_kwargs(strides, padding, data_format, dilations))


def _rate(rate: Any, dilations: Any, strides: Any, data_format: Optional[str]) -> list[int]:
    """TF1's `rate` (or `dilations`) as a 4-list; dilation together with stride is ambiguous in
    TF (space-to-batch) and is refused here."""
    rate = pick(dilations, "dilations", rate, "rate")
    channel_index = 1 if (data_format or "NHWC").startswith("NC") else 3
    full = get_sequence(rate, 2, channel_index, "rate")
    steps = get_sequence(strides, 2, channel_index, "strides")
    spatial = [full[i] for i in ((2, 3) if channel_index == 1 else (1, 2))]
    if min(spatial) < 1:
        raise ValueError(f"rate must be positive, got {rate}")
    if max(spatial) > 1 and max(steps) > 1:
        raise ValueError(f"When dilation rate is greater than 1, then all values of strides must be 1. "
                         f"Received: `dilation rate` {spatial} and `strides` {steps}")
    return full


def depthwise_conv2d(input: Any, filter: Any, strides: Any, padding: Any, rate: Any = None,  # noqa: A002
                     name: Optional[str] = None, data_format: Optional[str] = None,
                     dilations: Any = None) -> Any:
    """Depthwise 2-D convolution with optional atrous `rate` [rate_height, rate_width]."""
    with name_scope(name, "depthwise", [input, filter]) as scope:
        x = convert_to_tensor(input, name="tensor_in")
        f = convert_to_tensor(filter, name="filter_in")
        full_rate = _rate(rate, dilations, strides, data_format)
        return apply_op(DepthwiseConv2dNative, name=scope, input=x, filter=f,
                        **window_kwargs(strides, padding, data_format, full_rate))


def separable_conv2d(input: Any, depthwise_filter: Any, pointwise_filter: Any, strides: Any,  # noqa: A002
                     padding: Any, rate: Any = None, name: Optional[str] = None,
                     data_format: Optional[str] = None, dilations: Any = None) -> Any:
    """A depthwise convolution followed by a 1x1 convolution mixing the channels."""
    with name_scope(name, "separable_conv2d", [input, depthwise_filter, pointwise_filter]) as scope:
        x = convert_to_tensor(input, name="tensor_in")
        dw = convert_to_tensor(depthwise_filter, name="depthwise_filter")
        pw = convert_to_tensor(pointwise_filter, name="pointwise_filter")
        if pw.shape.ndims is not None:
            if pw.shape.ndims != 4:
                raise ValueError(f"Shape must be rank 4 but is rank {pw.shape.ndims} (pointwise_filter)")
            if pw.shape[0].value not in (1, None) or pw.shape[1].value not in (1, None):
                raise ValueError(f"pointwise_filter must be [1, 1, in, out]; got shape {pw.shape}")
        full_rate = _rate(rate, dilations, strides, data_format)
        depthwise = apply_op(DepthwiseConv2dNative, name="depthwise", input=x, filter=dw,
                             **window_kwargs(strides, padding, data_format, full_rate))
        return conv_ops.conv2d(depthwise, pw, [1, 1, 1, 1], "VALID", data_format=data_format or "NHWC",
                               name=scope)
