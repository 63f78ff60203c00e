"""Composites of `tf.nn`, built from the nn ops and other families' wrappers (TF's nn_impl):
softmax / log_softmax along any axis, leaky_relu (integers cast first), xw_plus_b, relu_layer,
dropout, zero_fraction; the cross-entropy wrappers (softmax, sparse softmax, sigmoid and
weighted); moments, batch_normalization, l2_normalize; conv1d and convolution.

Tier 2: it imports other families' names from their modules (not their packages), so that it
works while the family packages are still importing each other.

The softmax cross-entropy wrappers accept TF1's keyword form (`labels=..., logits=...`) and also
the positional form of the OSDI'16 paper's Figure 1, `softmax_cross_entropy_with_logits(logits,
labels)` (the pre-1.0 argument order).
"""
from __future__ import annotations

import numbers
from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import name_scope, Tensor
from tensorweave.framework.op_def import OpDef
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.creation import zeros_like
from tensorweave.ops.array.joining import concat, stack
from tensorweave.ops.array.shaping import (
    expand_dims, identity, reshape, shape, size, squeeze, stop_gradient)
from tensorweave.ops.array.transposition import transpose
from tensorweave.ops.kernels.conv_geometry import convert_padding, get_sequence
from tensorweave.ops.linalg.linalg_impl import matmul
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.math_impl import where, where_v2
from tensorweave.ops.math.elementwise import (  # noqa: A004  (tf.abs)
    abs, add, exp, greater_equal, less_equal, log, log1p, logical_and, maximum, multiply, negative, realdiv,
    rsqrt, sigmoid, square, squared_difference, subtract)
from tensorweave.ops.math.reduction import count_nonzero, reduce_mean, reduce_sum
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.ops.nn.ctc import ctc_loss_op
from tensorweave.ops.nn.conv import Conv2D, conv2d, Conv2DBackpropInput, pick
from tensorweave.ops.nn.pooling import AvgPool, MaxPool
from tensorweave.ops.nn.cross_entropy import (
    SoftmaxCrossEntropyWithLogits, SparseSoftmaxCrossEntropyWithLogits)
from tensorweave.ops.nn.nn_ops import bias_add, LeakyRelu, LogSoftmax, relu, Softmax
from tensorweave.ops.random.draws import random_uniform

__all__ = ["leaky_relu", "softmax", "log_softmax", "xw_plus_b", "relu_layer", "dropout", "zero_fraction",
           "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
           "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
           "weighted_cross_entropy_with_logits", "moments", "batch_normalization", "l2_normalize",
           "conv1d", "convolution", "swish", "crelu", "log_poisson_loss",
           "batch_norm_with_global_normalization", "max_pool1d", "avg_pool1d", "conv1d_transpose", "ctc_loss"]


# ---------------------------------------------------------------------------------------------
# Activations and softmax along any axis
# ---------------------------------------------------------------------------------------------
def leaky_relu(features: Any, alpha: float = 0.2, name: Optional[str] = None) -> Any:
    """Leaky ReLU: features if features > 0, else alpha * features. Integer features are cast
    to float32 first, as in TF."""
    with name_scope(name, "LeakyRelu", [features, alpha]) as scope:
        features = convert_to_tensor(features, name="features")
        if features.dtype.base_dtype.is_integer:
            features = cast(features, _dtypes.float32)
        if isinstance(alpha, np.ndarray):
            alpha = alpha.item()
        return apply_op(LeakyRelu, name=scope, features=features, alpha=alpha)


