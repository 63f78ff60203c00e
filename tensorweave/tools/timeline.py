"""`Timeline`: a traced step's `StepStats` as a Chrome trace (white paper 9.2, Figure 12).

The JSON follows TF's `tensorflow/python/client/timeline.py`, so tools that read TF's traces read
ours: process 0 is "Allocators" (memory counters), then each device gets two processes,
"<device> Compute" (one complete event "X" per node, args name/op/input0..., on non-overlapping
lanes as thread ids) and "<device> Tensors" (object create/snapshot/delete events for outputs,
with show_memory). A node that consumes a tensor produced on another device or lane gets a
flow event pair ("s" at the producer's end, "t" at the consumer's start): that is how transfers
between devices show as arrows. The file opens in chrome://tracing and Perfetto.
"""
from __future__ import annotations

import collections
import copy
import json
import re
from typing import Any, Optional

AllocationMaximum = collections.namedtuple("AllocationMaximum", ("timestamp", "num_bytes", "tensors"))
StepStatsAnalysis = collections.namedtuple("StepStatsAnalysis", ("chrome_trace", "allocator_maximums"))

_LABEL = re.compile(r"(.*) = (.*)\((.*)\)")


class _ChromeTraceFormatter:
    """Collects trace events; metadata (process names) comes first in the output."""

    def __init__(self, show_memory: bool = False) -> None:
        self._show_memory = show_memory
        self._events: list[dict[str, Any]] = []
        self._metadata: list[dict[str, Any]] = []

    @staticmethod
    def _event(ph: str, category: str, name: str, pid: int, tid: int, timestamp: int) -> dict[str, Any]:
        return {"ph": ph, "cat": category, "name": name, "pid": pid, "tid": tid, "ts": timestamp}

    def emit_pid(self, name: str, pid: int) -> None:
        self._metadata.append({"name": "process_name", "ph": "M", "pid": pid, "args": {"name": name}})

    def emit_tid(self, name: str, pid: int, tid: int) -> None:
        self._metadata.append({"name": "thread_name", "ph": "M", "pid": pid, "tid": tid,
                               "args": {"name": name}})

    def emit_region(self, timestamp: int, duration: int, pid: int, tid: int, category: str, name: str,
                    args: dict[str, Any]) -> None:
        event = self._event("X", category, name, pid, tid, timestamp)
        event["dur"] = duration
        event["args"] = args
        self._events.append(event)

    def _object_event(self, ph: str, category: str, name: str, timestamp: int, pid: int, tid: int,
                      object_id: int) -> dict[str, Any]:
        event = self._event(ph, category, name, pid, tid, timestamp)
        event["id"] = object_id
        self._events.append(event)
        return event

    def emit_obj_create(self, category: str, name: str, timestamp: int, pid: int, tid: int,
                        object_id: int) -> None:
        self._object_event("N", category, name, timestamp, pid, tid, object_id)

    def emit_obj_delete(self, category: str, name: str, timestamp: int, pid: int, tid: int,
                        object_id: int) -> None:
        self._object_event("D", category, name, timestamp, pid, tid, object_id)

    def emit_obj_snapshot(self, category: str, name: str, timestamp: int, pid: int, tid: int,
                          object_id: int, snapshot: dict[str, Any]) -> None:
        self._object_event("O", category, name, timestamp, pid, tid, object_id)["args"] = {
            "snapshot": snapshot}

    def emit_flow_start(self, name: str, timestamp: int, pid: int, tid: int, flow_id: int) -> None:
        self._object_event("s", "DataFlow", name, timestamp, pid, tid, flow_id)

    def emit_flow_end(self, name: str, timestamp: int, pid: int, tid: int, flow_id: int) -> None:
        self._object_event("t", "DataFlow", name, timestamp, pid, tid, flow_id)

    def emit_counter(self, category: str, name: str, pid: int, timestamp: int, counter: str,
                     value: int) -> None:
        self._event_with_args("C", category, name, pid, timestamp, {counter: value})

    def emit_counters(self, category: str, name: str, pid: int, timestamp: int,
                      counters: dict[str, int]) -> None:
        self._event_with_args("C", category, name, pid, timestamp, dict(counters))

    def _event_with_args(self, ph: str, category: str, name: str, pid: int, timestamp: int,
                         args: dict[str, Any]) -> None:
        event = self._event(ph, category, name, pid, 0, timestamp)
        event["args"] = args
        self._events.append(event)

    def format_to_string(self, pretty: bool = False) -> str:
        trace = {"traceEvents": self._metadata + self._events}
        if pretty:
            return json.dumps(trace, indent=4, separators=(",", ": "))
        return json.dumps(trace, separators=(",", ":"))


