"""Neural-network ops (`tf.nn`): the activations (Relu, Relu6, Elu, Selu, Softplus, Softsign,
LeakyRelu) and their *Grad ops, Softmax / LogSoftmax, BiasAdd / BiasAddGrad, L2Loss, TopKV2 and
InTopK / InTopKV2, with their 1:1 wrappers.

Composites built on them (softmax along any axis, leaky_relu of integers, dropout, xw_plus_b,
relu_layer, zero_fraction) are in nn_impl.py; the gradients in grad.py.

Kernels are built once per node and return lean closures over NumPy ufuncs: they run in every
training step, so each saves the Python work it can (constants typed once, in-place ufuncs).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, name_scope
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op, OpDef
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import _util
from tensorweave.ops._util import invalid, shape_error
from tensorweave.ops._util import register_kernel as _kernel
from tensorweave.ops.kernels import buffer_forwarding
from tensorweave.ops.kernels.buffer_forwarding import forwardable
from tensorweave.ops.kernels.elementwise import forwarding_unary, may_forward, split_binary
from tensorweave.ops.kernels.intra_op import ElementwiseSplitter

__all__ = ["relu", "relu6", "elu", "selu", "softplus", "softsign", "bias_add", "l2_loss", "top_k",
           "in_top_k"]

_FLOATS = "float16, float32, float64"
_REALS = "realnumbertype"
SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


# ---------------------------------------------------------------------------------------------
# Activations: features -> activations, and their *Grad ops (gradients, features|outputs)
# ---------------------------------------------------------------------------------------------
def _activation_op(name: str, types: str, second: str = "features",
                   attrs: tuple[str, ...] = ()) -> tuple[OpDef, OpDef]:
    """Declares `name` and `name`Grad; `second` names the grad op's second input (TF uses the
    forward output for Elu/Selu, whose derivative is a function of it)."""
    op = define_op(name, inputs=["features: T"], outputs=["activations: T"],
                   attrs=[*attrs, f"T: {{{types}}}"], shape_fn=_util.unchanged)
    grad = define_op(f"{name}Grad", inputs=["gradients: T", f"{second}: T"], outputs=["backprops: T"],
                     attrs=[*attrs, f"T: {{{types}}}"], shape_fn=_util.merge_all_inputs)
    return op, grad


Relu, ReluGrad = _activation_op("Relu", _REALS)
Relu6, Relu6Grad = _activation_op("Relu6", _REALS)
Elu, EluGrad = _activation_op("Elu", _FLOATS, second="outputs")
Selu, SeluGrad = _activation_op("Selu", _FLOATS, second="outputs")
Softplus, SoftplusGrad = _activation_op("Softplus", _FLOATS)
Softsign, SoftsignGrad = _activation_op("Softsign", _FLOATS)
LeakyRelu, LeakyReluGrad = _activation_op("LeakyRelu", _FLOATS, attrs=("alpha: float = 0.2",))


def _zero(ctx: KernelContext) -> Any:
    return np.zeros((), dtype=ctx.output_dtypes[0].as_numpy_dtype)


def _typed(ctx: KernelContext, value: float) -> Any:
    """A Python constant as a 0-d array of the kernel's dtype (float16 stays float16)."""
    return np.asarray(value, dtype=ctx.output_dtypes[0].as_numpy_dtype)


@_kernel(Relu)
def _relu_kernel(ctx: KernelContext) -> Callable:
    maximum, zero = ctx.xp.maximum, _zero(ctx)
    return forwarding_unary(ctx, lambda x: maximum(x, zero), lambda out, x: maximum(x, zero, out=out))


@_kernel(ReluGrad)
def _relu_grad_kernel(ctx: KernelContext) -> Callable:
    multiply, greater, zero = ctx.xp.multiply, ctx.xp.greater, _zero(ctx)
    # A product with the mask, as TF's kernel (an inf gradient on an off unit gives NaN there
    # too); several times faster than a select in NumPy.
    plain = lambda g, x: multiply(g, greater(x, zero))  # noqa: E731
    if not may_forward(ctx, (0, 1)):
        return plain
    split = ElementwiseSplitter.for_kernel(ctx)
    dtype, least = np.dtype(ctx.output_dtypes[0].as_numpy_dtype), buffer_forwarding.MIN_FORWARD_ELEMENTS

    def compute(g: Any, x: Any) -> Any:
        shape = np.shape(g)
        if shape != np.shape(x) or g.size < least:
            return plain(g, x)
        # g, then x: each is bound only to its parameter here (buffer_forwarding counts)
        out = g if forwardable(g, shape, dtype) else x if forwardable(x, shape, dtype) else None
        if split is not None and split.wants_split(g.size, shape):
            return split.run(lambda o, gb, xb: multiply(gb, greater(xb, zero), out=o), shape, dtype, g, x,
                             out=out)
        if out is None:
            return plain(g, x)
        return multiply(g, greater(x, zero), out=out)

    return compute


