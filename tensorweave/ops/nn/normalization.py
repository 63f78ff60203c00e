"""Normalizations of `tf.nn`: the fused batch norm ops (FusedBatchNorm, FusedBatchNormV3 and
their grad ops) and local response normalization (LRN, LRNGrad), with their wrappers. The
composites moments, batch_normalization and l2_normalize are in nn_impl.py, the gradients
(first and second order) in grad.py.

Facts checked against TensorFlow: in training mode FusedBatchNorm normalizes with the biased
batch variance but returns the unbiased (Bessel-corrected) one as `batch_variance`, blended
with the running estimate when exponential_avg_factor != 1; reserve_space_1/2 hold the batch
mean and the biased variance, which the grad op reads back.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Union

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import Dimension, TensorShape, unknown_shape
from tensorweave.ops._util import invalid, shape_error
from tensorweave.ops._util import register_kernel as _kernel

__all__ = ["fused_batch_norm", "local_response_normalization", "lrn"]



# ---------------------------------------------------------------------------------------------
# FusedBatchNorm, FusedBatchNormV3 and their grad ops
# ---------------------------------------------------------------------------------------------
_BN_ATTRS = ["epsilon: float = 0.0001", "data_format: {'NHWC', 'NCHW'} = 'NHWC'", "is_training: bool = true"]
_AVG_FACTOR = "exponential_avg_factor: float = 1.0"  # V3 only


def _channel_axis(op_or_format: Union[Operation, str]) -> int:
    data_format = op_or_format if isinstance(op_or_format, str) else op_or_format._get_attr("data_format")
    return 1 if data_format == "NCHW" else 3


def _bn_shape(op: Operation) -> list[TensorShape]:
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


def _merge_dim(op: Operation, a: Dimension, b: Dimension) -> Dimension:
    try:
        return a.merge_with(b)
    except ValueError:
        raise shape_error(op, f"Dimensions must be equal, but are {a} and {b}") from None


def _bn_grad_shape(op: Operation) -> list[TensorShape]:
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


class BatchNormLayout:
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


def _bn_forward(ctx: KernelContext) -> Callable:
    layout = BatchNormLayout(ctx.attr("data_format"))
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


def _bn_backward(ctx: KernelContext) -> Callable:
    layout = BatchNormLayout(ctx.attr("data_format"))
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
    empty = np.zeros([0], u_dtype.as_numpy_dtype)  # training ignores them
    mean = convert_to_tensor(empty, dtype=u_dtype) if mean is None else mean
    variance = convert_to_tensor(empty, dtype=u_dtype) if variance is None else variance
    outputs = apply_op(FusedBatchNormV3, name=name, x=x, scale=scale, offset=offset, mean=mean,
                       variance=variance, epsilon=epsilon, exponential_avg_factor=exponential_avg_factor,
                       data_format=data_format, is_training=is_training)
    return outputs[0], outputs[1], outputs[2]


# ---------------------------------------------------------------------------------------------
# LRN, LRNGrad
# ---------------------------------------------------------------------------------------------
_LRN_ATTRS = ["depth_radius: int = 5", "bias: float = 1.0", "alpha: float = 1.0", "beta: float = 0.5",
              "T: {float16, float32, float64} = float32"]


def _rank4(op: Operation) -> list[TensorShape]:
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


def _lrn_params(ctx: KernelContext) -> tuple[int, float, float, float]:
    radius = ctx.attr("depth_radius")
    return radius, ctx.attr("bias"), ctx.attr("alpha"), ctx.attr("beta")


def _check_rank4(*arrays: Any) -> None:
    for a in arrays:
        if a.ndim != 4:
            raise invalid(f"input must be 4-dimensional, got shape {list(a.shape)}")


@_kernel(LRN)
def _lrn_kernel(ctx: KernelContext) -> Callable:
    radius, bias, alpha, beta = _lrn_params(ctx)

    def compute(x: Any) -> Any:
        _check_rank4(x)
        norm = _window_sum(x * x, radius)
        norm *= alpha
        norm += bias
        return x * norm ** -beta

    return compute


@_kernel(LRNGrad)
def _lrn_grad_kernel(ctx: KernelContext) -> Callable:
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


def local_response_normalization(input: Any, depth_radius: int = 5, bias: float = 1.0,  # noqa: A002
                                 alpha: float = 1.0, beta: float = 0.5, name: Optional[str] = None) -> Any:
    """Local response normalization across the last (depth) dimension of a 4-D input:
    input / (bias + alpha * sum(input[..., d - r: d + r + 1] ** 2)) ** beta."""
    return apply_op(LRN, name=name, input=input, depth_radius=depth_radius, bias=bias, alpha=alpha, beta=beta)


lrn = local_response_normalization
