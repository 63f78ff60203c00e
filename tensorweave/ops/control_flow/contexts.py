"""Control-flow contexts (white paper 4.4): while a cond branch or a loop body is being built,
its context sees every new op and routes inputs that come from outside through the control-flow
primitives: a Switch on the branch predicate for cond (so untaken branches see dead values), an
Enter into the loop's frame for while loops (loop invariants are constant Enters). Ops that only
read loop invariants get a control edge from the loop's pivot, so they run once per iteration
and not in the final iteration whose predicate is false.

A WhileContext built by the gradient pass (`grad_state` set) is a backward loop: values of its
forward loop that its ops read are fetched through the forward loop's saved history (stacks,
see grad_state.py) instead of being entered as invariants."""
from __future__ import annotations

import contextlib
from typing import Any, Iterator, Optional

from tensorweave.framework.graph import Operation, Tensor, get_default_graph
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.shaping import identity
from tensorweave.ops.control_flow import primitives


def output_context(op: Operation) -> Any:
    """The context an op's outputs live in: an Exit's outputs belong to the loop's outer context."""
    ctx = op._control_flow_context
    if ctx is not None and op.op_def.control_flow is ControlFlowKind.EXIT:
        return ctx.outer_context
    return ctx


def is_inside(ctx: Optional["ControlFlowContext"], container: Any) -> bool:
    while ctx is not None:
        if ctx is container:
            return True
        ctx = ctx.outer_context
    return False


def while_context_of(ctx: Optional["ControlFlowContext"]) -> Optional["WhileContext"]:
    """The innermost WhileContext enclosing `ctx` (itself if it is one)."""
    while ctx is not None and not isinstance(ctx, WhileContext):
        ctx = ctx.outer_context
    return ctx


@contextlib.contextmanager
def in_context(ctx: Optional["ControlFlowContext"]) -> Iterator[None]:
    """Builds ops in `ctx` (None: outside every context), free of open control dependencies."""
    graph = get_default_graph()
    saved = graph._control_flow_context
    graph._control_flow_context = ctx
    try:
        with graph.control_dependencies(None):
            yield
    finally:
        graph._control_flow_context = saved


@contextlib.contextmanager
def entered(ctx: Optional["ControlFlowContext"]) -> Iterator[None]:
    """Builds ops in `ctx`, keeping the control dependencies the caller opened."""
    graph = get_default_graph()
    saved = graph._control_flow_context
    graph._control_flow_context = ctx
    try:
        yield
    finally:
        graph._control_flow_context = saved


def is_loop_exit(op: Operation) -> bool:
    """An Exit of a tf.while_loop's loop variable (its outputs leave the frame)."""
    ctx = op._control_flow_context
    return op.op_def.control_flow is ControlFlowKind.EXIT and isinstance(ctx, WhileContext) and \
        any(e.op is op for e in ctx.loop_exits)


def is_loop_switch(op: Operation) -> bool:
    ctx = op._control_flow_context
    return isinstance(ctx, WhileContext) and op in ctx.loop_switches


