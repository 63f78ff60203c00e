"""3-D convolution: Conv3D, Conv3DBackpropInputV2 and Conv3DBackpropFilterV2, and the TF1 wrappers
tf.nn.conv3d, conv3d_backprop_filter_v2, conv3d_transpose. The gradients are in grad.py. (The module
is not called conv3d.py so that it does not collide with the package's `conv3d` function.)

Inputs are NDHWC or NCDHW (TF's CPU kernels take NDHWC only; NCDHW is transposed in and out
here, which tf.layers' channels_first needs), filters [depth, height, width, in, out]; SAME and
VALID padding, strides, and dilations (TF's CPU kernel refuses dilations > 1; allowed here). The
arithmetic is kernels/window3d.py's loop over the filter's taps.
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
from tensorweave.ops.kernels.conv_geometry import get_sequence, static_window_output
from tensorweave.ops.kernels.window3d import from_ndhwc, Geometry3D, ndhwc_shape, to_ndhwc

__all__ = ["conv3d", "conv3d_backprop_filter_v2", "conv3d_backprop_input_v2", "conv3d_transpose"]

_ATTRS = ["strides: list(int) >= 5", "padding: {'SAME', 'VALID'}",
          "data_format: {'NDHWC', 'NCDHW'} = 'NDHWC'", "dilations: list(int) = [1, 1, 1, 1, 1]"]
_T = "T: {float16, float32, float64}"


def spatial_of(values: Any, data_format: str) -> tuple[int, int, int]:
    """The (depth, height, width) entries of a 5-element strides/ksize/dilations list."""
    values = list(values)
    return tuple(values[2:5] if data_format == "NCDHW" else values[1:4])  # type: ignore[return-value]


def outer_of(values: Any, data_format: str) -> tuple[int, int]:
    values = list(values)
    return (values[0], values[1] if data_format == "NCDHW" else values[4])


def check_lists(get_attr: Callable[[str], Any], names: tuple[str, ...], fail: Callable[[str], Exception]) -> None:
    """TF's checks: five entries, and no window/stride on the batch or channel dimension."""
    data_format = get_attr("data_format")
    for name in names:
        values = list(get_attr(name))
        if len(values) != 5:
            raise fail(f"{name} must have 5 elements, got {len(values)}")
        if name != "ksize" and min(values) < 1:
            raise fail(f"{name} must be positive, got {values}")
        if outer_of(values, data_format) != (1, 1):
            raise fail(f"Current implementation does not yet support {name} in the batch and depth "
                       f"dimensions.")


def with_rank5(op: Operation, shape: TensorShape) -> TensorShape:
    if shape.ndims is None:
        return unknown_shape(5)
    if shape.ndims != 5:
        raise shape_error(op, f"Shape must be rank 5 but is rank {shape.ndims}")
    return shape


def static_window_shape(op: Operation, x: TensorShape, window: tuple[Dimension, ...], out_c: Dimension,
                        dilations: tuple[int, int, int] = (1, 1, 1)) -> TensorShape:
    """The output shape of a 3-D window op on input shape `x` (op attrs give strides, padding)."""
    fmt = op._get_attr("data_format")
    strides = spatial_of(op._get_attr("strides"), fmt)
    dims = x.dims
    spatial_in = dims[2:5] if fmt == "NCDHW" else dims[1:4]
    try:
        out = [static_window_output(s, k, st, d, op._get_attr("padding"))
               for s, k, st, d in zip(spatial_in, window, strides, dilations)]
    except ValueError as e:
        raise shape_error(op, str(e)) from None
    return TensorShape([dims[0], out_c] + out if fmt == "NCDHW" else [dims[0]] + out + [out_c])


def _conv3d_shape(op: Operation) -> list[TensorShape]:
    check_lists(op._get_attr, ("strides", "dilations"), lambda m: shape_error(op, m))
    x, f = with_rank5(op, op.inputs[0].shape), with_rank5(op, op.inputs[1].shape)
    fmt = op._get_attr("data_format")
    in_c = x.dims[1] if fmt == "NCDHW" else x.dims[4]
    if in_c.value is not None and f.dims[3].value is not None and in_c.value != f.dims[3].value:
        raise shape_error(op, f"Input depth {in_c.value} does not match the filter's input depth "
                              f"{f.dims[3].value}")
    return [static_window_shape(op, x, tuple(f.dims[:3]), f.dims[4],
                                spatial_of(op._get_attr("dilations"), fmt))]


