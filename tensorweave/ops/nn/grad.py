"""Gradients of the nn family's ops, with TensorFlow's formulas (tier 3: only gradients.py
imports this module).

Activations back-propagate through their *Grad ops (one fused kernel per step, as in TF), and
those *Grad ops have gradients too, so second derivatives work; so do the cross entropies (through
their backprop output), FusedBatchNorm and LRN (their grad ops' gradients are closed forms built
from ordinary ops), convolutions (each op's gradients are the other two ops of its family) and
pooling.
"""
from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation
from tensorweave.framework.op_def import OpDef
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array as array_ops, math as math_ops
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.linalg.linalg_impl import matmul
from tensorweave.ops.nn import (
    conv, convolution3d as conv3d, cross_entropy, ctc, depthwise_conv, nn_ops, normalization, pooling, pooling3d)
from tensorweave.ops.nn.nn_impl import log_softmax, softmax
from tensorweave.ops.nn.normalization import BatchNormLayout


# ---------------------------------------------------------------------------------------------
# Activations

# ---------------------------------------------------------------------------------------------
def _grad_op(op_def: OpDef, grad: Any, second: Any, **attrs: Any) -> Any:
    return apply_op(op_def, gradients=grad, **{op_def.inputs[1].name: second}, **attrs)


# forward op -> (its grad op, whether the grad op reads the forward output rather than input).
# Relu reads its output as TF does (relu(x) > 0 exactly where x > 0); Elu/Selu need it.
_ACTIVATION_GRADS = {
    nn_ops.Relu: (nn_ops.ReluGrad, True), nn_ops.Relu6: (nn_ops.Relu6Grad, False),
    nn_ops.Elu: (nn_ops.EluGrad, True), nn_ops.Selu: (nn_ops.SeluGrad, True),
    nn_ops.Softplus: (nn_ops.SoftplusGrad, False), nn_ops.Softsign: (nn_ops.SoftsignGrad, False),
    nn_ops.LeakyRelu: (nn_ops.LeakyReluGrad, False),
}


def _activation_grad(op: Operation, grad: Any) -> Any:
    grad_op, from_output = _ACTIVATION_GRADS[op.op_def]
    attrs = {"alpha": op._get_attr("alpha")} if op.type == "LeakyRelu" else {}
    return _grad_op(grad_op, grad, op.outputs[0] if from_output else op.inputs[0], **attrs)


for _op in _ACTIVATION_GRADS:
    _op.gradient(_activation_grad, dense_grad=True)


def _piecewise_linear_grad_grad(op: Operation, grad: Any) -> list[Any]:
    """ReluGrad, Relu6Grad, LeakyReluGrad are linear in `gradients` with a mask that is flat
    in `features`: d/dgradients = the same op on `grad`, d/dfeatures = 0."""
    x = op.inputs[1]
    attrs = {"alpha": op._get_attr("alpha")} if op.type == "LeakyReluGrad" else {}
    return [_grad_op(op.op_def, grad, x, **attrs), array_ops.zeros_like(x)]


for _op in (nn_ops.ReluGrad, nn_ops.Relu6Grad, nn_ops.LeakyReluGrad):
    _op.gradient(_piecewise_linear_grad_grad, dense_grad=True)


def _exponential_grad_grad(op: Operation, grad: Any) -> list[Any]:
    """EluGrad / SeluGrad(g, y): g * (y + c) where y < 0 (c = 1 for Elu, scale * alpha for
    Selu), g (times scale) elsewhere: d/dy = g where y < 0."""
    g, y = op.inputs
    zero = array_ops.zeros_like(y)
    return [_grad_op(op.op_def, grad, y), math_ops.where_v2(math_ops.less(y, zero), grad * g, zero)]


for _op in (nn_ops.EluGrad, nn_ops.SeluGrad):
    _op.gradient(_exponential_grad_grad, dense_grad=True)


