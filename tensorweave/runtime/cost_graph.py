"""`RunMetadata.cost_graph` (a CostGraphDef), filled as TensorFlow's DirectSession fills it when
`GraphOptions.build_cost_model` > 0: every node of every partition of the step (Send/Recv
included), with a session-wide id, its device, the ids and ports it reads, its control inputs,
per output the measured bytes, shape and dtype (-1 and an unknown shape when the step did not
produce it), `compute_cost` = the measured microseconds, `persistent_memory_size` for constants
and variables, and `is_final` for Sends. Like TF's session, the analytical `compute_time` and
`memory_time` estimates and `temporary_memory_size` stay 0: nothing here estimates them."""
from __future__ import annotations

from typing import Any, Iterable


def build_every(config: Any) -> tuple[int, int]:
    """(every, after): a cost graph on the steps of a signature numbered n >= after with
    (n - after + 1) % every == 0 (GraphOptions.build_cost_model, build_cost_model_after)."""
    options = config.graph_options
    return options.build_cost_model, options.build_cost_model_after


def wants_cost_graph(step_number: int, every: int, after: int) -> bool:
    measured = step_number - after
    return every > 0 and measured >= 0 and (measured + 1) % every == 0


def fill_cost_graph(cost_graph: Any, partitions: Iterable[Any], measured: dict[tuple[str, str], Any]) -> None:
    """Appends the partitions' nodes; `measured[(device, node)]` = (micros, {slot: (dtype, shape,
    bytes)}) from the step's tracer."""
    next_id = len(cost_graph.node)
    for partition in partitions:
        device = partition.device.name
        ids = {}
        for node in partition.nodes:
            ids[node.name] = next_id
            next_id += 1
        for node in partition.nodes:
            cnode = cost_graph.node.add()
            cnode.name = node.name
            cnode.device = device
            cnode.id = ids[node.name]
            for source, port in node.inputs:
                info = cnode.input_info.add()
                info.preceding_node = ids.get(source.name, -1)
                info.preceding_port = port
            cnode.control_input.extend(ids[c.name] for c in node.control_inputs if c.name in ids)
            micros, outputs = measured.get((device, node.name), (0, {}))
            for slot, dtype in enumerate(node.output_dtypes):
                info = cnode.output_info.add()
                info.alias_input_port = -1
                info.dtype = dtype.as_datatype_enum  # a variable's is a ref type, as in TF
                if slot in outputs:
                    _, shape, nbytes = outputs[slot]
                    info.size = nbytes
                    for d in shape:
                        info.shape.dim.add().size = d
                else:
                    info.size = -1
                    info.shape.unknown_rank = True
            cnode.compute_cost = micros
            cnode.is_final = node.type == "_Send"
            op_def = node.op_def
            if op_def is not None and (op_def.persistent_output or node.type == "Const"):
                cnode.persistent_memory_size = sum(o[2] for o in outputs.values())
