"""Array ops (white paper Table 1): constants and placeholders, shapes and shaping, joining and splitting, slicing and gathering, creating filled tensors and sequences, N-d gather/scatter, reverse_sequence, dynamic partition and stitch.

The family's public names (TF's array_ops namespace) are re-exported here."""
from tensorweave.ops.array.constant_op import constant, placeholder, placeholder_with_default
from tensorweave.ops.array.shaping import (
    __all__, broadcast_to, expand_dims, identity, invert_permutation, rank, reshape, shape, shape_n, size,
    squeeze, stop_gradient, tile, transpose)
from tensorweave.ops.array.joining import concat, split, stack, unstack
from tensorweave.ops.array.creation import (
    fill, lin_space, linspace, meshgrid, one_hot, ones, ones_like, pad, range, sequence_mask, zeros,
    zeros_like)
from tensorweave.ops.array.slicing import (
    _where_indices, boolean_mask, gather, newaxis, reverse, reverse_v2, slice, strided_slice)
from tensorweave.ops.math.segment import unique

__all__ = [
    "identity", "stop_gradient", "shape", "shape_n", "size", "rank", "reshape", "transpose",
    "invert_permutation", "expand_dims", "squeeze", "tile", "broadcast_to", "unique", "concat", "split",
    "stack", "unstack", "fill", "zeros", "ones", "zeros_like", "ones_like", "range", "linspace",
    "lin_space", "one_hot", "sequence_mask", "pad", "meshgrid", "slice", "strided_slice", "newaxis",
    "gather", "boolean_mask", "reverse", "reverse_v2",
]
