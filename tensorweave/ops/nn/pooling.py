"""Pooling: MaxPool, MaxPoolV2, AvgPool and their gradient ops (MaxPoolGrad, MaxPoolGradV2,
AvgPoolGrad, MaxPoolGradGrad, MaxPoolGradGradV2), and the TF1 wrappers tf.nn.max_pool, max_pool2d,
max_pool_v2, avg_pool, avg_pool2d. TF's gradients of each are in grad.py.

Semantics are TF's CPU kernels': max pooling ignores NaN (np.fmax) and pads with -inf; the
gradient goes to the first maximum of each window in row-major order, recomputed from
`orig_input` (the values of `orig_output` are not used, so its gradient is zero, as TF says);
average pooling divides by the number of real (unpadded) elements of each window. Kernels work
in NHWC over strided views, one NumPy pass per window tap; windows that tile the input (stride
equal to the window, no padding: the 2x2/2 pooling of most CNNs) take a reshape path.
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
from tensorweave.framework.tensor_shape import Dimension, TensorShape
from tensorweave.ops._util import shape_error
from tensorweave.ops.kernels.conv_geometry import (
    convert_padding, Geometry, get_sequence, node_window_attrs, spatial_dims, static_output_shape,
    window_attrs, WindowAttrs)
from tensorweave.ops._util import invalid, unimplemented
from tensorweave.ops.nn.conv import LayoutIO, PlanCache, sizes_shape, with_rank4
from tensorweave.ops._util import format_dims
from tensorweave.ops.kernels.intra_op import ChunkRunner
from tensorweave.ops.kernels.pooling import PoolPlan

__all__ = ["max_pool", "max_pool2d", "max_pool_v2", "avg_pool", "avg_pool2d"]

_MAX_TYPES = "{float16, float32, float64, int32, int64, uint8, int16, int8, uint16}"
_GRAD_TYPES = "{float16, float32, float64, int32, int64, uint8, int16, int8, uint16, uint32, uint64}"
_AVG_TYPES = "{float16, float32, float64}"
_FORMAT = "data_format: {'NHWC', 'NCHW'} = 'NHWC'"
_LISTS = ["ksize: list(int) >= 4", "strides: list(int) >= 4"]
_EXPLICIT = ["padding: {'SAME', 'VALID', 'EXPLICIT'}", "explicit_paddings: list(int) = []"]
_PLAIN = ["padding: {'SAME', 'VALID'}"]


# ---------------------------------------------------------------------------------------------
# Shape functions
# ---------------------------------------------------------------------------------------------
def _names(op_def_attrs: Any) -> tuple[str, ...]:
    return ("ksize", "explicit_paddings") if "explicit_paddings" in op_def_attrs else ("ksize",)


def _pool_output(op: Operation, attrs: WindowAttrs, x: TensorShape) -> TensorShape:
    if attrs.outer_window != (1, 1) or attrs.outer_strides != (1, 1):
        return TensorShape([None] * 4)  # the kernel rejects it with TF's error
    _, _, c_axis = spatial_dims(attrs.data_format)
    window = (Dimension(attrs.window[0]), Dimension(attrs.window[1]))
    if attrs.padding == "EXPLICIT" and (max(attrs.explicit[0:2]) >= attrs.window[0]
                                        or max(attrs.explicit[2:4]) >= attrs.window[1]):
        raise shape_error(op, "The size of the explicit paddings cannot be greater than or equal to the "
                              "sliding window size")
    return static_output_shape(op, attrs, x, window, x.dims[c_axis])


def _pool_shape(op: Operation) -> list[TensorShape]:
    x = with_rank4(op, op.inputs[0].shape)
    attrs = node_window_attrs(op._get_attr, op.type, lambda m: shape_error(op, m), _names(op.op_def.attrs))
    return [_pool_output(op, attrs, x)]


def _const_list(op: Operation, index: int) -> Optional[list[int]]:
    value = tensor_util.constant_value(op.inputs[index])
    return None if value is None else [int(v) for v in np.asarray(value).reshape(-1)]


def _pool_v2_shape(op: Operation) -> list[TensorShape]:
    x = with_rank4(op, op.inputs[0].shape)
    ksize, strides = _const_list(op, 1), _const_list(op, 2)
    if ksize is None or strides is None:
        _, _, c_axis = spatial_dims(op._get_attr("data_format"))
        dims: list[Any] = [x.dims[0], None, None, None]
        dims[c_axis] = x.dims[c_axis]
        return [TensorShape(dims)]
    attrs = window_attrs(op.type, op._get_attr("data_format"), op._get_attr("padding"), strides,
                         lambda m: shape_error(op, m), ksize=ksize)
    return [_pool_output(op, attrs, x)]


def _like_input(index: int) -> Callable[[Operation], list[TensorShape]]:
    def shape_fn(op: Operation) -> list[TensorShape]:
        return [with_rank4(op, op.inputs[index].shape)]
    return shape_fn


def _avg_grad_shape(op: Operation) -> list[TensorShape]:
    sizes = sizes_shape(op, 0)
    return [sizes if sizes.ndims == 4 else TensorShape([None] * 4)]


MaxPool = define_op("MaxPool", inputs=["input: T"], outputs=["output: T"],
                    attrs=[f"T: {_MAX_TYPES} = float32"] + _LISTS + _EXPLICIT + [_FORMAT],
                    shape_fn=_pool_shape)
MaxPoolV2 = define_op("MaxPoolV2", inputs=["input: T", "ksize: int32", "strides: int32"], outputs=["output: T"],
                      attrs=[f"T: {_MAX_TYPES} = float32"] + _PLAIN + [_FORMAT], shape_fn=_pool_v2_shape)
AvgPool = define_op("AvgPool", inputs=["value: T"], outputs=["output: T"],
                    attrs=_LISTS + _PLAIN + [_FORMAT, f"T: {_AVG_TYPES}"], shape_fn=_pool_shape)
MaxPoolGrad = define_op("MaxPoolGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
                        outputs=["output: T"],
                        attrs=_LISTS + _EXPLICIT + [_FORMAT, f"T: {_GRAD_TYPES} = float32"],
                        shape_fn=_like_input(0))
MaxPoolGradV2 = define_op("MaxPoolGradV2", inputs=["orig_input: T", "orig_output: T", "grad: T",
                                                   "ksize: int32", "strides: int32"],
                          outputs=["output: T"], attrs=_PLAIN + [_FORMAT, f"T: {_GRAD_TYPES} = float32"],
                          shape_fn=_like_input(0))
AvgPoolGrad = define_op("AvgPoolGrad", inputs=["orig_input_shape: int32", "grad: T"], outputs=["output: T"],
                        attrs=_LISTS + _PLAIN + [_FORMAT, f"T: {_AVG_TYPES}"], shape_fn=_avg_grad_shape)
MaxPoolGradGrad = define_op("MaxPoolGradGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
                            outputs=["output: T"], attrs=_LISTS + _PLAIN + [_FORMAT, f"T: {_GRAD_TYPES}"],
                            shape_fn=_like_input(1))
MaxPoolGradGradV2 = define_op("MaxPoolGradGradV2", inputs=["orig_input: T", "orig_output: T", "grad: T",
                                                           "ksize: int32", "strides: int32"],
                              outputs=["output: T"], attrs=_PLAIN + [_FORMAT, f"T: {_GRAD_TYPES}"],
                              shape_fn=_like_input(1))


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------
def _checked(attrs: WindowAttrs) -> WindowAttrs:
    if attrs.outer_window[0] != 1 or attrs.outer_strides[0] != 1:
        raise unimplemented("Pooling is not yet supported on the batch dimension.")
    if attrs.outer_window[1] != 1 or attrs.outer_strides[1] != 1:
        raise unimplemented("Pooling across depth is not supported by this CPU kernel; pool over "
                            "height and width only (ksize and strides 1 in the depth dimension).")
    return attrs


class _NodePools:
    """A pooling node's plans: attrs fixed at build time (V1 ops) or read from the ksize and
    strides inputs each step (V2 ops), and plans cached per input shape."""

    def __init__(self, ctx: KernelContext, kind: str, v2: bool) -> None:
        self.op_type = ctx.op.type
        names = () if v2 else _names(ctx.op.op_def.attrs)
        self.data_format = ctx.attr("data_format")
        self.padding = ctx.attr("padding")
        self.io = LayoutIO(self.data_format, ctx.output_dtypes[0].as_numpy_dtype)
        self.attrs = None if v2 else _checked(node_window_attrs(ctx.attr, self.op_type, invalid, names))
        self.kind = kind
        self.runner = ChunkRunner.for_kernel(ctx, uses_blas=False)
        self.plans = PlanCache(self._make)

    def _make(self, shape: tuple[int, ...], ksize: Optional[tuple[int, ...]],
              strides: Optional[tuple[int, ...]]) -> PoolPlan:
        attrs = self.attrs
        if attrs is None:
            attrs = _checked(window_attrs(self.op_type, self.data_format, self.padding, strides, invalid,
                                          ksize=ksize))
        if len(shape) != 4:
            raise invalid(f"{self.op_type}: input must be 4-dimensional, got {format_dims(shape)}")
        nhwc = self.io.to_nhwc_shape(shape)
        if attrs.padding == "EXPLICIT" and (max(attrs.explicit[0:2]) >= attrs.window[0]
                                            or max(attrs.explicit[2:4]) >= attrs.window[1]):
            raise invalid(f"{self.op_type}: explicit paddings must be smaller than the sliding window")
        return PoolPlan(Geometry.make(attrs, nhwc, attrs.window), self.kind, self.runner)

    def plan(self, shape: tuple[int, ...], ksize: Any = None, strides: Any = None) -> PoolPlan:
        if ksize is not None:
            ksize, strides = tuple(int(v) for v in ksize.reshape(-1)), tuple(int(v) for v in strides.reshape(-1))
        return self.plans.get(tuple(shape), ksize, strides)


def _pool_kernel(kind: str, v2: bool) -> Callable[[KernelContext], Callable[..., Any]]:
    def build(ctx: KernelContext) -> Callable[..., Any]:
        node = _NodePools(ctx, kind, v2)
        io = node.io
        if v2:
            return lambda x, ksize, strides: io.result(node.plan(x.shape, ksize, strides).forward(io.arg(x)))
        return lambda x: io.result(node.plan(x.shape).forward(io.arg(x)))
    return build


def _max_grad_kernel(v2: bool, second_order: bool) -> Callable[[KernelContext], Callable[..., Any]]:
    def build(ctx: KernelContext) -> Callable[..., Any]:
        node = _NodePools(ctx, "max", v2)
        io = node.io

        def compute(x: np.ndarray, y: np.ndarray, grad: np.ndarray, ksize: Any = None, strides: Any = None) -> Any:
            plan = node.plan(x.shape, ksize, strides)
            if second_order:
                _check_shape(node.op_type, "grad", grad.shape, x.shape)
                _check_shape(node.op_type, "orig_output", y.shape, io_shape(io, plan.out_shape))
                return io.result(plan.max_grad_grad(io.arg(x), io.arg(grad)))
            _check_shape(node.op_type, "grad", grad.shape, io_shape(io, plan.out_shape))
            _check_shape(node.op_type, "orig_output", y.shape, io_shape(io, plan.out_shape))
            return io.result(plan.max_grad(io.arg(x), io.arg(y), io.arg(grad)))

        return compute
    return build


def io_shape(io: LayoutIO, nhwc: Sequence[int]) -> tuple[int, ...]:
    n, h, w, c = nhwc
    return (n, c, h, w) if io.nchw else (n, h, w, c)


def _check_shape(op_type: str, what: str, got: Sequence[int], want: Sequence[int]) -> None:
    if tuple(got) != tuple(want):
        raise invalid(f"{op_type}: {what} must have shape {format_dims(want)}, got {format_dims(got)}")


MaxPool.kernel()(_pool_kernel("max", False))
MaxPoolV2.kernel()(_pool_kernel("max", True))
AvgPool.kernel()(_pool_kernel("avg", False))
MaxPoolGrad.kernel()(_max_grad_kernel(False, False))
MaxPoolGradV2.kernel()(_max_grad_kernel(True, False))
MaxPoolGradGrad.kernel()(_max_grad_kernel(False, True))
MaxPoolGradGradV2.kernel()(_max_grad_kernel(True, True))


@AvgPoolGrad.kernel()
def _avg_pool_grad_kernel(ctx: KernelContext) -> Callable[..., Any]:
    node = _NodePools(ctx, "avg", False)
    io = node.io

    def compute(shape: np.ndarray, grad: np.ndarray) -> np.ndarray:
        shape = np.asarray(shape)
        if shape.shape != (4,):
            raise invalid(f"{node.op_type}: orig_input_shape must be a 4-element vector, got "
                          f"{format_dims(shape.shape)}")
        plan = node.plan(tuple(int(v) for v in shape))
        _check_shape(node.op_type, "grad", grad.shape, io_shape(io, plan.out_shape))
        return io.result(plan.avg_grad(io.arg(grad)))

    return compute


# ---------------------------------------------------------------------------------------------
# TF1 wrappers
# ---------------------------------------------------------------------------------------------
def _pool_kwargs(ksize: Any, strides: Any, padding: Any, data_format: Optional[str],
                 explicit_ok: bool) -> dict[str, Any]:
    data_format = data_format or "NHWC"
    channel_index = 1 if data_format.startswith("NC") else 3
    ksize = get_sequence(ksize, 2, channel_index, "ksize")
    if 0 in ksize:
        raise ValueError(f"`ksize` cannot be zero. Received: ksize={ksize}")
    padding, explicit = convert_padding(padding)
    if padding == "EXPLICIT" and not explicit_ok:
        raise ValueError("avg_pool does not support explicit padding; use 'SAME' or 'VALID'")
    kwargs = {"ksize": ksize, "strides": get_sequence(strides, 2, channel_index, "strides"),
              "padding": padding, "data_format": data_format}
    if explicit:
        kwargs["explicit_paddings"] = explicit
    return kwargs


def max_pool(value: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",
             name: Optional[str] = None, input: Any = None) -> Any:  # noqa: A002
    """Max pooling of a 4-D `value`; `ksize` and `strides` are ints or lists of 1, 2 or 4 ints,
    `padding` "SAME", "VALID" or explicit [before, after] pairs."""
    if input is not None and value is not None:
        raise ValueError("Cannot specify both 'input' and 'value'")
    value = input if input is not None else value
    with name_scope(name, "MaxPool", [value]) as scope:
        value = convert_to_tensor(value, name="input")  # keeps a NumPy input's dtype, as TF's wrapper
        return apply_op(MaxPool, name=scope, input=value,
                        **_pool_kwargs(ksize, strides, padding, data_format, True))


def max_pool2d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NHWC",  # noqa: A002
               name: Optional[str] = None) -> Any:
    """Max pooling of a 4-D `input` (TF2's argument order)."""
    return max_pool(input, ksize, strides, padding, data_format, name)


def max_pool_v2(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NHWC",  # noqa: A002
                name: Optional[str] = None) -> Any:
    """MaxPoolV2: max pooling whose `ksize` and `strides` are 4-element int32 tensors."""
    with name_scope(name, "MaxPoolV2", [input]) as scope:
        return apply_op(MaxPoolV2, name=scope, input=convert_to_tensor(input, name="input"), ksize=ksize,
                        strides=strides, padding=padding, data_format=data_format)


def avg_pool(value: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NHWC",
             name: Optional[str] = None, input: Any = None) -> Any:  # noqa: A002
    """Average pooling of a 4-D `value`; padded positions are not counted in the average."""
    if input is not None and value is not None:
        raise ValueError("Cannot specify both 'input' and 'value'")
    value = input if input is not None else value
    with name_scope(name, "AvgPool", [value]) as scope:
        value = convert_to_tensor(value, name="input")
        return apply_op(AvgPool, name=scope, value=value,
                        **_pool_kwargs(ksize, strides, padding, data_format, False))


avg_pool2d = avg_pool  # TF1: tf.nn.avg_pool2d is tf.nn.avg_pool, one function