@nn_ops.SoftplusGrad.gradient(dense_grad=True)
def _softplus_grad_grad(op: Operation, grad: Any) -> list[Any]:
    """SoftplusGrad(g, x) = g * sigmoid(x); sigmoid'(x) = 1 / (e^-x + 2 + e^x)."""
    g, x = op.inputs
    d2x = grad * g / (math_ops.exp(-x) + 2.0 + math_ops.exp(x))
    return [_grad_op(nn_ops.SoftplusGrad, grad, x), d2x]


@nn_ops.SoftsignGrad.gradient(dense_grad=True)
def _softsign_grad_grad(op: Operation, grad: Any) -> list[Any]:
    """SoftsignGrad(g, x) = g / (1 + |x|)^2 (TF registers none; the formula is exact)."""
    g, x = op.inputs
    denom = 1.0 + math_ops.abs(x)
    d2x = -2.0 * grad * g * math_ops.sign(x) / (denom * denom * denom)
    return [_grad_op(nn_ops.SoftsignGrad, grad, x), d2x]


# ---------------------------------------------------------------------------------------------
# Softmax, LogSoftmax, BiasAdd, L2Loss, TopKV2

# ---------------------------------------------------------------------------------------------
@nn_ops.Softmax.gradient(dense_grad=True)
def _softmax_grad(op: Operation, grad: Any) -> Any:
    """(grad - sum(grad * softmax)) * softmax, along the last axis."""
    y = op.outputs[0]
    return (grad - math_ops.reduce_sum(grad * y, -1, keepdims=True)) * y


@nn_ops.LogSoftmax.gradient(dense_grad=True)
def _log_softmax_grad(op: Operation, grad: Any) -> Any:
    """grad - sum(grad) * softmax, along the last axis."""
    return grad - math_ops.reduce_sum(grad, -1, keepdims=True) * math_ops.exp(op.outputs[0])


@nn_ops.BiasAdd.gradient(dense_grad=True)
def _bias_add_grad(op: Operation, grad: Any) -> list[Any]:
    return [grad, apply_op(nn_ops.BiasAddGrad, out_backprop=grad, data_format=op._get_attr("data_format"))]


@nn_ops.BiasAddGrad.gradient(dense_grad=True)
def _bias_add_grad_grad(op: Operation, grad: Any) -> Any:
    """BiasAddGrad sums over all but the channel axis; its gradient broadcasts back."""
    out_backprop = op.inputs[0]
    rank = out_backprop.shape.ndims
    if op._get_attr("data_format") == "NCHW":
        if rank is None:
            raise ValueError(f"The gradient of {op.name} (NCHW) needs the rank of its input")
        grad = array_ops.reshape(grad, [-1] + [1] * (rank - 2))
    return array_ops.broadcast_to(grad, array_ops.shape(out_backprop))


@nn_ops.L2Loss.gradient(dense_grad=True)
def _l2_loss_grad(op: Operation, grad: Any) -> Any:
    return op.inputs[0] * grad


@nn_ops.TopKV2.gradient(dense_grad=True)
def _top_k_grad(op: Operation, grad: Any, _indices_grad: Any) -> list[Any]:
    """Scatters the values' gradient back to the chosen positions of each row."""
    x, indices = op.inputs[0], op.outputs[1]
    x_shape = array_ops.shape(x)
    k = array_ops.shape(indices)[-1]
    columns = x_shape[-1]
    flat_indices = math_ops.cast(array_ops.reshape(indices, array_ops.stack([-1, k])), _dtypes.int32)
    rows = array_ops.shape(flat_indices)[0]
    offsets = array_ops.expand_dims(array_ops.range(0, rows * columns, columns), -1)
    positions = array_ops.reshape(flat_indices + offsets, [-1])
    flat = math_ops.unsorted_segment_sum(array_ops.reshape(grad, [-1]), positions,
                                         math_ops.reduce_prod(x_shape))
    return [array_ops.reshape(flat, x_shape), None]


# ---------------------------------------------------------------------------------------------
# Cross entropies

