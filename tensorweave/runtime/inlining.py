"""Function inlining (DESIGN.md "Graph functions": a small function is inlined into the caller's
plan when that is faster): a call node of a partition is replaced by copies of its body's nodes,
so the call costs no sub-step.

Run by StepPlan on each partition after partitioning, before compiling. A call node (a Defun
call, PartitionedCall or StatefulPartitionedCall) becomes its body's nodes, pruned to the
returned tensors and the stateful nodes as a sub-step would run them, each named
`<call>/<body node>` and placed on the call's device:

- a use of an argument becomes an edge from the call's input;
- a body node with no input from another body node also waits for the call's control inputs,
  and one with no input at all, when stateful, inside a loop frame or reaching an output on its
  own, for the producers of the call's inputs (so it is dead in an untaken cond branch and
  runs once per iteration in a loop, as the call would);
- a consumer of a call output reads the body's returned tensor; when the body has stateful
  nodes nothing returned depends on, each output first passes an Identity waiting for them
  (a sub-step returns only after all of them ran);
- a control edge from the call becomes one from a NoOp waiting for the body's last nodes.

Kernels are those of the body's own nodes (KernelCache keys them by the body node), so a
stateful body kernel (a random generator) is the one a sub-step would use and the numbers do
not change. An error names the body node, the function and the call node, as a sub-step's does
(kernel_errors.annotate reads InlinedOp). Calls nested in an inlined body are inlined in turn.

Not inlined (they run as sub-steps, runtime/functions.py): functions or call nodes marked `_noinline`, a
function calling itself (directly or not) inside its own inlined body, bodies with while-loop
frames (Enter/Exit/NextIteration), bodies returning a reference, and bodies over
MAX_INLINED_NODES nodes (bench/function_call_graph.py measures that inlining wins at every
size up to it: the saving is the sub-step's fixed cost, and a large body only makes the
caller's plan slower to build). Whether a plan inlines at all is the function optimizer's
switch (grappler/function_optimizer.py).
"""
from __future__ import annotations

import threading
from typing import Any, Optional, Sequence

from tensorweave.framework import function as _function
from tensorweave.framework.function_def_to_graph import function_def_to_body
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.ops.array.shaping import Identity
from tensorweave.ops.control_flow.grouping import NoOp
from tensorweave.runtime import pruning
from tensorweave.runtime.partition import Endpoint, InlinedOp, Partition, PNode, SyntheticOp

__all__ = ["inline_calls", "MAX_INLINED_NODES"]

# Bodies larger than this stay sub-steps: the per-call saving is fixed (~4 us) while plan
# building and memory grow with every inlined copy.
MAX_INLINED_NODES = 512

_LOOP_KINDS = (ControlFlowKind.ENTER, ControlFlowKind.EXIT, ControlFlowKind.NEXT_ITERATION,
               ControlFlowKind.LOOP_COND)


class _BodyInfo:
    """What inlining needs of a body, computed once per body: its nodes in order (no `_Arg`),
    the argument index of each `_Arg`, and the stateful nodes nothing returned depends on."""

    __slots__ = ("body", "ops", "arg_of", "unordered", "inlinable", "constant_returns")

    def __init__(self, fn: _function.DefinedFunction, body: _function.FunctionBody) -> None:
        self.body = body
        self.arg_of = {id(t.op): i for i, t in enumerate(body.inputs)}
        needed = pruning.prune(body.outputs, body.targets, set())
        self.ops = _dependency_order([op for op in needed if id(op) not in self.arg_of])
        returned = {id(op) for op in pruning.prune(body.outputs, (), set())}
        self.unordered = [op for op in body.targets if id(op) not in returned]
        # a returned value no argument reaches (it must still be dead where the call is)
        self.constant_returns = any(not any(id(op) in self.arg_of for op in pruning.prune([t], (), set()))
                                    for t in body.outputs)
        attr = fn.definition.attr.get("_noinline")
        compiled = fn.definition.attr.get("_XlaMustCompile")  # jit_compile: its plan clusters the body
        self.inlinable = not (attr is not None and attr.b) and not (compiled is not None and compiled.b) and \
            len(self.ops) <= MAX_INLINED_NODES and \
            not any(op.op_def.control_flow in _LOOP_KINDS for op in self.ops) and \
            not any(t.dtype.is_ref_dtype for t in body.outputs)


