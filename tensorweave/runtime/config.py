"""TF1's session configuration messages: `ConfigProto`, `GPUOptions`, `GraphOptions`,
`OptimizerOptions`, `RunOptions`, `RunMetadata`.

They are TensorFlow's own protobuf messages (the schema ships in `tensorboard.compat.proto`),
so field names, defaults, enum values (`RunOptions.FULL_TRACE`), unknown-field errors and
serialization (`SummaryWriter.add_run_metadata`) are TF's. Fields the runtime reads:
`device_count={"CPU": n}` gives n logical CPU devices; `inter_op_parallelism_threads` sizes each
device's pool for independent kernels (0: one per core); `intra_op_parallelism_threads` is the
BLAS thread count per kernel (0: 1, which beats BLAS threading on small machines, DESIGN.md);
`allow_soft_placement`, `log_device_placement`; `graph_options.enable_recv_scheduling` (the
ASAP/ALAP pass, white paper 5.2) and `graph_options.enable_bfloat16_sendrecv` (16-bit
cross-device transfers, white paper 5.5); `operation_timeout_in_ms`. `RunOptions.trace_level`
(SOFTWARE_TRACE or FULL_TRACE) fills `RunMetadata.step_stats`; `output_partition_graphs` fills
`RunMetadata.partition_graphs`; `graph_options.build_cost_model` (with
`build_cost_model_after`) fills `RunMetadata.cost_graph` on TF's schedule (runtime/cost_graph.py).
"""
from __future__ import annotations

from typing import Any, Optional

from tensorboard.compat.proto import config_pb2

ConfigProto = config_pb2.ConfigProto
GPUOptions = config_pb2.GPUOptions
GraphOptions = config_pb2.GraphOptions
OptimizerOptions = config_pb2.OptimizerOptions
RunOptions = config_pb2.RunOptions
RunMetadata = config_pb2.RunMetadata


def timeout_seconds(options: Optional[Any], config: Any) -> Optional[float]:
    """A step's time limit, as TF's DirectSession: RunOptions.timeout_in_ms when positive,
    else ConfigProto.operation_timeout_in_ms when positive, else none."""
    ms = options.timeout_in_ms if options is not None and options.timeout_in_ms > 0 else 0
    ms = ms or config.operation_timeout_in_ms
    return ms / 1000.0 if ms > 0 else None


def tracing(options: Optional[Any]) -> bool:
    """Whether a step collects step stats (TF traces for SOFTWARE_TRACE and FULL_TRACE)."""
    return options is not None and options.trace_level >= RunOptions.SOFTWARE_TRACE
