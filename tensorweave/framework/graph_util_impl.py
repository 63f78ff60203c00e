"""tf.graph_util: GraphDef surgery for shipping a model (TF1's graph_util_impl).

convert_variables_to_constants freezes a graph: each variable node becomes a Const holding the
value the session reads for it, so the GraphDef runs with no checkpoint. extract_sub_graph
keeps what the destination nodes need; remove_training_nodes drops CheckNumerics and splices
out Identity nodes, as TF does before inference. The rules (which Identity survives, which
inputs a removed node leaves behind) follow TensorFlow's, so a frozen graph prepared here
matches one prepared by TF node for node.
"""
from __future__ import annotations

import copy
import logging
from typing import Any, Iterable, Optional, Sequence

from tensorboard.compat.proto import graph_pb2, node_def_pb2

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Operation
from tensorweave.framework.tensor_proto import make_tensor_proto

__all__ = ["convert_variables_to_constants", "extract_sub_graph", "remove_training_nodes",
           "tensor_shape_from_node_def_name", "must_run_on_cpu"]

_log = logging.getLogger("tensorweave")

# Op types that hold a variable's value (ref variables; resource variables are read through
# ReadVariableOp, handled alongside).
_VARIABLE_NODE_TYPES = ("Variable", "VariableV2", "VarHandleOp")
# Ops TF pins to the CPU when pin_variables_on_cpu is set (graph_util_impl._VARIABLE_OPS).
_VARIABLE_OPS = frozenset(("Assign", "AssignAdd", "AssignSub", "Queue", "ScatterAdd", "ScatterSub",
                           "ScatterUpdate", "TruncatedNormal", "Variable", "VariableV2"))


def _node_name(name: str) -> str:
    """The node an input string names: "^a" and "a:1" both name node "a"."""
    name = name[1:] if name.startswith("^") else name
    return name.split(":", 1)[0]


def must_run_on_cpu(node: Any, pin_variables_on_cpu: bool = False) -> bool:
    """True for nodes TF keeps on the CPU: int32 and string constants, int32 stitches and casts
    from int32 (and variable ops when `pin_variables_on_cpu`)."""
    node_def = node.node_def if isinstance(node, Operation) else node
    if not isinstance(node_def, node_def_pb2.NodeDef):
        raise TypeError(f"node must be a tf.Operation or a NodeDef, got {type(node).__name__}")
    if pin_variables_on_cpu and node_def.op in _VARIABLE_OPS:
        return True
    if node_def.op == "Const":
        return node_def.attr["dtype"].type in (_dtypes.string.as_datatype_enum, _dtypes.int32.as_datatype_enum)
    if node_def.op in ("DynamicStitch", "ParallelDynamicStitch"):
        return node_def.attr["T"].type == _dtypes.int32.as_datatype_enum
    if node_def.op == "Cast":
        return node_def.attr["SrcT"].type == _dtypes.int32.as_datatype_enum
    return False


def tensor_shape_from_node_def_name(graph: Any, input_name: str) -> Any:
    """The static shape of the tensor `input_name` ("node" means output 0) in `graph`."""
    canonical = input_name if ":" in input_name else f"{input_name}:0"
    return graph.get_tensor_by_name(canonical).get_shape()


def _check_graph_def(graph_def: Any) -> None:
    if not isinstance(graph_def, graph_pb2.GraphDef):
        raise TypeError("graph_def must be a graph_pb2.GraphDef proto.")


def extract_sub_graph(graph_def: Any, dest_nodes: Sequence[str]) -> Any:
    """The GraphDef of the nodes `dest_nodes` depend on (data and control inputs), in the order
    the original lists them, with its library and versions."""
    _check_graph_def(graph_def)
    if isinstance(dest_nodes, str):
        raise TypeError("dest_nodes must be a list.")
    order = {node.name: i for i, node in enumerate(graph_def.node)}
    by_name = {node.name: node for node in graph_def.node}
    for dest in dest_nodes:
        if dest not in by_name:
            raise AssertionError(f"{dest} is not in graph")
    keep: set[str] = set()
    pending = list(dest_nodes)
    while pending:
        name = pending.pop()
        if name in keep:
            continue
        keep.add(name)
        pending.extend(_node_name(i) for i in by_name[name].input)
    out = graph_pb2.GraphDef()
    out.node.extend(copy.deepcopy(by_name[name]) for name in sorted(keep, key=order.__getitem__))
    out.library.CopyFrom(graph_def.library)
    out.versions.CopyFrom(graph_def.versions)
    return out


