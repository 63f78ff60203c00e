"""The state tf.gradients keeps for the while loops it differentiates (OSDI 4.1; white paper 4.4).

For each forward loop on the path from xs to ys, a GradLoopState:
- adds an iteration counter to the forward loop (its Exit is the loop's trip count);
- builds the backward loop (a WhileContext with `grad_state` set) whose own counter starts at
  that trip count and counts down, so the backward loop runs the same number of iterations;
- when a gradient function inside the backward loop reads a forward value, saves that value's
  history: a stack created outside the forward loop, pushed in every forward iteration (after
  the push the forward counter may advance) and popped in every backward iteration (the next
  backward iteration starts only after this one's pops: a ControlTrigger orders them even when
  a cond skipped some). Loop invariants and constants need no history;
- accumulates the gradient of each loop invariant over all backward iterations.

A nested loop's state hangs off its outer loop's: its trip count (one per outer iteration) and
its stacks' handles are themselves saved in the outer loop's history, so each execution of the
inner loop gets its own stack and its own count.

ControlFlowState holds the GradLoopStates of one tf.gradients call and tells the driver which
context each gradient op belongs in, which Exits still wait for gradients, and what zero to use
for an output that received none.
"""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework.graph import Operation, Tensor, get_default_graph
from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.ops import array as array_ops
from tensorweave.ops import math as math_ops
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.creation import zeros, zeros_like
from tensorweave.ops.control_flow import primitives, stack_ops
from tensorweave.ops.control_flow.contexts import (
    CondContext,
    ControlFlowContext,
    WhileContext,
    in_context,
    is_inside,
    is_loop_constant_enter,
    is_loop_exit,
    is_loop_switch,
    output_context,
    while_context_of,
)


def _forward_counter(forward: WhileContext) -> tuple[Tensor, Operation]:
    """A loop variable counting the forward loop's iterations: returns (the trip count, the
    counter's NextIteration op, which each iteration's stack pushes must precede)."""
    with in_context(forward.outer_context):
        zero = constant(0, name="f_count")
    enter = forward.add_loop_enter(zero, name="f_count")
    with in_context(forward):
        merge = primitives.merge([enter, enter])[0]
        done, body = primitives.switch(merge, forward.loop_cond)
        following = primitives.next_iteration(math_ops.add(body, 1))
        merge.op._update_input(1, following)
        count = primitives.exit(done, name="f_count")
    return count, following.op


def _backward_counter(grad_ctx: WhileContext, count: Tensor) -> Operation:
    """The backward loop's predicate: count down from the forward trip count to zero. Sets the
    context's loop_cond and pivots; returns the counter's NextIteration op."""
    enter = grad_ctx.add_loop_enter(count, name="b_count")
    grad_ctx.loop_enters.append(enter)
    with in_context(grad_ctx):
        merge = primitives.merge([enter, enter])[0]
        grad_ctx.pivot = merge.op
        one = constant(1, name="b_count")
        pred = primitives.loop_cond(math_ops.greater_equal(merge, one), name="b_count")
        done, body = primitives.switch(merge, pred)
        index = math_ops.subtract(body, one)
        following = primitives.next_iteration(index)
        merge.op._update_input(1, following)
        grad_ctx.loop_exits.append(primitives.exit(done, name="b_count"))
    grad_ctx.loop_cond = pred
    grad_ctx.pivot = grad_ctx.pivot_for_body = index.op
    return following.op


def _enclosing_cond(ctx: ControlFlowContext, loop: WhileContext) -> Optional[CondContext]:
    """The innermost cond branch between `ctx` and `loop` (None if `ctx` is the loop itself)."""
    while ctx is not None and ctx is not loop:
        if isinstance(ctx, CondContext):
            return ctx
        ctx = ctx.outer_context
    return None


