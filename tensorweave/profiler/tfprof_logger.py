"""`tf.profiler.write_op_log`: the OpLogProto tfprof reads beside a graph, holding per op the
FLOPs registered for it and its extra types (trainable and other variables), merged with a
user's OpLogProto, written to `<log_dir>/tfprof_log.pb`."""
from __future__ import annotations

import os
from typing import Any, Optional

from tensorboard.compat.proto import tfprof_log_pb2

from tensorweave.framework.graph import get_default_graph
from tensorweave.profiler.profile_nodes import collect_nodes

OpLogProto = tfprof_log_pb2.OpLogProto


def merge_default_with_oplog(graph: Optional[Any] = None, op_log: Optional[Any] = None) -> Any:
    """The graph's default op log (FLOPs and variable types) with `op_log`'s entries merged in:
    their types are added, and their float_ops replace the computed ones."""
    nodes = collect_nodes(graph if graph is not None else get_default_graph(), op_log)
    merged = OpLogProto()
    for name in sorted(nodes):
        node = nodes[name]
        extra = sorted(t for t in node.op_types if t.startswith("_"))
        if not node.float_ops and not extra:
            continue
        entry = merged.log_entries.add()
        entry.name = name
        entry.float_ops = node.float_ops
        entry.types.extend(extra)
    return merged


def write_op_log(graph: Optional[Any], log_dir: str, op_log: Optional[Any] = None,
                 run_meta: Optional[Any] = None, add_trace: bool = True) -> None:
    """Writes the merged op log to `log_dir/tfprof_log.pb`. `run_meta` and `add_trace` are TF's
    arguments for filling unknown shapes and Python call stacks; neither is recorded here."""
    del run_meta, add_trace
    merged = merge_default_with_oplog(graph, op_log)
    os.makedirs(log_dir, exist_ok=True)
    with open(os.path.join(log_dir, "tfprof_log.pb"), "wb") as f:
        f.write(merged.SerializeToString())