def _softmax_along(op: OpDef, default_name: str, logits: Any, axis: Any, name: Optional[str],
                   dim: Any) -> Any:
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = -1 if axis is None and dim is None else (axis if axis is not None else dim)
    with name_scope(name, default_name, [logits]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        rank = logits.shape.ndims
        if isinstance(axis, (int, np.integer)) and (axis == -1 or (rank is not None and axis == rank - 1)):
            return apply_op(op, name=scope, logits=logits)
        if rank is None:
            raise ValueError(f"{default_name} along axis {axis} needs the rank of logits to be known")
        axis_value = tensor_util.constant_value(axis) if isinstance(axis, Tensor) else np.asarray(axis)
        if axis_value is None:
            raise ValueError(f"{default_name}: axis must be a constant, got {axis}")
        a = int(axis_value)
        if not -rank <= a < rank:
            raise errors.InvalidArgumentError(
                None, None, f"`axis` must be in the range [{-rank}, {rank}) where {rank} is the "
                            f"number of dimensions in the input. Received: axis={a}")
        perm = list(range(rank))
        perm[a % rank], perm[-1] = perm[-1], perm[a % rank]  # a swap is its own inverse
        moved = apply_op(op, logits=transpose(logits, perm))
        return transpose(moved, perm, name=scope)


def softmax(logits: Any, axis: Any = None, name: Optional[str] = None, dim: Any = None) -> Any:
    """exp(logits) / reduce_sum(exp(logits), axis), along `axis` (default -1; `dim` is TF1's
    deprecated alias)."""
    return _softmax_along(Softmax, "Softmax", logits, axis, name, dim)


def log_softmax(logits: Any, axis: Any = None, name: Optional[str] = None, dim: Any = None) -> Any:
    """logits - log(reduce_sum(exp(logits), axis)), along `axis` (default -1)."""
    return _softmax_along(LogSoftmax, "LogSoftmax", logits, axis, name, dim)


# ---------------------------------------------------------------------------------------------
# Dense layers, dropout, zero_fraction
# ---------------------------------------------------------------------------------------------
def xw_plus_b(x: Any, weights: Any, biases: Any, name: Optional[str] = None) -> Any:
    """matmul(x, weights) + biases (a BiasAdd)."""
    with name_scope(name, "xw_plus_b", [x, weights, biases]) as scope:
        return bias_add(matmul(x, weights), biases, name=scope)


def relu_layer(x: Any, weights: Any, biases: Any, name: Optional[str] = None) -> Any:
    """relu(matmul(x, weights) + biases)."""
    with name_scope(name, "relu_layer", [x, weights, biases]) as scope:
        return relu(bias_add(matmul(x, weights), biases), name=scope)


def _noise_shape(x: Tensor, noise_shape: Any) -> Any:
    """shape(x) by default; None entries of a given noise_shape take x's static dims."""
    if noise_shape is None:
        return shape(x)
    if isinstance(noise_shape, (list, tuple)) and x.shape.ndims == len(noise_shape):
        dims = x.shape.as_list()
        if any(d is None for d in noise_shape):
            return [dims[i] if d is None else d for i, d in enumerate(noise_shape)]
    return noise_shape


def _dropout_rate(keep_prob: Any, rate: Any) -> Any:
    if keep_prob is not None and rate is not None:
        raise ValueError("Cannot specify both 'keep_prob' and 'rate'.")
    if keep_prob is not None:
        if isinstance(keep_prob, numbers.Real) and not 0 < keep_prob <= 1:
            raise ValueError(f"keep_prob must be a scalar tensor or a float in the range (0, 1], got {keep_prob}")
        try:
            return 1.0 - keep_prob
        except TypeError:
            raise ValueError(f"`keep_prob` must be a floating point number or Tensor. Received: "
                             f"keep_prob={keep_prob}") from None
    if rate is None:
        raise ValueError("`rate` must be provided. Received: rate=None")
    return rate


def dropout(x: Any, keep_prob: Any = None, noise_shape: Any = None, seed: Optional[int] = None,
            name: Optional[str] = None, rate: Any = None) -> Any:
    """Keeps each element of `x` with probability keep_prob (= 1 - rate), scaled by
    1 / keep_prob, and sets the rest to 0. `noise_shape` makes whole slices drop together;
    `seed` (with tf.set_random_seed) makes the mask reproducible."""
    rate = _dropout_rate(keep_prob, rate)
    with name_scope(name, "dropout", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        dtype = x.dtype.base_dtype
        if not dtype.is_floating:
            raise ValueError(f"x has to be a floating point tensor since it's going to be scaled. "
                             f"Got a {dtype.name} tensor instead.")
        if isinstance(rate, numbers.Real):
            if not 0 <= rate < 1:
                raise ValueError(f"rate must be a scalar tensor or a float in the range [0, 1), got {rate}")
            if rate == 0:
                random_seed.get_seed(seed)  # TF's dummy RNG step: later ops keep their derived seeds
                return x
            scaled = multiply(x, convert_to_tensor(1.0 / (1.0 - rate), dtype=dtype))
        else:
            rate = convert_to_tensor(rate, name="rate")
            if rate.shape.ndims not in (None, 0):
                raise ValueError(f"rate must be a scalar tensor, got shape {rate.shape}")
            rate = cast(rate, dtype) if rate.dtype.base_dtype != dtype else rate
            scaled = realdiv(x, subtract(convert_to_tensor(1, dtype=dtype), rate))
        uniform = random_uniform(_noise_shape(x, noise_shape), seed=seed, dtype=dtype)
        keep = greater_equal(uniform, rate)
        out = where_v2(keep, scaled, convert_to_tensor(0, dtype=dtype), name=scope)
        out.set_shape(x.shape)  # the noise broadcasts to x's shape
        return out


def zero_fraction(value: Any, name: Optional[str] = None) -> Any:
    """The fraction (float32 scalar) of the entries of `value` that are zero."""
    with name_scope(name, "zero_fraction", [value]):
        value = convert_to_tensor(value, name="value")
        total = size(value, out_type=_dtypes.int64)
        nonzero = count_nonzero(value, dtype=_dtypes.int64)
        zeros = cast(total - nonzero, _dtypes.float32)
        return identity(zeros / cast(total, _dtypes.float32), name="fraction")


# ---------------------------------------------------------------------------------------------
# Cross entropies
# ---------------------------------------------------------------------------------------------
def _xent_args(fn_name: str, sentinel: Any, labels: Any, logits: Any) -> tuple[Any, Any]:
    """(labels, logits). A first positional argument is the logits of the pre-1.0 call form
    `fn(logits, labels)` used by the OSDI paper; anything else must be named."""
    if sentinel is not None:
        if logits is not None:
            raise ValueError(f"Only call `{fn_name}` with named arguments (labels=..., logits=..., ...)")
        logits = sentinel
    if labels is None or logits is None:
        raise ValueError(f"Both labels and logits must be provided to `{fn_name}`.")
    return labels, logits


def _move_axis_last(t: Any, axis: int, rank: int) -> Any:
    """The other dimensions keep their order: they are the shape of the result."""
    axis %= rank
    return transpose(t, [i for i in range(rank) if i != axis] + [axis])


def _flatten_outer_dims(t: Any) -> Any:
    """A matrix [prod(outer dims), last dim]."""
    last = t.shape.dims[-1].value if t.shape.ndims else None
    if last is None:
        last = shape(t)[-1]
        return reshape(t, stack([-1, last]))
    return reshape(t, [-1, last])


def softmax_cross_entropy_with_logits_v2(labels: Any, logits: Any, axis: Any = None,
                                         name: Optional[str] = None, dim: Any = None) -> Any:
    """-sum(labels * log_softmax(logits), axis): the softmax cross entropy, one value per row.
    Gradients flow into both logits and labels."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = -1 if axis is None and dim is None else (axis if axis is not None else dim)
    with name_scope(name, "softmax_cross_entropy_with_logits", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, name="labels")
        half = logits.dtype.base_dtype == _dtypes.float16
        precise = cast(logits, _dtypes.float32) if half else logits
        labels = cast(labels, precise.dtype.base_dtype)
        if not labels.shape.is_compatible_with(logits.shape):
            raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})")
        rank = logits.shape.ndims
        if rank == 2 and axis in (-1, 1):  # the common case: the op itself, no reshapes
            cost = apply_op(SoftmaxCrossEntropyWithLogits, name=None if half else scope,
                            features=precise, labels=labels)[0]
            return cast(cost, _dtypes.float16, name=scope) if half else cost
        if rank == 0:
            raise ValueError(f"logits must have rank >= 1, got shape {logits.shape}")
        if axis != -1:
            if rank is None:
                raise ValueError("softmax_cross_entropy_with_logits along an axis other than -1 needs "
                                 "logits of known rank")
            if axis % rank != rank - 1:
                precise, labels = _move_axis_last(precise, axis, rank), _move_axis_last(labels, axis, rank)
        cost = apply_op(SoftmaxCrossEntropyWithLogits, features=_flatten_outer_dims(precise),
                        labels=_flatten_outer_dims(labels))[0]
        cost = reshape(cost, shape(precise)[:-1], name=None if half else scope)
        if rank is not None:
            cost.set_shape(precise.shape[:-1])
        return cast(cost, _dtypes.float16, name=scope) if half else cost


def softmax_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None, logits: Any = None,
                                      dim: int = -1, name: Optional[str] = None, axis: Any = None) -> Any:
    """TF1's softmax cross entropy: as softmax_cross_entropy_with_logits_v2, with no gradient
    into `labels`. Call as `(labels=..., logits=...)`, or positionally `(logits, labels)` as in
    the OSDI paper's Figure 1."""
    if axis is not None and dim != -1:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    labels, logits = _xent_args("softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    with name_scope(name, "softmax_cross_entropy_with_logits_sg", [logits, labels]) as scope:
        labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=axis, name=scope)


def _sparse_static_checks(labels: Any, logits: Any) -> None:
    ls, gs = labels.shape, logits.shape
    if gs.ndims == 0:
        raise ValueError(f"`logits` cannot be a scalar. Received logits={logits}`")
    if gs.ndims is not None and ls.ndims is not None and ls.ndims != gs.ndims - 1:
        raise ValueError(f"`labels.shape.rank` must equal `logits.shape.rank - 1`. Received: labels.shape="
                         f"{ls} of rank {ls.ndims} and logits.shape={gs} of rank {gs.ndims}")
    if gs.ndims is not None and ls.ndims is not None and not ls.is_compatible_with(gs[:-1]):
        raise ValueError(f"`labels.shape` must equal `logits.shape` except for the last dimension. "
                         f"Received: labels.shape={ls} and logits.shape={gs}")


def sparse_softmax_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None, logits: Any = None,
                                             name: Optional[str] = None) -> Any:
    """Softmax cross entropy with integer class `labels` (shape = logits' shape without the
    last dimension, values in [0, num_classes)); out-of-range labels raise
    InvalidArgumentError at run time."""
    labels, logits = _xent_args("sparse_softmax_cross_entropy_with_logits", _sentinel, labels, logits)
    with name_scope(name, "SparseSoftmaxCrossEntropyWithLogits", [labels, logits]) as scope:
        labels = convert_to_tensor(labels, name="labels")
        logits = convert_to_tensor(logits, name="logits")
        half = logits.dtype.base_dtype == _dtypes.float16
        precise = cast(logits, _dtypes.float32) if half else logits
        _sparse_static_checks(labels, logits)
        if logits.shape.ndims == 2:
            cost = apply_op(SparseSoftmaxCrossEntropyWithLogits, name=None if half else scope,
                            features=precise, labels=labels)[0]
            return cast(cost, _dtypes.float16, name=scope) if half else cost
        labels_shape = shape(labels)
        cost = apply_op(SparseSoftmaxCrossEntropyWithLogits, features=_flatten_outer_dims(precise),
                        labels=reshape(labels, [-1]))[0]
        cost = reshape(cost, labels_shape, name=None if half else scope)
        cost.set_shape(labels.shape)
        return cast(cost, _dtypes.float16, name=scope) if half else cost


def _same_shape(labels: Any, logits: Any) -> None:
    if not labels.shape.is_compatible_with(logits.shape):
        raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})")