# ---------------------------------------------------------------------------------------------
def _is_zero(t: Any) -> bool:
    """Whether `t` is known to be all zeros (the driver fills unused output gradients so)."""
    if t is None or t.op.type == "ZerosLike":
        return True
    value = tensor_util.constant_value(t)
    return value is not None and not np.any(value)


def _softmax_jvp(logits: Any, grad_grad: Any) -> Any:
    """The backprop output's gradient: d(softmax - labels)/dlogits applied to grad_grad."""
    s = softmax(logits)
    return (grad_grad - math_ops.reduce_sum(grad_grad * s, -1, keepdims=True)) * s


@cross_entropy.SoftmaxCrossEntropyWithLogits.gradient(dense_grad=True)
def _xent_grad(op: Operation, grad_loss: Any, grad_grad: Any) -> list[Any]:
    """dloss/dlogits = softmax - labels (the op's own second output); dloss/dlabels =
    -log_softmax. Second derivatives come in through the backprop output's gradient."""
    logits, labels = op.inputs
    scale = array_ops.expand_dims(grad_loss, -1)
    logits_grad = scale * op.outputs[1]
    # TF1's softmax_cross_entropy_with_logits stops the labels' gradient: build none for them.
    labels_grad = None if labels.op.type == "StopGradient" else scale * -log_softmax(logits)
    if not _is_zero(grad_grad):
        logits_grad = logits_grad + _softmax_jvp(logits, grad_grad)
        labels_grad = None if labels_grad is None else labels_grad - grad_grad
    return [logits_grad, labels_grad]


@cross_entropy.SparseSoftmaxCrossEntropyWithLogits.gradient(dense_grad=True)
def _sparse_xent_grad(op: Operation, grad_loss: Any, grad_grad: Any) -> list[Any]:
    logits_grad = array_ops.expand_dims(grad_loss, -1) * op.outputs[1]
    if not _is_zero(grad_grad):
        logits_grad = logits_grad + _softmax_jvp(op.inputs[0], grad_grad)
    return [logits_grad, None]


# ---------------------------------------------------------------------------------------------
# FusedBatchNorm, LRN: first and second derivatives

# ---------------------------------------------------------------------------------------------
def _bn_attrs(op: Operation) -> dict[str, Any]:
    return {k: op._get_attr(k) for k in ("epsilon", "data_format", "is_training")}


def _per_channel(layout: BatchNormLayout, v: Any) -> Any:
    return array_ops.reshape(v, [-1, 1, 1]) if layout.nchw else v


@normalization.FusedBatchNorm.gradient(dense_grad=True)
@normalization.FusedBatchNormV3.gradient(dense_grad=True)
def _batch_norm_grad(op: Operation, dy: Any, d_mean: Any, d_var: Any, *_reserve: Any) -> list[Any]:
    """Gradients of y through the grad op; of the batch_mean / batch_variance outputs (which
    TF drops) and, in inference mode, of y with respect to mean and variance, as composites."""
    x, scale, offset, mean, variance = op.inputs
    attrs, layout = _bn_attrs(op), BatchNormLayout(op._get_attr("data_format"))
    v3 = op.type == "FusedBatchNormV3"
    grad_op = normalization.FusedBatchNormGradV3 if v3 else normalization.FusedBatchNormGrad
    reserve = list(op.outputs[3:5]) if attrs["is_training"] else [mean, variance]
    if v3:
        reserve.append(op.outputs[5])
    reserve_args = {f"reserve_space_{i + 1}": t for i, t in enumerate(reserve)}
    dx, d_scale, d_offset = apply_op(grad_op, y_backprop=dy, x=x, scale=scale, **reserve_args, **attrs)[:3]
    factor = op._get_attr("exponential_avg_factor") if v3 else 1.0
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


