"""Dynamic control flow (white paper 4.4; OSDI 3.4): the primitives (Switch, Merge, Enter, Exit,
NextIteration, LoopCond) that the executor implements, and what is built on them: tf.cond and
tf.case, tf.while_loop, the functional ops (map_fn, foldl, foldr, scan), TensorArray, and the
grouping ops (NoOp, tf.group, tf.tuple).

Tier 1 (ops): primitives, grouping, stack_ops, tensor_array_ops, control_flow_def. Tier 2:
contexts, cond, while_loop, functional_ops, tensor_array, grad_state, context_protos and this
module. Tier 3: grad.py (the gradients of the primitives and of the TensorArray ops)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from tensorweave.framework import graph as _graph
from tensorweave.ops.array.shaping import identity
from tensorweave.ops.control_flow.cond import case, cond
from tensorweave.ops.control_flow.functional_ops import foldl, foldr, map_fn, scan
from tensorweave.ops.control_flow.grouping import group, no_op
from tensorweave.ops.control_flow.tensor_array import TensorArray
from tensorweave.ops.control_flow.while_loop import while_loop

__all__ = ["cond", "case", "while_loop", "map_fn", "foldl", "foldr", "scan", "TensorArray", "group",
           "no_op", "tuple"]


def tuple(tensors: Sequence[Any], name: Optional[str] = None,  # noqa: A001  (TF's name)
          control_inputs: Optional[Sequence[Any]] = None) -> list[Any]:
    """Tensors with the same values as `tensors`, each available only after all are computed."""
    present = [t for t in tensors if t is not None]
    graph = present[0].graph if present else _graph.get_default_graph()
    with graph.as_default(), graph.name_scope(name or "tuple") as scope:
        gate = group(*present, *(control_inputs or []), name=None)
        result = []
        with graph.control_dependencies([gate]):
            for t in tensors:
                result.append(None if t is None else identity(t))
        del scope
        return result
