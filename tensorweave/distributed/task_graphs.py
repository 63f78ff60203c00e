"""A step plan's partitions, grouped by task, as the GraphDefs the master registers on workers.

The partitioner has already cut every cross-device edge into a `_Send`/`_Recv` pair naming both
devices (with the sender's incarnation), so a task's subgraph is its partitions' nodes with
their assigned devices. Values the client feeds become Placeholders (fed by RunGraph), and the
client's fetches are named by tensor, to be returned by RunGraph.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Sequence

from tensorweave.framework.graph_def import GraphDef, write_library
from tensorweave.runtime.partition import Partition
from tensorweave.runtime.partition_export import partition_to_graph_def


def task_of(device_name: str) -> str:
    """'/job:ps/replica:0/task:1/device:CPU:0' -> '/job:ps/replica:0/task:1'."""
    head, sep, _ = device_name.partition("/device:")
    return head if sep else device_name


@dataclasses.dataclass
class TaskGraph:
    task: str
    graph_def: Any
    feeds: list[tuple[int, str]] = dataclasses.field(default_factory=list)    # (feed index, tensor name)
    fetches: list[tuple[int, str]] = dataclasses.field(default_factory=list)  # (fetch index, tensor name)
    targets: list[str] = dataclasses.field(default_factory=list)             # client targets placed here


def _tensor_name(name: str) -> str:
    return name if ":" in name else f"{name}:0"


def task_graphs(partitions: Sequence[Partition], targets: Sequence[Any]) -> dict[str, TaskGraph]:
    graphs: dict[str, TaskGraph] = {}
    for partition in partitions:
        task = task_of(partition.device.name)
        entry = graphs.get(task)
        if entry is None:
            entry = graphs[task] = TaskGraph(task, GraphDef())
        exported = partition_to_graph_def(partition)
        entry.graph_def.versions.CopyFrom(exported.versions)
        graph = next((n.op.graph for n in partition.nodes if n.op is not None), None)
        if graph is not None and graph._functions and not entry.graph_def.library.function:
            write_library(graph, entry.graph_def.library)  # the functions its call nodes run
        # Fed values become Placeholders named by feed index (the partitioner's feed node names
        # hold a tensor name, colon included, which is no valid node name).
        renamed = {n.name: f"feed.arg{n.attr['index'].i}" for n in exported.node if n.op == "_Arg"}
        for node in exported.node:
            if renamed:
                for i, inp in enumerate(node.input):
                    if inp in renamed:
                        node.input[i] = renamed[inp]
            if node.op == "_Arg":  # a fed value
                index = node.attr["index"].i
                dtype = node.attr["T"]
                node.name = renamed[node.name]
                node.op = "Placeholder"
                node.attr.clear()
                node.attr["dtype"].CopyFrom(dtype)
                entry.feeds.append((index, f"{node.name}:0"))
            elif node.op == "_Retval":
                entry.fetches.append((node.attr["index"].i, _tensor_name(node.input[0])))
                continue
            entry.graph_def.node.add().CopyFrom(node)
    for op in targets:
        task = task_of(op._assigned_device or "")
        if task in graphs:
            graphs[task].targets.append(op.name)
    return graphs