def sigmoid_cross_entropy_with_logits(_sentinel: Any = None, labels: Any = None, logits: Any = None,
                                      name: Optional[str] = None) -> Any:
    """Element-wise logistic loss max(x, 0) - x * z + log(1 + exp(-|x|)) for logits x and
    labels z (stable for large |x|)."""
    labels, logits = _xent_args("sigmoid_cross_entropy_with_logits", _sentinel, labels, logits)
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype.base_dtype, name="labels")
        _same_shape(labels, logits)
        zeros = zeros_like(logits)
        positive = greater_equal(logits, zeros)
        relu_logits = where(positive, logits, zeros)
        neg_abs_logits = where(positive, -logits, logits)
        return add(relu_logits - logits * labels, log1p(exp(neg_abs_logits)),
                            name=scope)


def weighted_cross_entropy_with_logits(labels: Any = None, logits: Any = None, pos_weight: Any = None,
                                       name: Optional[str] = None, targets: Any = None) -> Any:
    """Logistic loss with the positive term weighted by `pos_weight`:
    (1 - z) * x + (1 + (pos_weight - 1) * z) * (log(1 + exp(-|x|)) + max(-x, 0)).
    `targets` is TF1's name for `labels`."""
    if labels is not None and targets is not None:
        raise ValueError("Cannot specify both 'labels' and 'targets'")
    labels = targets if labels is None else labels
    if labels is None or logits is None or pos_weight is None:
        raise ValueError("labels, logits and pos_weight must all be provided")
    with name_scope(name, "logistic_loss", [logits, labels]) as scope:
        logits = convert_to_tensor(logits, name="logits")
        labels = convert_to_tensor(labels, dtype=logits.dtype.base_dtype, name="labels")
        _same_shape(labels, logits)
        log_weight = 1 + (pos_weight - 1) * labels
        softplus_neg = log1p(exp(-abs(logits))) + relu(-logits)
        return add((1 - labels) * logits, log_weight * softplus_neg, name=scope)