def _sizes_shape(index: int) -> Callable[[Operation], list[TensorShape]]:
    def shape_fn(op: Operation) -> list[TensorShape]:
        check_lists(op._get_attr, ("strides", "dilations"), lambda m: shape_error(op, m))
        shape = tensor_util.constant_value_as_shape(op.inputs[index])
        if shape.ndims is not None and shape.ndims != 5:
            raise shape_error(op, f"{op.op_def.inputs[index].name} must have 5 elements, got {shape.ndims}")
        return [shape if shape.ndims is not None else unknown_shape(5)]
    return shape_fn


Conv3D = define_op("Conv3D", inputs=["input: T", "filter: T"], outputs=["output: T"],
                   attrs=[_T] + _ATTRS, shape_fn=_conv3d_shape, expensive=True)
Conv3DBackpropInputV2 = define_op(
    "Conv3DBackpropInputV2", inputs=["input_sizes: Tshape", "filter: T", "out_backprop: T"],
    outputs=["output: T"], attrs=[_T] + _ATTRS + ["Tshape: {int32, int64} = int32"],
    shape_fn=_sizes_shape(0), expensive=True)
Conv3DBackpropFilterV2 = define_op(
    "Conv3DBackpropFilterV2", inputs=["input: T", "filter_sizes: int32", "out_backprop: T"],
    outputs=["output: T"], attrs=[_T] + _ATTRS, shape_fn=_sizes_shape(1), expensive=True)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------
class _Conv3DNode:
    """A Conv3D-family node: attrs read once, geometry cached per input shape."""

    def __init__(self, ctx: KernelContext) -> None:
        check_lists(ctx.attr, ("strides", "dilations"), lambda m: unimplemented(m) if "batch" in m else invalid(m))
        self.fmt = ctx.attr("data_format")
        self.strides = spatial_of(ctx.attr("strides"), self.fmt)
        self.dilations = spatial_of(ctx.attr("dilations"), self.fmt)
        self.padding = ctx.attr("padding")
        self.dtype = ctx.output_dtypes[0].as_numpy_dtype
        self.work = np.float32 if np.dtype(self.dtype) == np.float16 else self.dtype
        self.cache: dict[tuple, Geometry3D] = {}

    def geometry(self, x_shape: tuple[int, ...], f_shape: tuple[int, ...]) -> Geometry3D:
        key = (x_shape, f_shape)
        geometry = self.cache.get(key)
        if geometry is None:
            if len(f_shape) != 5:
                raise invalid(f"filter must be 5-dimensional, got {format_dims(f_shape)}")
            nd = ndhwc_shape(x_shape, self.fmt)
            if nd[4] != f_shape[3]:
                raise invalid(f"Input depth must be equal to filter depth: {nd[4]} vs {f_shape[3]}")
            geometry = self.cache[key] = Geometry3D.make(nd, f_shape[:3], self.strides, self.dilations,
                                                         self.padding)
        return geometry

    def arg(self, x: np.ndarray, spatial: bool = True) -> np.ndarray:
        x = to_ndhwc(x, self.fmt) if spatial else x
        return x.astype(self.work, copy=False)

    def result(self, y: np.ndarray, spatial: bool = True) -> np.ndarray:
        y = from_ndhwc(y, self.fmt) if spatial else y
        return y.astype(self.dtype, copy=False)

    def check_dy(self, geometry: Geometry3D, f_shape: tuple[int, ...], dy_shape: tuple[int, ...]) -> None:
        want = geometry.out_shape + (f_shape[4],)
        got = ndhwc_shape(dy_shape, self.fmt)
        if got != want:
            raise invalid(f"out_backprop has shape {format_dims(dy_shape)}, but the convolution's output "
                          f"has shape {format_dims(from_shape(want, self.fmt))}")


def from_shape(nd: tuple[int, ...], fmt: str) -> tuple[int, ...]:
    return (nd[0], nd[4]) + nd[1:4] if fmt == "NCDHW" else nd


@Conv3D.kernel()
def _conv3d_kernel(ctx: KernelContext) -> Callable[..., Any]:
    node = _Conv3DNode(ctx)

    def compute(x: np.ndarray, f: np.ndarray) -> np.ndarray:
        geometry = node.geometry(x.shape, f.shape)
        return node.result(geometry.conv(node.arg(x), node.arg(f, False)))
    return compute


def _sizes(value: np.ndarray, what: str) -> tuple[int, ...]:
    value = np.asarray(value)
    if value.shape != (5,):
        raise invalid(f"{what} must be a 5-element vector, got shape {format_dims(value.shape)}")
    return tuple(int(v) for v in value)