@normalization.FusedBatchNormGrad.gradient(dense_grad=True)
@normalization.FusedBatchNormGradV3.gradient(dense_grad=True)
def _batch_norm_grad_grad(op: Operation, ddx: Any, dd_scale: Any, dd_offset: Any, *_unused: Any) -> list[Any]:
    """Second derivatives, in closed form. Per channel, with x^ = (x - mean) * inv and
    inv = rsqrt(variance + epsilon), the grad op computes d_offset = sum(dy),
    d_scale = sum(dy * x^) and
      training:  dx = scale * inv * (dy - mean(dy) - x^ * mean(dy * x^)), where mean and
                 variance are x's own (biased) batch statistics, recomputed here;
      inference: dx = dy * scale * inv, with mean and variance the op's inputs.
    The result is the gradient of <ddx, dx> + <dd_scale, d_scale> + <dd_offset, d_offset>."""
    dy, x, scale, mean, variance = op.inputs[:5]
    layout = BatchNormLayout(op._get_attr("data_format"))
    epsilon, axes = op._get_attr("epsilon"), list(layout.axes)
    rest = [None] * (len(op.inputs) - 5)
    s, dd_scale_b, dd_offset_b = (_per_channel(layout, t) for t in (scale, dd_scale, dd_offset))
    if not op._get_attr("is_training"):
        inv = math_ops.rsqrt(variance + epsilon)
        inv_b, centered = _per_channel(layout, inv), x - _per_channel(layout, mean)
        ddx_dy = math_ops.reduce_sum(ddx * dy, axes)
        d_dy = ddx * s * inv_b + dd_scale_b * centered * inv_b + dd_offset_b
        d_var = -0.5 * inv * inv * inv * (scale * ddx_dy + dd_scale * math_ops.reduce_sum(dy * centered, axes))
        d_mean = -dd_scale * inv * math_ops.reduce_sum(dy, axes)
        return [d_dy, dd_scale_b * dy * inv_b, ddx_dy * inv, d_mean, d_var] + rest

    def channel_mean(t: Any) -> Any:
        return math_ops.reduce_mean(t, axes, keepdims=True)

    centered = x - channel_mean(x)
    inv = math_ops.rsqrt(channel_mean(math_ops.square(centered)) + epsilon)
    x_hat = centered * inv
    dy_c, ddx_c = dy - channel_mean(dy), ddx - channel_mean(ddx)
    k, q = channel_mean(dy * x_hat), channel_mean(ddx * x_hat)
    d_dy = dd_offset_b + dd_scale_b * x_hat + s * inv * (ddx_c - x_hat * q)
    # x moves x^ and inv: d/dx of k = mean(dy * x^) is inv / M * (dy_c - x^ * k), of inv is
    # -inv^2 * x^ / M (M elements per channel); collected:
    d_x = (s * inv * inv * (x_hat * (3.0 * k * q - channel_mean(ddx * dy_c)) - q * dy_c - k * ddx_c)
           + dd_scale_b * inv * (dy_c - x_hat * k))
    d_scale = math_ops.reduce_sum(ddx * inv * (dy_c - x_hat * k), axes)
    return [d_dy, d_x, d_scale, None, None] + rest


def _lrn_attrs(op: Operation) -> dict[str, Any]:
    return {k: op._get_attr(k) for k in ("depth_radius", "bias", "alpha", "beta")}


@normalization.LRN.gradient(dense_grad=True)
def _lrn_grad(op: Operation, grad: Any) -> Any:
    return apply_op(normalization.LRNGrad, input_grads=grad, input_image=op.inputs[0],
                    output_image=op.outputs[0], **_lrn_attrs(op))


