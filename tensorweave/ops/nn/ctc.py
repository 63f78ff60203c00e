"""Connectionist temporal classification (TF1's ctc_ops): the CTCLoss op and `tf.nn.ctc_loss`.

The kernel is TF's CTCLossCalculator in log space (Graves' thesis, ch. 7): per batch element,
the label sequence with blanks around every label (blank = num_classes - 1), forward and
backward variables over time (one vectorised step per time step), the loss -log p(labels | x),
and the gradient with respect to the logits, softmax(x) - posterior of each class. Its
`ctc_merge_repeated`, `preprocess_collapse_repeated` and `ignore_longer_outputs_than_inputs`
switches are TF's. The gradient (grad.py) scales that second output by the loss's gradient; `tf.nn.ctc_loss` is
in nn_impl.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops._util import invalid

__all__ = ["ctc_loss_op"]


def _ctc_shape(op: Operation) -> list[TensorShape]:
    inputs = op.inputs[0].shape.with_rank(3)
    op.inputs[1].shape.with_rank(2)
    op.inputs[2].shape.with_rank(1)
    batch = inputs.dims[1].merge_with(op.inputs[3].shape.with_rank(1).dims[0])
    return [TensorShape([batch]), TensorShape([inputs.dims[0], batch, inputs.dims[2]])]


CTCLoss = define_op(
    "CTCLoss", inputs=["inputs: T", "labels_indices: int64", "labels_values: int32", "sequence_length: int32"],
    outputs=["loss: T", "gradient: T"],
    attrs=["preprocess_collapse_repeated: bool = false", "ctc_merge_repeated: bool = true",
           "ignore_longer_outputs_than_inputs: bool = false", "T: {float32, float64} = float32"],
    shape_fn=_ctc_shape)


def _log_sum_exp(*terms: np.ndarray) -> np.ndarray:
    stacked = np.stack(terms)
    peak = np.max(stacked, axis=0)
    safe = np.where(np.isfinite(peak), peak, 0.0)
    with np.errstate(divide="ignore"):
        return safe + np.log(np.sum(np.exp(stacked - safe), axis=0))


def _label_sequences(indices: np.ndarray, values: np.ndarray, batch: int, num_classes: int,
                     collapse: bool) -> list[list[int]]:
    """Each batch element's labels in time order (repeats collapsed with `collapse`); labels at
    or past the blank end the sequence, and a real label after one is an error, as in TF."""
    order = np.lexsort((indices[:, 1], indices[:, 0])) if indices.shape[0] else np.zeros(0, np.int64)
    rows = [[] for _ in range(batch)]  # type: list[list[int]]
    for i in order:
        b = int(indices[i, 0])
        if not 0 <= b < batch:
            raise invalid(f"labels batch index must be between 0 and {batch}, got {b}")
        rows[b].append(int(values[i]))
    out = []
    for b, label in enumerate(rows):
        if not label:
            raise invalid(f"Labels length is zero in batch {b}")
        kept: list[int] = []
        ended = False
        for i, v in enumerate(label):
            if i == 0 or not collapse or v != label[i - 1]:
                if v >= num_classes - 1:
                    ended = True
                elif ended:
                    raise invalid(f"Saw a non-null label (index >= num_classes - 1) following a null label, batch: "
                                  f"{b} num_classes: {num_classes} labels: {','.join(map(str, label))} labels "
                                  f"seen so far: {','.join(map(str, kept))}")
                else:
                    kept.append(v)
        if any(v < 0 for v in kept):
            raise invalid(f"All labels must be nonnegative integers, batch: {b} labels: {','.join(map(str, kept))}")
        out.append(kept)
    return out


def _one_sequence(log_y: np.ndarray, label: list[int], blank: int, merge: bool) -> tuple[float, np.ndarray]:
    """(loss, posterior class probabilities [T, classes]) of one batch element."""
    steps, classes = log_y.shape
    l_prime = np.full(2 * len(label) + 1, blank, np.int64)
    l_prime[1::2] = label
    u_count = l_prime.size
    is_blank = l_prime == blank
    skip = np.zeros(u_count, bool)  # may come from u - 2
    skip[2:] = ~is_blank[2:] & ~(merge & (l_prime[2:] == l_prime[:-2]))
    stay = np.full(u_count, merge) | is_blank  # may stay at u
    u = np.arange(u_count)
    emit = log_y[:, l_prime]  # [T, U]
    alpha = np.full((steps, u_count), -np.inf)
    alpha[0, 0] = emit[0, 0]
    if u_count > 1:
        alpha[0, 1] = emit[0, 1]
    beta = np.full((steps, u_count), -np.inf)
    beta[steps - 1, max(0, u_count - 2):] = 0.0
    for t in range(1, steps):
        prev = alpha[t - 1]
        terms = [np.where(stay, prev, -np.inf), np.r_[-np.inf, prev[:-1]],
                 np.where(skip, np.r_[-np.inf, -np.inf, prev[:-2]], -np.inf)]
        valid = (u >= max(0, u_count - 2 * (steps - t))) & (u < min(u_count, 2 * (t + 1)))
        alpha[t] = np.where(valid, _log_sum_exp(*terms) + emit[t], -np.inf)
    skip_forward = np.r_[skip[2:], False, False]  # u may go to u + 2
    for t in range(steps - 2, -1, -1):
        nxt = beta[t + 1] + emit[t + 1]
        terms = [np.where(stay, nxt, -np.inf), np.r_[nxt[1:], -np.inf],
                 np.where(skip_forward, np.r_[nxt[2:], -np.inf, -np.inf], -np.inf)]
        valid = (u >= max(0, u_count - 2 * (steps - t))) & (u < min(u_count, 2 * (t + 1)))
        beta[t] = np.where(valid, _log_sum_exp(*terms), -np.inf)
    log_p = _log_sum_exp(*(alpha[0] + beta[0]))
    posterior = np.zeros((steps, classes))
    if np.isfinite(log_p):
        with np.errstate(under="ignore"):
            np.add.at(posterior.T, l_prime, np.exp(alpha + beta - log_p).T)
    return -float(log_p), posterior


@CTCLoss.kernel()
def _ctc_kernel(ctx: KernelContext) -> Callable:
    collapse, merge = ctx.attr("preprocess_collapse_repeated"), ctx.attr("ctc_merge_repeated")
    ignore_longer = ctx.attr("ignore_longer_outputs_than_inputs")

    def compute(inputs: Any, indices: Any, values: Any, seq_len: Any) -> Any:
        if inputs.ndim != 3:
            raise invalid("inputs is not a 3-Tensor")
        steps, batch, classes = inputs.shape
        if seq_len.shape != (batch,):
            raise invalid(f"len(sequence_length) != batch_size.  len(sequence_length):  {seq_len.size} "
                          f"batch_size: {batch}")
        for b in range(batch):
            if seq_len[b] < 0:
                raise invalid(f"seq_len({b}) < 0")
            if seq_len[b] > steps:
                raise invalid(f"seq_len({b}) > num_time_steps")
        labels = _label_sequences(indices, values, batch, classes, collapse)
        loss = np.zeros(batch, inputs.dtype)
        grad = np.zeros_like(inputs)
        for b, label in enumerate(labels):
            if not ignore_longer and len(label) > seq_len[b]:
                raise invalid(f"Not enough time for target transition sequence (required: {len(label)}, available: "
                              f"{int(seq_len[b])}){b}You can turn this error into a warning by using the flag "
                              f"ignore_longer_outputs_than_inputs")
            steps_b = int(seq_len[b])
            if steps_b == 0 or (ignore_longer and len(label) > steps_b):
                continue  # TF's zero loss and gradient
            x = inputs[:steps_b, b, :].astype(np.float64)
            shifted = x - x.max(axis=1, keepdims=True)
            y = np.exp(shifted) / np.exp(shifted).sum(axis=1, keepdims=True)
            with np.errstate(divide="ignore"):
                value, posterior = _one_sequence(np.log(y), label, classes - 1, merge)
            loss[b] = value
            grad[:steps_b, b, :] = y - posterior if np.isfinite(value) else y
        return loss, grad
    return compute


def ctc_loss_op(inputs: Any, labels_indices: Any, labels_values: Any, sequence_length: Any,
                preprocess_collapse_repeated: bool = False, ctc_merge_repeated: bool = True,
                ignore_longer_outputs_than_inputs: bool = False, name: Optional[str] = None) -> Any:
    """(loss, gradient) of one CTCLoss node; `tf.nn.ctc_loss` (nn_impl) builds on it."""
    return apply_op(CTCLoss, name=name, inputs=inputs, labels_indices=labels_indices, labels_values=labels_values,
                    sequence_length=sequence_length, preprocess_collapse_repeated=preprocess_collapse_repeated,
                    ctc_merge_repeated=ctc_merge_repeated,
                    ignore_longer_outputs_than_inputs=ignore_longer_outputs_than_inputs)
