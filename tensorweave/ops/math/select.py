"""Picking values element-wise: Select and SelectV2 (tf.where and tf.where_v2 with x and y,
whose wrappers are in math_impl.py because the one-argument form is the array family's Where)
and ClipByValue (tf.clip_by_value)."""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.framework.graph import Operation, name_scope
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import _util
from tensorweave.ops._util import format_dims, invalid
from tensorweave.ops._util import register_kernel as _kernel
from tensorweave.ops.math.elementwise import maximum, minimum

__all__ = ["clip_by_value"]

_REALS = "float16, float32, float64, int8, int16, int32, int64, uint8, uint16, uint32, uint64"


# ---------------------------------------------------------------------------------------------
# Select / SelectV2
# ---------------------------------------------------------------------------------------------
def _select_shape(op: Operation) -> list[TensorShape]:
    cond, x, y = (t.shape for t in op.inputs)
    try:
        out = x.merge_with(y)
        if cond.ndims is None or out.ndims is None or cond.ndims == 0:
            return [out]
        if cond.ndims == 1 and out.ndims > 1:  # TF1: a vector picks whole rows
            return [TensorShape([cond.dims[0].merge_with(out.dims[0])] + out.dims[1:])]
        return [out.merge_with(cond)]
    except ValueError as err:
        raise ValueError(f"{err} for '{op.name}' (op: 'Select') with input shapes: "
                         f"{cond}, {x}, {y}.") from None


def _select_v2_shape(op: Operation) -> list[TensorShape]:
    cond, x, y = (t.shape for t in op.inputs)
    return [_util.broadcast_shapes(_util.broadcast_shapes(cond, x, op.name), y, op.name)]


Select = define_op("Select", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
                   attrs=["T: type"], shape_fn=_select_shape)
SelectV2 = define_op("SelectV2", inputs=["condition: bool", "t: T", "e: T"],
                     outputs=["output: T"], attrs=["T: type"], shape_fn=_select_v2_shape)


@_kernel(Select)
def _select_kernel(ctx: KernelContext) -> Callable:
    where = ctx.xp.where

    def compute(cond: Any, x: Any, y: Any) -> Any:
        if x.shape != y.shape:
            raise invalid(f"'then' and 'else' must have the same size.  but received: "
                           f"{format_dims(x.shape)} vs. {format_dims(y.shape)}")
        if cond.shape == x.shape or cond.ndim == 0:
            return where(cond, x, y)
        if cond.ndim != 1 or x.ndim == 0:
            raise invalid(f"'cond' must be a scalar, vector or the same shape as 'then', but "
                           f"received: {format_dims(cond.shape)} vs. {format_dims(x.shape)}")
        if cond.shape[0] != x.shape[0]:
            raise invalid(f"Number of batches of 'then' must match size of 'cond', but saw: "
                           f"{x.shape[0]} vs. {cond.shape[0]}")
        return where(cond.reshape(cond.shape + (1,) * (x.ndim - 1)), x, y)

    return compute


@_kernel(SelectV2)
def _select_v2_kernel(ctx: KernelContext) -> Callable:
    where = ctx.xp.where

    def compute(cond: Any, x: Any, y: Any) -> Any:
        try:
            return where(cond, x, y)
        except ValueError:
            raise invalid(f"condition {format_dims(cond.shape)}, then {format_dims(x.shape)}, and else "
                           f"{format_dims(y.shape)} must be broadcastable") from None

    return compute


# ---------------------------------------------------------------------------------------------
# ClipByValue
# ---------------------------------------------------------------------------------------------
def _clip_by_value_shape(op: Operation) -> list[TensorShape]:
    t = op.inputs[0].shape
    for bound in op.inputs[1:]:
        if bound.shape.ndims != 0 and not bound.shape.is_compatible_with(t):
            raise ValueError(f"clip_value_min and clip_value_max must be either scalars or have "
                             f"the same shape as the input for '{op.name}': {t} vs. {bound.shape}")
    return [t]


ClipByValue = define_op("ClipByValue", inputs=["t: T", "clip_value_min: T", "clip_value_max: T"],
                        outputs=["output: T"], attrs=[f"T: {{{_REALS}}}"],
                        shape_fn=_clip_by_value_shape)


@_kernel(ClipByValue)
def _clip_by_value_kernel(ctx: KernelContext) -> Callable:
    maximum_, minimum_ = ctx.xp.maximum, ctx.xp.minimum

    def compute(t: Any, lo: Any, hi: Any) -> Any:
        for bound in (lo, hi):
            if bound.ndim != 0 and bound.shape != t.shape:
                raise invalid("clip_value_min and clip_value_max must be either scalars or have "
                               f"the same shape as the input: {format_dims(bound.shape)} vs. "
                               f"{format_dims(t.shape)}")
        return maximum_(minimum_(t, hi), lo)

    return compute


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any,
                  name: Optional[str] = None) -> Any:
    """Clips `t` to [clip_value_min, clip_value_max] (Minimum then Maximum, as TF builds it);
    the bounds may broadcast but must not change `t`'s shape."""
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = convert_to_tensor(t, name="t")
        t_min = minimum(values, clip_value_max)
        values.shape.assert_is_compatible_with(t_min.shape)
        t_max = maximum(t_min, clip_value_min, name=scope)
        values.shape.assert_is_compatible_with(t_max.shape)
        return t_max