@normalization.LRNGrad.gradient(dense_grad=True)
def _lrn_grad_grad(op: Operation, grad: Any) -> list[Any]:
    """LRNGrad(dy, x, LRN(x)) differentiated again, in closed form. With W the window sum over
    depth (symmetric) and N = bias + alpha * W(x^2), LRNGrad is
      dx = dy * N^-beta - 2 alpha beta * x * W(dy * x * N^(-beta-1)).
    output_image is a function of x: its share is folded into the x gradient (it gets zeros)."""
    dy, x = op.inputs[0], op.inputs[1]
    attrs = _lrn_attrs(op)
    alpha, beta = attrs["alpha"], attrs["beta"]
    depth = x.shape.dims[-1].value if x.shape.ndims == 4 else None
    if depth is None:
        raise ValueError("The second derivative of LRN needs the depth (last dimension) to be known")
    idx = np.arange(depth)
    band = constant(
        (np.abs(idx[:, None] - idx[None, :]) <= attrs["depth_radius"]).astype(x.dtype.base_dtype.as_numpy_dtype))
    x_shape = array_ops.shape(x)

    def window(t: Any) -> Any:
        return array_ops.reshape(matmul(array_ops.reshape(t, [-1, depth]), band), x_shape)

    norm = window(math_ops.square(x)) * alpha + attrs["bias"]
    n_1 = math_ops.pow(norm, -beta - 1.0)  # N^(-beta-1)
    n_0, n_2 = n_1 * norm, n_1 / norm
    gx_window = window(grad * x)
    d_dy = grad * n_0 - 2.0 * alpha * beta * x * n_1 * gx_window
    d_x = (-2.0 * alpha * beta * (x * window(grad * dy * n_1) + grad * window(dy * x * n_1) + gx_window * dy * n_1)
           + 4.0 * alpha * alpha * beta * (beta + 1.0) * x * window(gx_window * dy * x * n_2))
    return [d_dy, d_x, array_ops.zeros_like(op.inputs[2])]


# ---------------------------------------------------------------------------------------------
# Convolutions (TF's: each op's gradients are the other two ops of its family)

# ---------------------------------------------------------------------------------------------
def _register_conv_gradients(forward: OpDef, backprop_input: OpDef, backprop_filter: OpDef,
                              attr_names: Sequence[str]) -> None:
    """Registers TF's gradients of a convolution family (Conv2D or DepthwiseConv2dNative and
    their two backprop ops); every op is built with the attrs of the op being differentiated."""

    def attrs(op: Operation) -> dict[str, Any]:
        return {name: op._get_attr(name) for name in attr_names}

    def input_grad(op: Operation, sizes_of: Any, f: Any, dy: Any) -> Any:
        return apply_op(backprop_input, input_sizes=array_ops.shape(sizes_of), filter=f, out_backprop=dy,
                        **attrs(op))

    def filter_grad(op: Operation, x: Any, sizes_of: Any, dy: Any) -> Any:
        return apply_op(backprop_filter, input=x, filter_sizes=array_ops.shape(sizes_of), out_backprop=dy,
                        **attrs(op))

    @forward.gradient
    def _forward_grad(op: Operation, grad: Any) -> list[Any]:
        x, f = op.inputs
        return [input_grad(op, x, f, grad), filter_grad(op, x, f, grad)]

    @backprop_input.gradient
    def _backprop_input_grad(op: Operation, grad: Any) -> list[Any]:
        _, f, dy = op.inputs
        return [None, filter_grad(op, grad, f, dy), apply_op(forward, input=grad, filter=f, **attrs(op))]

    @backprop_filter.gradient
    def _backprop_filter_grad(op: Operation, grad: Any) -> list[Any]:
        x, _, dy = op.inputs
        return [input_grad(op, x, grad, dy), None, apply_op(forward, input=x, filter=grad, **attrs(op))]


_register_conv_gradients(conv.Conv2D, conv.Conv2DBackpropInput, conv.Conv2DBackpropFilter,
                          ("strides", "padding", "explicit_paddings", "use_cudnn_on_gpu", "data_format",
                           "dilations"))
_register_conv_gradients(depthwise_conv.DepthwiseConv2dNative, depthwise_conv.DepthwiseConv2dNativeBackpropInput,
                         depthwise_conv.DepthwiseConv2dNativeBackpropFilter,
                         ("strides", "padding", "explicit_paddings", "data_format", "dilations"))


