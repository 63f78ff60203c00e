"""Cross-entropy ops of `tf.nn`: the fused SoftmaxCrossEntropyWithLogits and
SparseSoftmaxCrossEntropyWithLogits (loss and backprop from one pass, as TF's kernels).

The public wrappers (softmax_cross_entropy_with_logits[_v2], the sparse one, and the composite
sigmoid / weighted cross-entropies) reshape and cast with other families' ops: they are in
nn_impl.py. The gradients are in grad.py.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import invalid, shape_error
from tensorweave.ops._util import register_kernel as _kernel
from tensorweave.ops.kernels.buffer_forwarding import forwardable
from tensorweave.ops.kernels.intra_op import ChunkRunner, split_bounds

_FLOATS = "T: {float16, float32, float64}"


# ---------------------------------------------------------------------------------------------
# The fused ops
# ---------------------------------------------------------------------------------------------
def _xent_shape(op: Operation) -> list[TensorShape]:
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


def _sparse_xent_shape(op: Operation) -> list[TensorShape]:
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

    def __init__(self, ctx: KernelContext) -> None:
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
def _xent_kernel(ctx: KernelContext) -> Callable:
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
def _sparse_xent_kernel(ctx: KernelContext) -> Callable:
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
