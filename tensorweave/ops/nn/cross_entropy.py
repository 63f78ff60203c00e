"""Cross-entropy losses of `tf.nn`: the fused SoftmaxCrossEntropyWithLogits and
SparseSoftmaxCrossEntropyWithLogits ops (loss and backprop from one pass, as TF's kernels),
their gradients, and the composite sigmoid / weighted cross-entropies.

The softmax wrappers accept TF1's keyword form (`labels=..., logits=...`) and also the
positional form of the OSDI'16 paper's Figure 1, `softmax_cross_entropy_with_logits(logits,
labels)` (the pre-1.0 argument order).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import name_scope
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import array as array_ops, math as math_ops
from tensorweave.ops._util import shape_error
from tensorweave.ops.kernels.buffer_forwarding import forwardable
from tensorweave.ops.kernels.intra_op import ChunkRunner, split_bounds
from tensorweave.ops.nn.grad import register
from tensorweave.ops.nn.nn_ops import log_softmax, relu, softmax
from tensorweave.ops._util import register_kernel as _kernel
from tensorweave.ops._util import invalid

__all__ = ["softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
           "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
           "weighted_cross_entropy_with_logits"]

_FLOATS = "T: {float16, float32, float64}"


# ---------------------------------------------------------------------------------------------
# The fused ops
# ---------------------------------------------------------------------------------------------
def _xent_shape(op: Any) -> list[TensorShape]:
    logits, labels = op.inputs[0].shape, op.inputs[1].shape
    for what, shape in (("logits", logits), ("labels", labels)):
        if shape.ndims is not None and shape.ndims != 2:
            raise shape_error(op, f"Shape must be rank 2 but is rank {shape.ndims} ({what})")
    try:
        merged = (logits if logits.ndims is not None else unknown_shape(2)).merge_with(
            labels if labels.ndims is not None else unknown_shape(2))
    except ValueError:
        raise shape_error(op, "logits and labels must be the same size") from None
    return [TensorShape([merged.dims[0]]), merged]


def _sparse_xent_shape(op: Any) -> list[TensorShape]:
    logits, labels = op.inputs[0].shape, op.inputs[1].shape
    if logits.ndims is not None and logits.ndims != 2:
        raise shape_error(op, f"Shape must be rank 2 but is rank {logits.ndims}")
    if labels.ndims is not None and labels.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {labels.ndims}")
    logits = logits if logits.ndims is not None else unknown_shape(2)
    try:
        batch = TensorShape([logits.dims[0]]).merge_with(labels if labels.ndims is not None else unknown_shape(1))
    except ValueError:
        raise shape_error(op, f"Dimensions must be equal, but are {logits.dims[0]} and {labels.dims[0]}") from None
    return [batch, TensorShape([batch.dims[0], logits.dims[1]])]


SoftmaxCrossEntropyWithLogits = define_op(
    "SoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: T"],
    outputs=["loss: T", "backprop: T"], attrs=[_FLOATS], shape_fn=_xent_shape)
SparseSoftmaxCrossEntropyWithLogits = define_op(
    "SparseSoftmaxCrossEntropyWithLogits", inputs=["features: T", "labels: Tlabels"],
    outputs=["loss: T", "backprop: T"], attrs=[_FLOATS, "Tlabels: {int32, int64} = int64"],
    shape_fn=_sparse_xent_shape)


# Above this many logits the rows are split across the device's threads (exp dominates: on
# [400, 10000] float32, 4.6 ms on one thread, 2.9 ms on two, quiet 2-core machine); below it
# one pass over the whole batch, as a thread hop costs more.
_PARALLEL_LOGITS = 1 << 18
_CHUNKS_PER_THREAD = 4  # small row blocks balance a helper that starts late


class _RowSplitter:
    """Runs a rows function over blocks of rows: on the caller alone for small batches,
    otherwise over a ChunkRunner (each block's passes then also stay in cache)."""

    def __init__(self, ctx: Any) -> None:
        self.runner = ChunkRunner.for_kernel(ctx, uses_blas=False) if ctx.xp is np else None

    def run(self, rows_fn: Callable[..., None], *arrays: Any) -> None:
        """rows_fn(*blocks) over blocks of rows of `arrays` (all of them split along axis 0)."""
        runner, rows = self.runner, arrays[0].shape[0]
        if runner is None or not runner.helpers or rows < 2 or arrays[0].size < _PARALLEL_LOGITS:
            rows_fn(*arrays)
            return
        bounds = split_bounds(rows, min(rows, (runner.helpers + 1) * _CHUNKS_PER_THREAD))
        runner.run(len(bounds) - 1, lambda i: rows_fn(*(a[bounds[i]:bounds[i + 1]] for a in arrays)))


def _softmax_parts(xp: Any, logits: Any) -> tuple[Any, Any]:
    """(logits - max, exp of that / its row sum): the log-sum-exp shift keeps exp finite.
    The array-namespace form, for devices other than NumPy's."""
    shifted = logits - logits.max(axis=1, keepdims=True)
    probs = xp.exp(shifted)
    sums = probs.sum(axis=1, keepdims=True)
    probs /= sums
    xp.log(sums, out=sums)
    shifted -= sums  # now log_softmax
    return shifted, probs


def _dense_rows(logits: np.ndarray, labels: np.ndarray, loss: np.ndarray, backprop: np.ndarray) -> None:
    """Rows of SoftmaxCrossEntropyWithLogits written into `loss` and `backprop`, with the
    operations (and so the rounding) of `_softmax_parts`, but one temporary per block."""
    shifted = np.subtract(logits, logits.max(axis=1, keepdims=True))
    np.exp(shifted, out=backprop)
    sums = backprop.sum(axis=1, keepdims=True)
    backprop /= sums
    shifted -= np.log(sums)  # log_softmax
    np.negative(np.einsum("ij,ij->i", labels, shifted), out=loss)
    backprop -= labels


def _sparse_rows(logits: np.ndarray, labels: np.ndarray, loss: np.ndarray, backprop: np.ndarray) -> None:
    """Rows of SparseSoftmaxCrossEntropyWithLogits: the shifted logits go straight into
    `backprop` and become the probabilities there in place; the loss only needs the label's
    shifted logit and the log of the row sum (log(sum) - shifted[label] = -log_softmax[label])."""
    np.subtract(logits, logits.max(axis=1, keepdims=True), out=backprop)
    rows = np.arange(logits.shape[0])
    picked = backprop[rows, labels]
    np.exp(backprop, out=backprop)
    sums = backprop.sum(axis=1, keepdims=True)
    np.log(sums[:, 0], out=loss)
    loss -= picked
    backprop /= sums
    backprop[rows, labels] -= 1


@_kernel(SoftmaxCrossEntropyWithLogits)
def _xent_kernel(ctx: Any) -> Callable:
    xp = ctx.xp
    checked = all(t.shape.is_fully_defined() for t in ctx.op.inputs)
    splitter = _RowSplitter(ctx)

    def compute(logits: Any, labels: Any) -> tuple[Any, Any]:
        if not checked and (logits.ndim != 2 or logits.shape != labels.shape):
            raise invalid(f"logits and labels must be the same size: logits_size={list(logits.shape)} "
                           f"labels_size={list(labels.shape)}")
        if logits.shape[1] == 0:
            return xp.zeros(logits.shape[0], logits.dtype), xp.zeros_like(logits)
        if xp is not np:
            log_probs, probs = _softmax_parts(xp, logits)
            probs -= labels
            return -xp.einsum("ij,ij->i", labels, log_probs), probs
        # the backprop goes into the logits when nothing else holds them (_dense_rows reads first)
        if forwardable(logits, logits.shape, logits.dtype):
            backprop = logits
        else:
            backprop = np.empty(logits.shape, logits.dtype)
        loss = np.empty(logits.shape[0], logits.dtype)
        splitter.run(_dense_rows, logits, labels, loss, backprop)
        return loss, backprop

    return compute


def _bad_label(labels: Any, classes: int) -> None:
    first = int(labels[(labels < 0) | (labels >= classes)][0])
    raise invalid(f"Received a label value of {first} which is outside the valid range of [0, {classes}).  "
                   f"Label values: " + " ".join(str(v) for v in labels.tolist()))


@_kernel(SparseSoftmaxCrossEntropyWithLogits)
def _sparse_xent_kernel(ctx: Any) -> Callable:
    xp = ctx.xp
    splitter = _RowSplitter(ctx)

    def compute(logits: Any, labels: Any) -> tuple[Any, Any]:
        if logits.ndim != 2 or labels.ndim != 1 or labels.shape[0] != logits.shape[0]:
            raise invalid(f"logits and labels must have the same first dimension, got logits shape "
                           f"{list(logits.shape)} and labels shape {list(labels.shape)}")
        batch, classes = logits.shape
        if batch and (labels.min() < 0 or labels.max() >= classes):
            _bad_label(labels, classes)
        if classes == 0:
            return xp.zeros(batch, logits.dtype), xp.zeros_like(logits)
        if xp is not np:
            log_probs, probs = _softmax_parts(xp, logits)
            rows = xp.arange(batch)
            probs[rows, labels] -= 1
            return -log_probs[rows, labels], probs
        # The backprop goes into the logits when nothing else holds them (as TF's kernel):
        # _sparse_rows reads each element before writing it.
        if forwardable(logits, logits.shape, logits.dtype):
            backprop = logits
        else:
            backprop = np.empty(logits.shape, logits.dtype)
        loss = np.empty(batch, logits.dtype)
        splitter.run(_sparse_rows, logits, labels, loss, backprop)
        return loss, backprop

    return compute


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


@register(SoftmaxCrossEntropyWithLogits)
def _xent_grad(op: Any, grad_loss: Any, grad_grad: Any) -> list[Any]:
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


@register(SparseSoftmaxCrossEntropyWithLogits)
def _sparse_xent_grad(op: Any, grad_loss: Any, grad_grad: Any) -> list[Any]:
    logits_grad = array_ops.expand_dims(grad_loss, -1) * op.outputs[1]
    if not _is_zero(grad_grad):
        logits_grad = logits_grad + _softmax_jvp(op.inputs[0], grad_grad)
    return [logits_grad, None]


# ---------------------------------------------------------------------------------------------
# Wrappers
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
    return array_ops.transpose(t, [i for i in range(rank) if i != axis] + [axis])


def _flatten_outer_dims(t: Any) -> Any:
    """A matrix [prod(outer dims), last dim]."""
    last = t.shape.dims[-1].value if t.shape.ndims else None
    if last is None:
        last = array_ops.shape(t)[-1]
        return array_ops.reshape(t, array_ops.stack([-1, last]))
    return array_ops.reshape(t, [-1, last])


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
        precise = math_ops.cast(logits, _dtypes.float32) if half else logits
        labels = math_ops.cast(labels, precise.dtype.base_dtype)
        if not labels.shape.is_compatible_with(logits.shape):
            raise ValueError(f"logits and labels must have the same shape ({logits.shape} vs {labels.shape})")
        rank = logits.shape.ndims
        if rank == 2 and axis in (-1, 1):  # the common case: the op itself, no reshapes
            cost = apply_op(SoftmaxCrossEntropyWithLogits, name=None if half else scope,
                            features=precise, labels=labels)[0]
            return math_ops.cast(cost, _dtypes.float16, name=scope) if half else cost
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
        cost = array_ops.reshape(cost, array_ops.shape(precise)[:-1], name=None if half else scope)
        if rank is not None:
            cost.set_shape(precise.shape[:-1])
        return math_ops.cast(cost, _dtypes.float16, name=scope) if half else cost


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
        labels = array_ops.stop_gradient(labels, name="labels_stop_gradient")
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
        precise = math_ops.cast(logits, _dtypes.float32) if half else logits
        _sparse_static_checks(labels, logits)
        if logits.shape.ndims == 2:
            cost = apply_op(SparseSoftmaxCrossEntropyWithLogits, name=None if half else scope,
                            features=precise, labels=labels)[0]
            return math_ops.cast(cost, _dtypes.float16, name=scope) if half else cost
        labels_shape = array_ops.shape(labels)
        cost = apply_op(SparseSoftmaxCrossEntropyWithLogits, features=_flatten_outer_dims(precise),
                        labels=array_ops.reshape(labels, [-1]))[0]
        cost = array_ops.reshape(cost, labels_shape, name=None if half else scope)
        cost.set_shape(labels.shape)
        return math_ops.cast(cost, _dtypes.float16, name=scope) if half else cost


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
        zeros = array_ops.zeros_like(logits)
        positive = math_ops.greater_equal(logits, zeros)
        relu_logits = math_ops.where(positive, logits, zeros)
        neg_abs_logits = math_ops.where(positive, -logits, logits)
        return math_ops.add(relu_logits - logits * labels, math_ops.log1p(math_ops.exp(neg_abs_logits)),
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
        softplus_neg = math_ops.log1p(math_ops.exp(-math_ops.abs(logits))) + relu(-logits)
        return math_ops.add((1 - labels) * logits, log_weight * softplus_neg, name=scope)