# ---------------------------------------------------------------------------------------------
# Pooling (TF's)

# ---------------------------------------------------------------------------------------------
def _pool_attrs(op: Operation, names: Sequence[str]) -> dict[str, Any]:
    return {name: op._get_attr(name) for name in names if name in op.op_def.attrs}


_V1 = ("ksize", "strides", "padding", "explicit_paddings", "data_format")
_V2 = ("padding", "data_format")


@pooling.MaxPool.gradient
def _max_pool_grad(op: Operation, grad: Any) -> Any:
    return apply_op(pooling.MaxPoolGrad, orig_input=op.inputs[0], orig_output=op.outputs[0], grad=grad,
                    **_pool_attrs(op, _V1))


@pooling.MaxPoolV2.gradient
def _max_pool_v2_grad(op: Operation, grad: Any) -> list[Any]:
    x, ksize, strides = op.inputs
    return [apply_op(pooling.MaxPoolGradV2, orig_input=x, orig_output=op.outputs[0], grad=grad, ksize=ksize,
                     strides=strides, **_pool_attrs(op, _V2)), None, None]


@pooling.AvgPool.gradient
def _avg_pool_grad(op: Operation, grad: Any) -> Any:
    return apply_op(pooling.AvgPoolGrad, orig_input_shape=array_ops.shape(op.inputs[0]), grad=grad,
                    **_pool_attrs(op, _V1))


@pooling.AvgPoolGrad.gradient
def _avg_pool_grad_grad(op: Operation, grad: Any) -> list[Any]:
    return [None, apply_op(pooling.AvgPool, value=grad, **_pool_attrs(op, _V1))]


def _zeros_for_orig(op: Operation) -> list[Any]:
    return [array_ops.zeros_like(op.inputs[0]), array_ops.zeros_like(op.inputs[1])]


@pooling.MaxPoolGrad.gradient
def _max_pool_grad_grad(op: Operation, grad: Any) -> list[Any]:
    attrs = _pool_attrs(op, _V1)
    if attrs.pop("explicit_paddings", None) and attrs["padding"] == "EXPLICIT":
        raise ValueError(f"{op.name}: pooling.MaxPoolGradGrad has no EXPLICIT padding; the second derivative "
                         f"of an explicitly padded max pool is not available (as in TensorFlow)")
    return _zeros_for_orig(op) + [apply_op(pooling.MaxPoolGradGrad, orig_input=op.inputs[0], orig_output=op.inputs[1],
                                           grad=grad, **attrs)]


@pooling.MaxPoolGradV2.gradient
def _max_pool_grad_v2_grad(op: Operation, grad: Any) -> list[Any]:
    x, y, _, ksize, strides = op.inputs
    return _zeros_for_orig(op) + [apply_op(pooling.MaxPoolGradGradV2, orig_input=x, orig_output=y, grad=grad,
                                           ksize=ksize, strides=strides, **_pool_attrs(op, _V2)), None, None]


@pooling.MaxPoolGradGrad.gradient
def _max_pool_grad_grad_grad(op: Operation, grad: Any) -> list[Any]:
    return _zeros_for_orig(op) + [apply_op(pooling.MaxPoolGrad, orig_input=op.inputs[0], orig_output=op.inputs[1],
                                           grad=grad, **_pool_attrs(op, _V1))]


@pooling.MaxPoolGradGradV2.gradient
def _max_pool_grad_grad_v2_grad(op: Operation, grad: Any) -> list[Any]:
    x, y, _, ksize, strides = op.inputs
    return _zeros_for_orig(op) + [apply_op(pooling.MaxPoolGradV2, orig_input=x, orig_output=y, grad=grad,
                                           ksize=ksize, strides=strides, **_pool_attrs(op, _V2)), None, None]


