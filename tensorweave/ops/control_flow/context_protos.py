"""Control-flow contexts in meta graphs (TF's collections "while_context" and "cond_context"),
so that a model rebuilt by tf.train.import_meta_graph can be differentiated again.

Export writes each outermost context as a WhileContextDef / CondContextDef (control_flow_def.py)
with the contexts built inside it nested in it. Its ValuesDef lists the outputs of every op in
it or in a context nested in it (ops with no outputs by name), and `external_values` maps each
outside tensor to the Enter or Switch output that stands for it inside, as TF writes them.

Import rebuilds the context objects (outermost first, so an op named by several contexts ends
in the innermost) and sets the control-flow context of the ops their values name, except the
external tensors and, for a loop, the initial values of its loop variables (TF also lists those,
though they live outside). A loop's Merges and Switches are found from its Enters and its
LoopCond; its frame name is read from its Enters, so new Enters join the same frame.
"""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.framework.meta_graph import (
    prepend_name_scope,
    register_proto_function,
    strip_name_scope,
)
from tensorweave.ops.control_flow.contexts import CondContext, ControlFlowContext, WhileContext, in_context
from tensorweave.ops.control_flow.control_flow_def import (
    CondContextDef,
    ValuesDef,
    WhileContextDef,
)

__all__ = ["to_proto", "cond_from_proto", "while_from_proto"]


# ---------------------------------------------------------------------------------------------
# Export
# ---------------------------------------------------------------------------------------------
def _in_scope(name: str, export_scope: Optional[str]) -> bool:
    return export_scope is None or name.startswith(export_scope.rstrip("/") + "/")


def _element_names(op: Operation) -> list[str]:
    return [t.name for t in op.outputs] if op.outputs else [op.name]


def _values_by_context(graph: Any) -> dict[Any, set[str]]:
    """For every context: the names of the outputs of the ops in it or nested in it."""
    values: dict[Any, set[str]] = {}
    for op in graph.get_operations():
        ctx = op._control_flow_context
        while ctx is not None:
            values.setdefault(ctx, set()).update(_element_names(op))
            ctx = ctx.outer_context
    return values


def _values_def(ctx: ControlFlowContext, values: dict[Any, set[str]], export_scope: Optional[str]) -> Any:
    names = set(values.get(ctx, ()))
    external = {}
    for outside, inside in ctx._values.items():
        if outside is not inside:
            names.update((outside.name, inside.name))
            external[outside.name] = inside.name
    proto = ValuesDef(values=[strip_name_scope(n, export_scope) for n in sorted(names) if _in_scope(n, export_scope)])
    for outside, inside in sorted(external.items()):
        if _in_scope(outside, export_scope) and _in_scope(inside, export_scope):
            proto.external_values[strip_name_scope(outside, export_scope)] = strip_name_scope(inside, export_scope)
    return proto


def _serializable(ctx: ControlFlowContext) -> bool:
    """Backward loops built by tf.gradients stay out (as in TF, their ops carry no context on
    import); so does a loop still being built."""
    if isinstance(ctx, WhileContext):
        return ctx.grad_state is None and ctx.loop_cond is not None and ctx.pivot_for_body is not None
    return isinstance(ctx, CondContext)


def _context_def(ctx: ControlFlowContext, values: dict[Any, set[str]], export_scope: Optional[str]) -> Any:
    strip = lambda name: strip_name_scope(name, export_scope)  # noqa: E731
    if isinstance(ctx, CondContext):
        proto = CondContextDef(context_name=strip(ctx.name), pred_name=strip(ctx.pred.name),
                               pivot_name=strip(ctx.pivot.outputs[0].name), branch=ctx.branch)
    else:
        proto = WhileContextDef(
            context_name=strip(ctx.name), parallel_iterations=ctx.parallel_iterations,
            back_prop=ctx.back_prop, swap_memory=ctx.swap_memory, pivot_name=strip(ctx.loop_cond.name),
            pivot_for_pred_name=strip(_pivot_for_pred(ctx).outputs[0].name),
            pivot_for_body_name=strip(ctx.pivot_for_body.outputs[0].name),
            loop_exit_names=[strip(t.name) for t in ctx.loop_exits],
            loop_enter_names=[strip(t.name) for t in ctx.loop_enters])
        if ctx.maximum_iterations is not None:
            proto.maximum_iterations_name = strip(ctx.maximum_iterations.name)
    proto.values_def.CopyFrom(_values_def(ctx, values, export_scope))
    for nested in ctx.nested_contexts:
        if _serializable(nested):
            wrapper = proto.nested_contexts.add()
            field = wrapper.cond_ctxt if isinstance(nested, CondContext) else wrapper.while_ctxt
            field.CopyFrom(_context_def(nested, values, export_scope))
    return proto


def _pivot_for_pred(ctx: WhileContext) -> Operation:
    if ctx.pivot_for_pred is not None:
        return ctx.pivot_for_pred
    return next(c for c in ctx.loop_enters[0].consumers() if c in ctx.loop_merges)


