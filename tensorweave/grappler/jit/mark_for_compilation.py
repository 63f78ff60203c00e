"""Which nodes are compiled together (TF's MarkForCompilationPass).

A cluster has one output: its sink, the node whose value leaves it (used outside, fetched, or
waited on). Every other member feeds only members, is neither fetched nor waited on, and so
disappears into the fused kernel. Clusters grow from sinks, visited last node first: a
producer joins its consumer's cluster once all its consumers are in that cluster, so a
cluster is maximal for its sink. A reduction (Sum, Mean, Max, Min, Prod over constant axes)
only ends a cluster. Scalar constants are folded into the program; other constants are inputs.

Eligible: the element-wise ops of ops/kernels/jit/scalar_ops.py on the types listed there,
not stateful, not in a while loop or control flow, on the sink's requested device, with
`_XlaCompile` not False (and True unless auto-clustering), in the sink's `_XlaScope` when
clustering marked ops.
"""
from __future__ import annotations

import dataclasses
import heapq
from typing import Any, Optional

import numpy as np

from tensorweave.grappler.graph_view import Node, OptGraph, Port, RewrittenOperation
from tensorweave.ops.kernels.jit.scalar_ops import REDUCTIONS, SCALAR_OPS

__all__ = ["Cluster", "auto_jit", "clusters", "marks", "MIN_CLUSTER_SIZE", "MIN_MARKED_CLUSTER_SIZE"]

# OptimizerOptions.GlobalJitLevel
_ON_1, _ON_2 = 1, 2
MIN_CLUSTER_SIZE = 4         # TF's tf_xla_min_cluster_size default, for auto-clustering
MIN_MARKED_CLUSTER_SIZE = 2  # ops the user asked to compile: any fusion of two
_FLOATS = ("float32", "float64")


def auto_jit(config: Any) -> bool:
    """Whether the session auto-clusters (global_jit_level ON_1 or ON_2)."""
    return config.graph_options.optimizer_options.global_jit_level in (_ON_1, _ON_2)


@dataclasses.dataclass
class Cluster:
    sink: Node
    members: list[Node]                       # in graph order, the sink last
    reduction: Optional[dict[str, Any]] = None


def _type_name(node: Node, attr: str) -> Optional[str]:
    dt = node.attrs.get(attr)
    return None if dt is None else dt.base_dtype.name


def _element_type(node: Node) -> Optional[str]:
    """The type an element-wise op computes in (its T, SrcT for a Cast), None if not eligible."""
    scalar = SCALAR_OPS.get(node.type)
    if scalar is None or len(node.dtypes) != 1:
        return None
    if node.type == "Cast":
        src, dst = _type_name(node, "SrcT"), _type_name(node, "DstT")
        ok = src in scalar.types and dst in scalar.types
        return src if ok else None
    t = _type_name(node, "T") or ("bool" if node.type.startswith("Logical") else None)
    if t is None or t not in scalar.types:
        return None
    if node.type == "BiasAdd" and node.attrs.get("data_format", "NHWC") != "NHWC":
        return None
    if node.type == "Select" and not _same_shapes(node):
        return None  # Select's vector condition picks rows: not an element-wise broadcast
    if any(src.dtypes[i].is_ref_dtype for src, i in node.inputs):
        return None
    return t


def _same_shapes(node: Node) -> bool:
    shapes = [src.shapes[i] for src, i in node.inputs]
    if shapes[0].ndims == 0:
        return True
    return all(s.is_fully_defined() for s in shapes) and shapes[0] == shapes[1] == shapes[2]


def _reduction(node: Node) -> Optional[dict[str, Any]]:
    """The reduction spec of an eligible reduction node (None if not eligible)."""
    if node.type not in REDUCTIONS or _type_name(node, "T") not in _FLOATS:
        return None
    (src, i), (axes_node, _) = node.inputs
    rank = src.shapes[i].ndims
    if rank is None or axes_node.type != "Const" or axes_node.frozen:
        return None
    value = axes_node.attrs.get("value")
    if not isinstance(value, np.ndarray) or value.dtype.kind not in "iu":
        return None
    flat = [int(a) for a in value.reshape(-1)]
    if any(not -rank <= a < rank for a in flat) or len({a % rank for a in flat}) != len(flat):
        return None  # out of range or repeated: the unfused kernel reports it
    axes = sorted(a % rank for a in flat)
    return {"op": node.type, "axes": axes, "keep_dims": bool(node.attrs.get("keep_dims", False))}