# ---------------------------------------------------------------------------------------------
# Normalization composites
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
        y = cast(x, _dtypes.float32) if half else x
        mean = reduce_mean(y, axes, keepdims=True, name="mean")
        variance = reduce_mean(squared_difference(y, stop_gradient(mean)), axes,
                                        keepdims=True, name="variance")
        if not keep:
            mean, variance = squeeze(mean, axes), squeeze(variance, axes)
        if half:
            return cast(mean, _dtypes.float16), cast(variance, _dtypes.float16)
        return mean, variance


def batch_normalization(x: Any, mean: Any, variance: Any, offset: Any, scale: Any, variance_epsilon: float,
                        name: Optional[str] = None) -> Any:
    """(x - mean) * scale / sqrt(variance + variance_epsilon) + offset, broadcasting; `offset`
    and `scale` may be None."""
    with name_scope(name, "batchnorm", [x, mean, variance, scale, offset]):
        x = convert_to_tensor(x, name="x")
        inv = rsqrt(variance + variance_epsilon)
        if scale is not None:
            inv = inv * scale
        shift = offset - mean * inv if offset is not None else -mean * inv
        dtype = x.dtype.base_dtype
        return x * cast(inv, dtype) + cast(shift, dtype)


def l2_normalize(x: Any, axis: Any = None, epsilon: float = 1e-12, name: Optional[str] = None,
                 dim: Any = None) -> Any:
    """x / sqrt(max(sum(x ** 2, axis), epsilon)) along `axis` (`dim` is TF1's alias)."""
    if axis is not None and dim is not None:
        raise ValueError("Cannot specify both 'axis' and 'dim'")
    axis = dim if axis is None else axis
    with name_scope(name, "l2_normalize", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        square_sum = reduce_sum(square(x), axis, keepdims=True)
        inv_norm = rsqrt(maximum(square_sum, epsilon))
        return multiply(x, inv_norm, name=scope)


# ---------------------------------------------------------------------------------------------
# Convolutions over other ranks
# ---------------------------------------------------------------------------------------------
def conv1d(value: Any = None, filters: Any = None, stride: Any = None, padding: Any = None,
           use_cudnn_on_gpu: Any = None, data_format: Optional[str] = None, name: Optional[str] = None,
           input: Any = None, dilations: Any = None) -> Any:  # noqa: A002
    """1-D convolution of [batch, width, in_channels] (NWC) with [width, in, out] filters, as a
    conv2d over a height of 1."""
    value = pick(input, "input", value, "value")
    with name_scope(name, "conv1d", [value, filters]) as scope:
        data_format = {None: "NWC", "NHWC": "NWC", "NCHW": "NCW"}.get(data_format, data_format)
        if data_format not in ("NWC", "NCW"):
            raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")
        spatial = 1 if data_format == "NWC" else 2
        channel_index = 2 if data_format == "NWC" else 1
        strides = [1] + get_sequence(stride, 1, channel_index, "stride")
        dilations = [1] + get_sequence(dilations, 1, channel_index, "dilations")
        padding, explicit = convert_padding(padding, 3)
        if padding == "EXPLICIT":
            explicit = [0, 0] + explicit
        x = expand_dims(value, spatial)
        f = expand_dims(filters, 0)
        out = apply_op(Conv2D, input=x, filter=f, strides=strides, dilations=dilations, padding=padding,
                       explicit_paddings=explicit, data_format="NHWC" if data_format == "NWC" else "NCHW",
                       use_cudnn_on_gpu=True if use_cudnn_on_gpu is None else use_cudnn_on_gpu)
        return squeeze(out, [spatial], name=scope)


def convolution(input: Any, filter: Any = None, padding: Any = None, strides: Any = None,  # noqa: A002
                dilation_rate: Any = None, name: Optional[str] = None, data_format: Optional[str] = None,
                filters: Any = None, dilations: Any = None) -> Any:
    """N-D convolution for N = 1 or 2 spatial dimensions (conv1d / conv2d with dilation_rate)."""
    filter = pick(filters, "filters", filter, "filter")  # noqa: A001
    dilation_rate = pick(dilations, "dilations", dilation_rate, "dilation_rate")
    f = convert_to_tensor(filter, name="filter")
    x = convert_to_tensor(input, name="input")
    rank = f.shape.ndims if f.shape.ndims is not None else x.shape.ndims
    if rank is None:
        raise ValueError("convolution needs the rank of `input` or `filter` to be known")
    num_spatial = rank - 2
    if num_spatial not in (1, 2):
        raise ValueError(f"convolution supports 1 or 2 spatial dimensions here (Conv1D/Conv2D); got a "
                         f"filter of rank {rank}")
    rates = get_sequence(dilation_rate, num_spatial, 1, "dilation_rate")
    steps = get_sequence(strides, num_spatial, 1, "strides")
    if max(rates[2:]) > 1 and max(steps[2:]) > 1:
        raise ValueError(f"strides > 1 not supported in conjunction with dilation_rate > 1; "
                         f"received: strides={strides}, dilation_rate={dilation_rate}")
    spatial_strides, spatial_rates = steps[2:], rates[2:]
    if num_spatial == 1:
        return conv1d(x, f, spatial_strides, padding, data_format=data_format, name=name or "convolution",
                      dilations=spatial_rates)
    return conv2d(x, f, spatial_strides, padding, data_format=data_format or "NHWC", dilations=spatial_rates,
                  name=name or "convolution")


# ---------------------------------------------------------------------------------------------
# More activations and losses (issue 11)
# ---------------------------------------------------------------------------------------------
def swish(features: Any, name: Optional[str] = None) -> Any:
    """x * sigmoid(x) (tf.nn.swish); its gradient is sigmoid(x) * (1 + x * (1 - sigmoid(x)))."""
    with name_scope(name, "swish", [features]):
        features = convert_to_tensor(features, name="features")
        return multiply(features, sigmoid(features))


def crelu(features: Any, name: Optional[str] = None, axis: int = -1) -> Any:
    """Concatenated ReLU: relu(concat([x, -x], axis)), doubling that axis."""
    with name_scope(name, "CRelu", [features]) as scope:
        features = convert_to_tensor(features, name="features")
        c = concat([features, negative(features)], axis, name=scope)
        return relu(c)


def log_poisson_loss(targets: Any, log_input: Any, compute_full_loss: bool = False,
                     name: Optional[str] = None) -> Any:
    """The Poisson negative log likelihood of `targets` given log rates: exp(log_input) -
    log_input * targets, plus, with `compute_full_loss`, Stirling's approximation of
    log(targets!) for targets > 1."""
    with name_scope(name, "log_poisson_loss", [log_input, targets]) as scope:
        log_input = convert_to_tensor(log_input, name="log_input")
        targets = convert_to_tensor(targets, name="targets")
        if not log_input.shape.is_compatible_with(targets.shape):
            raise ValueError(f"log_input and targets must have the same shape ({log_input.shape} vs "
                             f"{targets.shape})")
        result = subtract(exp(log_input), log_input * targets, name=None if compute_full_loss else scope)
        if compute_full_loss:
            dtype = targets.dtype
            half = convert_to_tensor(0.5, dtype=dtype)
            two_pi = convert_to_tensor(2 * np.pi, dtype=dtype)
            stirling = targets * log(targets) - targets + half * log(two_pi * targets)
            zeros, ones = zeros_like(targets), convert_to_tensor(1, dtype=dtype) + zeros_like(targets)
            small = logical_and(greater_equal(targets, zeros), less_equal(targets, ones))
            result = add(result, where_v2(small, zeros, stirling), name=scope)
        return result


def batch_norm_with_global_normalization(t: Any = None, m: Any = None, v: Any = None, beta: Any = None,
                                         gamma: Any = None, variance_epsilon: Any = None,
                                         scale_after_normalization: Any = None, name: Optional[str] = None,
                                         input: Any = None, mean: Any = None,  # noqa: A002
                                         variance: Any = None) -> Any:
    """TF1's older batch normalization: batch_normalization with `gamma` used only when
    `scale_after_normalization`."""
    t = pick(input, "input", t, "t")
    m = pick(mean, "mean", m, "m")
    v = pick(variance, "variance", v, "v")
    return batch_normalization(t, m, v, beta, gamma if scale_after_normalization else None, variance_epsilon,
                               name or "batchnorm")


# ---------------------------------------------------------------------------------------------
# 1-D pooling and transposed convolution, as their 2-D ops over a height of 1
# ---------------------------------------------------------------------------------------------
def _pool1d(op: OpDef, default_name: str, input: Any, ksize: Any, strides: Any, padding: Any,  # noqa: A002
            data_format: Optional[str], name: Optional[str]) -> Any:
    with name_scope(name, default_name, [input]) as scope:
        data_format = data_format or "NWC"
        if data_format not in ("NWC", "NCW"):
            raise ValueError(f"`data_format` must be 'NWC' or 'NCW'. Received: data_format={data_format}")
        channel_index = 1 if data_format.startswith("NC") else 2
        ksize = [1] + get_sequence(ksize, 1, channel_index, "ksize")
        strides = [1] + get_sequence(strides, 1, channel_index, "strides")
        expanding = 1 if data_format == "NWC" else 2
        out = apply_op(op, name=scope, **{"input" if op.name == "MaxPool" else "value": expand_dims(input, expanding)},
                       ksize=ksize, strides=strides, padding=padding,
                       data_format="NHWC" if data_format == "NWC" else "NCHW")
        return squeeze(out, [expanding])


def max_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
               name: Optional[str] = None) -> Any:
    """Max pooling over the width of [batch, width, channels] (NWC) or [batch, channels, width]."""
    return _pool1d(MaxPool, "MaxPool1d", input, ksize, strides, padding, data_format, name)