class ControlFlowContext:
    def __init__(self) -> None:
        self._graph = get_default_graph()
        # The context this one was created in; fixed for its lifetime (enter/exit may nest).
        self.outer_context: Any = self._graph._control_flow_context
        # Contexts built inside this one; a meta graph stores them nested in it (TF's layout).
        self.nested_contexts: list[Any] = []
        if self.outer_context is not None:
            self.outer_context.nested_contexts.append(self)
        self._values: dict[Tensor, Tensor] = {}   # outside tensor -> its version inside
        self._saved: list[Any] = []
        self._markers: dict[Operation, Operation] = {}  # outside op -> inside control marker
        self.pivot: Optional[Operation] = None    # control pivot for ops with no inside input

    def enter(self) -> None:
        self._saved.append(self._graph._control_flow_context)
        self._graph._control_flow_context = self

    def exit(self) -> None:
        self._graph._control_flow_context = self._saved.pop()

    def _with_outer(self, fn: Any, *args: Any) -> Any:
        """Runs fn in the outer context (the routing nodes themselves belong there), free of the
        control dependencies the user opened inside this context."""
        with in_context(self.outer_context):
            return fn(*args)

    def add_value(self, t: Tensor) -> Tensor:
        """The version of outside tensor `t` to use inside this context."""
        if is_inside(output_context(t.op), self):
            return t
        found = self._values.get(t)
        if found is None:
            found = self._add_outside_value(t)
            self._values[t] = found
            self._values[found] = found
        return found

    def _add_outside_value(self, t: Tensor) -> Tensor:
        outer_t = self.outer_context.add_value(t) if self.outer_context is not None else t
        found = self._with_outer(self._route, outer_t)
        found.op._control_flow_context = self
        return found

    def _route(self, t: Tensor) -> Tensor:
        raise TypeError(f"{type(self).__name__} must define _route")

    def add_op(self, op: Operation) -> None:
        self._make_inaccessible(op)
        for i, t in enumerate(op.inputs):
            inside = self.add_value(t)
            if inside is not t:
                op._update_input(i, inside)
        markers = self._remove_external_control_inputs(op)
        if self.pivot is not None and self._needs_pivot(op):
            op._add_control_input(self.pivot)
        if markers:
            op._add_control_inputs(markers)

    def _needs_pivot(self, op: Operation) -> bool:
        return not op.inputs and not op.control_inputs

    def _make_inaccessible(self, op: Operation) -> None:
        """Marks an op built in this context as `Session.run` may not reach it (TF's
        _AddOpInternal): its value exists only in this branch or frame."""
        self._graph.prevent_fetching(op)

    def _remove_external_control_inputs(self, op: Operation) -> list[Operation]:
        """A control edge from another loop frame cannot reach this op in the executor (edges are
        delivered within one frame). Such edges are removed; returned instead are ops inside this
        context that run only once the outside op has: Identities of a value that exists only then
        (TF does the same for ops with outputs)."""
        here = while_context_of(self)
        markers = []
        for c in list(op._control_inputs):
            if while_context_of(output_context(c)) is here:
                continue
            op._control_inputs.remove(c)
            c._control_outputs.remove(op)
            markers.append(self._inside_marker(c))
        return markers

    def _inside_marker(self, c: Operation) -> Operation:
        marker = self._markers.get(c)
        if marker is not None:
            return marker
        if c.outputs:
            value = c.outputs[0]
        else:
            with in_context(output_context(c)), self._graph.control_dependencies([c]):
                value = constant(0, name="control_marker")
        inside = self.add_value(value)
        pivot, self.pivot = self.pivot, None  # live in every iteration, the last one (Exits) too
        try:
            with in_context(self):
                marker = identity(inside).op
        finally:
            self.pivot = pivot
        self._markers[c] = marker
        return marker


class CondContext(ControlFlowContext):
    """One branch of tf.cond: outside values enter through Switch(value, pred)[branch]."""

    def __init__(self, pred: Tensor, pivot: Tensor, branch: int, name: Optional[str] = None) -> None:
        super().__init__()
        # Its name in meta graphs; a new context is named as TF names it.
        self.name = name if name is not None else self._graph.unique_name("cond_text")
        self.pred = pred
        self.branch = branch
        self.pivot = pivot.op

    def _route(self, t: Tensor) -> Tensor:
        if t.dtype.is_ref_dtype:  # a variable read inside a branch goes through RefSwitch, as in TF
            routed = apply_op(primitives.RefSwitch, data=t, pred=self.pred)[self.branch]
        else:
            routed = primitives.switch(t, self.pred)[self.branch]
        self._graph.prevent_fetching(routed.op)  # one branch's value, as TF's CondContext.AddValue
        return routed