@Conv3DBackpropInputV2.kernel()
def _conv3d_input_grad_kernel(ctx: KernelContext) -> Callable[..., Any]:
    node = _Conv3DNode(ctx)

    def compute(sizes: np.ndarray, f: np.ndarray, dy: np.ndarray) -> np.ndarray:
        geometry = node.geometry(_sizes(sizes, "input_sizes"), f.shape)
        node.check_dy(geometry, f.shape, dy.shape)
        return node.result(geometry.conv_input_grad(node.arg(dy), node.arg(f, False)))
    return compute


@Conv3DBackpropFilterV2.kernel()
def _conv3d_filter_grad_kernel(ctx: KernelContext) -> Callable[..., Any]:
    node = _Conv3DNode(ctx)

    def compute(x: np.ndarray, sizes: np.ndarray, dy: np.ndarray) -> np.ndarray:
        f_shape = _sizes(sizes, "filter_sizes")
        geometry = node.geometry(x.shape, f_shape)
        node.check_dy(geometry, f_shape, dy.shape)
        grad = geometry.conv_filter_grad(node.arg(x), node.arg(dy), f_shape)
        return node.result(grad, spatial=False)
    return compute


# ---------------------------------------------------------------------------------------------
# TF1 wrappers
# ---------------------------------------------------------------------------------------------
def _lists(strides: Any, dilations: Any, data_format: str) -> dict[str, Any]:
    channel_index = 1 if data_format == "NCDHW" else 4
    return {"strides": get_sequence(strides, 3, channel_index, "strides"),
            "dilations": get_sequence(dilations, 3, channel_index, "dilations"), "data_format": data_format}


def conv3d(input: Any, filter: Any = None, strides: Any = None, padding: Any = None,  # noqa: A002
           data_format: str = "NDHWC", dilations: Any = (1, 1, 1, 1, 1), name: Optional[str] = None,
           filters: Any = None) -> Any:
    """3-D convolution of a 5-D `input` ([batch, depth, height, width, channels] for NDHWC) with a
    [depth, height, width, in, out] filter; `strides` has 5 entries (1 for batch and channels)."""
    if filters is not None:
        if filter is not None:
            raise ValueError("Cannot specify both 'filter' and 'filters'")
        filter = filters  # noqa: A001
    with name_scope(name, "Conv3D", [input, filter]) as scope:
        return apply_op(Conv3D, name=scope, input=convert_to_tensor(input, name="input"),
                        filter=convert_to_tensor(filter, name="filter"), padding=padding,
                        **_lists(strides, dilations, data_format))


def conv3d_backprop_input_v2(input_sizes: Any, filter: Any, out_backprop: Any, strides: Any,  # noqa: A002
                             padding: str, data_format: str = "NDHWC", dilations: Any = (1, 1, 1, 1, 1),
                             name: Optional[str] = None) -> Any:
    """The gradient of conv3d with respect to its input, of shape `input_sizes`."""
    return apply_op(Conv3DBackpropInputV2, name=name, input_sizes=input_sizes, filter=filter,
                    out_backprop=out_backprop, padding=padding, **_lists(strides, dilations, data_format))


def conv3d_backprop_filter_v2(input: Any, filter_sizes: Any, out_backprop: Any, strides: Any,  # noqa: A002
                              padding: str, data_format: str = "NDHWC", dilations: Any = (1, 1, 1, 1, 1),
                              name: Optional[str] = None) -> Any:
    """The gradient of conv3d with respect to its filter, of shape `filter_sizes`."""
    return apply_op(Conv3DBackpropFilterV2, name=name, input=input, filter_sizes=filter_sizes,
                    out_backprop=out_backprop, padding=padding, **_lists(strides, dilations, data_format))


def conv3d_transpose(value: Any, filter: Any = None, output_shape: Any = None, strides: Any = None,  # noqa: A002
                     padding: str = "SAME", data_format: str = "NDHWC", name: Optional[str] = None,
                     input: Any = None, filters: Any = None, dilations: Any = None) -> Any:  # noqa: A002
    """The transpose of conv3d (its input gradient): `filter` is [depth, height, width, out, in]
    and `output_shape` the 5-element shape of the result."""
    value = input if input is not None else value
    filter = filters if filters is not None else filter  # noqa: A001
    with name_scope(name, "conv3d_transpose", [value, filter, output_shape]) as scope:
        value = convert_to_tensor(value, name="value")
        filter = convert_to_tensor(filter, name="filter")  # noqa: A001
        if isinstance(output_shape, (list, tuple)):
            output_shape = np.asarray(output_shape, np.int32)
        return apply_op(Conv3DBackpropInputV2, name=scope, input_sizes=output_shape, filter=filter,
                        out_backprop=value, padding=padding, **_lists(strides, dilations, data_format))
