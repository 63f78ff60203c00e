"""3-D pooling: MaxPool3D, AvgPool3D and their gradient ops (MaxPool3DGrad, AvgPool3DGrad,
MaxPool3DGradGrad), and the TF1 wrappers tf.nn.max_pool3d and avg_pool3d. TF's gradients of each
are in grad.py.

Semantics are TF's: max pooling ignores padding (and NaN), and its gradient goes to the first
maximum of each window in row-major order; average pooling divides by the number of real
(unpadded) inputs of each window. float64 is accepted beside TF's float16/float32 (for the
gradient checks); NCDHW is transposed to NDHWC and back.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import tensor_util
from tensorweave.framework.graph import name_scope, Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorweave.ops._util import format_dims, invalid, shape_error, unimplemented
from tensorweave.ops.kernels.conv_geometry import get_sequence
from tensorweave.ops.kernels.window3d import from_ndhwc, Geometry3D, ndhwc_shape, to_ndhwc
from tensorweave.ops.nn.convolution3d import check_lists, spatial_of, static_window_shape, with_rank5

__all__ = ["max_pool3d", "avg_pool3d"]

_ATTRS = ["ksize: list(int) >= 5", "strides: list(int) >= 5", "padding: {'SAME', 'VALID'}",
          "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'"]
_T = "T: {float16, float32, float64}"


def _pool3d_shape(op: Operation) -> list[TensorShape]:
    check_lists(op._get_attr, ("ksize", "strides"), lambda m: shape_error(op, m))
    x = with_rank5(op, op.inputs[0].shape)
    fmt = op._get_attr("data_format")
    window = tuple(Dimension(k) for k in spatial_of(op._get_attr("ksize"), fmt))
    return [static_window_shape(op, x, window, x.dims[1] if fmt == "NCDHW" else x.dims[4])]


def _like_input(index: int) -> Callable[[Operation], list[TensorShape]]:
    def shape_fn(op: Operation) -> list[TensorShape]:
        return [with_rank5(op, op.inputs[index].shape)]
    return shape_fn


def _avg_grad_shape(op: Operation) -> list[TensorShape]:
    sizes = tensor_util.constant_value_as_shape(op.inputs[0])
    return [sizes if sizes.ndims == 5 else unknown_shape(5)]


MaxPool3D = define_op("MaxPool3D", inputs=["input: T"], outputs=["output: T"], attrs=_ATTRS + [_T],
                      shape_fn=_pool3d_shape)
AvgPool3D = define_op("AvgPool3D", inputs=["input: T"], outputs=["output: T"], attrs=_ATTRS + [_T],
                      shape_fn=_pool3d_shape)
MaxPool3DGrad = define_op("MaxPool3DGrad", inputs=["orig_input: TInput", "orig_output: TInput", "grad: T"],
                          outputs=["output: T"],
                          attrs=_ATTRS + [_T + " = float32", "TInput: {float16, float32, float64} = float32"],
                          shape_fn=_like_input(0))
AvgPool3DGrad = define_op("AvgPool3DGrad", inputs=["orig_input_shape: int32", "grad: T"], outputs=["output: T"],
                          attrs=_ATTRS + [_T], shape_fn=_avg_grad_shape)
MaxPool3DGradGrad = define_op("MaxPool3DGradGrad", inputs=["orig_input: T", "orig_output: T", "grad: T"],
                              outputs=["output: T"], attrs=_ATTRS + [_T], shape_fn=_like_input(1))


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------
class _Pool3DNode:
    """A 3-D pooling node: attrs read once, geometry cached per input shape."""

    def __init__(self, ctx: KernelContext) -> None:
        check_lists(ctx.attr, ("ksize", "strides"), lambda m: unimplemented(m) if "batch" in m else invalid(m))
        self.fmt = ctx.attr("data_format")
        self.ksize = spatial_of(ctx.attr("ksize"), self.fmt)
        self.strides = spatial_of(ctx.attr("strides"), self.fmt)
        self.padding = ctx.attr("padding")
        self.cache: dict[tuple[int, ...], Geometry3D] = {}

    def geometry(self, shape: tuple[int, ...]) -> Geometry3D:
        geometry = self.cache.get(shape)
        if geometry is None:
            geometry = self.cache[shape] = Geometry3D.make(ndhwc_shape(shape, self.fmt), self.ksize,
                                                           self.strides, (1, 1, 1), self.padding)
        return geometry

    def check(self, what: str, got: tuple[int, ...], want_ndhwc: tuple[int, ...]) -> None:
        if ndhwc_shape(got, self.fmt) != tuple(want_ndhwc):
            raise invalid(f"{what} has shape {format_dims(got)}, which does not match the pooling's "
                          f"shapes (NDHWC {format_dims(want_ndhwc)})")


@MaxPool3D.kernel()
def _max_pool3d_kernel(ctx: KernelContext) -> Callable[..., Any]:
    node = _Pool3DNode(ctx)
    return lambda x: from_ndhwc(node.geometry(x.shape).max_pool(to_ndhwc(x, node.fmt)), node.fmt)


@AvgPool3D.kernel()
def _avg_pool3d_kernel(ctx: KernelContext) -> Callable[..., Any]:
    node = _Pool3DNode(ctx)
    return lambda x: from_ndhwc(node.geometry(x.shape).avg_pool(to_ndhwc(x, node.fmt)), node.fmt)


def _max_grad_kernel(second_order: bool) -> Callable[[KernelContext], Callable[..., Any]]:
    def build(ctx: KernelContext) -> Callable[..., Any]:
        node = _Pool3DNode(ctx)
        dtype = ctx.output_dtypes[0].as_numpy_dtype

        def compute(x: np.ndarray, y: np.ndarray, grad: np.ndarray) -> np.ndarray:
            g = node.geometry(x.shape)
            out_shape = g.out_shape + (g.in_shape[4],)
            node.check("orig_output", y.shape, out_shape)
            xs, ys, gs = (to_ndhwc(a, node.fmt) for a in (x, y, grad))
            if second_order:
                node.check("grad", grad.shape, g.in_shape)
                result = g.max_pool_grad_grad(xs, ys, gs.astype(dtype, copy=False))
            else:
                node.check("grad", grad.shape, out_shape)
                result = g.max_pool_grad(xs, ys, gs.astype(dtype, copy=False))
            return from_ndhwc(result, node.fmt)
        return compute
    return build


MaxPool3DGrad.kernel()(_max_grad_kernel(False))
MaxPool3DGradGrad.kernel()(_max_grad_kernel(True))


@AvgPool3DGrad.kernel()
def _avg_pool3d_grad_kernel(ctx: KernelContext) -> Callable[..., Any]:
    node = _Pool3DNode(ctx)

    def compute(shape: np.ndarray, grad: np.ndarray) -> np.ndarray:
        shape = np.asarray(shape)
        if shape.shape != (5,):
            raise invalid(f"orig_input_shape must be a 5-element vector, got {format_dims(shape.shape)}")
        g = node.geometry(tuple(int(v) for v in shape))
        node.check("grad", grad.shape, g.out_shape + (g.in_shape[4],))
        return from_ndhwc(g.avg_pool_grad(to_ndhwc(grad, node.fmt)), node.fmt)
    return compute


# ---------------------------------------------------------------------------------------------
# TF1 wrappers
# ---------------------------------------------------------------------------------------------
def _pool_kwargs(ksize: Any, strides: Any, padding: str, data_format: str) -> dict[str, Any]:
    channel_index = 1 if data_format == "NCDHW" else 4
    return {"ksize": get_sequence(ksize, 3, channel_index, "ksize"),
            "strides": get_sequence(strides, 3, channel_index, "strides"), "padding": padding,
            "data_format": data_format}


def max_pool3d(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NDHWC",  # noqa: A002
               name: Optional[str] = None) -> Any:
    """Max pooling of a 5-D `input` over depth, height and width."""
    with name_scope(name, "MaxPool3D", [input]) as scope:
        return apply_op(MaxPool3D, name=scope, input=convert_to_tensor(input, name="input"),
                        **_pool_kwargs(ksize, strides, padding, data_format))


def avg_pool3d(input: Any, ksize: Any, strides: Any, padding: str, data_format: str = "NDHWC",  # noqa: A002
               name: Optional[str] = None) -> Any:
    """Average pooling of a 5-D `input`; padded positions are not counted in the average."""
    with name_scope(name, "AvgPool3D", [input]) as scope:
        return apply_op(AvgPool3D, name=scope, input=convert_to_tensor(input, name="input"),
                        **_pool_kwargs(ksize, strides, padding, data_format))
