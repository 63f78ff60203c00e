"""Partition graphs as GraphDef protos (`RunOptions(output_partition_graphs=True)` fills
`RunMetadata.partition_graphs`, one per device): every node with its assigned device, the
Send/Recv pairs and control loops the partitioner added, fed values as `_Arg` nodes and fetched
values as `_Retval` nodes, as TensorFlow's direct session shows them."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.graph_def import GRAPH_DEF_VERSION, GraphDef, attr_to_proto
from tensorweave.runtime.partition import Endpoint, Partition, PNode


def _input_name(endpoint: Endpoint) -> str:
    node, port = endpoint
    return node.name if port == 0 else f"{node.name}:{port}"


def _attr_kinds(node: PNode) -> dict[str, str]:
    op_def = node.op_def
    return {} if op_def is None else {name: a.kind for name, a in op_def.attrs.items()}


def partition_to_graph_def(partition: Partition) -> Any:
    graph_def = GraphDef()
    graph_def.versions.producer = GRAPH_DEF_VERSION
    device = partition.device.name
    for node in partition.nodes:
        proto = graph_def.node.add()
        proto.name = node.name
        proto.device = device
        if node.op is None:  # a fed value
            proto.op = "_Arg"
            proto.attr["T"].CopyFrom(attr_to_proto(node.output_dtypes[0].base_dtype, "type"))
            proto.attr["index"].CopyFrom(attr_to_proto(node.feed_index, "int"))
            continue
        proto.op = node.type
        proto.input.extend(_input_name(e) for e in node.inputs)
        proto.input.extend(f"^{c.name}" for c in node.control_inputs)
        kinds = _attr_kinds(node)
        for name, value in node.op.node_attrs.items():
            try:
                proto.attr[name].CopyFrom(attr_to_proto(value, kinds.get(name)))
            except (TypeError, ValueError):
                continue  # a Python-only attr (a py_func's callable token): nothing to show
    for index, endpoint in partition.fetches:
        proto = graph_def.node.add()
        proto.name = f"_retval_{_input_name(endpoint).replace(':', '_')}_{index}"
        proto.op = "_Retval"
        proto.device = device
        proto.input.append(_input_name(endpoint))
        proto.attr["T"].CopyFrom(attr_to_proto(endpoint[0].output_dtypes[endpoint[1]].base_dtype, "type"))
        proto.attr["index"].CopyFrom(attr_to_proto(index, "int"))
    return graph_def