@_kernel(Relu6)
def _relu6_kernel(ctx: KernelContext) -> Callable:
    maximum, minimum, zero, six = ctx.xp.maximum, ctx.xp.minimum, _zero(ctx), _typed(ctx, 6)

    def compute(x: Any) -> Any:
        y = maximum(x, zero)
        return minimum(y, six, out=y) if y.ndim else minimum(y, six)

    return forwarding_unary(ctx, compute, lambda out, x: minimum(maximum(x, zero, out=out), six, out=out))


@_kernel(Relu6Grad)
def _relu6_grad_kernel(ctx: KernelContext) -> Callable:
    multiply, zero, six = ctx.xp.multiply, _zero(ctx), _typed(ctx, 6)
    return lambda g, x: multiply(g, (x > zero) & (x < six))


@_kernel(Elu)
def _elu_kernel(ctx: KernelContext) -> Callable:
    where, expm1, minimum, zero = ctx.xp.where, ctx.xp.expm1, ctx.xp.minimum, _zero(ctx)
    # expm1 of min(x, 0): the untaken branch must not overflow for large x.
    return lambda x: where(x < zero, expm1(minimum(x, zero)), x)


@_kernel(EluGrad)
def _elu_grad_kernel(ctx: KernelContext) -> Callable:
    where, zero, one = ctx.xp.where, _zero(ctx), _typed(ctx, 1)
    return lambda g, y: where(y < zero, g * (y + one), g)


@_kernel(Selu)
def _selu_kernel(ctx: KernelContext) -> Callable:
    where, expm1, minimum, zero = ctx.xp.where, ctx.xp.expm1, ctx.xp.minimum, _zero(ctx)
    scale, scale_alpha = _typed(ctx, SELU_SCALE), _typed(ctx, SELU_SCALE * SELU_ALPHA)
    return lambda x: where(x < zero, scale_alpha * expm1(minimum(x, zero)), scale * x)


@_kernel(SeluGrad)
def _selu_grad_kernel(ctx: KernelContext) -> Callable:
    where, zero = ctx.xp.where, _zero(ctx)
    scale, scale_alpha = _typed(ctx, SELU_SCALE), _typed(ctx, SELU_SCALE * SELU_ALPHA)
    return lambda g, y: where(y < zero, g * (y + scale_alpha), g * scale)


@_kernel(Softplus)
def _softplus_kernel(ctx: KernelContext) -> Callable:
    logaddexp, zero = ctx.xp.logaddexp, _zero(ctx)
    return lambda x: logaddexp(x, zero)  # log(1 + e^x) without overflow


@_kernel(SoftplusGrad)
def _softplus_grad_kernel(ctx: KernelContext) -> Callable:
    exp, one = ctx.xp.exp, _typed(ctx, 1)
    return lambda g, x: g / (one + exp(-x))  # g * sigmoid(x)


@_kernel(Softsign)
def _softsign_kernel(ctx: KernelContext) -> Callable:
    absolute, one = ctx.xp.absolute, _typed(ctx, 1)
    return lambda x: x / (one + absolute(x))


@_kernel(SoftsignGrad)
def _softsign_grad_kernel(ctx: KernelContext) -> Callable:
    absolute, square, one = ctx.xp.absolute, ctx.xp.square, _typed(ctx, 1)
    return lambda g, x: g / square(one + absolute(x))


@_kernel(LeakyRelu)
def _leaky_relu_kernel(ctx: KernelContext) -> Callable:
    where, zero, alpha = ctx.xp.where, _zero(ctx), _typed(ctx, ctx.attr("alpha"))
    return lambda x: where(x > zero, x, x * alpha)


