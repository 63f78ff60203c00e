"""ReverseSequence (`tf.reverse_sequence`): reverses the first seq_lengths[b] entries along the
sequence axis of each batch row b, leaving the rest in place (its own gradient, in grad.py)."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops._util import invalid, shape_error

__all__ = ["reverse_sequence"]


def _reverse_sequence_shape(op: Operation) -> list[TensorShape]:
    x, lengths = op.inputs
    seq_dim, batch_dim = op._get_attr("seq_dim"), op._get_attr("batch_dim")
    if lengths.shape.ndims is not None and lengths.shape.ndims != 1:
        raise shape_error(op, f"Shape must be rank 1 but is rank {lengths.shape.ndims}")
    if x.shape.ndims is None:
        return [unknown_shape()]
    rank = x.shape.ndims
    if not 0 <= seq_dim < rank:
        raise shape_error(op, f"seq_dim must be < input rank: {seq_dim} vs. {rank}")
    if not 0 <= batch_dim < rank:
        raise shape_error(op, f"batch_dim must be < input rank: {batch_dim} vs. {rank}")
    dims = x.shape.as_list()
    n = lengths.shape[0].value if lengths.shape.ndims == 1 else None
    if n is not None and dims[batch_dim] is not None and n != dims[batch_dim]:
        raise shape_error(op, f"Dimensions must be equal, but are {dims[batch_dim]} and {n}")
    if seq_dim == batch_dim:
        raise shape_error(op, f"batch_dim == seq_dim == {seq_dim}")
    if dims[batch_dim] is None:
        dims[batch_dim] = n
    return [TensorShape(dims)]


ReverseSequence = define_op("ReverseSequence", inputs=["input: T", "seq_lengths: Tlen"], outputs=["output: T"],
                            attrs=["seq_dim: int", "batch_dim: int = 0", "T: type",
                                   "Tlen: {int32, int64} = int64"],
                            shape_fn=_reverse_sequence_shape)


@ReverseSequence.kernel()
def _reverse_sequence_kernel(ctx: KernelContext) -> Any:
    xp, seq_dim, batch_dim = ctx.xp, ctx.attr("seq_dim"), ctx.attr("batch_dim")

    def compute(x: Any, lengths: Any) -> Any:
        if not (0 <= seq_dim < x.ndim and 0 <= batch_dim < x.ndim) or seq_dim == batch_dim:
            raise invalid(f"Invalid seq_dim {seq_dim} / batch_dim {batch_dim} for input of rank {x.ndim}")
        host = np.asarray(lengths.get() if hasattr(lengths, "get") else lengths).reshape(-1)
        if host.shape[0] != x.shape[batch_dim]:
            raise invalid(f"Length of seq_lengths != input.dims({batch_dim}), ({host.shape[0]} vs. "
                          f"{x.shape[batch_dim]})")
        for i, n in enumerate(host):
            if n < 0:
                raise invalid(f"seq_lens({i}) < 0")
            if n > x.shape[seq_dim]:
                raise invalid(f"seq_lens({i}) > input.dims({seq_dim})")
        moved = xp.moveaxis(x, (batch_dim, seq_dim), (0, 1))
        t = np.arange(moved.shape[1])[None, :]
        n = host.astype(np.int64)[:, None]
        index = np.where(t < n, n - 1 - t, t)                       # [batch, time]
        index = xp.asarray(index.reshape(index.shape + (1,) * (moved.ndim - 2)))
        out = xp.take_along_axis(moved, xp.broadcast_to(index, moved.shape), axis=1)
        return xp.moveaxis(out, (0, 1), (batch_dim, seq_dim))

    return compute


def reverse_sequence(input: Any, seq_lengths: Any, seq_axis: Optional[int] = None,  # noqa: A002
                     batch_axis: Optional[int] = None, name: Optional[str] = None, seq_dim: Optional[int] = None,
                     batch_dim: Optional[int] = None) -> Any:
    """Reverses variable-length slices: for each b along `batch_axis`, the first
    seq_lengths[b] entries along `seq_axis` are reversed."""
    seq_axis = seq_dim if seq_axis is None else seq_axis
    batch_axis = batch_dim if batch_axis is None else batch_axis
    if seq_axis is None:
        raise ValueError("reverse_sequence needs seq_axis")
    return apply_op(ReverseSequence, name=name, input=input, seq_lengths=seq_lengths, seq_dim=seq_axis,
                    batch_dim=0 if batch_axis is None else batch_axis)