def scalar_const(port: Port) -> Optional[tuple[Any, str]]:
    """(value, type name) of a scalar Const the program can fold in."""
    node, _ = port
    if node.type != "Const" or node.frozen or node.controls:
        return None
    value = node.attrs.get("value")
    if not isinstance(value, np.ndarray) or value.shape != () or value.dtype.name not in (*_FLOATS, "int32",
                                                                                          "int64", "bool"):
        return None
    return value.item(), value.dtype.name


def marks(op: Any, attrs: dict[str, Any]) -> dict[str, Any]:
    """The attrs holding a node's jit marks: its own, or, for a node an earlier pass rewrote
    (x*x into Square keeps the name, not the private attrs), those of the user's op it replaced."""
    if "_XlaCompile" not in attrs and type(op) is RewrittenOperation:
        source = op._source
        if source is not None:
            return source._attrs
    return attrs


class _Candidates:
    """Eligibility of the graph's nodes, decided once each."""

    def __init__(self, graph: OptGraph, auto: bool) -> None:
        self.auto = auto
        self.consumers = graph.consumers()
        self.control_consumers = graph.control_consumers()
        self._cache: dict[int, bool] = {}

    def marked(self, node: Node) -> bool:
        flag = marks(node.op, node.attrs).get("_XlaCompile")
        return bool(flag) if flag is not None else self.auto

    def scope(self, node: Node) -> Any:
        return None if self.auto else marks(node.op, node.attrs).get("_XlaScope")

    def elementwise(self, node: Node) -> bool:
        ok = self._cache.get(id(node))
        if ok is None:
            ok = self._cache[id(node)] = not (node.removed or node.opaque or node.frozen) and \
                self.marked(node) and _element_type(node) is not None
        return ok


def clusters(graph: OptGraph, auto: bool) -> list[Cluster]:
    """The graph's clusters of at least the minimum size, disjoint."""
    cand = _Candidates(graph, auto)
    minimum = MIN_CLUSTER_SIZE if auto else MIN_MARKED_CLUSTER_SIZE
    taken: set[int] = set()
    found: list[Cluster] = []
    for node in reversed(graph.ordered()):
        if id(node) in taken or node.removed or node.opaque or node.frozen or not cand.marked(node):
            continue
        reduction = _reduction(node) if node.type in REDUCTIONS else None
        if reduction is None and not cand.elementwise(node):
            continue
        cluster = _grow(node, reduction, cand, taken)
        if cluster is not None and len(cluster.members) >= minimum:
            found.append(cluster)
            taken.update(id(n) for n in cluster.members)
    return found


def _grow(sink: Node, reduction: Optional[dict[str, Any]], cand: _Candidates, taken: set[int]) -> Optional[Cluster]:
    members = {id(sink): sink}
    scope = cand.scope(sink)
    heap: list[tuple[float, int, Node]] = []
    seen: set[int] = set()

    def offer(n: Node) -> None:
        for src, _ in (n.inputs[:1] if n is sink and reduction is not None else n.inputs):
            if id(src) not in seen:
                seen.add(id(src))
                heapq.heappush(heap, (-src.key, id(src), src))

    offer(sink)
    while heap:  # producers, last first: a node's consumers are all decided before it
        _, _, node = heapq.heappop(heap)
        if id(node) in taken or not cand.elementwise(node) or node.preserved or node.device != sink.device:
            continue
        if cand.scope(node) != scope or cand.control_consumers.get(id(node)):
            continue
        users = cand.consumers.get(id(node), [])
        if not users or any(id(u) not in members for u, _ in users if not u.removed):
            continue
        members[id(node)] = node
        offer(node)
    if reduction is not None and len(members) == 1:
        return None
    ordered = sorted(members.values(), key=lambda n: n.key)
    return Cluster(sink, ordered, reduction)
