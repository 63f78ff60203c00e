"""`tf.Assert` and `tf.Print`: checks and printing as graph nodes."""
from __future__ import annotations

import sys
from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import shape_fns

__all__ = ["Assert", "Print"]

AssertOp = define_op("Assert", inputs=["condition: bool", "data: T"], attrs=["T: list(type)", "summarize: int = 3"],
                     shape_fn=shape_fns.no_outputs, is_stateful=True)
AssertOp.not_differentiable()


@AssertOp.kernel()
def _assert_kernel(ctx: Any) -> Any:
    summarize, node = ctx.attr("summarize"), ctx.op

    def check(condition: Any, *data: Any) -> None:
        if not bool(np.all(condition)):
            shown = ", ".join(np.array2string(np.asarray(d).reshape(-1)[:summarize], separator=" ")
                              if np.asarray(d).dtype != object else str(np.asarray(d).reshape(-1)[:summarize].tolist())
                              for d in data)
            raise errors.InvalidArgumentError(None, node, f"assertion failed: [{shown}]")

    return check


def Assert(condition: Any, data: Sequence[Any], summarize: Optional[int] = None,  # noqa: N802
           name: Optional[str] = None) -> Any:
    """An op that raises InvalidArgumentError with `data` when `condition` is false."""
    return apply_op(AssertOp, name=name, condition=condition, data=list(data), summarize=summarize)


PrintOp = define_op("Print", inputs=["input: T", "data: U"], outputs=["output: T"],
                    attrs=["T: type", "U: list(type)", "message: string = ''", "first_n: int = -1",
                           "summarize: int = 3"], shape_fn=shape_fns.unchanged, is_stateful=True,
                    forwards_input=True)


@PrintOp.kernel()
def _print_kernel(ctx: Any) -> Any:
    message, first_n, summarize = ctx.attr("message"), ctx.attr("first_n"), ctx.attr("summarize")
    printed = [0]

    def run(x: Any, *data: Any) -> Any:
        if first_n < 0 or printed[0] < first_n:
            printed[0] += 1
            parts = [str(np.asarray(d).reshape(-1)[:summarize].tolist()) for d in data]
            sys.stderr.write(message + "".join(parts) + "\n")
        return x

    return run


@PrintOp.gradient
def _print_grad(op: Any, grad: Any) -> list[Any]:
    return [grad] + [None] * (len(op.inputs) - 1)


def Print(input_: Any, data: Sequence[Any], message: Optional[str] = None, first_n: Optional[int] = None,  # noqa: N802
          summarize: Optional[int] = None, name: Optional[str] = None) -> Any:
    """Identity on input_ that prints `data` (to stderr) when it runs."""
    return apply_op(PrintOp, name=name, input=input_, data=list(data), message=message, first_n=first_n,
                    summarize=summarize)