class WhileContext(ControlFlowContext):
    """A while loop's frame: outside values enter as loop invariants (constant Enters).

    `loop_cond` is the LoopCond output every loop Switch tests; `pivot_for_body` is the control
    pivot of the body (an op that exists only while the predicate is true); `loop_enters`,
    `loop_switches`, `loop_merges` and `loop_exits` name the loop-variable plumbing, which the
    gradient pass mirrors. `grad_state` is set on backward loops built by tf.gradients.
    `name` names the context in meta graphs: the frame name, as in TF."""

    def __init__(self, frame_name: str, parallel_iterations: int, back_prop: bool,
                 swap_memory: bool = False) -> None:
        super().__init__()
        self.frame_name = frame_name
        self.name = frame_name
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.swap_memory = swap_memory
        self.loop_cond: Optional[Tensor] = None
        self.pivot_for_pred: Optional[Operation] = None  # the first loop variable's Merge
        self.maximum_iterations: Optional[Tensor] = None
        self.pivot_for_body: Optional[Operation] = None
        self.loop_enters: list[Tensor] = []
        self.loop_exits: list[Tensor] = []
        self.loop_switches: set[Operation] = set()
        self.loop_merges: set[Operation] = set()
        self.grad_state: Any = None

    def _route(self, t: Tensor) -> Tensor:
        enter = self._enter(t, True, None)
        self._graph.prevent_feeding(enter)  # fetchable, but a fed value would skip the frame (as TF)
        return enter

    def _enter(self, t: Tensor, is_constant: bool, name: Optional[str]) -> Tensor:
        op_def = primitives.RefEnter if t.dtype.is_ref_dtype else primitives.Enter
        return apply_op(op_def, name=name, data=t, frame_name=self.frame_name, is_constant=is_constant,
                        parallel_iterations=self.parallel_iterations)

    def add_loop_enter(self, t: Tensor, name: Optional[str] = None) -> Tensor:
        """A new loop variable: `t` (a value of the outer context) enters the frame."""
        enter = self._with_outer(self._enter, t, False, name)
        enter.op._control_flow_context = self
        self._graph.prevent_feeding(enter)
        return enter

    def _add_outside_value(self, t: Tensor) -> Tensor:
        # In a backward loop, a value of the forward loop is read back from its saved history.
        state = self.grad_state
        if state is not None and while_context_of(output_context(t.op)) is state.forward_context:
            return state.get_real_value(t)
        return super()._add_outside_value(t)

    def add_op(self, op: Operation) -> None:
        if op.type == "Const" and not op.control_inputs:
            # Loop-invariant code motion (as TF's graph optimizer does): a constant is made once,
            # outside, and enters the frame as an invariant, which the executor hands to every
            # iteration without running a node.
            op._control_flow_context = self.outer_context
            self._make_inaccessible(op)  # still the body's constant to the user, as in TF
            if self.outer_context is not None:
                self.outer_context.add_op(op)
            return
        super().add_op(op)

    def _make_inaccessible(self, op: Operation) -> None:
        """A value of one iteration can be neither fetched nor fed: only the Exits of an outermost
        loop leave the frame (TF's WhileContext._AddOpInternal)."""
        if self.outer_context is None and op.op_def.control_flow is ControlFlowKind.EXIT:
            return
        self._graph.prevent_fetching(op)
        for t in op.outputs:
            self._graph.prevent_feeding(t)

    def _needs_pivot(self, op: Operation) -> bool:
        """An op reading only loop invariants would also run in the final iteration (whose
        predicate is false) unless it waits for the body pivot (TF's _IsOpFree)."""
        if op.control_inputs:
            return False
        return all(is_loop_constant_enter(t.op) for t in op.inputs)


def is_loop_constant_enter(op: Operation) -> bool:
    return op.op_def.control_flow is ControlFlowKind.ENTER and bool(op._get_attr("is_constant"))
