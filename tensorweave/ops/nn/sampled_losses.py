"""Sampled losses over a large class set: `tf.nn.nce_loss` and `tf.nn.sampled_softmax_loss`.

Both score the true classes and `num_sampled` classes drawn by the log-uniform candidate sampler
(or the caller's `sampled_values`), subtract log Q (each class's expected count in the sample),
and apply a sigmoid (NCE) or softmax cross-entropy; the ops are built in TF's order, so that
seeds derived from the graph seed and the op count stay TF's for the ops that follow."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import name_scope
from tensorweave.ops.array.creation import ones, ones_like, zeros_like
from tensorweave.ops.array.joining import concat, stack
from tensorweave.ops.array.shaping import expand_dims, reshape, shape, stop_gradient
from tensorweave.ops.array.slicing import slice as array_slice
from tensorweave.ops.linalg.linalg_impl import matmul
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.elementwise import log, multiply
from tensorweave.ops.nn.embedding import embedding_lookup
from tensorweave.ops.nn.nn_impl import sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2
from tensorweave.ops.random.candidate_sampling import compute_accidental_hits, log_uniform_candidate_sampler
from tensorweave.ops.sparse.sparse_ops import sparse_to_dense

__all__ = ["nce_loss", "sampled_softmax_loss"]


def _sum_rows(x: Any) -> Any:
    """The sum of each row of a matrix, as a matmul with ones (TF's choice: its gradient is
    cheaper than reduce_sum's)."""
    ones_column = ones(stack([shape(x)[1], 1]), x.dtype)
    return reshape(matmul(x, ones_column), [-1])


def _compute_sampled_logits(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                            num_classes: int, num_true: int, sampled_values: Any, subtract_log_q: bool,
                            remove_accidental_hits: bool, partition_strategy: str, name: Optional[str],
                            seed: Optional[int] = None) -> tuple[Any, Any]:
    """(logits, labels) of shape [batch, num_true + num_sampled]: the true classes' logits first,
    then the sampled ones'; the labels put 1 / num_true on each true class."""
    weights = list(weights) if isinstance(weights, (list, tuple)) else [weights]
    with name_scope(name, "compute_sampled_logits", weights + [biases, inputs, labels]):
        if labels.dtype != _dtypes.int64:
            labels = cast(labels, _dtypes.int64)
        labels_flat = reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(true_classes=labels, num_true=num_true,
                                                           num_sampled=num_sampled, unique=True,
                                                           range_max=num_classes, seed=seed)
        sampled, true_expected_count, sampled_expected_count = (stop_gradient(s) for s in sampled_values)
        sampled = cast(sampled, _dtypes.int64)
        all_ids = concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype != inputs.dtype:
            all_w = cast(all_w, inputs.dtype)
        n_true = shape(labels_flat)[0]
        true_w = array_slice(all_w, [0, 0], stack([n_true, -1]))
        sampled_w = array_slice(all_w, stack([shape(labels_flat)[0], 0]), [-1, -1])
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype != inputs.dtype:
            all_b = cast(all_b, inputs.dtype)
        true_b = array_slice(all_b, [0], shape(labels_flat))
        sampled_b = array_slice(all_b, shape(labels_flat), [-1])
        dim = shape(true_w)[1:2]
        row_wise_dots = multiply(expand_dims(inputs, 1), reshape(true_w, concat([[-1, num_true], dim], 0)))
        dots_as_matrix = reshape(row_wise_dots, concat([[-1], dim], 0))
        true_logits = reshape(_sum_rows(dots_as_matrix), [-1, num_true])
        true_b = reshape(true_b, [-1, num_true])
        true_logits += true_b
        sampled_logits += sampled_b
        if remove_accidental_hits:
            acc_indices, acc_ids, acc_weights = compute_accidental_hits(labels, sampled, num_true=num_true)
            sparse_indices = concat([reshape(acc_indices, [-1, 1]), reshape(cast(acc_ids, _dtypes.int32), [-1, 1])],
                                    1, "sparse_indices")
            sampled_logits_shape = concat([shape(labels)[:1], expand_dims(num_sampled, 0)], 0)
            if sampled_logits.dtype != acc_weights.dtype:
                acc_weights = cast(acc_weights, sampled_logits.dtype)
            sampled_logits += sparse_to_dense(sparse_indices, sampled_logits_shape, acc_weights, default_value=0.0,
                                              validate_indices=False)
        if subtract_log_q:
            true_logits -= log(true_expected_count)
            sampled_logits -= log(sampled_expected_count)
        out_logits = concat([true_logits, sampled_logits], 1)
        out_labels = concat([ones_like(true_logits) / num_true, zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
             num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = False,
             partition_strategy: str = "mod", name: str = "nce_loss") -> Any:
    """Noise-contrastive estimation loss per example ([batch]): logistic regression of the true
    classes against `num_sampled` log-uniformly sampled ones, with log Q subtracted."""
    logits, labels = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                             sampled_values, True, remove_accidental_hits, partition_strategy, name)
    sampled_losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return _sum_rows(sampled_losses)


def sampled_softmax_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
                         num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = True,
                         partition_strategy: str = "mod", name: str = "sampled_softmax_loss",
                         seed: Optional[int] = None) -> Any:
    """Softmax cross-entropy per example ([batch]) over the true classes and `num_sampled`
    sampled ones (sampled classes equal to a true class are masked out by default)."""
    logits, labels = _compute_sampled_logits(weights, biases, labels, inputs, num_sampled, num_classes, num_true,
                                             sampled_values, True, remove_accidental_hits, partition_strategy, name,
                                             seed=seed)
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
