"""Gradients of the debugging ops (tier 3: imported only by tensorweave/gradients.py)."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.graph import Operation
from tensorweave.ops.debugging.logging_ops import PrintOp
from tensorweave.ops.debugging.numerics import CheckNumerics, check_numerics


@CheckNumerics.gradient
def _check_numerics_grad(op: Operation, grad: Any) -> Any:
    """The gradient passes through, itself checked for NaN and Inf."""
    return check_numerics(grad, "Not a number (NaN) or infinity (Inf) values detected in gradient. "
                          + op._get_attr("message"))


@PrintOp.gradient
def _print_grad(op: Operation, grad: Any) -> list[Any]:
    """Print is identity on its first input; the printed data get no gradient."""
    return [grad] + [None] * (len(op.inputs) - 1)