class GradLoopState:
    """The gradient machinery of one forward loop within one tf.gradients call."""

    def __init__(self, forward: WhileContext, outer: Optional["GradLoopState"], base_ctx: Any) -> None:
        self.forward_context = forward
        self.outer_grad_state = outer
        self.forward_loop_exits = list(forward.loop_exits)
        self.pending_exits_count = len(self.forward_loop_exits)
        self.deferred_exits: list[Tensor] = []
        self.unused_exits: list[Tensor] = []
        self.history_map: dict[Tensor, Tensor] = {}       # forward value -> its value when popped
        self.switch_map: dict[Operation, Tensor] = {}     # forward loop Switch -> backward Merge
        self._forward_sync: Optional[Operation] = None
        self._grad_sync: Optional[Operation] = None
        count, self.forward_index = _forward_counter(forward)
        graph = get_default_graph()
        name = graph.unique_name(forward.frame_name.rstrip("/") or "while")
        if outer is None:
            with in_context(base_ctx):
                self.grad_context = WhileContext(name, forward.parallel_iterations, True, forward.swap_memory)
        else:
            # One trip count per execution of this inner loop, read back in the outer backward loop.
            history = outer.add_forward_accumulator(count)
            count = outer.add_backprop_accumulated_value(history, count)
            with in_context(outer.grad_context):
                self.grad_context = WhileContext(name, forward.parallel_iterations, True, forward.swap_memory)
        self.grad_context.grad_state = self
        self.grad_index = _backward_counter(self.grad_context, count)

    # -- ordering ---------------------------------------------------------------------------------
    @property
    def forward_sync(self) -> Operation:
        """Pushes inside a cond branch (dead when the branch is skipped) order the forward
        counter through this trigger."""
        if self._forward_sync is None:
            with in_context(self.forward_context):
                self._forward_sync = primitives.control_trigger(name="f_sync")
            self.forward_index._add_control_input(self._forward_sync)
        return self._forward_sync

    @property
    def grad_sync(self) -> Operation:
        """Every pop of a backward iteration happens before the next iteration starts."""
        if self._grad_sync is None:
            with in_context(self.grad_context):
                self._grad_sync = primitives.control_trigger(name="b_sync")
            self.grad_index._add_control_input(self._grad_sync)
        return self._grad_sync

    # -- history of forward values --------------------------------------------------------------
    def add_forward_accumulator(self, value: Tensor) -> Tensor:
        """Pushes `value` (a value of the forward loop) in every iteration; returns the stack
        handle, made in the loop's outer context (once per execution of the loop)."""
        forward = self.forward_context
        with in_context(forward.outer_context):
            handle = stack_ops.stack(value.dtype.base_dtype, name="f_acc")
        value_ctx = output_context(value.op)
        with in_context(value_ctx):
            push = stack_ops.stack_push(handle, value, swap_memory=forward.swap_memory)
        if value_ctx is forward:
            self.forward_index._add_control_input(push.op)
        else:  # inside a cond branch: the push may be dead
            self.forward_sync._add_control_input(push.op)
        return handle

    def add_backprop_accumulated_value(self, handle: Tensor, value: Tensor) -> Tensor:
        """Pops `value`'s history in the backward loop (guarded by the forward cond's predicate
        when the value was only pushed in the iterations that took a branch)."""
        cond_ctx = _enclosing_cond(output_context(value.op), self.forward_context)
        with in_context(self.grad_context):
            if cond_ctx is not None:
                pred = self.get_real_value(cond_ctx.pred)
                handle = primitives.switch(handle, pred)[cond_ctx.branch]
            pop = stack_ops.stack_pop(handle, value.dtype.base_dtype, shape=value.shape)
        self.grad_sync._add_control_input(pop.op)
        return pop

    def get_real_value(self, value: Tensor) -> Tensor:
        """The value `value` (of the forward loop) had in the forward iteration that the current
        backward iteration undoes."""
        real = self.history_map.get(value)
        if real is not None:
            return real
        op = value.op
        if is_loop_constant_enter(op):
            # A loop invariant: the same in every iteration, so no history.
            real = self.grad_context.add_value(op.inputs[0])
        elif op.type == "Const":
            # A constant inside the forward frame (TF's graphs keep them there): made again; the
            # backward loop hoists it (WhileContext.add_op), so it enters as an invariant.
            with in_context(self.grad_context):
                real = constant(op._get_attr("value"), dtype=value.dtype.base_dtype)
            real = self.grad_context.add_value(real)
        else:
            real = self.add_backprop_accumulated_value(self.add_forward_accumulator(value), value)
        self.history_map[value] = real
        return real

    # -- loop invariants --------------------------------------------------------------------------
    def add_backprop_accumulator(self, enter: Operation, grad: Tensor) -> Tensor:
        """Sums a loop invariant's gradient over the backward iterations: a backward loop
        variable starting at zero (what the gradient is if the loop ran zero times)."""
        grad_ctx = self.grad_context
        start = zeros_shaped_like(enter.inputs[0], grad_ctx.outer_context, grad.dtype.base_dtype)
        acc = grad_ctx.add_loop_enter(start, name="b_acc")
        grad_ctx.loop_enters.append(acc)
        with in_context(grad_ctx):
            merge = primitives.merge([acc, acc], name="b_acc")[0]
            done, body = primitives.switch(merge, grad_ctx.loop_cond)
            merge.op._update_input(1, primitives.next_iteration(math_ops.add(body, grad)))
            result = primitives.exit(done, name="b_acc")
        grad_ctx.loop_exits.append(result)
        return result


def zeros_shaped_like(value: Tensor, ctx: ControlFlowContext, dtype: Any = None) -> Tensor:
    """Zeros shaped like `value`, built in `ctx`. A shape known only at run time is computed
    next to `value` and read in `ctx` through the usual routing (its history, in a backward
    loop)."""
    dtype = dtype or value.dtype.base_dtype
    if value.shape.is_fully_defined():
        with in_context(ctx):
            return zeros(value.shape.as_list(), dtype)
    with in_context(output_context(value.op)):
        shape = array_ops.shape(value)
    with in_context(ctx):
        return zeros(shape, dtype)


