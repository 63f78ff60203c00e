"""FunctionDef -> body graph (TF's function_def_to_graph): the nodes of a FunctionDef created in a
graph with its arguments bound to given tensors, through the GraphDef importer.

A FunctionDef names edges `node:output_arg:index` (the index-th tensor of that node's output
argument) and arguments by their names; a GraphDef names them `node:flat_index`. The edges are
rewritten with each node's op signature (a registered op, or a function of the library), then
imported with the arguments mapped to the bound tensors.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from tensorboard.compat.proto import graph_pb2

from tensorweave.framework.function import FuncGraph, FunctionBody, _dtype_of, output_arg_slots
from tensorweave.framework.graph import Graph, Operation, Tensor
from tensorweave.framework.graph_def import attr_from_proto
from tensorweave.framework.importer import import_graph_def
from tensorweave.framework.op_def import OpDef, registered_ops

__all__ = ["function_def_to_body", "instantiate"]


def _arg_shape(fdef: Any, index: int) -> Any:
    """The static shape TF recorded for argument `index` (arg_attr `_output_shapes`), if any."""
    attrs = fdef.arg_attr[index].attr if index in fdef.arg_attr else None
    if attrs is None or "_output_shapes" not in attrs:
        return None
    shapes = attr_from_proto(attrs["_output_shapes"], "list(shape)")
    return shapes[0] if shapes else None


def function_def_to_body(fdef: Any, functions: dict[str, Any],
                         arg_shapes: Optional[Sequence[Any]] = None) -> FunctionBody:
    """A new body graph for `fdef`: one `_Arg` per argument (of shape `arg_shapes[i]` when
    given), then its nodes; calls inside it resolve in `functions` (the library it came from)."""
    graph = FuncGraph(fdef.signature.name, functions=functions)
    inputs = [graph.add_arg(arg.name, _dtype_of(arg), arg_shapes[i] if arg_shapes else _arg_shape(fdef, i))
              for i, arg in enumerate(fdef.signature.input_arg)]
    outputs, controls = instantiate(fdef, graph, inputs, "")
    return FunctionBody(graph, inputs, outputs, controls)


class _Edges:
    """Rewrites a FunctionDef's edge names into a GraphDef's, collecting the argument uses."""

    def __init__(self, fdef: Any, graph: Graph, inputs: Sequence[Tensor]) -> None:
        self.args = {a.name: i for i, a in enumerate(fdef.signature.input_arg)}
        self.nodes = {n.name: n for n in fdef.node_def}
        self.graph = graph
        self.inputs = inputs
        self.input_map: dict[str, Any] = {}
        self._registry = registered_ops()
        self._slots: dict[str, list[tuple[str, int]]] = {}

    def _op_def(self, op_type: str, where: str) -> OpDef:
        op_def = self._registry.get(op_type)
        if op_def is None and op_type in self.graph._functions:
            op_def = self.graph._functions[op_type].call_op_def
        if op_def is None:
            raise ValueError(f"Op type not registered '{op_type}' (node '{where}' of a function body)")
        return op_def

    def flat(self, ref: str) -> str:
        control = ref.startswith("^")
        name = ref[1:] if control else ref
        parts = name.split(":")
        if len(parts) <= 2 and parts[0] in self.args:  # an argument ("x", or "x:0")
            key = f"^{parts[0]}" if control else f"{parts[0]}:{parts[1] if len(parts) == 2 else 0}"
            self.input_map[key] = self.inputs[self.args[parts[0]]]
            return key
        if control or len(parts) == 1:
            return ref
        if len(parts) == 2:
            return name  # already a flat index
        node_name, arg, index = parts[0], parts[1], int(parts[2])
        node = self.nodes.get(node_name)
        if node is None:
            raise ValueError(f"Function body edge '{ref}' names no node of the function")
        slots = self._slots.get(node_name)
        if slots is None:
            op_def = self._op_def(node.op, node_name)
            slots = self._slots[node_name] = output_arg_slots(op_def, _AttrsWithDefaults(node, op_def))
        try:
            return f"{node_name}:{slots.index((arg, index))}"
        except ValueError:
            raise ValueError(f"Function body edge '{ref}': node {node_name} ({node.op}) has no output "
                             f"{arg}:{index}") from None


class _AttrsWithDefaults:
    """A NodeDef's attrs, falling back to the op's defaults (for list lengths)."""

    def __init__(self, node: Any, op_def: OpDef) -> None:
        self.node, self.op_def = node, op_def

    def get(self, name: str) -> Any:
        if name in self.node.attr:
            return self.node.attr[name]
        attr = self.op_def.attrs.get(name)
        return attr.default if attr is not None and attr.has_default else 0


def instantiate(fdef: Any, graph: Graph, inputs: Sequence[Tensor], prefix: Optional[str] = "") \
        -> tuple[list[Tensor], list[Operation]]:
    """Creates the nodes of `fdef` in `graph` (under name scope `prefix`; "" for none) with its
    arguments bound to `inputs`; returns its return tensors and its control-return ops."""
    edges = _Edges(fdef, graph, inputs)
    graph_def = graph_pb2.GraphDef()
    for node in fdef.node_def:
        copy = graph_def.node.add()
        copy.CopyFrom(node)
        del copy.input[:]
        copy.input.extend(edges.flat(i) for i in node.input)
    ret_refs = [fdef.ret[a.name] for a in fdef.signature.output_arg]
    wanted: list[str] = []
    for ref in ret_refs:
        head = ref.split(":")[0]
        if head not in edges.args:
            wanted.append(edges.flat(ref) if ":" in ref else f"{ref}:0")
    wanted += [fdef.control_ret[k] for k in fdef.signature.control_output if k in fdef.control_ret]
    with graph.as_default():
        found = import_graph_def(graph_def, input_map=edges.input_map or None, return_elements=wanted,
                                 name=prefix) if graph_def.node else []
    found = list(found or [])
    outputs: list[Tensor] = []
    for ref in ret_refs:
        head = ref.split(":")[0]
        outputs.append(inputs[edges.args[head]] if head in edges.args else found.pop(0))
    return outputs, found
