"""`tf.import_graph_def`: recreates the nodes of a GraphDef in the default graph through the op
registry, as TensorFlow's importer does.

Nodes are created in dependency order (a GraphDef may list a node before its inputs); the back
edges of while loops (NextIteration -> Merge) are connected after both ends exist. Attrs are
converted by their declared kinds and missing ones take their defaults; an unknown op type, an
attr the op does not declare, a missing input or an input of the wrong type is a ValueError
naming the node. `input_map` replaces tensors of the GraphDef by existing tensors, and
`return_elements` picks imported operations or tensors to return.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from tensorboard.compat.proto import graph_pb2

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.device_spec import merge_device, parse_device
from tensorweave.framework.function import import_library
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.graph_def import (GRAPH_DEF_VERSION, GRAPH_DEF_VERSION_MIN_PRODUCER,
                                             attr_from_proto)
from tensorweave.framework.op_def import AttrDef, OpDef, registered_ops
from tensorweave.framework.op_def_library import infer_attrs_and_output_dtypes

__all__ = ["import_graph_def"]

_BACK_EDGE_SOURCES = ("NextIteration", "RefNextIteration")
# Attrs newer TensorFlow versions add that only hint at optimisations (TF 2.x marks the MatMuls of
# gradients): dropped on import rather than rejected, since they do not change what a node computes.
_HINT_ATTRS = {"MatMul": ("grad_a", "grad_b"),
               **{op: ("grad_x", "grad_y") for op in ("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")}}
# Attrs TF 2.x added to ops this binary declares as in TF 1.x, with the value that keeps the TF 1.x
# behaviour. TF 2.x's as_graph_def writes them even at that value; there they are dropped on import,
# any other value is still rejected (it would ask for something this binary does not compute).
_LATER_DEFAULTS: dict[str, dict[str, tuple[str, Any]]] = {
    **{op: {"exponential_avg_factor": ("f", 1.0)} for op in ("FusedBatchNorm", "FusedBatchNormV2",
                                                             "FusedBatchNormV3")},
    **{op: {"bad_indices_policy": ("s", b"")} for op in ("GatherNd", "ScatterNd", "ResourceGatherNd")},
    **{op: {"sparse_gradient": ("b", False)} for op in (
        "SparseSegmentSum", "SparseSegmentMean", "SparseSegmentSqrtN", "SparseSegmentSumWithNumSegments",
        "SparseSegmentMeanWithNumSegments", "SparseSegmentSqrtNWithNumSegments")},
    **{op: {"multiply_linear_by_lr": ("b", False)} for op in ("ApplyFtrl", "ApplyFtrlV2", "SparseApplyFtrl",
                                                               "SparseApplyFtrlV2")},
}


def _parse_input(name: str) -> tuple[str, int, bool]:
    """(node name, output index, is_control) of a NodeDef input string."""
    if name.startswith("^"):
        return name[1:], -1, True
    op_name, sep, port = name.rpartition(":")
    if sep and port.isdigit():
        return op_name, int(port), False
    return name, 0, False


def _canonical_key(key: Any) -> str:
    if not isinstance(key, str):
        raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
    if key.startswith("^"):
        return key
    node, port, _ = _parse_input(key)
    return f"{node}:{port}"


class _Importer:
    """One import: the GraphDef, the target graph, name prefix and maps, and what was built."""

    def __init__(self, graph: _graph.Graph, graph_def: Any, prefix: str, input_map: dict[str, Any],
                 op_dict: dict[str, OpDef], producer_op_list: Any) -> None:
        self.graph = graph
        self.nodes = {n.name: n for n in graph_def.node}
        if len(self.nodes) != len(graph_def.node):
            names = [n.name for n in graph_def.node]
            dup = next(n for n in names if names.count(n) > 1)
            raise ValueError(f"Duplicate node name in graph: '{dup}'")
        self.order = [n.name for n in graph_def.node]
        self.prefix = prefix
        self.input_map = input_map
        self.used_map_keys: set[str] = set()
        self.op_dict = op_dict
        self.producer_defaults = _producer_defaults(producer_op_list)
        self.created: dict[str, Operation] = {}
        self.back_edges: list[tuple[Operation, int, str]] = []

    # -- ordering -------------------------------------------------------------------------------
    def _is_back_edge(self, node: Any, input_name: str) -> bool:
        source, _, is_control = _parse_input(input_name)
        src = self.nodes.get(source)
        return (not is_control and node.op in ("Merge", "RefMerge") and src is not None
                and src.op in _BACK_EDGE_SOURCES)

    def _dependencies(self, node: Any) -> list[str]:
        deps = []
        seen_control = False
        for inp in node.input:
            source, port, is_control = _parse_input(inp)
            if seen_control and not is_control:
                raise ValueError(f"Node '{node.name}': Control dependencies must come after regular dependencies")
            seen_control = is_control
            key = f"^{source}" if is_control else f"{source}:{port}"
            if key in self.input_map or self._is_back_edge(node, inp):
                continue
            if source not in self.nodes:
                raise ValueError(f"Node '{node.name}': Unknown input node '{inp}'")
            deps.append(source)
        return deps

    def topological_order(self) -> list[str]:
        pending = {name: len(self._dependencies(self.nodes[name])) for name in self.order}
        consumers: dict[str, list[str]] = {}
        for name in self.order:
            for dep in self._dependencies(self.nodes[name]):
                consumers.setdefault(dep, []).append(name)
        ready = [name for name in self.order if pending[name] == 0]
        result: list[str] = []
        while ready:
            name = ready.pop(0)
            result.append(name)
            for consumer in consumers.get(name, ()):
                pending[consumer] -= 1
                if pending[consumer] == 0:
                    ready.append(consumer)
        if len(result) != len(self.order):
            stuck = [n for n in self.order if pending[n] > 0]
            raise ValueError(f"GraphDef contains a cycle that does not go through a loop's "
                             f"NextIteration -> Merge edge; nodes involved: {stuck[:5]}")
        return result

    # -- creating ---------------------------------------------------------------------------------
    def resolve(self, node: Any, input_name: str) -> Any:
        source, port, is_control = _parse_input(input_name)
        key = f"^{source}" if is_control else f"{source}:{port}"
        if key in self.input_map:
            self.used_map_keys.add(key)
            mapped = self.input_map[key]
            return mapped.op if is_control and isinstance(mapped, Tensor) else mapped
        op = self.created[source]
        if is_control:
            return op
        if port >= len(op.outputs):
            raise ValueError(f"Node '{node.name}': Connecting to invalid output {port} of source node "
                             f"{source} which has {len(op.outputs)} outputs.")
        return op.outputs[port]

    def create(self, name: str) -> Operation:
        node = self.nodes[name]
        op_def = self.op_dict.get(node.op)
        if op_def is None and node.op in self.graph._functions:  # a call of a library function
            op_def = self.graph._functions[node.op].call_op_def
        if op_def is None:
            # NotFoundError, as TF 2.21's importer (tests/data/tf_malformed_expected.json)
            raise errors.NotFoundError(
                None, None, f"Op type not registered '{node.op}' in binary (node '{node.name}'). Make "
                "sure the Op and Kernel are registered in the binary running in this process.")
        inputs: list[Tensor] = []
        controls: list[Operation] = []
        late: list[tuple[int, str]] = []
        for inp in node.input:
            source, port, _ = _parse_input(inp)
            if self._is_back_edge(node, inp) and f"{source}:{port}" not in self.input_map:
                late.append((len(inputs), inp))
                inputs.append(None)  # type: ignore[arg-type]
                continue
            value = self.resolve(node, inp)
            if inp.startswith("^"):
                controls.append(value)
            else:
                inputs.append(value)
        if late:
            stand_in = next((t for t in inputs if t is not None), None)
            if stand_in is None:
                raise ValueError(f"Node '{node.name}': a Merge needs at least one input from outside its loop")
            inputs = [stand_in if t is None else t for t in inputs]
        attrs = self._attrs(node, op_def)
        attrs, out_dtypes = infer_attrs_and_output_dtypes(op_def, inputs, attrs)
        _check_input_types(node, op_def, attrs, inputs)
        op = self.graph._create_op_internal(op_def, inputs, attrs, out_dtypes, f"{self.prefix}{node.name}/",
                                            control_inputs=controls)
        if node.device:
            op._device = merge_device(parse_device(op._device), node.device) if op._device else \
                parse_device(node.device).to_string()
        self.back_edges.extend((op, i, inp) for i, inp in late)
        self.created[name] = op
        return op

    def _attrs(self, node: Any, op_def: OpDef) -> dict[str, Any]:
        attrs: dict[str, Any] = {}
        defaults = self.producer_defaults.get(node.op, {})
        for key, proto in node.attr.items():
            declared = op_def.attrs.get(key)
            if declared is None:
                if key.startswith("_"):
                    attrs[key] = self._private_attr(key, attr_from_proto(proto))
                    continue
                if key in defaults and defaults[key] == proto:
                    continue  # a default the producer added and this binary does not know
                if key in _HINT_ATTRS.get(node.op, ()):
                    continue
                later = _LATER_DEFAULTS.get(node.op, {}).get(key)
                if later is not None and proto.WhichOneof("value") == later[0] and \
                        getattr(proto, later[0]) == later[1]:
                    continue
                raise ValueError(f"NodeDef mentions attr '{key}' not in Op<name={node.op}>; NodeDef: "
                                 f"{node.name} = {node.op}[{key}]. (Check whether your GraphDef-"
                                 "interpreting binary is up to date with your GraphDef-generating binary.)")
            attrs[key] = _declared_attr(node, key, proto, declared)
        _check_required_attrs(node, op_def, attrs)
        if self.prefix and node.op in ("Enter", "RefEnter") and "frame_name" in attrs:
            # As TF's importer: the same loop imported twice under two scopes runs in two frames
            # (one frame name would merge their iterations if both ran in one step).
            frame = attrs["frame_name"]
            attrs["frame_name"] = (self.prefix.encode() + frame) if isinstance(frame, bytes) else self.prefix + frame
        return attrs

    def _private_attr(self, key: str, value: Any) -> Any:
        if key == "_class" and self.prefix:
            return [f"loc:@{self.prefix}{v[5:]}" if isinstance(v, str) and v.startswith("loc:@")
                    and v[5:] in self.nodes else v for v in value]
        return value

    def connect_back_edges(self) -> None:
        for op, index, inp in self.back_edges:
            op._update_input(index, self.resolve(self.nodes[op.name[len(self.prefix):]], inp))


# The attr kind each AttrValue field holds, in TF's words.
_FIELD_KINDS = {"s": "string", "i": "int", "f": "float", "b": "bool", "type": "type", "shape": "shape",
                "tensor": "tensor", "func": "func"}


def _value_kind(proto: Any) -> Optional[str]:
    """The kind of value AttrValue `proto` holds ("list(int)", ...), None when it holds none or
    an empty list (which fits every list kind)."""
    field = proto.WhichOneof("value")
    if field != "list":
        return _FIELD_KINDS.get(field) if field else None
    for name, kind in _FIELD_KINDS.items():
        if len(getattr(proto.list, name)):
            return f"list({kind})"
    return None


def _declared_attr(node: Any, key: str, proto: Any, declared: AttrDef) -> Any:
    """Attr `key` of `node` read as its declared kind; a value of another kind, a type enum no
    dtype has, a type outside the allowed ones or an impossible shape/tensor is a ValueError
    naming the node, as in TF's importer."""
    where = f" for attr '{key}'; NodeDef: {{{{node {node.name}}}}} = {node.op}"
    got, want = _value_kind(proto), declared.kind
    if got is not None and got != want and proto.WhichOneof("value") != "placeholder":
        raise ValueError(f"AttrValue had value with type '{got}' when '{want}' expected{where}")
    enums = list(proto.list.type) if want == "list(type)" else [proto.type] if want == "type" and got else []
    bad = next((e for e in enums if e == 0 or e not in _dtypes._BY_ENUM), None)
    if bad is not None:
        raise ValueError(f"AttrValue has invalid DataType enum: {bad}{where}")
    try:
        value = attr_from_proto(proto, want)
    except ValueError as err:
        raise ValueError(f"{err}{where}") from None
    if want == "type" and declared.allowed is not None and value is not None and value not in declared.allowed:
        names = ", ".join(_C_NAMES.get(t.name, t.name) for t in declared.allowed)
        raise ValueError(f"Value for attr '{key}' of {_C_NAMES.get(value.name, value.name)} is not in the "
                         f"list of allowed values: {names}{where}")
    return value