def _dependency_order(ops: list[Any]) -> list[Any]:
    """`ops` (creation order) with every op after its inputs: a cond branch rewires an op's
    input to a Switch made after the op, so creation order alone is not a valid order."""
    members = {id(op) for op in ops}
    placed: set[int] = set()
    entered: set[int] = set()  # a loop's back edge (NextIteration) is not followed again
    ordered: list[Any] = []

    def place(op: Any) -> None:
        stack = [(op, False)]
        while stack:
            current, expanded = stack.pop()
            if id(current) in placed:
                continue
            if expanded:
                placed.add(id(current))
                ordered.append(current)
                continue
            if id(current) in entered:
                continue
            entered.add(id(current))
            stack.append((current, True))
            deps = [t.op for t in current.inputs] + list(current.control_inputs)
            stack.extend((d, False) for d in reversed(deps) if id(d) in members and id(d) not in entered)

    for op in ops:
        place(op)
    return ordered


_infos_lock = threading.Lock()


def _body_info(fn: _function.DefinedFunction, call_op: Any) -> _BodyInfo:
    """The body to inline at a call: the function's own, or, when the call's arguments have
    shapes its arguments lack, one instantiated for them (kernels built knowing the shapes
    take their fast paths, as the same ops written in the caller would). Kept on the function
    (`inline_bodies`, by argument shapes; () for its own body)."""
    body = fn.body
    shapes = [t.shape for t in call_op.inputs]
    specialize = len(shapes) == len(body.inputs) and any(
        not a.shape.is_fully_defined() and s.ndims is not None and s.is_compatible_with(a.shape)
        and s.merge_with(a.shape) != a.shape for s, a in zip(shapes, body.inputs))
    key: tuple[str, ...] = tuple(str(s) for s in shapes) if specialize else ()
    with _infos_lock:
        info = fn.inline_bodies.get(key)
        if info is None:
            if specialize:
                body = _instantiate(fn, [s.merge_with(a.shape) for s, a in zip(shapes, body.inputs)])
            info = fn.inline_bodies[key] = _BodyInfo(fn, body)
        return info


def _instantiate(fn: _function.DefinedFunction, arg_shapes: list[Any]) -> _function.FunctionBody:
    """The body of `fn` built again from its FunctionDef with these argument shapes; its own
    traced body where the FunctionDef cannot rebuild it (a node whose attrs are Python objects,
    such as a py_func's, does not survive the proto), which only costs the shapes."""
    try:
        body = function_def_to_body(fn.definition, fn.library(), arg_shapes=arg_shapes)
    except (ValueError, TypeError, KeyError):
        return fn.body
    _keep_call_sites(fn.body, body)
    return body


def _keep_call_sites(traced: _function.FunctionBody, body: _function.FunctionBody) -> None:
    """An instantiated body's nodes keep the user lines of the traced body's (for errors)."""
    sites = {op.name: op._traceback for op in traced.graph.get_operations()}
    for op in body.graph.get_operations():
        op._traceback = sites.get(op.name, op._traceback)


def _called_function(op: Any) -> Optional[_function.DefinedFunction]:
    """The library function a node calls (None for any other node)."""
    if op is None or isinstance(op, SyntheticOp):
        return None
    op_type = op.type
    graph = op.graph
    if op_type in _function.PARTITIONED_CALLS:
        return graph._get_function(_function.called_function_name(op))
    if not _function.is_function_call(op.op_def):
        return None  # a registered op
    return graph._get_function(op_type)


def has_calls(ops: Sequence[Operation]) -> bool:
    """Whether any of a plan's nodes calls a function (cheap: a graph without a library has none)."""
    if not ops or not ops[0].graph._functions:
        return False
    return any(_called_function(op) is not None for op in ops)


