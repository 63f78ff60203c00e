"""Control-flow contexts (white paper 4.4): while a cond branch or a loop body is being built,
its context sees every new op and routes inputs that come from outside through the control-flow
primitives: a Switch on the branch predicate for cond (so untaken branches see dead values), an
Enter into the loop's frame for while loops (loop invariants are constant Enters). Ops with no
inputs get a control edge from the context's pivot so they too belong to the branch or frame."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework.graph import Operation, Tensor, get_default_graph


def output_context(op: Operation) -> Any:
    """The context an op's outputs live in: an Exit's outputs belong to the loop's outer context."""
    ctx = op._control_flow_context
    if ctx is not None and op.op_def.control_flow == "exit":
        return ctx.outer_context
    return ctx


def is_inside(ctx: Any, container: Any) -> bool:
    while ctx is not None:
        if ctx is container:
            return True
        ctx = ctx.outer_context
    return False


class ControlFlowContext:
    def __init__(self) -> None:
        self.outer_context: Any = None
        self._values: dict[Tensor, Tensor] = {}   # outside tensor -> its version inside
        self._graph = get_default_graph()
        self.pivot: Optional[Operation] = None

    def enter(self) -> None:
        self.outer_context = self._graph._control_flow_context
        self._graph._control_flow_context = self

    def exit(self) -> None:
        self._graph._control_flow_context = self.outer_context

    def _with_outer(self, fn: Any, *args: Any) -> Any:
        """Runs fn in the outer context (the routing nodes themselves belong there), free of the
        control dependencies the user opened inside this context."""
        saved = self._graph._control_flow_context
        self._graph._control_flow_context = self.outer_context
        try:
            with self._graph.control_dependencies(None):
                return fn(*args)
        finally:
            self._graph._control_flow_context = saved

    def add_value(self, t: Tensor) -> Tensor:
        """The version of outside tensor `t` to use inside this context."""
        if is_inside(output_context(t.op), self):
            return t
        found = self._values.get(t)
        if found is None:
            outer_t = self.outer_context.add_value(t) if self.outer_context is not None else t
            found = self._with_outer(self._route, outer_t)
            found.op._control_flow_context = self
            self._values[t] = found
            self._values[found] = found
        return found

    def _route(self, t: Tensor) -> Tensor:
        raise TypeError(f"{type(self).__name__} must define _route")

    def add_op(self, op: Operation) -> None:
        for i, t in enumerate(op.inputs):
            inside = self.add_value(t)
            if inside is not t:
                op._update_input(i, inside)
        if not op.inputs and self.pivot is not None and not op.control_inputs:
            op._add_control_input(self.pivot)


class CondContext(ControlFlowContext):
    """One branch of tf.cond: outside values enter through Switch(value, pred)[branch]."""

    def __init__(self, pred: Tensor, pivot: Tensor, branch: int) -> None:
        super().__init__()
        self.pred = pred
        self.branch = branch
        self.pivot = pivot.op

    def _route(self, t: Tensor) -> Tensor:
        from tensorweave.ops.control_flow import primitives
        return primitives.switch(t, self.pred)[self.branch]


class WhileContext(ControlFlowContext):
    """A while loop's frame: outside values enter as loop invariants (constant Enters)."""

    def __init__(self, frame_name: str, parallel_iterations: int, back_prop: bool) -> None:
        super().__init__()
        self.frame_name = frame_name
        self.parallel_iterations = parallel_iterations
        self.back_prop = back_prop
        self.loop_enters: list[Tensor] = []

    def _route(self, t: Tensor) -> Tensor:
        from tensorweave.framework.op_def_library import apply_op
        from tensorweave.ops.control_flow import primitives
        op_def = primitives.RefEnter if t.dtype.is_ref_dtype else primitives.Enter
        return apply_op(op_def, data=t, frame_name=self.frame_name, is_constant=True,
                        parallel_iterations=self.parallel_iterations)