_C_NAMES = {"float32": "float", "float64": "double", "float16": "half"}


def _check_required_attrs(node: Any, op_def: OpDef, attrs: dict[str, Any]) -> None:
    """A NodeDef must set every attr without a default, except those its inputs' types give."""
    from_inputs = {a for arg in op_def.inputs for a in (arg.type_attr, arg.number_attr, arg.type_list_attr) if a}
    for name, attr in op_def.attrs.items():
        if name not in attrs and not attr.has_default and name not in from_inputs:
            raise ValueError(f"NodeDef missing attr '{name}' from Op<name={op_def.name}>; "
                             f"NodeDef: {{{{node {node.name}}}}}")


def _check_input_types(node: Any, op_def: OpDef, attrs: dict[str, Any], inputs: Sequence[Tensor]) -> None:
    expected: list[tuple[_dtypes.DType, bool]] = []
    for arg in op_def.inputs:
        if arg.type_list_attr:
            types = list(attrs[arg.type_list_attr])
        else:
            base = attrs[arg.type_attr] if arg.type_attr else arg.fixed_dtype
            count = int(attrs[arg.number_attr]) if arg.number_attr else 1
            # a hostile N (2**40) is checked against the real inputs before any list is built
            if count < 0 or len(expected) + count > len(inputs):
                raise ValueError(f"NodeDef expected at least {len(expected) + max(count, 0)} inputs but "
                                 f"{len(inputs)} were given; node '{node.name}' ({node.op})")
            types = [base] * count
        expected.extend((t, arg.is_ref) for t in types)
    if len(expected) != len(inputs):
        raise ValueError(f"NodeDef expected inputs {[t.name for t, _ in expected]} but {len(inputs)} "
                         f"were given; node '{node.name}' ({node.op})")
    for i, (tensor, (want, is_ref)) in enumerate(zip(inputs, expected)):
        if tensor.dtype.base_dtype != want.base_dtype or (is_ref and not tensor.dtype.is_ref_dtype):
            shown = want._as_ref.name if is_ref else want.name
            raise ValueError(f"Input {i} of node {node.name} was passed {tensor.dtype.name} from "
                             f"{tensor.name} incompatible with expected {shown}.")


