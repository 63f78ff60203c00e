"""TF1's session configuration messages as plain Python classes with TF's field names:
`ConfigProto`, `GPUOptions`, `GraphOptions`, `OptimizerOptions`, `RunOptions`, `RunMetadata`."""
from __future__ import annotations

from typing import Any, Optional


class _Message:
    """Keyword-constructed record with defaults; unknown fields are rejected as protobuf does."""

    _fields: dict[str, Any] = {}

    def __init__(self, **kwargs: Any) -> None:
        for name, default in self._fields.items():
            value = kwargs.pop(name, None)
            if value is None:
                value = default() if callable(default) else default
            setattr(self, name, value)
        if kwargs:
            raise ValueError(f"Protocol message {type(self).__name__} has no field(s) "
                             f"{', '.join(sorted(kwargs))}.")

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={getattr(self, k)!r}" for k in self._fields)
        return f"{type(self).__name__}({fields})"

    def CopyFrom(self, other: "_Message") -> None:  # noqa: N802  (protobuf's name)
        for name in self._fields:
            setattr(self, name, getattr(other, name))


class GPUOptions(_Message):
    _fields = {"per_process_gpu_memory_fraction": 0.0, "allow_growth": False,
               "visible_device_list": "", "allocator_type": ""}


class OptimizerOptions(_Message):
    L1 = 0
    L0 = -1
    DEFAULT = 0
    _fields = {"do_common_subexpression_elimination": True, "do_constant_folding": True,
               "opt_level": 0, "do_function_inlining": True, "global_jit_level": 0}


class GraphOptions(_Message):
    _fields = {"optimizer_options": OptimizerOptions, "build_cost_model": 0,
               "build_cost_model_after": 0, "infer_shapes": False, "place_pruned_graph": False,
               "enable_bfloat16_sendrecv": False, "timeline_step": 0}


class ConfigProto(_Message):
    """Session configuration. `device_count={"CPU": n}` gives n logical CPU devices;
    `inter_op_parallelism_threads` sizes each device's pool for independent kernels (0: one per
    core); `intra_op_parallelism_threads` is the BLAS thread count per kernel (0: 1, which beats
    BLAS threading on small machines, DESIGN.md)."""

    _fields = {"device_count": dict, "intra_op_parallelism_threads": 0,
               "inter_op_parallelism_threads": 0, "use_per_session_threads": False,
               "allow_soft_placement": False, "log_device_placement": False,
               "gpu_options": GPUOptions, "graph_options": GraphOptions,
               "operation_timeout_in_ms": 0, "device_filters": list, "isolate_session_state": False}


class RunOptions(_Message):
    NO_TRACE = 0
    SOFTWARE_TRACE = 1
    HARDWARE_TRACE = 2
    FULL_TRACE = 3
    _fields = {"trace_level": 0, "timeout_in_ms": 0, "inter_op_thread_pool": 0,
               "output_partition_graphs": False, "report_tensor_allocations_upon_oom": False}


class StepStats(_Message):
    _fields = {"dev_stats": list}


class RunMetadata(_Message):
    _fields = {"step_stats": StepStats, "partition_graphs": list, "cost_graph": None}


def timeout_seconds(options: Optional[RunOptions], config: ConfigProto) -> Optional[float]:
    ms = (options.timeout_in_ms if options is not None else 0) or config.operation_timeout_in_ms
    return ms / 1000.0 if ms and ms > 0 else None
