"""Array ops (white paper Table 1): shape manipulation, slicing, gathering, padding, ..."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import shape_fns

__all__ = ["identity"]

# -- Identity -------------------------------------------------------------------------------------
Identity = define_op("Identity", inputs=["input: T"], outputs=["output: T"], attrs=["T: type"],
                     shape_fn=shape_fns.unchanged, forwards_input=True)


@Identity.kernel()
def _identity_kernel(ctx: Any) -> Any:
    return lambda x: x


@Identity.gradient
def _identity_grad(op: Any, grad: Any) -> list[Any]:
    return [grad]


def identity(input: Any, name: Optional[str] = None) -> Any:  # noqa: A002
    """Returns a tensor with the same value as `input` (reads a variable's current value)."""
    return apply_op(Identity, name=name, input=input)
