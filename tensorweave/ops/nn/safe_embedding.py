"""`tf.nn.safe_embedding_lookup_sparse` (TF1's embedding_ops): embedding_lookup_sparse made safe
for feature-column inputs. Ids of any rank are flattened to rows of the last dimension, invalid
ids (< 0) and, except for "sum", non-positive weights are dropped, empty rows get `default_id`
(or a zero vector), and the result is reshaped back to the ids' leading dimensions.

Tier 2: built on embedding_lookup_sparse and the sparse family's library.
"""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import name_scope
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_shape import unknown_shape
from tensorweave.ops.array.creation import ones_like, zeros_like
from tensorweave.ops.array.joining import concat, stack
from tensorweave.ops.array.shaping import reshape, shape, size, tile
from tensorweave.ops.array.slicing import gather, slice as slice_
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.elementwise import greater, greater_equal, logical_and
from tensorweave.ops.math.math_impl import where
from tensorweave.ops.math.reduction import reduce_prod
from tensorweave.ops.nn.embedding import embedding_lookup_sparse
from tensorweave.ops.sparse.sparse_impl import sparse_fill_empty_rows, sparse_reshape, sparse_retain

__all__ = ["safe_embedding_lookup_sparse"]


def _prune_invalid_ids(ids: SparseTensor, weights: Optional[SparseTensor]) -> tuple[Any, Any]:
    valid = greater_equal(ids.values, 0)
    if weights is not None:
        valid = logical_and(valid, ones_like(weights.values, dtype=_dtypes.bool))
    return sparse_retain(ids, valid), None if weights is None else sparse_retain(weights, valid)


def _prune_invalid_weights(ids: SparseTensor, weights: Optional[SparseTensor]) -> tuple[Any, Any]:
    if weights is None:
        return ids, weights
    valid = greater(weights.values, 0)
    return sparse_retain(ids, valid), sparse_retain(weights, valid)


def safe_embedding_lookup_sparse(embedding_weights: Any, sparse_ids: SparseTensor,
                                 sparse_weights: Optional[SparseTensor] = None, combiner: str = "mean",
                                 default_id: Optional[int] = None, name: Optional[str] = None,
                                 partition_strategy: str = "div", max_norm: Any = None) -> Any:
    """Embeddings of `sparse_ids` [d0, ..., dn-1, k] combined over the last dimension: a dense
    [d0, ..., dn-1, dim] tensor. Rows with no valid id give `default_id`'s embedding, or zeros."""
    if embedding_weights is None:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    if hasattr(embedding_weights, "_get_variable_list"):
        embedding_weights = list(embedding_weights._get_variable_list())
    weights_list = list(embedding_weights) if isinstance(embedding_weights, (list, tuple)) else [embedding_weights]
    if not weights_list:
        raise ValueError(f"Missing embedding_weights {embedding_weights}.")
    with name_scope(name, "embedding_lookup", weights_list + [sparse_ids, sparse_weights]) as scope:
        original_shape = sparse_ids.dense_shape
        rank_dim = original_shape.shape.dims[0].value if original_shape.shape.ndims else None
        rank = size(original_shape) if rank_dim is None else rank_dim
        sparse_ids = sparse_reshape(sparse_ids, stack([reduce_prod(slice_(original_shape, [0], [rank - 1])),
                                                       gather(original_shape, rank - 1)]))
        if sparse_weights is not None:
            sparse_weights = SparseTensor(sparse_ids.indices, sparse_weights.values, sparse_ids.dense_shape)
        sparse_ids, sparse_weights = _prune_invalid_ids(sparse_ids, sparse_weights)
        if combiner != "sum":
            sparse_ids, sparse_weights = _prune_invalid_weights(sparse_ids, sparse_weights)
        sparse_ids, is_row_empty = sparse_fill_empty_rows(sparse_ids, default_id or 0)
        if sparse_weights is not None:
            sparse_weights, _ = sparse_fill_empty_rows(sparse_weights, 1.0)
        result = embedding_lookup_sparse(weights_list, sparse_ids, sparse_weights, combiner=combiner,
                                         partition_strategy=partition_strategy,
                                         name=None if default_id is None else scope, max_norm=max_norm)
        if default_id is None:
            empty = tile(reshape(is_row_empty, [-1, 1]), stack([1, shape(result)[1]]))
            result = where(empty, zeros_like(result), result, name=scope)
        leading = slice_(cast(original_shape, _dtypes.int32), [0], [rank - 1])
        final = reshape(result, concat([leading, slice_(shape(result), [1], [-1])], 0))
        outer = unknown_shape() if rank_dim is None else unknown_shape(rank_dim - 1)
        final.set_shape(outer.concatenate(result.shape[1:]))
        return final