@_kernel(LeakyReluGrad)
def _leaky_relu_grad_kernel(ctx: KernelContext) -> Callable:
    where, zero, alpha = ctx.xp.where, _zero(ctx), _typed(ctx, ctx.attr("alpha"))
    return lambda g, x: where(x > zero, g, g * alpha)


def relu(features: Any, name: Optional[str] = None) -> Any:
    """Computes rectified linear: max(features, 0)."""
    return apply_op(Relu, name=name, features=features)


def relu6(features: Any, name: Optional[str] = None) -> Any:
    """Computes rectified linear 6: min(max(features, 0), 6)."""
    return apply_op(Relu6, name=name, features=features)


def elu(features: Any, name: Optional[str] = None) -> Any:
    """Exponential linear: exp(features) - 1 if < 0, features otherwise."""
    return apply_op(Elu, name=name, features=features)


def selu(features: Any, name: Optional[str] = None) -> Any:
    """Scaled exponential linear: scale * alpha * (exp(features) - 1) if < 0, scale * features
    otherwise."""
    return apply_op(Selu, name=name, features=features)


def softplus(features: Any, name: Optional[str] = None) -> Any:
    """Computes log(exp(features) + 1)."""
    return apply_op(Softplus, name=name, features=features)


def softsign(features: Any, name: Optional[str] = None) -> Any:
    """Computes features / (abs(features) + 1)."""
    return apply_op(Softsign, name=name, features=features)


# ---------------------------------------------------------------------------------------------
# Softmax, LogSoftmax (along the last dimension; nn_impl.softmax moves other axes last)
# ---------------------------------------------------------------------------------------------
def _at_least_rank_1(op: Operation) -> list[TensorShape]:
    shape = op.inputs[0].shape
    if shape.ndims == 0:
        raise shape_error(op, "Shape must be at least rank 1 but is rank 0")
    return [shape]


Softmax = define_op("Softmax", inputs=["logits: T"], outputs=["softmax: T"],
                    attrs=[f"T: {{{_FLOATS}}}"], shape_fn=_at_least_rank_1)
LogSoftmax = define_op("LogSoftmax", inputs=["logits: T"], outputs=["logsoftmax: T"],
                       attrs=[f"T: {{{_FLOATS}}}"], shape_fn=_at_least_rank_1)


def _trivial_logits(x: Any) -> bool:
    """True for empty logits (the result is empty too); InvalidArgumentError for scalars."""
    if x.ndim == 0:
        raise invalid("logits must have >= 1 dimension, got []")
    return x.size == 0


@_kernel(Softmax)
def _softmax_kernel(ctx: KernelContext) -> Callable:
    exp, subtract, divide = ctx.xp.exp, ctx.xp.subtract, ctx.xp.divide

    def compute(x: Any) -> Any:
        if x.size <= 1 and _trivial_logits(x):
            return x.copy()
        e = subtract(x, x.max(axis=-1, keepdims=True))  # shift by the max: exp can't overflow
        exp(e, out=e)
        return divide(e, e.sum(axis=-1, keepdims=True), out=e)

    return compute


@_kernel(LogSoftmax)
def _log_softmax_kernel(ctx: KernelContext) -> Callable:
    exp, log, subtract = ctx.xp.exp, ctx.xp.log, ctx.xp.subtract

    def compute(x: Any) -> Any:
        if x.size <= 1 and _trivial_logits(x):
            return x.copy()
        shifted = subtract(x, x.max(axis=-1, keepdims=True))
        return subtract(shifted, log(exp(shifted).sum(axis=-1, keepdims=True)), out=shifted)

    return compute


# ---------------------------------------------------------------------------------------------
# BiasAdd, BiasAddGrad
# ---------------------------------------------------------------------------------------------
_DATA_FORMAT = "data_format: {'NHWC', 'NCHW'} = 'NHWC'"


def _channel_axis(data_format: str, rank: int) -> int:
    return 1 if data_format == "NCHW" else rank - 1


def _min_rank(data_format: str) -> int:
    return 3 if data_format == "NCHW" else 2