# ---------------------------------------------------------------------------------------------
# 3-D convolution and pooling (TF's)
# ---------------------------------------------------------------------------------------------
def _attrs3d(op: Operation, names: Sequence[str]) -> dict[str, Any]:
    return {name: op._get_attr(name) for name in names}


_CONV3D = ("strides", "padding", "data_format", "dilations")
_POOL3D = ("ksize", "strides", "padding", "data_format")


@conv3d.Conv3D.gradient
def _conv3d_grad(op: Operation, grad: Any) -> list[Any]:
    x, f = op.inputs
    attrs = _attrs3d(op, _CONV3D)
    return [apply_op(conv3d.Conv3DBackpropInputV2, input_sizes=array_ops.shape(x), filter=f, out_backprop=grad,
                     **attrs),
            apply_op(conv3d.Conv3DBackpropFilterV2, input=x, filter_sizes=array_ops.shape(f), out_backprop=grad,
                     **attrs)]


@conv3d.Conv3DBackpropInputV2.gradient
def _conv3d_backprop_input_grad(op: Operation, grad: Any) -> list[Any]:
    _, f, dy = op.inputs
    attrs = _attrs3d(op, _CONV3D)
    return [None,
            apply_op(conv3d.Conv3DBackpropFilterV2, input=grad, filter_sizes=array_ops.shape(f), out_backprop=dy,
                     **attrs),
            apply_op(conv3d.Conv3D, input=grad, filter=f, **attrs)]


@conv3d.Conv3DBackpropFilterV2.gradient
def _conv3d_backprop_filter_grad(op: Operation, grad: Any) -> list[Any]:
    x, _, dy = op.inputs
    attrs = _attrs3d(op, _CONV3D)
    return [apply_op(conv3d.Conv3DBackpropInputV2, input_sizes=array_ops.shape(x), filter=grad, out_backprop=dy,
                     **attrs),
            None,
            apply_op(conv3d.Conv3D, input=x, filter=grad, **attrs)]


@pooling3d.MaxPool3D.gradient
def _max_pool3d_grad(op: Operation, grad: Any) -> Any:
    return apply_op(pooling3d.MaxPool3DGrad, orig_input=op.inputs[0], orig_output=op.outputs[0], grad=grad,
                    **_attrs3d(op, _POOL3D))


@pooling3d.MaxPool3DGrad.gradient
def _max_pool3d_grad_grad(op: Operation, grad: Any) -> list[Any]:
    return _zeros_for_orig(op) + [apply_op(pooling3d.MaxPool3DGradGrad, orig_input=op.inputs[0],
                                           orig_output=op.inputs[1], grad=grad, **_attrs3d(op, _POOL3D))]


@pooling3d.MaxPool3DGradGrad.gradient
def _max_pool3d_grad_grad_grad(op: Operation, grad: Any) -> list[Any]:
    return _zeros_for_orig(op) + [apply_op(pooling3d.MaxPool3DGrad, orig_input=op.inputs[0],
                                           orig_output=op.inputs[1], grad=grad, **_attrs3d(op, _POOL3D))]


@pooling3d.AvgPool3D.gradient
def _avg_pool3d_grad(op: Operation, grad: Any) -> Any:
    return apply_op(pooling3d.AvgPool3DGrad, orig_input_shape=array_ops.shape(op.inputs[0]), grad=grad,
                    **_attrs3d(op, _POOL3D))


@pooling3d.AvgPool3DGrad.gradient
def _avg_pool3d_grad_grad(op: Operation, grad: Any) -> list[Any]:
    return [None, apply_op(pooling3d.AvgPool3D, input=grad, **_attrs3d(op, _POOL3D))]


@ctc.CTCLoss.gradient
def _ctc_loss_grad(op: Operation, grad_loss: Any, _grad_gradient: Any) -> list[Any]:
    """The loss's gradient times the kernel's d loss / d logits (its second output, itself not
    differentiated further)."""
    return [array_ops.expand_dims(grad_loss, -1) * array_ops.stop_gradient(op.outputs[1]), None, None, None]
