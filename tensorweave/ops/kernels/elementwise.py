"""Builders for element-wise CPU kernels whose output has an input's shape and dtype: the result
goes into an input the kernel may forward (buffer_forwarding.py) when there is one, else into a
new array, and large results run in blocks over the device's threads (intra_op.py).

A node whose output is known to be small gets its plain compute function (often the NumPy ufunc
itself): checking costs more than it saves there.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.ops.kernels import buffer_forwarding
from tensorweave.ops.kernels.buffer_forwarding import forwardable
from tensorweave.ops.kernels.intra_op import ElementwiseSplitter

__all__ = ["split_binary", "forwarding_unary", "may_forward"]

_NUMERIC_KINDS = frozenset("biufc")


def may_forward(ctx: KernelContext, inputs: tuple[int, ...] = (0,)) -> bool:
    """Whether the node's kernel should look for an input to forward: a NumPy kernel with a
    numeric output that may be large, and one of `inputs` of the output's dtype."""
    if ctx.xp is not np:
        return False
    out = ctx.output_dtypes[0]
    if np.dtype(out.as_numpy_dtype).kind not in _NUMERIC_KINDS:
        return False
    if not any(i < len(ctx.input_dtypes) and ctx.input_dtypes[i].base_dtype == out.base_dtype for i in inputs):
        return False
    shape = ctx.op.outputs[0].shape
    return not (shape.is_fully_defined() and shape.num_elements() < buffer_forwarding.MIN_FORWARD_ELEMENTS)


def split_binary(ctx: KernelContext, ufunc: Callable, plain: Callable[[Any, Any], Any],
                 incompatible: Callable[[tuple, tuple], Exception]) -> Callable[[Any, Any], Any]:
    """A binary ufunc kernel: `plain` itself when the node's output is small, else a compute
    that writes into a forwardable input of the result's shape (x first, then y) and runs large
    results in blocks over the device's threads; small values still go through `plain`.
    `incompatible(x_shape, y_shape)` is the error for shapes that do not broadcast."""
    if not may_forward(ctx, (0, 1)):
        return plain
    split = ElementwiseSplitter.for_kernel(ctx)
    dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
    size, shape_of, prod, least = np.size, np.shape, math.prod, buffer_forwarding.MIN_FORWARD_ELEMENTS

    def compute(x: Any, y: Any) -> Any:
        if size(x) < least and size(y) < least:
            return plain(x, y)
        xs, ys = shape_of(x), shape_of(y)
        try:
            shape = xs if xs == ys else np.broadcast_shapes(xs, ys)
        except ValueError:
            raise incompatible(xs, ys) from None
        # `x` and `y` are still bound only to the parameters here (the rule counts references)
        if forwardable(x, shape, dtype):
            out = x
        elif forwardable(y, shape, dtype):
            out = y
        else:
            out = None
        if split is not None and split.wants_split(prod(shape), shape):
            return split.run(lambda o, a, b: ufunc(a, b, out=o), shape, dtype, x, y, out=out)
        if out is None:
            return plain(x, y)
        return ufunc(x, y, out=out)

    return compute


def forwarding_unary(ctx: KernelContext, plain: Callable[[Any], Any],
                     into: Callable[[Any, Any], Any]) -> Callable[[Any], Any]:
    """A unary kernel y = f(x): `plain(x)` for small values; larger ones are computed by
    `into(out, x)` (which must allow out to be x itself) into x when it can be forwarded, else
    into a new array, in blocks over the device's threads when large."""
    if not may_forward(ctx):
        return plain
    split: Optional[ElementwiseSplitter] = ElementwiseSplitter.for_kernel(ctx)
    dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
    size, shape_of, least = np.size, np.shape, buffer_forwarding.MIN_FORWARD_ELEMENTS

    def compute(x: Any) -> Any:
        if size(x) < least:
            return plain(x)
        shape = shape_of(x)
        out = x if forwardable(x, shape, dtype) else None
        if split is not None and split.wants_split(x.size, shape):
            return split.run(into, shape, dtype, x, out=out)
        if out is None:
            return plain(x)
        into(out, out)
        return out

    return compute
