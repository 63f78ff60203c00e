"""`tf.nn.embedding_lookup`: rows of an embedding table, possibly sharded across variables
(OSDI 4.2, Figure 4).

One table is a plain Gather colocated with it. A table split into shards routes each id to the
shard that owns it with DynamicPartition, gathers there (colocated with the shard, so only the
looked-up rows cross devices), and merges the rows back in id order with ParallelDynamicStitch.
The gradient with respect to each shard is an IndexedSlices holding only the looked-up rows,
so optimizers update those rows alone.

Shard ownership follows TF's `partition_strategy`:
  "mod": id i lives in shard i % n, at row i // n;
  "div": ids are dealt out in contiguous blocks, the first (num_ids % n) shards one row larger.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops.array.array_impl import range as array_range
from tensorweave.ops.array.creation import ones_like
from tensorweave.ops.array.joining import concat, stack
from tensorweave.ops.array import partition_stitch as data_flow_ops
from tensorweave.ops.array.shaping import expand_dims, identity, rank, reshape, shape, size
from tensorweave.ops.array.slicing import gather
from tensorweave.ops.math import clip as clip_ops, segment as segment_ops
from tensorweave.ops.math.cast import cast
from tensorweave.ops.math.math_impl import where
from tensorweave.ops.math.elementwise import div, div_no_nan, maximum, sqrt
from tensorweave.ops.math.reduction import reduce_sum
from tensorweave.ops.state.variables import PartitionedVariable

__all__ = ["embedding_lookup", "embedding_lookup_sparse"]


def embedding_lookup(params: Any, ids: Any, partition_strategy: str = "mod", name: Optional[str] = None,
                     validate_indices: bool = True, max_norm: Any = None) -> Tensor:
    """The rows `ids` of the table `params` (a tensor or Variable, a list of shards of one, or a
    PartitionedVariable): a tensor of shape ids.shape + params.shape[1:]. With `max_norm`, each looked-up row whose
    L2 norm exceeds it is scaled down to that norm."""
    del validate_indices  # ids are always checked, as TF does on CPU
    if params is None:
        raise ValueError("params must be specified")
    shards = _shard_list(params)
    if not shards:
        raise ValueError("Need at least one param")
    with name_scope(name, "embedding_lookup", shards + [ids]) as scope:
        shards = [convert_to_tensor(p, name="params") for p in shards]
        ids = convert_to_tensor(ids, name="ids")
        if len(shards) == 1:
            table = shards[0]
            with table.graph.colocate_with(table.op):
                rows = _clip(gather(table, ids, name=scope), ids, max_norm)
            # the result itself carries no colocation constraint, as in the sharded case
            return identity(rows)
        return _sharded_lookup(shards, ids, partition_strategy, max_norm, scope)


def embedding_lookup_sparse(params: Any, sp_ids: Any, sp_weights: Any, partition_strategy: str = "mod",
                            name: Optional[str] = None, combiner: Optional[str] = None,
                            max_norm: Any = None) -> Tensor:
    """Combines the embeddings of each row of the SparseTensor `sp_ids` (ids in its values,
    rows in the first column of its indices) with `combiner`: "sum", "mean" (the default) or
    "sqrtn", weighted by the values of `sp_weights` when given. The result has one row per row
    index up to the largest one present; rows with no ids are zeros. Each distinct id is looked
    up once, so the gradient with respect to `params` is an IndexedSlices over those ids."""
    combiner = "mean" if combiner is None else combiner
    if combiner not in ("mean", "sqrtn", "sum"):
        raise ValueError(f"combiner must be one of 'mean', 'sqrtn' or 'sum', got {combiner!r}")
    shards = _shard_list(params)
    with name_scope(name, "embedding_lookup_sparse", shards + [sp_ids.indices, sp_ids.values]) as scope:
        segment_ids = cast(sp_ids.indices[:, 0], _dtypes.int32)
        unique_ids, idx = segment_ops.unique(sp_ids.values)
        rows = gather(embedding_lookup(params, unique_ids, partition_strategy, max_norm=max_norm), idx)
        if sp_weights is None:
            total = segment_ops.segment_sum(rows, segment_ids, name=scope if combiner == "sum" else None)
            if combiner == "sum":
                return total
            counts = segment_ops.segment_sum(ones_like(segment_ids, dtype=rows.dtype), segment_ids)
            counts = maximum(counts, 1.0)  # empty rows are zeros, as TF's SparseSegment kernels give
            divisor = counts if combiner == "mean" else sqrt(counts)
            return div(total, expand_dims(divisor, 1), name=scope)
        weights = cast(sp_weights.values, rows.dtype)
        per_row = reshape(weights, concat(
            [shape(weights), ones_like(shape(rows)[1:])], 0))
        total = segment_ops.segment_sum(rows * per_row, segment_ids, name=scope if combiner == "sum" else None)
        if combiner == "sum":
            return total
        squared = weights if combiner == "mean" else weights * weights
        divisor = segment_ops.segment_sum(squared, segment_ids)
        if combiner == "sqrtn":
            divisor = sqrt(divisor)
        divisor = reshape(divisor, concat(
            [shape(divisor), ones_like(shape(total)[1:])], 0))
        return div_no_nan(total, divisor, name=scope)


def _shard_list(params: Any) -> list:
    """The shards of `params`: a list of them, a PartitionedVariable's variables, or one table."""
    if isinstance(params, (list, tuple, PartitionedVariable)):
        return list(params)
    return [params]


