"""Gradients through function calls (TF's gradients_impl for function ops): the function's
`python_grad_func` when it has one; otherwise a SymbolicGradient node, which runs the gradient
function registered for it in the library (Defun's grad_func) or the gradient graph of its
body (runtime/functions.py)."""
from __future__ import annotations

from typing import Any

from tensorweave.framework import function as _function
from tensorweave.framework.graph import Operation
from tensorweave.ops.array import zeros_like
from tensorweave.ops.functional.call_ops import PartitionedCall, StatefulPartitionedCall, symbolic_gradient


def _call_gradient(op: Operation, *grads: Any) -> Any:
    name = _function.called_function_name(op)
    fn = op.graph._get_function(name)
    if fn is None:
        raise LookupError(f"No gradient for {op.name}: function {name} is not in the graph's library")
    if fn.python_grad_func is not None:
        return fn.python_grad_func(op, *grads)
    if not fn.grad_func_name and any(t.is_ref_dtype for t in fn.input_types):
        # the gradient body would run the forward body again, assignments included
        raise LookupError(f"No gradient defined for operation '{op.name}': function {name} takes a "
                          "variable by reference (it assigns it), so its body's gradient graph cannot "
                          "run it again; give it a python_grad_func or a grad_func.")
    dys = [zeros_like(t) if g is None else g for t, g in zip(op.outputs, grads)]
    return symbolic_gradient(list(op.inputs) + dys, [t.dtype.base_dtype for t in op.inputs], name)


_function.register_call_gradient(_call_gradient)
PartitionedCall.gradient(_call_gradient)
StatefulPartitionedCall.gradient(_call_gradient)