def to_proto(ctx: ControlFlowContext, export_scope: Optional[str] = None) -> Any:
    """`ctx` (an outermost context) as a CondContextDef or WhileContextDef, names relative to
    `export_scope` (None when the context is outside it)."""
    if not _in_scope(ctx.name, export_scope) or not _serializable(ctx):
        return None
    return _context_def(ctx, _values_by_context(ctx._graph), export_scope)


# ---------------------------------------------------------------------------------------------
# Import
# ---------------------------------------------------------------------------------------------
class _Resolver:
    def __init__(self, graph: Any, import_scope: Optional[str]) -> None:
        self.graph = graph
        self.import_scope = import_scope

    def name(self, name: str) -> str:
        return prepend_name_scope(name, self.import_scope)

    def element(self, name: str) -> Any:
        return self.graph.as_graph_element(self.name(name))

    def op(self, name: str) -> Operation:
        return self.graph.get_operation_by_name(self.name(name).split(":")[0])


def _restore_values(ctx: ControlFlowContext, values_def: Any, names: _Resolver, outside_ops: set[Operation]) -> None:
    """Sets the context of the ops `values_def` names and refills the context's map of outside
    tensors to their inside versions."""
    external = set(values_def.external_values)
    for name in values_def.values:
        if name in external:
            continue
        op = names.op(name)
        if op not in outside_ops:
            op._control_flow_context = ctx
    for outside_name, inside_name in values_def.external_values.items():
        if outside_name == inside_name:
            continue  # TF also lists outer versions of values and the predicate, mapped to themselves
        outside, inside = names.element(outside_name), names.element(inside_name)
        if isinstance(outside, Tensor) and isinstance(inside, Tensor):
            ctx._values[outside] = inside
            ctx._values[inside] = inside


def _restore_nested(ctx: ControlFlowContext, proto: Any, names: _Resolver) -> None:
    with in_context(ctx):
        for wrapper in proto.nested_contexts:
            kind = wrapper.WhichOneof("ctxt")
            if kind == "cond_ctxt":
                _cond_from_def(wrapper.cond_ctxt, names)
            elif kind == "while_ctxt":
                _while_from_def(wrapper.while_ctxt, names)


def _cond_from_def(proto: Any, names: _Resolver) -> CondContext:
    ctx = CondContext(names.element(proto.pred_name), names.element(proto.pivot_name), proto.branch,
                      name=names.name(proto.context_name))
    _restore_values(ctx, proto.values_def, names, set())
    _restore_nested(ctx, proto, names)
    return ctx


def _while_from_def(proto: Any, names: _Resolver) -> WhileContext:
    enters = [names.element(n) for n in proto.loop_enter_names]
    frame_name = enters[0].op._get_attr("frame_name") if enters else names.name(proto.context_name)
    if isinstance(frame_name, bytes):
        frame_name = frame_name.decode("utf-8")
    ctx = WhileContext(frame_name, proto.parallel_iterations, proto.back_prop, proto.swap_memory)
    ctx.name = names.name(proto.context_name)
    ctx.loop_cond = names.element(proto.pivot_name)
    ctx.pivot_for_pred = names.op(proto.pivot_for_pred_name)
    ctx.pivot = ctx.pivot_for_body = names.op(proto.pivot_for_body_name)
    ctx.loop_enters = enters
    ctx.loop_exits = [names.element(n) for n in proto.loop_exit_names]
    if proto.maximum_iterations_name:
        ctx.maximum_iterations = names.element(proto.maximum_iterations_name)
    ctx.loop_merges = {c for e in enters for c in e.consumers() if c.op_def.control_flow is ControlFlowKind.MERGE}
    ctx.loop_switches = {c for m in ctx.loop_merges for c in m.outputs[0].consumers()
                         if c.op_def.control_flow is ControlFlowKind.SWITCH and c.inputs[1] is ctx.loop_cond}
    _restore_values(ctx, proto.values_def, names, {e.op.inputs[0].op for e in enters})
    _restore_nested(ctx, proto, names)
    return ctx


def cond_from_proto(context_def: Any, import_scope: Optional[str] = None) -> CondContext:
    """The CondContext a CondContextDef describes, its ops (in the default graph, imported under
    `import_scope`) set back in it, nested contexts too."""
    with in_context(None):
        return _cond_from_def(context_def, _Resolver(_graph.get_default_graph(), import_scope))


def while_from_proto(context_def: Any, import_scope: Optional[str] = None) -> WhileContext:
    """The WhileContext a WhileContextDef describes (see cond_from_proto)."""
    with in_context(None):
        return _while_from_def(context_def, _Resolver(_graph.get_default_graph(), import_scope))


register_proto_function(_graph.GraphKeys.COND_CONTEXT, proto_type=CondContextDef, to_proto=to_proto,
                        from_proto=cond_from_proto)
register_proto_function(_graph.GraphKeys.WHILE_CONTEXT, proto_type=WhileContextDef, to_proto=to_proto,
                        from_proto=while_from_proto)
