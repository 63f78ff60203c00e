"""Gradients of the control-flow primitives (OSDI 4.1): the backward pass mirrors the forward
routing.

tf.cond: a Merge sends its gradient back to the branch that was taken (Switch on the same
predicate), and a Switch merges the gradients of its two outputs (only one of them is live).

tf.while_loop: tf.gradients builds a backward loop (a WhileContext whose `grad_state` is the
forward loop's GradLoopState, see grad_state.py) and these functions run inside it. An Exit's
gradient enters the backward loop as a loop variable; the loop Switch it reaches first becomes
the backward Merge, whose back edge is added when the Switch is reached again from the body; a
loop Merge becomes a backward Switch on the backward predicate; a NextIteration passes its
gradient through; an Enter of a loop variable becomes the backward loop's Exit, and a constant
Enter (a loop invariant) sums its gradients over all iterations in an accumulator loop variable.

TensorArray: each forward TensorArray gets a gradient TensorArray (TensorArrayGradV3, one per
tf.gradients call, told apart by the call's name scope, the "source"). A read's gradient is a
write into the gradient array and the reverse; gather and scatter, concat and split pair the same
way. The flow tensors carry the ordering: a gradient array is read only after every write into it
that the forward pass implies.
"""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework.graph import Operation, get_default_graph
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import math as math_ops
from tensorweave.ops._util import dense as _dense
from tensorweave.ops.control_flow import primitives
from tensorweave.ops.control_flow import tensor_array_ops as ta_ops
from tensorweave.ops.control_flow.contexts import (
    CondContext,
    WhileContext,
    is_loop_switch,
    output_context,
)
from tensorweave.ops.control_flow.tensor_array import TensorArray


def _grad_context_for(op: Operation) -> Optional[WhileContext]:
    """The backward loop being built for `op`'s loop (the graph's current context), or None
    when `op`'s loop takes part in no gradient computation (back_prop=False)."""
    forward = op._control_flow_context
    ctx = get_default_graph()._control_flow_context
    if isinstance(ctx, WhileContext) and ctx.grad_state is not None and \
            ctx.grad_state.forward_context is forward:
        return ctx
    if not forward.back_prop:
        return None
    if forward.grad_state is not None:
        raise TypeError(f"Second-order gradient for while loops not supported ({op.name}).")
    raise LookupError(f"Gradient of {op.name} ({op.type}) requested outside the backward loop of "
                      f"{forward.frame_name}: loop gradients are built by tf.gradients")


def _cond_context_of(t: Any) -> Any:
    ctx = output_context(t.op)
    return ctx if isinstance(ctx, CondContext) else None


@primitives.Merge.gradient
def _merge_grad(op: Operation, grad: Any, _: Any) -> list[Any]:
    ctx = op._control_flow_context
    if isinstance(ctx, WhileContext) and op in ctx.loop_merges:
        grad_ctx = _grad_context_for(op)
        if grad_ctx is None:
            return [None] * len(op.inputs)
        # [to the Enter: after the last backward iteration, to the NextIteration: in the body]
        return list(primitives.switch(_dense(grad), grad_ctx.loop_cond))
    branch_ctx = next((c for c in (_cond_context_of(t) for t in op.inputs) if c is not None), None)
    if branch_ctx is None:
        # A Merge built directly (not by tf.cond): each input gets the gradient when it was the one
        # forwarded, which is what a Switch on value_index == i gives.
        return [primitives.switch(_dense(grad), math_ops.equal(op.outputs[1], i))[1]
                for i in range(len(op.inputs))]
    # Inside a backward loop the predicate is read back from the forward iteration's history
    # (the backward context routes it, see contexts.WhileContext._add_outside_value).
    false_grad, true_grad = primitives.switch(_dense(grad), branch_ctx.pred)
    return [false_grad, true_grad] if len(op.inputs) == 2 else [grad] * len(op.inputs)


@primitives.Switch.gradient
def _switch_grad(op: Operation, false_grad: Any, true_grad: Any) -> list[Any]:
    if not is_loop_switch(op):
        # A cond's Switch: only one of the two gradients is live (the driver supplies a zero,
        # guarded by the same predicate, for a floating output that had none).
        if false_grad is None or true_grad is None:
            return [None, None]
        return [primitives.merge([_dense(false_grad), _dense(true_grad)])[0], None]
    grad_ctx = _grad_context_for(op)
    if grad_ctx is None:
        return [None, None]
    state = grad_ctx.grad_state
    merge_grad = state.switch_map.get(op)
    if merge_grad is not None:
        # Second visit, from the body: the body's gradient is the backward loop's back edge.
        if true_grad is not None:
            merge_grad.op._update_input(1, primitives.next_iteration(_dense(true_grad)))
        return [None, None]
    if false_grad is None:
        return [None, None]  # no gradient reaches this loop variable's Exit
    # First visit, from the Exit: the backward Merge, fed again by the back edge later.
    g = _dense(false_grad)
    merge_grad = primitives.merge([g, g], name="b_switch")[0]
    merge_grad._shape = op.inputs[0].shape.most_specific_compatible_shape(g.shape)
    state.switch_map[op] = merge_grad
    return [merge_grad, None]


