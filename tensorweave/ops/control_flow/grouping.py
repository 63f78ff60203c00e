"""NoOp and `tf.group`: control dependencies as graph structure (`tf.tuple` is in the family's
__init__, since it needs array's Identity)."""
from __future__ import annotations

import builtins
from typing import Any, Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util

NoOp = define_op("NoOp", shape_fn=_util.no_outputs)


@NoOp.kernel()
def _no_op_kernel(ctx: KernelContext) -> Any:
    return lambda: None


NoOp.not_differentiable()


def no_op(name: Optional[str] = None) -> Operation:
    """Does nothing; useful as a placeholder for control edges."""
    return apply_op(NoOp, name=name)


def _as_op(x: Any) -> Operation:
    if hasattr(x, "_as_graph_element") and not isinstance(x, (Tensor, Operation)):
        x = x._as_graph_element()
    if isinstance(x, Tensor):
        return x.op
    if isinstance(x, Operation):
        return x
    raise TypeError(f"Expected a Tensor or Operation in tf.group, got {x!r}")


def group(*inputs: Any, name: Optional[str] = None) -> Operation:
    """An op that runs after all of `inputs` have run; it has no outputs."""
    flat: list[Any] = []
    for x in inputs:
        if isinstance(x, (list, builtins.tuple)):
            flat.extend(x)
        elif isinstance(x, dict):
            flat.extend(x.values())
        else:
            flat.append(x)
    ops = [_as_op(x) for x in flat if x is not None]
    graph = ops[0].graph if ops else _graph.get_default_graph()
    with graph.as_default(), graph.name_scope(name or "group_deps") as scope:
        with graph.control_dependencies(ops):
            return no_op(name=scope)
