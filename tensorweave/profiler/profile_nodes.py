"""What tf.profiler knows about each graph node, and the result trees it returns.

`GraphNodeProto` / `MultiGraphNodeProto` carry TensorFlow's tfprof_output field names (name,
parameters, total_parameters, float_ops, total_float_ops, exec_micros, total_exec_micros,
requested_bytes, ..., children, graph_nodes), as Python objects: the protobuf schema is not
shipped with tensorboard. `collect_nodes` builds one `ProfNode` per graph op from the graph's
static shapes, the registered FLOP counts, variable collections, an optional OpLogProto, and
per-step execution statistics from RunMetadata."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.op_stats import get_stats_for_node_def
from tensorweave.profiler.option_builder import TRAINABLE_VARIABLES, VARIABLES

# Counters a node has itself and, as total_<name>, summed over what it accounts for.
STATS = ("exec_micros", "accelerator_exec_micros", "cpu_exec_micros", "requested_bytes", "peak_bytes",
         "residual_bytes", "output_bytes", "parameters", "float_ops", "run_count", "definition_count")


class GraphNodeProto:
    """One node of a profile result tree (TF's tfprof_output_pb2.GraphNodeProto fields)."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.devices: list[str] = []
        self.shapes: list[list[int]] = []
        self.input_shapes: dict[int, list[int]] = {}
        self.children: list[Any] = []
        for stat in STATS:
            setattr(self, stat, 0)
            setattr(self, "total_" + stat, 0)

    def _fields(self) -> list[tuple[str, Any]]:
        return [(s, getattr(self, s)) for stat in STATS for s in (stat, "total_" + stat)
                if getattr(self, s)]

    def __repr__(self) -> str:
        return self._text(0)

    def _text(self, indent: int) -> str:
        pad = " " * indent
        lines = [f'{pad}name: "{self.name}"']
        lines += [f"{pad}{key}: {value}" for key, value in self._fields()]
        for child in self.children:
            lines += [f"{pad}children {{", child._text(indent + 2), f"{pad}}}"]
        for node in getattr(self, "graph_nodes", ()):
            lines += [f"{pad}graph_nodes {{", node._text(indent + 2), f"{pad}}}"]
        return "\n".join(lines)


class MultiGraphNodeProto(GraphNodeProto):
    """A node aggregating several graph nodes (the op view's op types), with `graph_nodes`."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self.graph_nodes: list[GraphNodeProto] = []


class ProfNode:
    """One graph op: its types (op type, device, variable marks), shape, FLOPs and run stats."""

    def __init__(self, name: str, op_type: str) -> None:
        self.name = name
        self.op = op_type
        self.op_types: set[str] = {op_type}
        self.devices: set[str] = set()
        self.shape: Optional[list[int]] = None
        self.input_shapes: dict[int, list[int]] = {}
        self.inputs: list[str] = []
        self.float_ops = 0
        self.parameters = 0
        self.steps: dict[int, dict[str, int]] = {}  # step -> exec stats of that step

    def stats(self, step: int) -> dict[str, int]:
        """Execution statistics of one step, or (step -1) the average over recorded steps."""
        if step >= 0:
            return self.steps.get(step, {})
        if not self.steps:
            return {}
        keys = {k for s in self.steps.values() for k in s}
        n = len(self.steps)
        return {k: sum(s.get(k, 0) for s in self.steps.values()) // n for k in keys}

    def fill(self, proto: GraphNodeProto, step: int) -> None:
        """The node's own values; totals start equal to them."""
        proto.parameters = self.parameters
        proto.float_ops = self.float_ops
        proto.definition_count = 1
        for key, value in self.stats(step).items():
            setattr(proto, key, value)
        proto.devices = sorted(self.devices)
        proto.input_shapes = dict(self.input_shapes)
        if self.shape is not None:
            proto.shapes = [list(self.shape)]


def _static_shape(tensor: Any) -> list[int]:
    shape = tensor.shape
    if shape.dims is None:
        return []
    return [-1 if d is None else d for d in shape.as_list()]


def collect_nodes(graph: Any, op_log: Optional[Any] = None) -> dict[str, ProfNode]:
    """A ProfNode per op of `graph` (no run statistics yet; see add_run_meta)."""
    nodes: dict[str, ProfNode] = {}
    for op in graph.get_operations():
        node = ProfNode(op.name, op.type)
        if op.device:
            node.devices.add(op.device)
            node.op_types.add(op.device)
        node.inputs = [t.op.name for t in op.inputs]
        node.input_shapes = {i: _static_shape(t) for i, t in enumerate(op.inputs)}
        node_def = op.node_def
        if "shape" in node_def.attr and node_def.attr["shape"].HasField("shape"):
            shape_proto = node_def.attr["shape"].shape
            if not shape_proto.unknown_rank:
                node.shape = [d.size for d in shape_proto.dim]
                # Parameters: the elements of a node's declared shape (variables, placeholders).
                if node.shape and all(d >= 0 for d in node.shape):
                    count = 1
                    for d in node.shape:
                        count *= d
                    node.parameters = count
        try:
            node.float_ops = int(get_stats_for_node_def(graph, node_def, "flops").value or 0)
        except ValueError:
            node.float_ops = 0  # shapes not fully known: TF leaves the count out too
        nodes[op.name] = node
    for key, mark in ((GraphKeys.TRAINABLE_VARIABLES, TRAINABLE_VARIABLES),
                      (GraphKeys.GLOBAL_VARIABLES, VARIABLES)):
        for var in graph.get_collection(key):
            op = getattr(var, "op", None)
            if op is not None and op.name in nodes:
                nodes[op.name].op_types.add(mark)
    if op_log is not None:
        for entry in op_log.log_entries:
            node = nodes.get(entry.name)
            if node is None:
                continue
            node.op_types.update(entry.types)
            if entry.float_ops:
                node.float_ops = entry.float_ops
    return nodes


def add_run_meta(nodes: dict[str, ProfNode], step: int, run_meta: Any) -> None:
    """Adds one traced step's times and bytes (RunMetadata.step_stats) to the nodes it ran."""
    for dev in run_meta.step_stats.dev_stats:
        for ns in dev.node_stats:
            node = nodes.get(ns.node_name)
            if node is None:  # transfers and feeds the runtime added
                continue
            node.devices.add(dev.device)
            stats = node.steps.setdefault(step, {})
            micros = max(ns.op_end_rel_micros - ns.op_start_rel_micros, ns.all_end_rel_micros, 0)
            outputs = sum(o.tensor_description.allocation_description.requested_bytes for o in ns.output)
            requested = sum(m.total_bytes for m in ns.memory) or outputs
            peak = max([m.peak_bytes for m in ns.memory] or [0])
            for key, value in (("exec_micros", micros), ("cpu_exec_micros", micros),
                               ("requested_bytes", requested), ("peak_bytes", peak),
                               ("output_bytes", outputs), ("run_count", 1)):
                stats[key] = stats.get(key, 0) + value