# A variable read inside a cond branch is routed by a RefSwitch; its gradient is a Switch's.
primitives.RefSwitch.gradient(_switch_grad)
# A cond over references ends in a RefMerge; its gradient is a Merge's (TF registers the same).
primitives.RefMerge.gradient(_merge_grad)


@primitives.Exit.gradient
def _exit_grad(op: Operation, grad: Any) -> Any:
    grad_ctx = _grad_context_for(op)
    if grad_ctx is None:
        return None  # as TF: a back_prop=False loop passes no gradient back
    enter = grad_ctx.add_loop_enter(_dense(grad), name="b_exit")
    grad_ctx.loop_enters.append(enter)
    return enter


@primitives.NextIteration.gradient
def _next_iteration_grad(op: Operation, grad: Any) -> Any:
    return grad


def _enter_grad(op: Operation, grad: Any) -> Any:
    ctx = get_default_graph()._control_flow_context
    if not (isinstance(ctx, WhileContext) and ctx.grad_state is not None
            and ctx.grad_state.forward_context is op._control_flow_context):
        return grad  # not building a backward loop for this frame: pass the gradient through
    if op._get_attr("is_constant"):
        return ctx.grad_state.add_backprop_accumulator(op, _dense(grad))
    result = primitives.exit(_dense(grad))
    ctx.loop_exits.append(result)
    return result


primitives.Enter.gradient(_enter_grad)
primitives.RefEnter.gradient(_enter_grad)


# ---------------------------------------------------------------------------------------------
# TensorArray
# ---------------------------------------------------------------------------------------------
def _grad_source(grad: Any) -> str:
    """The name scope of the tf.gradients call that made `grad` ("gradients", "gradients_1",
    "train/gradients", ...): the last name component starting with "gradients"."""
    for name in (getattr(grad, "name", ""), get_default_graph().get_name_scope()):
        tokens = name.split("/")
        positions = [i for i, token in enumerate(tokens) if token.startswith("gradients")]
        if positions:
            return "/".join(tokens[:positions[-1] + 1])
    raise ValueError(f"Expected op/tensor name to start with gradients (excluding scope), got: {grad.name}")


def _gradient_array(op: Operation, dtype_attr: str, flow: Any, source_of: Any, element_shape: Any = None) -> Any:
    """The gradient TensorArray of the array `op` works on (its handle is op.inputs[0])."""
    forward = TensorArray(op._get_attr(dtype_attr), handle=op.inputs[0], flow=flow,
                                 element_shape=element_shape)
    return forward.grad(source=_grad_source(source_of), flow=flow)


def _reading_grad(op: Operation, grad: Any, put: Any) -> list[Any]:
    """Read and gather: the gradient is put into the gradient array where the values came from
    (op.inputs: handle, index or indices, flow)."""
    g = _gradient_array(op, "dtype", op.inputs[2], grad, op._get_attr("element_shape"))
    return [None, None, put(g, op.inputs[1], _dense(grad)).flow]


def _writing_grad(op: Operation, flow_grad: Any, take: Any, element_shape: Any) -> list[Any]:
    """Write and scatter: the value's gradient is taken from the gradient array (op.inputs:
    handle, index or indices, value, flow)."""
    g = _gradient_array(op, "T", flow_grad, flow_grad, element_shape)
    return [None, None, take(g, op.inputs[1]), flow_grad]


ta_ops.TensorArrayReadV3.gradient(lambda op, grad: _reading_grad(op, grad, TensorArray.write))
ta_ops.TensorArrayGatherV3.gradient(lambda op, grad: _reading_grad(op, grad, TensorArray.scatter))
ta_ops.TensorArrayWriteV3.gradient(
    lambda op, flow_grad: _writing_grad(op, flow_grad, TensorArray.read, op.inputs[2].shape))
ta_ops.TensorArrayScatterV3.gradient(
    lambda op, flow_grad: _writing_grad(op, flow_grad, TensorArray.gather,
                                        op.inputs[2].shape[1:] if op.inputs[2].shape.ndims else None))


@ta_ops.TensorArrayConcatV3.gradient
def _concat_grad(op: Operation, grad: Any, _lengths_grad: Any) -> list[Any]:
    g = _gradient_array(op, "dtype", op.inputs[1], grad)
    return [None, g.split(_dense(grad), op.outputs[1]).flow]


@ta_ops.TensorArraySplitV3.gradient
def _split_grad(op: Operation, flow_grad: Any) -> list[Any]:
    value = op.inputs[1]
    element_shape = TensorShape([None]).concatenate(value.shape[1:]) if value.shape.ndims else None
    g = _gradient_array(op, "T", flow_grad, flow_grad, element_shape)
    return [None, g.concat(), None, flow_grad]