def _sharded_lookup(shards: Sequence[Tensor], ids: Tensor, strategy: str, max_norm: Any, scope: str) -> Tensor:
    n = len(shards)
    flat_ids = ids if ids.shape.ndims == 1 else reshape(ids, [-1])
    positions = array_range(size(flat_ids))
    if strategy == "mod":
        owner = flat_ids % n
        row = flat_ids // n
    elif strategy == "div":
        owner, row = _div_assignment(shards, flat_ids)
    else:
        raise ValueError("Unrecognized partition strategy: " + strategy)
    owner = cast(owner, _dtypes.int32)
    shard_rows = data_flow_ops.dynamic_partition(row, owner, n)
    shard_positions = data_flow_ops.dynamic_partition(positions, owner, n)
    pieces = []
    for shard, rows in zip(shards, shard_rows):
        with shard.graph.colocate_with(shard.op):
            pieces.append(gather(shard, rows))
    merged = data_flow_ops.parallel_dynamic_stitch(shard_positions, pieces,
                                                   name=scope if ids.shape.ndims == 1 else None)
    element = _element_shape(shards)
    if ids.shape.ndims != 1:
        if element.is_fully_defined():
            element_dims: Any = element.as_list()
        else:
            with shards[0].graph.colocate_with(shards[0].op):
                element_dims = shape(shards[0])[1:]
        merged = reshape(merged, concat([shape(ids), element_dims], 0))
    merged.set_shape(ids.shape.concatenate(element))
    return _clip(merged, ids, max_norm)


def _element_shape(shards: Sequence[Tensor]) -> TensorShape:
    """The static shape of one embedding row, merged over the shards."""
    element = unknown_shape()
    for shard in shards:
        static = shard.shape
        element = element.merge_with(static[1:] if static.ndims is not None else unknown_shape())
    return element


def _div_assignment(shards: Sequence[Tensor], flat_ids: Tensor) -> tuple[Any, Any]:
    """(owning shard, row in that shard) for the "div" strategy: with T ids in n shards, shard p
    holds T // n ids, plus one for the first T % n shards."""
    n = len(shards)
    sizes = [s.shape[0].value if s.shape.ndims else None for s in shards]
    if all(size is not None for size in sizes):
        per_shard, extras = divmod(sum(sizes), n)
    else:
        dims = []
        for shard, rows in zip(shards, sizes):
            if rows is not None:
                dims.append(rows)
            else:
                with shard.graph.colocate_with(shard.op):
                    dims.append(shape(shard)[0])
        total = reduce_sum(cast(stack(dims), flat_ids.dtype))
        per_shard, extras = total // n, total % n
    # ids below extras * (per_shard + 1) sit in the larger shards, the rest in the smaller ones
    owner = maximum(flat_ids // (per_shard + 1), (flat_ids - extras) // per_shard)
    row = where(owner < extras, flat_ids % (per_shard + 1), (flat_ids - extras) % per_shard)
    return owner, row


def _clip(rows: Tensor, ids: Tensor, max_norm: Any) -> Tensor:
    """Scales each embedding (the dims of `rows` after those of `ids`) to L2 norm <= max_norm."""
    if max_norm is None:
        return rows
    ids_rank, rows_rank = ids.shape.ndims, rows.shape.ndims
    if ids_rank is not None and rows_rank is not None:
        axes: Any = list(range(ids_rank, rows_rank))
    else:
        axes = array_range(rank(ids), rank(rows))
    return clip_ops.clip_by_norm(rows, max_norm, axes=axes)
