"""Array ops (white paper Table 1): constants and placeholders, shapes and shaping, transposition,
joining and splitting, slicing and gathering, creating filled tensors and sequences, N-d
gather/scatter, reverse_sequence, dynamic partition and stitch.

Tier 1 (modules that declare ops): constant_op, shaping, joining, creation, slicing,
transposition, gather_scatter_nd, partition_stitch, reverse_sequence. Tier 2: array_impl
(tf.range, tf.sequence_mask, tf.meshgrid and `Tensor.__getitem__`, built with the math family's
ops) and this module. The gradients are in grad.py. The family's public names (TF's array_ops
namespace) are re-exported here.
"""
from tensorweave.ops.array.constant_op import constant, placeholder, placeholder_with_default
from tensorweave.ops.array.shaping import (
    broadcast_to, expand_dims, identity, rank, reshape, shape, shape_n, size, squeeze, stop_gradient,
    tile)
from tensorweave.ops.array.joining import concat, split, stack, unstack
from tensorweave.ops.array.creation import (
    fill, lin_space, linspace, one_hot, ones, ones_like, pad, zeros, zeros_like)
from tensorweave.ops.array.slicing import (  # _where_indices: math's tf.where with one argument
    _where_indices, boolean_mask, gather, newaxis, reverse, reverse_v2, slice, strided_slice)
from tensorweave.ops.array.transposition import invert_permutation, transpose
from tensorweave.ops.array.gather_scatter_nd import gather_nd, scatter_nd
from tensorweave.ops.array.partition_stitch import dynamic_partition, dynamic_stitch
from tensorweave.ops.array.reverse_sequence import reverse_sequence
# The math package (entered through segment) imports array_impl from its own tier 2, so it must
# be loaded before array_impl, which imports math modules, starts.
from tensorweave.ops.math.segment import unique
from tensorweave.ops.array.array_impl import meshgrid, range, sequence_mask

__all__ = [
    "constant", "placeholder", "placeholder_with_default",
    "identity", "stop_gradient", "shape", "shape_n", "size", "rank", "reshape", "transpose",
    "invert_permutation", "expand_dims", "squeeze", "tile", "broadcast_to", "unique", "concat", "split",
    "stack", "unstack", "fill", "zeros", "ones", "zeros_like", "ones_like", "range", "linspace",
    "lin_space", "one_hot", "sequence_mask", "pad", "meshgrid", "slice", "strided_slice", "newaxis",
    "gather", "boolean_mask", "reverse", "reverse_v2", "gather_nd", "scatter_nd", "reverse_sequence",
    "dynamic_partition", "dynamic_stitch",
]