class ControlFlowState:
    """The GradLoopStates of one tf.gradients call, by forward loop."""

    def __init__(self, base_ctx: Any) -> None:
        self.base_ctx = base_ctx  # the context tf.gradients was called in
        self.states: dict[WhileContext, Optional[GradLoopState]] = {}

    @classmethod
    def maybe_create(cls, between: set[Operation]) -> Optional["ControlFlowState"]:
        """A state if some loop Exit lies between xs and ys; adds every Exit of those loops to
        `between` (the backward loop needs a gradient, if only zero, for each loop variable)."""
        state: Optional[ControlFlowState] = None
        for op in sorted(between, key=lambda o: o._id):
            if is_loop_exit(op):
                state = state or cls(get_default_graph()._control_flow_context)
                state._add_loop(op._control_flow_context, between)
        return state

    def _add_loop(self, forward: WhileContext, between: set[Operation]) -> Optional[GradLoopState]:
        if forward in self.states:
            return self.states[forward]
        if forward.grad_state is not None:
            raise TypeError(f"Second-order gradient for while loops not supported (loop {forward.frame_name} is "
                            "itself a backward loop built by tf.gradients).")
        outer: Optional[GradLoopState] = None
        outer_forward = while_context_of(forward.outer_context)
        nested = outer_forward is not None and not is_inside(self.base_ctx, outer_forward)
        if nested:
            outer = self._add_loop(outer_forward, between)
        state = None
        if forward.back_prop and (outer is not None or not nested):
            state = GradLoopState(forward, outer, self.base_ctx)
            between.update(e.op for e in state.forward_loop_exits)
        self.states[forward] = state
        return state

    def grad_state_of(self, op: Operation, before: bool) -> Optional[GradLoopState]:
        """The loop state whose backward context `op`'s gradient is built in: an Exit's incoming
        gradients are summed in its outer loop's, everything else in its own loop's."""
        ctx = op._control_flow_context
        if before and is_loop_exit(op):
            ctx = ctx.outer_context
        forward = while_context_of(ctx)
        return self.states.get(forward) if forward is not None else None

    def context_for(self, op: Operation, before: bool) -> Any:
        state = self.grad_state_of(op, before)
        return state.grad_context if state is not None else self.base_ctx

    def process_unused_loop_exits(self, pending: dict, to_ops: set[Operation]) -> list[Tensor]:
        """Exits no gradient will reach (nothing between consumes them): counted as arrived;
        returns those of loops whose every Exit has now arrived."""
        unused: list[Tensor] = []
        for state in self.states.values():
            if state is None:
                continue
            for y in state.forward_loop_exits:
                if pending.get(y.op, 0) == 0:
                    state.pending_exits_count -= 1
                    if y.op not in to_ops:
                        state.unused_exits.append(y)
                    if state.pending_exits_count == 0:
                        unused.extend(state.unused_exits)
        return unused

    def exit_arrived(self, exit_op: Operation, has_grad: Any) -> list[tuple[Tensor, bool]]:
        """An Exit whose consumers are all done: deferred until every Exit of its loop is; then
        returns (exit, needs a zero gradient) for each to process."""
        state = self.grad_state_of(exit_op, before=False)
        if state is None:
            return [(exit_op.outputs[0], False)]
        state.deferred_exits.append(exit_op.outputs[0])
        state.pending_exits_count -= 1
        if state.pending_exits_count:
            return []
        ready = []
        for y in state.deferred_exits:
            if has_grad(y):
                ready.append((y, False))
            else:
                state.unused_exits.append(y)
        any_real = bool(ready)
        ready.extend((y, any_real) for y in state.unused_exits)
        return ready

    def zeros_for_exit(self, exit_tensor: Tensor) -> Tensor:
        """The zero gradient of an unused loop variable's Exit, in the context its gradient is
        summed in."""
        return zeros_shaped_like(exit_tensor, self.context_for(exit_tensor.op, before=True))

    def zeros_like(self, op: Operation, index: int) -> Any:
        return zeros_for_output(op, index, self)


def zeros_for_output(op: Operation, index: int, loop_state: Optional[ControlFlowState] = None) -> Any:
    """The zero gradient for output `index` of `op`, which received none (None: leave it so)."""
    if is_loop_switch(op):
        return None  # the loop Switch is visited twice; its missing side is not zero
    state = loop_state.grad_state_of(op, before=False) if loop_state is not None else None
    ctx = state.grad_context if state is not None else get_default_graph()._control_flow_context
    branch = op._control_flow_context
    if op.op_def.control_flow is ControlFlowKind.SWITCH and isinstance(branch, CondContext):
        # A cond's Switch: the zero must be live exactly when output `index` is, or the Merge
        # of the Switch's gradients could forward it instead of the taken branch's gradient.
        zero = zeros_shaped_like(op.inputs[0], ctx)
        with in_context(ctx):
            return primitives.switch(zero, branch.pred)[index]
    if state is None:
        # A ZerosLike op (not a filled constant) lets gradient functions see the zero and skip
        # work, as TF's IsZero does; it is pruned when they do.
        return zeros_like(op.outputs[index], optimize=False)
    return zeros_shaped_like(op.outputs[index], ctx)
