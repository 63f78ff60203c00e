"""Sampled losses over large output vocabularies (TF1's nn_impl): `tf.nn.nce_loss` (noise-contrastive
estimation, as the word2vec tutorials use it) and `tf.nn.sampled_softmax_loss`, both on TF's
_compute_sampled_logits: the logits of each row's true classes and of a shared set of sampled
classes, less log(expected count) of each, with accidental hits (a sampled class that is a true
class of the row) optionally pushed to -FLT_MAX.

Tier 2: built on the nn family's ops and other families' wrappers.
"""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.creation import ones, ones_like, zeros_like
from tensorweave.ops.array.joining import concat, stack
from tensorweave.ops.array.shaping import expand_dims, reshape, shape, stop_gradient
from tensorweave.ops.array.slicing import slice as slice_
from tensorweave.ops.linalg.linalg_impl import matmul
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.elementwise import log, multiply
from tensorweave.ops.nn.candidate_sampling import compute_accidental_hits, log_uniform_candidate_sampler
from tensorweave.ops.nn.embedding import embedding_lookup
from tensorweave.ops.nn.nn_impl import sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2
from tensorweave.ops.sparse.sparse_ops import sparse_to_dense

__all__ = ["nce_loss", "sampled_softmax_loss"]


def _sum_rows(x: Any) -> Any:
    """Row sums as a matmul with a ones column (TF's _sum_rows: its gradient is a matmul too)."""
    cols = shape(x)[1]
    return reshape(matmul(x, ones(stack([cols, 1]), x.dtype)), [-1])


def _weights_list(weights: Any) -> list[Any]:
    if isinstance(weights, (list, tuple)):
        return list(weights)
    if hasattr(weights, "_get_variable_list"):  # a PartitionedVariable
        return list(weights._get_variable_list())
    return [weights]


def _compute_sampled_logits(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                            num_classes: int, num_true: int, sampled_values: Any, subtract_log_q: bool,
                            remove_accidental_hits: bool, partition_strategy: str, name: Optional[str],
                            seed: Optional[int]) -> tuple[Any, Any]:
    """(logits [batch, num_true + num_sampled], labels of the same shape: 1/num_true on the true
    columns, 0 on the sampled ones)."""
    weights = _weights_list(weights)
    with name_scope(name, "compute_sampled_logits", weights + [biases, inputs, labels]):
        labels = convert_to_tensor(labels, name="labels")
        if labels.dtype != _dtypes.int64:
            labels = cast(labels, _dtypes.int64)
        inputs = convert_to_tensor(inputs, name="inputs")
        labels_flat = reshape(labels, [-1])
        if sampled_values is None:
            sampled_values = log_uniform_candidate_sampler(true_classes=labels, num_true=num_true,
                                                           num_sampled=num_sampled, unique=True,
                                                           range_max=num_classes, seed=seed)
        sampled, true_expected, sampled_expected = (stop_gradient(s) for s in sampled_values)
        sampled = cast(sampled, _dtypes.int64)
        all_ids = concat([labels_flat, sampled], 0)
        all_w = embedding_lookup(weights, all_ids, partition_strategy=partition_strategy)
        if all_w.dtype != inputs.dtype:
            all_w = cast(all_w, inputs.dtype)
        n_true = shape(labels_flat)[0]
        true_w = slice_(all_w, [0, 0], stack([n_true, -1]))
        sampled_w = slice_(all_w, stack([n_true, 0]), [-1, -1])
        sampled_logits = matmul(inputs, sampled_w, transpose_b=True)
        all_b = embedding_lookup(biases, all_ids, partition_strategy=partition_strategy)
        if all_b.dtype != inputs.dtype:
            all_b = cast(all_b, inputs.dtype)
        true_b = slice_(all_b, [0], shape(labels_flat))
        sampled_b = slice_(all_b, shape(labels_flat), [-1])
        dim = shape(true_w)[1:2]
        row_dots = multiply(expand_dims(inputs, 1), reshape(true_w, concat([[-1, num_true], dim], 0)))
        true_logits = reshape(_sum_rows(reshape(row_dots, concat([[-1], dim], 0))), [-1, num_true])
        true_logits += reshape(true_b, [-1, num_true])
        sampled_logits += sampled_b
        if remove_accidental_hits:
            hit_rows, hit_ids, hit_weights = compute_accidental_hits(labels, sampled, num_true=num_true)
            positions = concat([reshape(hit_rows, [-1, 1]), reshape(cast(hit_ids, _dtypes.int32), [-1, 1])], 1,
                               name="sparse_indices")
            logits_shape = concat([shape(labels)[:1], expand_dims(num_sampled, 0)], 0)
            if sampled_logits.dtype != hit_weights.dtype:
                hit_weights = cast(hit_weights, sampled_logits.dtype)
            sampled_logits += sparse_to_dense(positions, logits_shape, hit_weights, default_value=0.0,
                                              validate_indices=False)
        if subtract_log_q:
            true_logits -= log(true_expected)
            sampled_logits -= log(sampled_expected)
        out_logits = concat([true_logits, sampled_logits], 1)
        out_labels = concat([ones_like(true_logits) / num_true, zeros_like(sampled_logits)], 1)
        return out_logits, out_labels


def nce_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int, num_classes: int,
             num_true: int = 1, sampled_values: Any = None, remove_accidental_hits: bool = False,
             partition_strategy: str = "mod", name: str = "nce_loss") -> Any:
    """The noise-contrastive estimation loss per example ([batch]): logistic regression of each
    true class against `num_sampled` classes drawn (by default) from the log-uniform sampler.
    `weights` [num_classes, dim] (or its shards), `biases` [num_classes], `labels` [batch,
    num_true], `inputs` [batch, dim]."""
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values, True,
        remove_accidental_hits, partition_strategy, name, None)
    losses = sigmoid_cross_entropy_with_logits(labels=labels, logits=logits, name="sampled_losses")
    return _sum_rows(losses)


def sampled_softmax_loss(weights: Any, biases: Any, labels: Any, inputs: Any, num_sampled: int,
                         num_classes: int, num_true: int = 1, sampled_values: Any = None,
                         remove_accidental_hits: bool = True, partition_strategy: str = "mod",
                         name: str = "sampled_softmax_loss", seed: Optional[int] = None) -> Any:
    """The softmax cross entropy per example ([batch]) over each row's true classes and
    `num_sampled` sampled classes: a fast training-time estimate of the full softmax loss."""
    logits, labels = _compute_sampled_logits(
        weights, biases, labels, inputs, num_sampled, num_classes, num_true, sampled_values, True,
        remove_accidental_hits, partition_strategy, name, seed)
    labels = stop_gradient(labels, name="labels_stop_gradient")
    return softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