def _bias_add_shape(op: Operation) -> list[TensorShape]:
    value, bias = op.inputs[0].shape, op.inputs[1].shape
    data_format = op._get_attr("data_format")
    if bias.ndims is not None and bias.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {bias.ndims}")
    if value.ndims is None:
        return [unknown_shape()]
    if value.ndims < _min_rank(data_format):
        raise shape_error(op, f"Shape must be at least rank {_min_rank(data_format)} but is rank {value.ndims}")
    dims = value.as_list()
    axis = _channel_axis(data_format, value.ndims)
    channels = bias.as_list()[0] if bias.ndims == 1 else None
    if dims[axis] is not None and channels is not None and dims[axis] != channels:
        raise shape_error(op, f"Dimensions must be equal, but are {dims[axis]} and {channels}")
    dims[axis] = dims[axis] if dims[axis] is not None else channels
    return [TensorShape(dims)]


BiasAdd = define_op("BiasAdd", inputs=["value: T", "bias: T"], outputs=["output: T"],
                    attrs=["T: numbertype", _DATA_FORMAT], shape_fn=_bias_add_shape)


def _bias_add_check(x: Any, b: Any, data_format: str) -> None:
    if x.ndim < _min_rank(data_format):
        raise invalid(f"Input tensor must be at least {_min_rank(data_format)}D: {list(x.shape)}")
    if b.ndim != 1:
        raise invalid(f"Biases must be 1D: {list(b.shape)}")
    channels = x.shape[_channel_axis(data_format, x.ndim)]
    if b.shape[0] != channels:
        raise invalid(f"Must provide as many biases as the channel dimension of the input tensor: "
                       f"{list(b.shape)} vs. {list(x.shape)}")


@_kernel(BiasAdd)
def _bias_add_kernel(ctx: KernelContext) -> Callable:
    add, data_format = ctx.xp.add, ctx.attr("data_format")
    static_ok = all(t.shape.is_fully_defined() for t in ctx.op.inputs)  # shape fn checked them
    if data_format == "NHWC":
        large = split_binary(ctx, add, add, lambda xs, ys: invalid(f"Incompatible shapes: {xs} vs. {ys}"))
        if static_ok:
            return large

        def compute(x: Any, b: Any) -> Any:
            if b.ndim != 1 or x.ndim < 2 or x.shape[-1] != b.shape[0]:
                _bias_add_check(x, b, data_format)
            return large(x, b)

        return compute

    def compute_nchw(x: Any, b: Any) -> Any:
        _bias_add_check(x, b, data_format)
        return add(x, b.reshape((-1,) + (1,) * (x.ndim - 2)))

    return compute_nchw


def _bias_add_grad_shape(op: Operation) -> list[TensorShape]:
    grad = op.inputs[0].shape
    data_format = op._get_attr("data_format")
    if grad.ndims is None:
        return [unknown_shape(1)]
    if grad.ndims < _min_rank(data_format):
        raise shape_error(op, f"Shape must be at least rank {_min_rank(data_format)} but is rank {grad.ndims}")
    return [TensorShape([grad.dims[_channel_axis(data_format, grad.ndims)]])]


BiasAddGrad = define_op("BiasAddGrad", inputs=["out_backprop: T"], outputs=["output: T"],
                        attrs=["T: numbertype", _DATA_FORMAT], shape_fn=_bias_add_grad_shape)


@_kernel(BiasAddGrad)
def _bias_add_grad_kernel(ctx: KernelContext) -> Callable:
    data_format = ctx.attr("data_format")
    # Channels last, float or complex: a BLAS gemv of a ones vector with the [rows, channels]
    # matrix reads the gradient once at memory speed; NumPy's sum over axis 0 ran 4x slower on
    # [50176, 32] float32 (0.83 against 0.19 ms), with a similar rounding error.
    blas = data_format == "NHWC" and ctx.xp is np and np.dtype(ctx.attr("T").as_numpy_dtype).kind in "fc"
    ones: list[Any] = [None]

    def compute(g: Any) -> Any:
        if g.ndim < _min_rank(data_format):
            raise invalid(f"Input tensor must be at least {_min_rank(data_format)}D: {list(g.shape)}")
        axis = _channel_axis(data_format, g.ndim)
        if blas and g.size:
            rows = g.size // g.shape[-1]
            vector = ones[0]  # one read: concurrent steps may swap in another size
            if vector is None or vector.shape[0] != rows:
                vector = ones[0] = np.ones(rows, g.dtype)
            return np.dot(vector, g.reshape(rows, g.shape[-1]))
        if g.ndim == 2 and axis == 1:
            return g.sum(axis=0, dtype=g.dtype)  # NumPy would widen small ints to int64
        return g.sum(axis=tuple(i for i in range(g.ndim) if i != axis), dtype=g.dtype)

    return compute