def avg_pool1d(input: Any, ksize: Any, strides: Any, padding: Any, data_format: str = "NWC",  # noqa: A002
               name: Optional[str] = None) -> Any:
    """Average pooling over the width of [batch, width, channels] (NWC) or [batch, channels, width]."""
    return _pool1d(AvgPool, "AvgPool1D", input, ksize, strides, padding, data_format, name)


def conv1d_transpose(input: Any, filters: Any, output_shape: Any, strides: Any, padding: str = "SAME",  # noqa: A002
                     data_format: str = "NWC", dilations: Any = None, name: Optional[str] = None) -> Any:
    """The transpose of conv1d: conv2d_backprop_input over a height of 1, with `filters`
    [width, output_channels, in_channels], producing `output_shape` [batch, width, channels]."""
    with name_scope(name, "conv1d_transpose", [input, filters, output_shape]) as scope:
        if data_format in (None, "NWC"):
            fmt, spatial, channel_index = "NHWC", 1, 2
        elif data_format == "NCW":
            fmt, spatial, channel_index = "NCHW", 2, 1
        else:
            raise ValueError('data_format must be "NWC" or "NCW".')
        strides = [1] + get_sequence(strides, 1, channel_index, "stride")
        dilations = [1] + get_sequence(dilations, 1, channel_index, "dilations")
        x = expand_dims(input, spatial)
        f = expand_dims(filters, 0)
        if not isinstance(output_shape, Tensor):
            output_shape = list(output_shape)
        sizes = concat([output_shape[:spatial], [1], output_shape[spatial:]], 0)
        out = apply_op(Conv2DBackpropInput, name=scope, input_sizes=sizes, filter=f, out_backprop=x,
                       strides=strides, padding=padding, data_format=fmt, dilations=dilations)
        return squeeze(out, [spatial])


