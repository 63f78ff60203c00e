"""The gradient of a traced function that assigns variables (TF 2's forward function "with
intermediates" and its backward function, eager/function.py's _ForwardBackwardCall).

A plain trace's backward function is its whole body plus the gradient ops built in it: running
it recomputes the forward values, which is right only when the body is pure. A body that
assigns a variable would assign it again, and reads after the assignment would see the second
write. So for such a body the work is split as TF 2 splits every function:

- the *forward* function is the body returning, after its own outputs, every forward value the
  gradient ops use (the intermediates);
- the *backward* function holds the gradient ops only: its arguments are those intermediates
  and the output gradients, so nothing of the forward pass (no assignment) runs again.

Both are FunctionDefs derived from the body's graph: the forward one by adding outputs to the
trace's FunctionDef, the backward one by keeping only the gradient ops' nodes of the gradient
graph's FunctionDef and renaming the edges that came from forward ops.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from tensorweave.framework import function as _function
from tensorweave.framework.graph import Operation, Tensor

__all__ = ["ForwardBackward", "split"]


class ForwardBackward:
    """The two functions of a split, and how many intermediates the forward one appends."""

    __slots__ = ("forward", "backward", "num_intermediates")

    def __init__(self, forward: _function.DefinedFunction, backward: _function.DefinedFunction,
                 num_intermediates: int) -> None:
        self.forward = forward
        self.backward = backward
        self.num_intermediates = num_intermediates


def _edge(t: Tensor) -> str:
    """A tensor's name in a FunctionDef (graph_to_function_def's edges)."""
    if t.op.type == "_Arg":
        return t.op.name
    arg, index = _function.output_arg_slots(t.op.op_def, t.op.node_attrs)[t.value_index]
    return f"{t.op.name}:{arg}:{index}"


def _intermediates(grad_ops: Sequence[Operation], dys: Sequence[Tensor], grads: Sequence[Tensor]) -> list[Tensor]:
    """The forward tensors the gradient ops (and the returned gradients) use, in first-use order."""
    made_here = set(grad_ops)
    own = set(dys)
    found: dict[Tensor, None] = {}
    for op in grad_ops:
        for t in op.inputs:
            if t.op not in made_here and t not in own:
                found[t] = None
    for g in grads:
        if g.op not in made_here and g not in own:
            found[g] = None
    return list(found)


def split(name: str, body: _function.FuncGraph, forward_fdef: Any, first_gradient_op: int,
          dys: Sequence[Tensor], grads: Sequence[Tensor], functions: dict[str, Any],
          python_grad_func: Callable[..., Any]) -> ForwardBackward:
    """Splits `body` (whose ops from index `first_gradient_op` on are the gradient ops computing
    `grads` from the output gradients `dys`) into a forward and a backward function; a call of
    the forward one has `python_grad_func` as its gradient."""
    grad_ops = [op for op in body.get_operations()[first_gradient_op:] if op.type != "_Arg"]
    intermediates = _intermediates(grad_ops, dys, grads)
    dependencies = list(functions.values())

    forward = type(forward_fdef)()
    forward.CopyFrom(forward_fdef)
    forward.signature.name = f"__forward_{name}"
    arg_names = []
    for k, t in enumerate(intermediates):
        arg_name = f"intermediate_{k}"
        arg_names.append(arg_name)
        out = forward.signature.output_arg.add()
        out.name = arg_name
        out.type = t.dtype.base_dtype.as_datatype_enum  # a reference is returned as its value
        forward.ret[arg_name] = _edge(t)

    # every argument named as one (the forward ones are renamed below or unused)
    full = _function.graph_to_function_def(f"__backward_{name}", body, list(body.inputs), list(grads))
    backward = type(full)()
    backward.signature.name = full.signature.name
    renamed = {_edge(t): a for t, a in zip(intermediates, arg_names)}
    for t, arg_name in zip(intermediates, arg_names):
        arg = backward.signature.input_arg.add()
        arg.name = arg_name
        arg.type = t.dtype.base_dtype.as_datatype_enum
    dy_names = {t.op.name for t in dys}
    backward.signature.input_arg.extend(a for a in full.signature.input_arg if a.name in dy_names)
    backward.signature.output_arg.extend(full.signature.output_arg)
    kept = {op.name for op in grad_ops}
    for node in full.node_def:
        if node.name not in kept:
            continue
        copy = backward.node_def.add()
        copy.CopyFrom(node)
        del copy.input[:]
        for edge in node.input:
            if edge.startswith("^"):
                if edge[1:] in kept:  # the forward ops it waited for have run already
                    copy.input.append(edge)
            else:
                copy.input.append(renamed.get(edge, edge))
    for out, edge in full.ret.items():
        backward.ret[out] = renamed.get(edge, edge)
    backward.signature.is_stateful = any(op.op_def.is_stateful for op in grad_ops)
    return ForwardBackward(
        _function.DefinedFunction(forward, python_grad_func=python_grad_func, dependencies=dependencies,
                                  functions=functions),
        _function.DefinedFunction(backward, dependencies=dependencies, functions=functions),
        len(intermediates))