def _data_format(data_format: Optional[str]) -> Optional[str]:
    """TF1's bias_add accepts any N...C / NC... spelling (NHWC, NDHWC, NCHW, NCDHW)."""
    if data_format is None:
        return None
    if data_format.startswith("NC"):
        return "NCHW"
    if data_format.startswith("N") and data_format.endswith("C"):
        return "NHWC"
    raise ValueError("data_format must be of the form `N...C` or `NC...`")


def bias_add(value: Any, bias: Any, data_format: Optional[str] = None, name: Optional[str] = None) -> Any:
    """Adds the 1-D `bias` along the channel dimension of `value` (the last one for NHWC, the
    second for NCHW), broadcasting over the others."""
    with name_scope(name, "BiasAdd", [value, bias]) as scope:
        data_format = _data_format(data_format)
        value = convert_to_tensor(value, name="input")
        bias = convert_to_tensor(bias, dtype=value.dtype.base_dtype, name="bias")
        return apply_op(BiasAdd, name=scope, value=value, bias=bias, data_format=data_format)


# ---------------------------------------------------------------------------------------------
# L2Loss
# ---------------------------------------------------------------------------------------------
L2Loss = define_op("L2Loss", inputs=["t: T"], outputs=["output: T"], attrs=[f"T: {{{_FLOATS}}}"],
                   shape_fn=_util.scalar)


@_kernel(L2Loss)
def _l2_loss_kernel(ctx: KernelContext) -> Callable:
    vdot, half = ctx.xp.vdot, _typed(ctx, 0.5)
    dtype = ctx.output_dtypes[0].as_numpy_dtype

    def compute(t: Any) -> Any:
        flat = t.reshape(-1)
        return np.asarray(vdot(flat, flat) * half, dtype=dtype)

    return compute


def l2_loss(t: Any, name: Optional[str] = None) -> Any:
    """sum(t ** 2) / 2, a scalar (without the square root)."""
    return apply_op(L2Loss, name=name, t=t)


# ---------------------------------------------------------------------------------------------
# TopKV2, InTopK, InTopKV2
# ---------------------------------------------------------------------------------------------
def _top_k_shape(op: Operation) -> list[TensorShape]:
    x = op.inputs[0].shape
    k = tensor_util.constant_value(op.inputs[1])
    if x.ndims == 0:
        raise shape_error(op, "Shape must be at least rank 1 but is rank 0")
    if k is not None and int(k) < 0:
        raise shape_error(op, f"Need k >= 0, got {int(k)}")
    if x.ndims is None:
        return [unknown_shape()] * 2
    last = x.dims[-1].value
    if k is not None and last is not None and last < int(k):
        raise shape_error(op, f"input must have last dimension >= k = {int(k)} but is {last}")
    shape = TensorShape(x.dims[:-1] + [None if k is None else int(k)])
    return [shape, shape]


TopKV2 = define_op("TopKV2", inputs=["input: T", "k: Tk"], outputs=["values: T", "indices: index_type"],
                   attrs=["sorted: bool = true", "T: realnumbertype", "Tk: {int16, int32, int64} = int32",
                          "index_type: {int16, int32, int64} = int32"], shape_fn=_top_k_shape)


@_kernel(TopKV2)
def _top_k_kernel(ctx: KernelContext) -> Callable:
    xp = ctx.xp
    index_dtype = ctx.output_dtypes[1].as_numpy_dtype

    def compute(x: Any, k: Any) -> tuple[Any, Any]:
        k = int(k)
        if k < 0:
            raise invalid(f"Need k >= 0, got {k}")
        if x.ndim < 1:
            raise invalid(f"input must be >= 1-D, got shape {list(x.shape)}")
        n = x.shape[-1]
        if n < k:
            raise invalid(f"input must have at least k columns. Had {n}, needed {k}")
        # Descending with ties to the lower index (TF's order): a stable ascending sort of
        # the reversed row, read backwards.
        order = xp.argsort(x[..., ::-1], axis=-1, kind="stable")[..., ::-1][..., :k]
        indices = (n - 1) - order
        return xp.take_along_axis(x, indices, axis=-1), indices.astype(index_dtype, copy=False)

    return compute


