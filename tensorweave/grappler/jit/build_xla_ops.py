"""A cluster becomes one `_XlaRun` node (TF's encapsulation and BuildXlaOpsPass in one step).

The sink node is rewritten in place, as the remapper rewrites the last node of its pattern: it
keeps its name, its place, its consumers and whoever waits on it, and its output 0 is the
cluster's value. Its inputs become the cluster's inputs from outside (each distinct tensor
once), its control inputs the members' control inputs from outside; the other members go.
"""
from __future__ import annotations

import json
from typing import Any

from tensorweave.grappler.graph_view import Node, Port
from tensorweave.grappler.jit.mark_for_compilation import Cluster, _element_type, scalar_const
from tensorweave.ops.jit.xla_run import XlaRun

__all__ = ["rewrite", "program"]


def program(cluster: Cluster) -> tuple[dict[str, Any], list[Port]]:
    """The cluster's program (ops/kernels/jit/codegen.py) and its input tensors, in order."""
    inputs: list[Port] = []
    index_of: dict[Port, int] = {}
    node_index: dict[int, int] = {}
    nodes: list[dict[str, Any]] = []

    def ref(port: Port) -> list[Any]:
        src, _ = port
        if id(src) in node_index:
            return ["node", node_index[id(src)]]
        const = scalar_const(port)
        if const is not None:
            return ["const", const[0], const[1]]
        if port not in index_of:
            index_of[port] = len(inputs)
            inputs.append(port)
        return ["in", index_of[port]]

    elementwise = cluster.members[:-1] if cluster.reduction is not None else cluster.members
    for node in elementwise:
        t = _element_type(node)
        nodes.append({"op": node.type, "T": t, "out": node.dtypes[0].base_dtype.name,
                      "args": [ref(p) for p in node.inputs]})
        node_index[id(node)] = len(nodes) - 1
    spec = {"inputs": [src.dtypes[i].base_dtype.name for src, i in inputs], "nodes": nodes,
            "result": len(nodes) - 1, "reduce": cluster.reduction}
    return spec, inputs


def rewrite(cluster: Cluster) -> bool:
    """False (nothing changed) for a cluster of constants only: constant folding's work."""
    spec, inputs = program(cluster)
    if not inputs:
        return False
    sink = cluster.sink
    member_ids = {id(n) for n in cluster.members}
    controls: list[Node] = []
    for n in cluster.members:
        for c in n.controls:
            if id(c) not in member_ids and c not in controls:
                controls.append(c)
    fused = [f"{n.type} {n.name}" for n in cluster.members]
    attrs = {"Tin": [src.dtypes[i].base_dtype for src, i in inputs], "Tout": sink.dtypes[0].base_dtype,
             "program": json.dumps(spec, sort_keys=True, separators=(",", ":")), "fused_ops": fused}
    sink.set_op_def(XlaRun)
    sink.attrs = attrs
    sink.inputs = list(inputs)
    sink.controls = controls
    sink.dtypes = [sink.dtypes[0]]
    sink.shapes = [sink.shapes[0]]
    for n in cluster.members:
        if n is not sink:
            n.removed = True
    return True
