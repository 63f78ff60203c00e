"""Cumulative sums and products along an axis (tf.cumsum, tf.cumprod), with TF's `exclusive`
and `reverse` flags (their gradients are in grad.py)."""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import OpDef, define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.graph import Operation, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import _util
from tensorweave.ops._util import index_input, invalid, shape_error

__all__ = ["cumsum", "cumprod"]

_TYPES = ("float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64, "
          "complex64, complex128")


def _scan_shape(op: Operation) -> list[Any]:
    axis = op.inputs[1].shape
    if axis.ndims not in (None, 0):
        raise shape_error(op, f"Shape must be rank 0 but is rank {axis.ndims}")
    return _util.unchanged(op)


def _define(name: str) -> OpDef:
    return define_op(name, inputs=["x: T", "axis: Tidx"], outputs=["out: T"],
                     attrs=["exclusive: bool = false", "reverse: bool = false", f"T: {{{_TYPES}}}",
                            "Tidx: {int32, int64} = int32"], shape_fn=_scan_shape)


Cumsum = _define("Cumsum")
Cumprod = _define("Cumprod")


def _scan_kernel(accumulate: str, identity: int) -> Callable:
    def build(ctx: KernelContext) -> Callable:
        xp = ctx.xp
        scan = getattr(xp, accumulate)
        exclusive, reverse = ctx.attr("exclusive"), ctx.attr("reverse")

        def compute(x: Any, axis: Any) -> Any:
            a = int(axis)
            if not -x.ndim <= a < max(x.ndim, 1) or x.ndim == 0:
                raise invalid(f"ScanOp: Expected scan axis in the range [{-x.ndim}, {x.ndim}), but got {a}")
            a %= x.ndim
            if reverse:
                x = xp.flip(x, a)
            out = scan(x, axis=a, dtype=x.dtype)
            if exclusive:  # shift by one along the axis, the identity entering first
                out = xp.roll(out, 1, axis=a)
                first = [slice(None)] * x.ndim
                first[a] = slice(0, 1)
                out[tuple(first)] = identity
            return xp.flip(out, a) if reverse else out

        return compute

    return build


Cumsum.kernel()(_scan_kernel("cumsum", 0))
Cumprod.kernel()(_scan_kernel("cumprod", 1))


def _scan(op_def: OpDef, x: Any, axis: Any, exclusive: bool, reverse: bool, name: Optional[str],
          default_name: str) -> Any:
    with name_scope(name, default_name, [x]) as scope:
        x = convert_to_tensor(x, name="x")
        return apply_op(op_def, name=scope, x=x, axis=index_input(axis), exclusive=exclusive,
                        reverse=reverse)


def cumsum(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
           name: Optional[str] = None) -> Any:
    """Cumulative sum of `x` along `axis`: [a, b, c] -> [a, a + b, a + b + c]; `exclusive`
    gives [0, a, a + b], `reverse` sums from the end."""
    return _scan(Cumsum, x, axis, exclusive, reverse, name, "Cumsum")


def cumprod(x: Any, axis: Any = 0, exclusive: bool = False, reverse: bool = False,
            name: Optional[str] = None) -> Any:
    """Cumulative product of `x` along `axis`: [a, b, c] -> [a, a * b, a * b * c]; `exclusive`
    gives [1, a, a * b], `reverse` multiplies from the end."""
    return _scan(Cumprod, x, axis, exclusive, reverse, name, "Cumprod")