def ctc_loss(labels: Any, inputs: Any = None, sequence_length: Any = None, preprocess_collapse_repeated: bool = False,
             ctc_merge_repeated: bool = True, ignore_longer_outputs_than_inputs: bool = False, time_major: bool = True,
             logits: Any = None) -> Any:
    """The CTC loss per batch element ([batch]) of the label SparseTensor `labels` (indices
    [batch, position], int32 values) given unnormalised `inputs` [max_time, batch, num_classes]
    ([batch, max_time, num_classes] with time_major=False); class num_classes - 1 is the blank."""
    if not isinstance(labels, SparseTensor):
        raise TypeError("Expected labels (first argument) to be a SparseTensor")
    if inputs is not None and logits is not None:
        raise ValueError("Cannot specify both 'logits' and 'inputs'")
    inputs = convert_to_tensor(inputs if logits is None else logits, name="logits")
    if not time_major:
        inputs = transpose(inputs, [1, 0, 2])  # (B,T,N) => (T,B,N)
    loss, _ = ctc_loss_op(inputs, labels.indices, labels.values, sequence_length,
                          preprocess_collapse_repeated=preprocess_collapse_repeated,
                          ctc_merge_repeated=ctc_merge_repeated,
                          ignore_longer_outputs_than_inputs=ignore_longer_outputs_than_inputs)
    return loss
