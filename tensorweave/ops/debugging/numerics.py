"""The CheckNumerics op and `tf.check_numerics`: identity on a float tensor that fails when it
holds a NaN or an Inf."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import errors
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util

__all__ = ["check_numerics"]

CheckNumerics = define_op("CheckNumerics", inputs=["tensor: T"], outputs=["output: T"],
                          attrs=["T: {float16, float32, float64}", "message: string"],
                          shape_fn=_util.unchanged, is_stateful=True, forwards_input=True)


@CheckNumerics.kernel()
def _check_numerics_kernel(ctx: KernelContext) -> Any:
    xp, message, node = ctx.xp, ctx.attr("message"), ctx.op

    def compute(x: Any) -> Any:
        if not bool(xp.all(xp.isfinite(x))):
            has_nan, has_inf = bool(xp.any(xp.isnan(x))), bool(xp.any(xp.isinf(x)))
            what = "Inf and NaN" if has_nan and has_inf else ("NaN" if has_nan else "Inf")
            raise errors.InvalidArgumentError(None, node, f"{message} : Tensor had {what} values")
        return x

    return compute


def check_numerics(tensor: Any, message: str, name: Optional[str] = None) -> Any:
    """Identity on `tensor` that fails (InvalidArgumentError) if it holds a NaN or an Inf."""
    return apply_op(CheckNumerics, name=name, tensor=tensor, message=message)