def _producer_defaults(producer_op_list: Any) -> dict[str, dict[str, Any]]:
    if producer_op_list is None:
        return {}
    return {op.name: {a.name: a.default_value for a in op.attr if a.HasField("default_value")}
            for op in producer_op_list.op}


def _check_versions(graph_def: Any) -> None:
    versions = graph_def.versions
    if versions.min_consumer > GRAPH_DEF_VERSION or GRAPH_DEF_VERSION in versions.bad_consumers:
        raise ValueError(f"GraphDef min consumer version {versions.min_consumer} above current version "
                         f"{GRAPH_DEF_VERSION} for TensorFlow (or this version is marked bad). "
                         "Please upgrade TensorFlow.")
    if graph_def.node and versions.producer < GRAPH_DEF_VERSION_MIN_PRODUCER:
        raise ValueError(f"GraphDef producer version {versions.producer} below min producer "
                         f"{GRAPH_DEF_VERSION_MIN_PRODUCER}.")


def import_graph_def(graph_def: Any, input_map: Optional[dict[str, Any]] = None,
                     return_elements: Optional[Sequence[str]] = None, name: Optional[str] = None,
                     op_dict: Optional[dict[str, OpDef]] = None, producer_op_list: Any = None) -> Any:
    """Imports the graph `graph_def` into the default graph, under the name scope `name`
    ("import" by default; "" for none). Returns the operations and tensors named by
    `return_elements` (None when it is None)."""
    if not isinstance(graph_def, graph_pb2.GraphDef):
        try:
            graph_def = graph_pb2.GraphDef.FromString(graph_def.SerializeToString())
        except AttributeError:
            raise TypeError("graph_def must be a GraphDef proto.") from None
    if input_map is not None and not isinstance(input_map, dict):
        raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
    if return_elements is not None and (isinstance(return_elements, str) or
                                        not all(isinstance(x, str) for x in return_elements)):
        raise TypeError("return_elements must be a list of strings.")
    _check_versions(graph_def)
    graph = _graph.get_default_graph()
    if graph_def.HasField("library"):  # first: nodes may call its functions
        import_library(graph, graph_def.library)
    mapping = {}
    for key, value in (input_map or {}).items():
        if not isinstance(value, (Tensor, Operation)):
            raise TypeError("input_map must be a dictionary mapping strings to Tensor objects.")
        if value.graph is not graph:
            raise ValueError(f"input_map value {value.name} is not an element of the default graph.")
        mapping[_canonical_key(key)] = value
    outer_controls = list(graph._control_dependencies.current())
    with graph.name_scope(name if name is not None else "import") as scope:
        pass  # claims the (uniquified) scope name, as TF's import does
    prefix = scope if name != "" else ""
    importer = _Importer(graph, graph_def, prefix, mapping, {**registered_ops(), **(op_dict or {})},
                         producer_op_list)
    saved_context, graph._control_flow_context = graph._control_flow_context, None
    try:
        with graph.control_dependencies(None):
            for node_name in importer.topological_order():
                importer.create(node_name)
            importer.connect_back_edges()
        unused = sorted(set(mapping) - importer.used_map_keys)
        if unused:
            raise ValueError(f"Attempted to map inputs that were not found in graph_def: [{', '.join(unused)}]")
    except BaseException:
        _remove_ops(graph, list(importer.created.values()))  # an import adds all of its nodes or none
        raise
    finally:
        graph._control_flow_context = saved_context
    _add_outer_controls(importer, outer_controls)
    return _return_elements(importer, return_elements)