class _TensorTracker:
    """One output tensor's lifetime: where it lives, its bytes, and when nodes used it."""

    __slots__ = ("name", "object_id", "create_time", "pid", "allocator", "num_bytes", "ref_times",
                 "unref_times")

    def __init__(self, name: str, object_id: int, timestamp: int, pid: int, allocator: str,
                 num_bytes: int) -> None:
        self.name = name
        self.object_id = object_id
        self.create_time = timestamp
        self.pid = pid
        self.allocator = allocator
        self.num_bytes = num_bytes
        self.ref_times: list[int] = []
        self.unref_times: list[int] = []

    @property
    def last_unref(self) -> int:
        return max(self.unref_times)

    def add_ref(self, timestamp: int) -> None:
        self.ref_times.append(timestamp)

    def add_unref(self, timestamp: int) -> None:
        self.unref_times.append(timestamp)


def parse_op_label(label: str) -> tuple[str, str, list[str]]:
    """(node name, op type, input names) of a `name = Op(in0, in1)` timeline label."""
    match = _LABEL.match(label)
    if match is None:
        return "unknown", "unknown", []
    name, op, inputs = match.groups()
    return name, op, inputs.split(", ") if inputs else []


class Timeline:
    """Turns one step's `StepStats` into Chrome's trace format. Not thread safe."""

    def __init__(self, step_stats: Any, graph: Optional[Any] = None) -> None:
        self._origin_step_stats = step_stats
        self._graph = graph
        self._reset()

    def _reset(self) -> None:
        # Lanes are written into thread_id, as TF does; a copy keeps the caller's proto intact.
        self._step_stats = copy.deepcopy(self._origin_step_stats)
        self._chrome_trace = _ChromeTraceFormatter()
        self._next_pid = 0
        self._device_pids: dict[str, int] = {}
        self._tensor_pids: dict[str, int] = {}
        self._tensors: dict[str, _TensorTracker] = {}
        self._next_flow_id = 0
        self._flow_starts: dict[str, tuple[int, int, int]] = {}
        self._allocator_maximums: dict[str, AllocationMaximum] = {}
        self._allocators_pid = -1

    def _alloc_pid(self) -> int:
        pid = self._next_pid
        self._next_pid += 1
        return pid

    def _alloc_flow_id(self) -> int:
        flow_id = self._next_flow_id
        self._next_flow_id += 1
        return flow_id

    def _allocate_pids(self) -> None:
        self._allocators_pid = self._alloc_pid()
        self._chrome_trace.emit_pid("Allocators", self._allocators_pid)
        for dev_stats in self._step_stats.dev_stats:
            compute, tensors = self._alloc_pid(), self._alloc_pid()
            self._device_pids[dev_stats.device] = compute
            self._tensor_pids[dev_stats.device] = tensors
            self._chrome_trace.emit_pid(dev_stats.device + " Compute", compute)
            self._chrome_trace.emit_pid(dev_stats.device + " Tensors", tensors)

    def _assign_lanes(self) -> None:
        """Each node goes on the first lane free before it starts, so rows never overlap."""
        for dev_stats in self._step_stats.dev_stats:
            lane_ends = [0]
            for ns in dev_stats.node_stats:
                end = ns.all_start_micros + ns.all_end_rel_micros
                for lane, lane_end in enumerate(lane_ends):
                    if ns.all_start_micros > lane_end:
                        lane_ends[lane] = end
                        break
                else:
                    lane = len(lane_ends)
                    lane_ends.append(end)
                ns.thread_id = lane

    def _analyze_tensors(self, show_memory: bool) -> None:
        for dev_stats in self._step_stats.dev_stats:
            device_pid = self._device_pids[dev_stats.device]
            tensors_pid = self._tensor_pids[dev_stats.device]
            for ns in dev_stats.node_stats:
                start = ns.all_start_micros
                end = start + ns.all_end_rel_micros
                for index, output in enumerate(ns.output):
                    name = f"{ns.node_name}:{index}" if index else ns.node_name
                    allocation = output.tensor_description.allocation_description
                    tensor = _TensorTracker(name, len(self._tensors), start, tensors_pid,
                                            allocation.allocator_name, allocation.requested_bytes)
                    self._tensors[name] = tensor
                    tensor.add_ref(start)
                    tensor.add_unref(end)
                    self._flow_starts[name] = (end, device_pid, ns.thread_id)
                    if show_memory:
                        self._chrome_trace.emit_obj_create("Tensor", name, start, tensors_pid,
                                                           ns.thread_id, tensor.object_id)
                        snapshot = {"tensor_description": str(output.tensor_description).replace('"', "")}
                        self._chrome_trace.emit_obj_snapshot("Tensor", name, end - 1, tensors_pid,
                                                             ns.thread_id, tensor.object_id, snapshot)

    def _show_compute(self, show_dataflow: bool) -> None:
        for dev_stats in self._step_stats.dev_stats:
            device_pid = self._device_pids[dev_stats.device]
            for ns in dev_stats.node_stats:
                start = ns.all_start_micros
                end = start + ns.all_end_rel_micros
                _, op, inputs = parse_op_label(ns.timeline_label)
                if ns.node_name == "RecvTensor":
                    op, inputs = "RecvTensor", []
                args = {"name": ns.node_name, "op": op}
                for i, input_name in enumerate(inputs):
                    args[f"input{i}"] = input_name
                self._chrome_trace.emit_region(start, ns.all_end_rel_micros, device_pid, ns.thread_id,
                                               "Op", op, args)
                for input_name in inputs:
                    self._consume(input_name, start, end, device_pid, ns.thread_id, show_dataflow)

    def _consume(self, input_name: str, start: int, end: int, pid: int, tid: int,
                 show_dataflow: bool) -> None:
        if input_name not in self._tensors:
            # A partitioner's Recv is named `<producer>/_<n>`: the arrow starts at the producer.
            cut = input_name.rfind("/_")
            if cut > 0:
                input_name = input_name[:cut]
        tensor = self._tensors.get(input_name)
        if tensor is None:
            return
        tensor.add_ref(start)
        tensor.add_unref(end - 1)
        if not show_dataflow:
            return
        create_time, create_pid, create_tid = self._flow_starts[input_name]
        if create_pid != pid or create_tid != tid:
            flow_id = self._alloc_flow_id()
            self._chrome_trace.emit_flow_start(input_name, create_time, create_pid, create_tid, flow_id)
            self._chrome_trace.emit_flow_end(input_name, start, pid, tid, flow_id)

    def _show_memory_counters(self) -> None:
        """Per allocator, the bytes its live tensors hold over time, and their maximum."""
        allocations: dict[str, list[tuple[int, int, str]]] = {}
        for name, tensor in self._tensors.items():
            self._chrome_trace.emit_obj_delete("Tensor", name, tensor.last_unref, tensor.pid, 0,
                                               tensor.object_id)
            series = allocations.setdefault(tensor.allocator, [])
            series.append((tensor.create_time, tensor.num_bytes, name))
            series.append((tensor.last_unref, -tensor.num_bytes, name))
        for allocator, series in allocations.items():
            series.sort()
            total = 0
            live: set[str] = set()
            best = AllocationMaximum(timestamp=0, num_bytes=0, tensors=set())
            for timestamp, num_bytes, name in series:
                total += num_bytes
                if num_bytes < 0:
                    live.discard(name)
                else:
                    live.add(name)
                if total > best.num_bytes:
                    best = AllocationMaximum(timestamp=timestamp, num_bytes=total, tensors=set(live))
                self._chrome_trace.emit_counter("Memory", allocator, self._allocators_pid, timestamp,
                                                allocator, total)
            self._allocator_maximums[allocator] = best

    def analyze_step_stats(self, show_dataflow: bool = True, show_memory: bool = True,
                           op_time: str = "schedule") -> StepStatsAnalysis:
        """Builds the trace once. `op_time` is TF's: only "schedule" times exist on CPU devices."""
        if op_time not in ("schedule", "gpu", "all"):
            raise ValueError(f"op_time must be 'schedule', 'gpu' or 'all', got {op_time!r}")
        self._reset()  # each call starts afresh, so two calls give the same trace
        self._allocate_pids()
        self._assign_lanes()
        self._analyze_tensors(show_memory)
        self._show_compute(show_dataflow)
        if show_memory:
            self._show_memory_counters()
        return StepStatsAnalysis(chrome_trace=self._chrome_trace,
                                 allocator_maximums=self._allocator_maximums)

    def generate_chrome_trace_format(self, show_dataflow: bool = True, show_memory: bool = False,
                                     op_time: str = "schedule") -> str:
        """The step as Chrome trace JSON (pretty-printed, as TF writes it)."""
        analysis = self.analyze_step_stats(show_dataflow=show_dataflow, show_memory=show_memory,
                                           op_time=op_time)
        return analysis.chrome_trace.format_to_string(pretty=True)