def remove_training_nodes(input_graph: Any, protected_nodes: Optional[Iterable[str]] = None) -> Any:
    """Drops CheckNumerics nodes (and every input edge to them) and splices out Identity nodes
    that neither have nor are control edges, rewiring their consumers to the Identity's input.
    Nodes in `protected_nodes` stay."""
    protected = set(protected_nodes or ())
    removed = {n.name for n in input_graph.node if n.op == "CheckNumerics" and n.name not in protected}
    kept: list[Any] = []
    for node in input_graph.node:
        if node.name in removed:
            continue
        new_node = copy.deepcopy(node)
        del new_node.input[:]
        new_node.input.extend(i for i in node.input if _node_name(i) not in removed)
        kept.append(new_node)
    control_sources, with_control = set(), set()
    for node in kept:
        for name in node.input:
            if name.startswith("^"):
                control_sources.add(name[1:])
                with_control.add(node.name)
    # An Identity with control edges in or out may order side effects: TF leaves those alone.
    splice = {n.name: n.input[0] for n in kept
              if n.op == "Identity" and n.name not in protected and n.name not in with_control
              and n.name not in control_sources}
    output = graph_pb2.GraphDef()
    for node in kept:
        if node.name in splice:
            continue
        new_node = copy.deepcopy(node)
        del new_node.input[:]
        for name in node.input:
            control = name.startswith("^")
            target = name[1:] if control else name
            while target in splice:
                target = splice[target]
            new_node.input.append(f"^{_node_name(target)}" if control else target)
        output.node.append(new_node)
    return output


def _resource_sources(graph_def: Any) -> dict[str, str]:
    """ReadVariableOp node -> the VarHandleOp it reads (through Identity nodes in between)."""
    by_name = {n.name: n for n in graph_def.node}
    reads = {}
    for node in graph_def.node:
        if node.op == "ReadVariableOp":
            source = _node_name(node.input[0])
            while source in by_name and by_name[source].op == "Identity":
                source = _node_name(by_name[source].input[0])
            reads[node.name] = source
    return reads


def convert_variables_to_constants(sess: Any, input_graph_def: Any, output_node_names: Sequence[str],
                                   variable_names_whitelist: Optional[Iterable[str]] = None,
                                   variable_names_blacklist: Optional[Iterable[str]] = None) -> Any:
    """A GraphDef of what `output_node_names` need, with every variable (in the whitelist, not in
    the blacklist) replaced by a Const of its current value in `sess`; reads of converted
    resource variables become Identity nodes."""
    _check_graph_def(input_graph_def)
    inference = extract_sub_graph(input_graph_def, output_node_names)
    whitelist = None if variable_names_whitelist is None else set(variable_names_whitelist)
    blacklist = set(variable_names_blacklist or ())
    reads = _resource_sources(inference)
    names, fetches = [], []
    for node in inference.node:
        if node.op not in _VARIABLE_NODE_TYPES:
            continue
        if (whitelist is not None and node.name not in whitelist) or node.name in blacklist:
            continue
        if node.op == "VarHandleOp":
            reader = next((r for r, src in reads.items() if src == node.name), None)
            if reader is None:
                continue  # a resource nobody reads has no value the outputs need
            fetches.append(f"{reader}:0")
        else:
            fetches.append(f"{node.name}:0")
        names.append(node.name)
    values = dict(zip(names, sess.run(fetches))) if fetches else {}
    output = graph_pb2.GraphDef()
    for node in inference.node:
        new_node = output.node.add()
        if node.name in values:
            data = values[node.name]
            dtype = node.attr["dtype"]
            new_node.op, new_node.name = "Const", node.name
            new_node.attr["dtype"].CopyFrom(dtype)
            new_node.attr["value"].tensor.CopyFrom(
                make_tensor_proto(data, dtype=_dtypes.as_dtype(dtype.type), shape=data.shape))
            if node.device:
                new_node.device = node.device
        elif node.op == "ReadVariableOp" and reads.get(node.name) in values:
            new_node.op, new_node.name = "Identity", node.name
            new_node.input.extend(node.input)
            new_node.attr["T"].CopyFrom(node.attr["dtype"])
            if node.device:
                new_node.device = node.device
        else:
            new_node.CopyFrom(node)
    output.library.CopyFrom(inference.library)
    output.versions.CopyFrom(inference.versions)
    _log.info("Converted %d variables to const ops.", len(values))
    return output