def _remove_ops(graph: _graph.Graph, ops: list[Operation]) -> None:
    """Takes back the operations a failed import had created."""
    doomed = set(ops)
    with graph._lock:
        for op in ops:
            for t in op.inputs:
                if op in t._consumers:
                    t._consumers.remove(op)
            for c in op.control_inputs:
                if op in c._control_outputs:
                    c._control_outputs.remove(op)
            graph._nodes_by_name.pop(op.name, None)
        graph._nodes = [op for op in graph._nodes if op not in doomed]
        # The import's ops were the newest: ids and the version count go back to before it.
        graph._version = len(graph._nodes)
        graph._structure_version += 1


def _add_outer_controls(importer: _Importer, controls: list[Any]) -> None:
    """Control dependencies open at import time apply to the imported ops without inputs."""
    ops = [c.op if isinstance(c, Tensor) else c for c in controls]
    if not ops:
        return
    created = set(importer.created.values())
    for op in importer.created.values():
        if not op.inputs and not any(c in created for c in op.control_inputs):
            op._add_control_inputs(ops)


def _return_elements(importer: _Importer, names: Optional[Sequence[str]]) -> Any:
    if names is None:
        return None
    result: list[Any] = []
    for element in names:
        if ":" in element:
            node, port, _ = _parse_input(element)
            op = importer.created.get(node)
            if op is None or port >= len(op.outputs):
                raise ValueError(f"Requested return tensor '{element}' not found in graph def")
            result.append(op.outputs[port])
        else:
            op = importer.created.get(element)
            if op is None:
                raise ValueError(f"Requested return node '{element}' not found in graph def")
            result.append(op)
    return result