def top_k(input: Any, k: Any = 1, sorted: bool = True, name: Optional[str] = None,  # noqa: A002
          index_type: Any = _dtypes.int32) -> tuple[Any, Any]:
    """The `k` largest entries along the last dimension and their indices (`values`,
    `indices`); equal values keep their order (the lower index first)."""
    values, indices = apply_op(TopKV2, name=name, input=input, k=k, sorted=sorted, index_type=index_type)
    return _TopKResult(values, indices)


class _TopKResult(tuple):
    """TF's TopKV2 namedtuple (values, indices)."""

    def __new__(cls, values: Any, indices: Any) -> "_TopKResult":
        return super().__new__(cls, (values, indices))

    values = property(lambda self: self[0])
    indices = property(lambda self: self[1])


def _in_top_k_shape(op: Operation) -> list[TensorShape]:
    predictions, targets = op.inputs[0].shape, op.inputs[1].shape
    if predictions.ndims is not None and predictions.ndims != 2:
        raise shape_error(op, f"Shape must be rank 2 but is rank {predictions.ndims}")
    if targets.ndims is not None and targets.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {targets.ndims}")
    batch = predictions.dims[0] if predictions.ndims == 2 else None
    try:
        out = TensorShape([batch]).merge_with(targets if targets.ndims is not None else unknown_shape(1))
    except ValueError:
        raise shape_error(op, f"Dimensions must be equal, but are {batch} and {targets.dims[0]}") from None
    return [out]


InTopK = define_op("InTopK", inputs=["predictions: float32", "targets: T"], outputs=["precision: bool"],
                   attrs=["k: int", "T: {int32, int64} = int32"], shape_fn=_in_top_k_shape)
InTopKV2 = define_op("InTopKV2", inputs=["predictions: float32", "targets: T", "k: T"],
                     outputs=["precision: bool"], attrs=["T: {int32, int64} = int32"],
                     shape_fn=_in_top_k_shape)
InTopK.not_differentiable()
InTopKV2.not_differentiable()


def _in_top_k(xp: Any, predictions: Any, targets: Any, k: int) -> Any:
    """TF's rule: a row with any non-finite prediction, or an out-of-range target, is False;
    otherwise True when fewer than k classes score strictly higher than the target (ties
    count in the target's favour)."""
    if predictions.ndim != 2:
        raise invalid(f"predictions must be 2-dimensional, got {list(predictions.shape)}")
    if targets.ndim != 1 or targets.shape[0] != predictions.shape[0]:
        raise invalid(f"First dimension of predictions {predictions.shape[0]} must match length of "
                       f"targets {targets.shape[0] if targets.ndim else targets.shape}")
    batch, classes = predictions.shape
    valid = (targets >= 0) & (targets < classes)
    safe = xp.where(valid, targets, 0)
    target_scores = predictions[xp.arange(batch), safe][:, None]
    higher = (predictions > target_scores).sum(axis=1)
    finite = xp.isfinite(predictions).all(axis=1)
    return valid & finite & (higher < k)


@_kernel(InTopK)
def _in_top_k_kernel(ctx: KernelContext) -> Callable:
    xp, k = ctx.xp, ctx.attr("k")
    return lambda predictions, targets: _in_top_k(xp, predictions, targets, k)


@_kernel(InTopKV2)
def _in_top_k_v2_kernel(ctx: KernelContext) -> Callable:
    xp = ctx.xp

    def compute(predictions: Any, targets: Any, k: Any) -> Any:
        if np.ndim(k) != 0:
            raise invalid(f"k must be 0-D, got shape {list(np.shape(k))}")
        return _in_top_k(xp, predictions, targets, int(k))

    return compute


def in_top_k(predictions: Any, targets: Any, k: Any, name: Optional[str] = None) -> Any:
    """For each row, whether `targets[i]` is among the top `k` of `predictions[i]` (a bool
    vector). Ties count for the target; rows with non-finite predictions give False."""
    with name_scope(name, "in_top_k", [predictions, targets]) as scope:
        return apply_op(InTopKV2, name=scope, predictions=predictions, targets=targets, k=k)