class _Inliner:
    """Inlines the calls of one partition."""

    def __init__(self, partition: Partition) -> None:
        self.partition = partition
        self.outputs: dict[tuple[int, int], Endpoint] = {}  # (id(call), port) -> body endpoint
        self.done: dict[int, PNode] = {}                    # id(call) -> its NoOp, when needed
        self.control_targets = {id(c) for n in partition.nodes for c in n.control_inputs}

    def run(self) -> None:
        nodes: list[PNode] = []
        for node in self.partition.nodes:
            self._expand(node, (), nodes)
        for node in nodes:
            node.inputs = [self._resolve(e) for e in node.inputs]
            node.control_inputs = [self.done.get(id(c), c) for c in node.control_inputs]
        self.partition.nodes = nodes
        self.partition.fetches = [(i, self._resolve(e)) for i, e in self.partition.fetches]

    def _resolve(self, endpoint: Endpoint) -> Endpoint:
        seen = self.outputs.get((id(endpoint[0]), endpoint[1]))
        while seen is not None:  # a body returning a nested call's output
            endpoint = seen
            seen = self.outputs.get((id(endpoint[0]), endpoint[1]))
        return endpoint

    def _expand(self, node: PNode, stack: tuple[str, ...], out: list[PNode]) -> None:
        fn = _called_function(node.op) if node.feed_index is None else None
        if fn is None or fn.name in stack or len(node.op.outputs) != len(fn.body.outputs) or \
                node.op.node_attrs.get("_noinline"):  # a call site's own noinline=True
            out.append(node)
            return
        info = _body_info(fn, node.op)
        if not info.inlinable:
            out.append(node)
            return
        copies = self._copy_body(node, fn, info)
        for copy in copies:
            self._expand(copy, stack + (fn.name,), out)

    def _copy_body(self, call: PNode, fn: _function.DefinedFunction, info: _BodyInfo) -> list[PNode]:
        body = info.body
        # producers come first in a partition's order, so a call feeding this one is inlined
        # already: its consumers (and these copies' control edges) take the body's node
        args = [self._resolve(e) for e in call.inputs]
        copies: list[PNode] = []
        copy_of: dict[int, PNode] = {}
        sources = list(dict.fromkeys(src for src, _ in args))
        # a body node without inputs is a root of the caller's plan unless tied to the call's
        # inputs: tie it where it matters (stateful, inside a loop frame, or reaching an output
        # on its own); otherwise a live constant meeting a dead argument is dead anyway
        tie_all = bool(call.frame) or info.constant_returns
        for op in info.ops:
            node = PNode(f"{call.name}/{op.name}", InlinedOp(op, call.op, fn.name, call.name), call.device,
                         [t.dtype for t in op.outputs], frame=call.frame)
            internal = False
            for t in op.inputs:
                arg = info.arg_of.get(id(t.op))
                if arg is None:
                    node.inputs.append((copy_of[id(t.op)], t.value_index))
                    internal = True
                else:
                    node.inputs.append(args[arg])
            for c in op.control_inputs:
                arg = info.arg_of.get(id(c))
                if arg is None:
                    node.control_inputs.append(copy_of[id(c)])
                    internal = True
                else:
                    node.control_inputs.append(args[arg][0])
            if not internal:
                # a body root: runs after the call's control inputs, and (having no input at
                # all) in the frame and liveness of the call's inputs
                node.control_inputs.extend(call.control_inputs)
                if not node.inputs and not op.control_inputs and (tie_all or op.op_def.is_stateful):
                    node.control_inputs.extend(sources)
            copy_of[id(op)] = node
            copies.append(node)
        returned = [args[info.arg_of[id(t.op)]] if id(t.op) in info.arg_of else (copy_of[id(t.op)], t.value_index)
                    for t in body.outputs]
        if info.unordered:
            waits = [copy_of[id(op)] for op in info.unordered]
            for i, t in enumerate(body.outputs):
                gate = self._synthetic(call, f"{call.name}/_output_{i}", Identity, {"T": t.dtype.base_dtype},
                                       [returned[i]], [t.dtype.base_dtype])
                gate.control_inputs = list(waits)
                copies.append(gate)
                returned[i] = (gate, 0)
        for port, endpoint in enumerate(returned):
            self.outputs[(id(call), port)] = endpoint
        if id(call) in self.control_targets:
            copies.append(self._done_node(call, copies, sources))
        # a nested call some copy waits for needs its own NoOp when it is inlined in turn
        self.control_targets.update(id(c) for node in copies for c in node.control_inputs)
        return copies

    def _done_node(self, call: PNode, copies: list[PNode], sources: list[PNode]) -> PNode:
        used = {id(src) for node in copies for src, _ in node.inputs} | \
               {id(c) for node in copies for c in node.control_inputs}
        last = [node for node in copies if id(node) not in used] or sources + list(call.control_inputs)
        done = self._synthetic(call, f"{call.name}/_done", NoOp, {}, [], [])
        done.control_inputs = last
        self.done[id(call)] = done
        return done

    @staticmethod
    def _synthetic(call: PNode, name: str, op_def: Any, attrs: dict[str, Any], inputs: list[Endpoint],
                   output_dtypes: list[Any]) -> PNode:
        input_dtypes = [src.output_dtypes[port] for src, port in inputs]
        op = SyntheticOp(name, op_def, attrs, input_dtypes, output_dtypes, call.device.name)
        node = PNode(name, op, call.device, output_dtypes, frame=call.frame)
        node.inputs = inputs
        return node


def inline_calls(partitions: Sequence[Partition]) -> None:
    """Replaces the inlinable call nodes of each partition by their bodies' nodes (in place)."""
    for partition in partitions:
        if any(_called_function(node.op) is not None for node in partition.nodes if node.feed_index is None):
            _Inliner(partition).run()
