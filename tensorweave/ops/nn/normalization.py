"""Normalizations of `tf.nn`: the fused batch norm ops (FusedBatchNorm, FusedBatchNormV3 and
their grad ops), local response normalization (LRN, LRNGrad), and the composites moments,
batch_normalization and l2_normalize, built from ordinary ops as TensorFlow builds them.

Facts checked against TensorFlow: in training mode FusedBatchNorm normalizes with the biased
batch variance but returns the unbiased (Bessel-corrected) one as `batch_variance`, blended
with the running estimate when exponential_avg_factor != 1; reserve_space_1/2 hold the batch
mean and the biased variance, which the grad op reads back.

The grad ops differentiate again (second derivatives) through a composite of ordinary ops
whose own gradient the driver builds, as TF's _FusedBatchNormGradGrad does.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import array as array_ops, math as math_ops
from tensorweave.ops._util import shape_error
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.nn.grad import register
from tensorweave.ops.nn.cross_entropy import _is_zero
from tensorweave.ops._util import register_kernel as _kernel
from tensorweave.ops._util import invalid

__all__ = ["fused_batch_norm", "batch_normalization", "moments", "l2_normalize",
           "local_response_normalization", "lrn"]


# ---------------------------------------------------------------------------------------------
# FusedBatchNorm, FusedBatchNormV3 and their grad ops
# ---------------------------------------------------------------------------------------------
_BN_ATTRS = ["epsilon: float = 0.0001", "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "is_training: bool = true"]
_AVG_FACTOR = "exponential_avg_factor: float = 1.0"  # V3 only


def _channel_axis(op_or_format: Any) -> int:
    data_format = op_or_format if isinstance(op_or_format, str) else op_or_format.get_attr("data_format")
    return 1 if data_format == "NCHW" else 3


def _bn_shape(op: Any) -> list[TensorShape]:
    x = op.inputs[0].shape
    if x.ndims is not None and x.ndims != 4:
        raise shape_error(op, f"Shape must be rank 4 but is rank {x.ndims}")
    x = x if x.ndims is not None else unknown_shape(4)
    channels = x.dims[_channel_axis(op)]
    for t in op.inputs[1:3]:
        if t.shape.ndims is not None and t.shape.ndims != 1:
            raise shape_error(op, f"Shape must be rank 1 but is rank {t.shape.ndims}")
        if t.shape.ndims == 1:
            channels = _merge_dim(op, channels, t.shape.dims[0])
    vector = TensorShape([channels])
    n_reserve = len(op.outputs) - 3
    return [x, vector, vector, vector, vector] + [TensorShape([0])] * (n_reserve - 2)


def _merge_dim(op: Any, a: Any, b: Any) -> Any:
    try:
        return a.merge_with(b)
    except ValueError:
        raise shape_error(op, f"Dimensions must be equal, but are {a} and {b}") from None


def _bn_grad_shape(op: Any) -> list[TensorShape]:
    try:
        x = op.inputs[1].shape.merge_with(op.inputs[0].shape)
    except ValueError:
        raise shape_error(op, "y_backprop and x must have the same shape") from None
    x = x if x.ndims is not None else unknown_shape(4)
    if x.ndims != 4:
        raise shape_error(op, f"Shape must be rank 4 but is rank {x.ndims}")
    channels = x.dims[_channel_axis(op)]
    if op.inputs[2].shape.ndims == 1:
        channels = _merge_dim(op, channels, op.inputs[2].shape.dims[0])
    return [x, TensorShape([channels]), TensorShape([channels]), TensorShape([0]), TensorShape([0])]


# TF allows T in {half, bfloat16, float} and U = float; float64 is accepted too (for float64
# models and the float64 gradient checks).
FusedBatchNorm = define_op(
    "FusedBatchNorm", inputs=["x: T", "scale: T", "offset: T", "mean: T", "variance: T"],
    outputs=["y: T", "batch_mean: T", "batch_variance: T", "reserve_space_1: T", "reserve_space_2: T"],
    attrs=["T: {float32, float64}", *_BN_ATTRS], shape_fn=_bn_shape)
FusedBatchNormV3 = define_op(
    "FusedBatchNormV3", inputs=["x: T", "scale: U", "offset: U", "mean: U", "variance: U"],
    outputs=["y: T", "batch_mean: U", "batch_variance: U", "reserve_space_1: U", "reserve_space_2: U",
             "reserve_space_3: U"],
    attrs=["T: {float16, float32, float64}", "U: {float32, float64}", _AVG_FACTOR, *_BN_ATTRS],
    shape_fn=_bn_shape)
FusedBatchNormGrad = define_op(
    "FusedBatchNormGrad", inputs=["y_backprop: T", "x: T", "scale: T", "reserve_space_1: T",
                                  "reserve_space_2: T"],
    outputs=["x_backprop: T", "scale_backprop: T", "offset_backprop: T", "reserve_space_3: T",
             "reserve_space_4: T"],
    attrs=["T: {float32, float64}", *_BN_ATTRS], shape_fn=_bn_grad_shape)
FusedBatchNormGradV3 = define_op(
    "FusedBatchNormGradV3", inputs=["y_backprop: T", "x: T", "scale: U", "reserve_space_1: U",
                                    "reserve_space_2: U", "reserve_space_3: U"],
    outputs=["x_backprop: T", "scale_backprop: U", "offset_backprop: U", "reserve_space_4: U",
             "reserve_space_5: U"],
    attrs=["T: {float16, float32, float64}", "U: {float32, float64}", *_BN_ATTRS], shape_fn=_bn_grad_shape)


class _Layout:
    """Reduction axes and the broadcast shape of per-channel vectors for a data format."""

    def __init__(self, data_format: str) -> None:
        self.channel = _channel_axis(data_format)
        self.axes = tuple(i for i in range(4) if i != self.channel)
        self.nchw = data_format == "NCHW"

    def vec(self, v: Any) -> Any:
        return v.reshape(-1, 1, 1) if self.nchw else v

    def check(self, x: Any, *vectors: Any) -> None:
        if x.ndim != 4:
            raise invalid(f"input must be 4-dimensional{list(x.shape)}")
        channels = x.shape[self.channel]
        for v in vectors:
            if v.ndim != 1 or v.shape[0] != channels:
                raise invalid(f"scale, offset, mean and variance must be 1-D vectors of the channel "
                               f"dimension {channels}, got shape {list(v.shape)}")


def _bn_forward(ctx: Any) -> Callable:
    layout = _Layout(ctx.attr("data_format"))
    eps, training = ctx.attr("epsilon"), ctx.attr("is_training")
    factor = ctx.attrs.get("exponential_avg_factor", 1.0)
    u_dtype = ctx.output_dtypes[1].as_numpy_dtype
    t_dtype = ctx.output_dtypes[0].as_numpy_dtype
    xp, axes, vec, extra = ctx.xp, layout.axes, layout.vec, len(ctx.output_dtypes) - 5

    def compute(x: Any, scale: Any, offset: Any, mean: Any, variance: Any) -> tuple:
        layout.check(x, scale, offset)
        xu = x.astype(u_dtype, copy=False)
        if training:
            batch_mean = xu.mean(axis=axes)
            batch_var = xu.var(axis=axes)
            n = x.size // max(x.shape[layout.channel], 1)
            unbiased = batch_var * (n / max(n - 1, 1))
            if factor != 1.0:
                layout.check(x, mean, variance)
                out_mean = (1 - factor) * mean + factor * batch_mean
                out_var = (1 - factor) * variance + factor * unbiased
            else:
                out_mean, out_var = batch_mean, unbiased
        else:
            layout.check(x, mean, variance)
            batch_mean, batch_var = mean, variance
            out_mean, out_var = mean.copy(), variance.copy()
        multiplier = scale / xp.sqrt(batch_var + eps)
        y = (xu - vec(batch_mean)) * vec(multiplier) + vec(offset)
        reserve = (batch_mean.astype(u_dtype), batch_var.astype(u_dtype))
        return (y.astype(t_dtype, copy=False), out_mean.astype(u_dtype), out_var.astype(u_dtype),
                *reserve, *([xp.zeros(0, u_dtype)] * extra))

    return compute


def _bn_backward(ctx: Any) -> Callable:
    layout = _Layout(ctx.attr("data_format"))
    eps, training = ctx.attr("epsilon"), ctx.attr("is_training")
    u_dtype = ctx.output_dtypes[1].as_numpy_dtype
    t_dtype = ctx.output_dtypes[0].as_numpy_dtype
    xp, axes, vec = ctx.xp, layout.axes, layout.vec

    def compute(dy: Any, x: Any, scale: Any, mean: Any, variance: Any, *_reserve: Any) -> tuple:
        layout.check(x, scale, mean, variance)
        dy = dy.astype(u_dtype, copy=False)
        inv = 1.0 / xp.sqrt(variance + eps)
        x_hat = (x.astype(u_dtype, copy=False) - vec(mean)) * vec(inv)
        d_offset = dy.sum(axis=axes)
        d_scale = (dy * x_hat).sum(axis=axes)
        if training:
            n = x.size // max(x.shape[layout.channel], 1)
            dx = vec(scale * inv) * (dy - vec(d_offset / n) - x_hat * vec(d_scale / n))
        else:
            dx = dy * vec(scale * inv)
        empty = xp.zeros(0, u_dtype)
        return dx.astype(t_dtype, copy=False), d_scale.astype(u_dtype), d_offset.astype(u_dtype), empty, empty

    return compute


for _op in (FusedBatchNorm, FusedBatchNormV3):
    _kernel(_op)(_bn_forward)
for _op in (FusedBatchNormGrad, FusedBatchNormGradV3):
    _kernel(_op)(_bn_backward)


def _bn_attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in ("epsilon", "data_format", "is_training")}


def _per_channel(layout: _Layout, v: Any) -> Any:
    return array_ops.reshape(v, [-1, 1, 1]) if layout.nchw else v


def _batch_norm_grad(op: Any, dy: Any, d_mean: Any, d_var: Any, *_reserve: Any) -> list[Any]:
    """Gradients of y through the grad op; of the batch_mean / batch_variance outputs (which
    TF drops) and, in inference mode, of y with respect to mean and variance, as composites."""
    x, scale, offset, mean, variance = op.inputs
    attrs, layout = _bn_attrs(op), _Layout(op.get_attr("data_format"))
    grad_op = FusedBatchNormGradV3 if op.type == "FusedBatchNormV3" else FusedBatchNormGrad
    reserve = list(op.outputs[3:5]) if attrs["is_training"] else [mean, variance]
    if grad_op is FusedBatchNormGradV3:
        reserve.append(op.outputs[5])
    reserve_args = {f"reserve_space_{i + 1}": t for i, t in enumerate(reserve)}
    dx, d_scale, d_offset = apply_op(grad_op, y_backprop=dy, x=x, scale=scale, **reserve_args, **attrs)[:3]
    factor = op.get_attr("exponential_avg_factor") if op.type == "FusedBatchNormV3" else 1.0
    d_mean_in = d_var_in = None
    if not attrs["is_training"]:
        inv = math_ops.rsqrt(variance + attrs["epsilon"])
        dy_scaled = dy * _per_channel(layout, scale)
        d_mean_in = d_mean - math_ops.reduce_sum(dy_scaled, layout.axes) * inv
        centered = x - _per_channel(layout, mean)
        d_var_in = d_var - 0.5 * inv * inv * inv * math_ops.reduce_sum(dy_scaled * centered, layout.axes)
        return [dx, d_scale, d_offset, d_mean_in, d_var_in]
    if not (_is_zero(d_mean) and _is_zero(d_var)):
        n = math_ops.cast(array_ops.size(x) // array_ops.shape(x)[layout.channel], x.dtype.base_dtype)
        centered = x - _per_channel(layout, op.outputs[3])
        dx = dx + factor * (_per_channel(layout, d_mean) / n
                            + 2.0 * centered * _per_channel(layout, d_var) / math_ops.maximum(n - 1.0, 1.0))
    if factor != 1.0:
        d_mean_in, d_var_in = (1 - factor) * d_mean, (1 - factor) * d_var
    return [dx, d_scale, d_offset, d_mean_in, d_var_in]


register(FusedBatchNorm)(_batch_norm_grad)
register(FusedBatchNormV3)(_batch_norm_grad)


def _composite_batch_norm_grad(dy: Any, x: Any, scale: Any, mean: Any, variance: Any, epsilon: float,
                               layout: _Layout, training: bool) -> list[Any]:
    """The grad op's outputs from ordinary ops; in training mode the batch statistics are
    recomputed from x, so that differentiating this composite sees their dependence on x."""
    axes, scale_b = list(layout.axes), _per_channel(layout, scale)
    if training:
        mean = math_ops.reduce_mean(x, axes)
        variance = math_ops.reduce_mean(math_ops.squared_difference(
            x, array_ops.stop_gradient(_per_channel(layout, mean))), axes)
    inv = _per_channel(layout, math_ops.rsqrt(variance + epsilon))
    centered = x - _per_channel(layout, mean)
    d_offset = math_ops.reduce_sum(dy, axes)
    d_scale = math_ops.reduce_sum(dy * centered * inv, axes)
    if training:
        dx = scale_b * inv * (dy - math_ops.reduce_mean(dy, axes, keepdims=True)
                              - centered * inv * inv * math_ops.reduce_mean(dy * centered, axes, keepdims=True))
    else:
        dx = dy * scale_b * inv
    return [dx, d_scale, d_offset]


def _batch_norm_grad_grad(op: Any, ddx: Any, dd_scale: Any, dd_offset: Any, *_unused: Any) -> list[Any]:
    from tensorweave.gradients import gradients  # the driver sits above ops/
    dy, x, scale, mean, variance = op.inputs[:5]
    training = op.get_attr("is_training")
    outputs = _composite_batch_norm_grad(dy, x, scale, mean, variance, op.get_attr("epsilon"),
                                         _Layout(op.get_attr("data_format")), training)
    xs = [dy, x, scale] if training else [dy, x, scale, mean, variance]
    grads = gradients(outputs, xs, grad_ys=[ddx, dd_scale, dd_offset])
    grads = [array_ops.zeros_like(t) if g is None else g for t, g in zip(xs, grads)]
    return grads + [None] * (len(op.inputs) - len(grads))


register(FusedBatchNormGrad)(_batch_norm_grad_grad)
register(FusedBatchNormGradV3)(_batch_norm_grad_grad)


def fused_batch_norm(x: Any, scale: Any, offset: Any, mean: Any = None, variance: Any = None,
                     epsilon: float = 0.001, data_format: str = "NHWC", is_training: bool = True,
                     name: Optional[str] = None, exponential_avg_factor: float = 1.0) -> tuple[Any, Any, Any]:
    """Batch normalization of a 4-D `x` over all but the channel dimension, in one op.
    Returns (y, batch_mean, batch_variance): in training mode the batch statistics (the
    variance unbiased), blended with `mean`/`variance` when exponential_avg_factor != 1; in
    inference mode `mean` and `variance` are used and returned."""
    if (not is_training or exponential_avg_factor != 1.0) and (mean is None or variance is None):
        raise ValueError(f"Both `mean` and `variance` must be a 1D tensor when `is_training` is False or "
                         f"`exponential_avg_factor` != 1.0. Received: `mean` {mean!r} and `variance` {variance!r}")
    x = convert_to_tensor(x, name="input")
    scale = convert_to_tensor(scale, name="scale")
    offset = convert_to_tensor(offset, name="offset")
    u_dtype = scale.dtype.base_dtype
    mean = constant([], dtype=u_dtype) if mean is None else mean
    variance = constant([], dtype=u_dtype) if variance is None else variance
    outputs = apply_op(FusedBatchNormV3, name=name, x=x, scale=scale, offset=offset, mean=mean,
                       variance=variance, epsilon=epsilon, exponential_avg_factor=exponential_avg_factor,
                       data_format=data_format, is_training=is_training)
    return outputs[0], outputs[1], outputs[2]


# ---------------------------------------------------------------------------------------------
# LRN, LRNGrad
# ---------------------------------------------------------------------------------------------
_LRN_ATTRS = ["depth_radius: int = 5", "bias: float = 1.0", "alpha: float = 1.0", "beta: float = 0.5",
              "T: {float16, float32, float64} = float32"]


def _rank4(op: Any) -> list[TensorShape]:
    shape = unknown_shape(4)
    for t in op.inputs:
        if t.shape.ndims is not None and t.shape.ndims != 4:
            raise shape_error(op, f"Shape must be rank 4 but is rank {t.shape.ndims}")
        shape = shape.merge_with(t.shape)
    return [shape]


LRN = define_op("LRN", inputs=["input: T"], outputs=["output: T"], attrs=_LRN_ATTRS, shape_fn=_rank4)
LRNGrad = define_op("LRNGrad", inputs=["input_grads: T", "input_image: T", "output_image: T"],
                    outputs=["output: T"], attrs=_LRN_ATTRS, shape_fn=_rank4)


def _window_sum(v: Any, radius: int) -> Any:
    """sum of v[..., j] for |j - d| <= radius, for each depth d (shifted adds: exact, unlike
    differences of a cumulative sum)."""
    out = v.copy()
    for k in range(1, min(radius, v.shape[-1] - 1) + 1):
        out[..., k:] += v[..., :-k]
        out[..., :-k] += v[..., k:]
    return out


def _lrn_params(ctx: Any) -> tuple[int, float, float, float]:
    radius = ctx.attr("depth_radius")
    return radius, ctx.attr("bias"), ctx.attr("alpha"), ctx.attr("beta")


def _check_rank4(*arrays: Any) -> None:
    for a in arrays:
        if a.ndim != 4:
            raise invalid(f"input must be 4-dimensional, got shape {list(a.shape)}")


@_kernel(LRN)
def _lrn_kernel(ctx: Any) -> Callable:
    radius, bias, alpha, beta = _lrn_params(ctx)

    def compute(x: Any) -> Any:
        _check_rank4(x)
        norm = _window_sum(x * x, radius)
        norm *= alpha
        norm += bias
        return x * norm ** -beta

    return compute


@_kernel(LRNGrad)
def _lrn_grad_kernel(ctx: Any) -> Callable:
    radius, bias, alpha, beta = _lrn_params(ctx)

    def compute(dy: Any, x: Any, y: Any) -> Any:
        _check_rank4(dy, x, y)
        if not dy.shape == x.shape == y.shape:
            raise invalid(f"input_grads, input_image and output_image must have the same shape, got "
                           f"{list(dy.shape)}, {list(x.shape)} and {list(y.shape)}")
        norm = _window_sum(x * x, radius) * alpha + bias
        # y_i = x_i N_i^-beta, N_i = bias + alpha sum_window(x^2), so
        # dx_j = dy_j N_j^-beta - 2 alpha beta x_j sum_{i near j} dy_i y_i / N_i.
        spread = _window_sum(dy * y / norm, radius)
        return dy * norm ** -beta - (2 * alpha * beta) * x * spread

    return compute


@register(LRN)
def _lrn_grad(op: Any, grad: Any) -> Any:
    return apply_op(LRNGrad, input_grads=grad, input_image=op.inputs[0], output_image=op.outputs[0],
                    **_lrn_attrs(op))


def _lrn_attrs(op: Any) -> dict[str, Any]:
    return {k: op.get_attr(k) for k in ("depth_radius", "bias", "alpha", "beta")}


def _composite_lrn(x: Any, depth_radius: int, bias: float, alpha: float, beta: float) -> Any:
    """LRN from ordinary ops (the windowed sum as a product with a band matrix)."""
    depth = x.shape.dims[-1].value if x.shape.ndims == 4 else None
    if depth is None:
        raise ValueError("The second derivative of LRN needs the depth (last dimension) to be known")
    idx = np.arange(depth)
    band = constant((np.abs(idx[:, None] - idx[None, :]) <= depth_radius).astype(x.dtype.base_dtype.as_numpy_dtype))
    squares = array_ops.reshape(math_ops.square(x), [-1, depth])
    from tensorweave.ops.linalg.linalg_impl import matmul
    norm = array_ops.reshape(matmul(squares, band), array_ops.shape(x)) * alpha + bias
    return x * math_ops.pow(norm, -beta)


@register(LRNGrad)
def _lrn_grad_grad(op: Any, grad: Any) -> list[Any]:
    """LRNGrad(dy, x, LRN(x)) = the x-gradient of the composite LRN; differentiated again.
    output_image is a function of x, so its share is folded into the x gradient."""
    from tensorweave.gradients import gradients
    dy, x = op.inputs[0], op.inputs[1]
    y = _composite_lrn(x, **_lrn_attrs(op))
    dx = gradients(y, x, grad_ys=dy)[0]
    d_dy, d_x = gradients(dx, [dy, x], grad_ys=grad)
    return [d_dy, d_x, array_ops.zeros_like(op.inputs[2])]


def local_response_normalization(input: Any, depth_radius: int = 5, bias: float = 1.0,  # noqa: A002
                                 alpha: float = 1.0, beta: float = 0.5, name: Optional[str] = None) -> Any:
    """Local response normalization across the last (depth) dimension of a 4-D input:
    input / (bias + alpha * sum(input[..., d - r: d + r + 1] ** 2)) ** beta."""
    return apply_op(LRN, name=name, input=input, depth_radius=depth_radius, bias=bias, alpha=alpha, beta=beta)


lrn = local_response_normalization


# ---------------------------------------------------------------------------------------------
# Composites
# ---------------------------------------------------------------------------------------------
def moments(x: Any, axes: Any, shift: Any = None, name: Optional[str] = None, keep_dims: Any = None,
            keepdims: Any = None) -> tuple[Any, Any]:
    """(mean, variance) of `x` over `axes` (the biased variance); `keep_dims` keeps the reduced
    dimensions with size 1. `shift` is accepted and unused, as in TF."""
    if keep_dims is not None and keepdims is not None:
        raise ValueError("Cannot specify both 'keepdims' and 'keep_dims'")
    keep = bool(keepdims if keepdims is not None else keep_dims)
    with name_scope(name, "moments", [x, axes]):
        x = convert_to_tensor(x, name="x")
        half = x.dtype.base_dtype == _dtypes.float16
        y = math_ops.cast(x, _dtypes.float32) if half else x
        mean = math_ops.reduce_mean(y, axes, keepdims=True, name="mean")
        variance = math_ops.reduce_mean(math_ops.squared_difference(y, array_ops.stop_gradient(mean)), axes,
                                        keepdims=True, name="variance")
        if not keep:
            mean, variance = array_ops.squeeze(mean, axes), array_ops.squeeze(variance, axes)
        if half:
            return math_ops.cast(mean, _dtypes.float16), math_ops.cast(variance, _dtypes.float16)
        return mean, variance


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any, variance_epsilon: float,
                        name: Optional[str] = None) -> Any:
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset, broadcasting; `offset`
    and `scale` may be None."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        inv = math_ops.rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        dtype = x.dtype.base_dtype
        return x * math_ops.cast(inv, dtype) + math_ops.cast(shift, dtype)


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: Optional[str] = None,
                 dim: Any = None) -> Any:
    """x / sqrt(max(sum(x ** 2, axis), epsilon)) along `axis` (`dim` is TF1's alias)."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = math_ops.reduce_sum(math_ops.square(x), axis, keepdims=True)
        inv_norm = math_ops.rsqrt(math_ops.maximum(square_sum, epsilon))
        return math_ops.multiply(x, inv_norm, name=scope)
