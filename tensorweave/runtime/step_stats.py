"""Step statistics for traced steps (`RunOptions(trace_level=FULL_TRACE)`), in TensorFlow's
`StepStats` form: per device, per node, its start and end times, output sizes and a timeline
label, plus the bytes of live outputs the device holds (white paper 5.2's memory question).
Executors only call this when the step carries a tracer: untraced steps pay nothing."""
from __future__ import annotations

import threading
import time
from typing import Any, Iterable, Optional, Sequence

import numpy as np
from tensorboard.compat.proto import step_stats_pb2

from tensorweave.framework.dtypes import as_dtype
from tensorweave.ops.state.variable_ops import VariableCell

_US = 1000


class _DeviceMemory:
    """Bytes of live outputs held by one device during one step."""

    __slots__ = ("device", "live", "peak", "peak_here", "values", "persistent")

    def __init__(self, device: Any) -> None:
        self.device = device
        self.live = 0
        self.peak = 0
        self.peak_here = 0  # bytes in use when the last node's outputs were all allocated
        self.values: dict[int, list[Any]] = {}  # id(buffer) -> [remaining consumers, nbytes, buffer]
        self.persistent: dict[int, Any] = {}  # id(buffer) -> buffer, of variables and constants


class StepTracer:
    """Collects what one traced step did, from every partition's executor."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: dict[str, list[tuple]] = {}
        self._memory: dict[str, _DeviceMemory] = {}

    # -- node execution ---------------------------------------------------------------------------
    @staticmethod
    def now() -> int:
        return time.time_ns()

    def node_done(self, device: Any, item: Any, start_ns: int, end_ns: int, outputs: Iterable[Any],
                  uses: Sequence[int], inputs_done: Iterable[Any]) -> None:
        """A node ran on `device` from `start_ns` to `end_ns`. Its outputs were allocated
        (`uses[port]`: how many consumers will read each; an output nobody reads is freed at
        once) while its inputs were still live; then its use of `inputs_done` is over. Records
        the node with TF's memory fields: what it allocated (total and peak bytes), what of that
        outlives it (live bytes), and the device's bytes in use at its high point (inputs and
        outputs both alive)."""
        # NumPy scalars (a reduction's result) are outputs too, with shape () and their bytes; a
        # ref-typed variable output is described by the array it holds, as TF describes the ref.
        described = []
        for slot, value in enumerate(outputs):
            if type(value) is VariableCell:
                value = value.value
            if isinstance(value, (np.ndarray, np.generic)):
                described.append((slot, value.dtype, value.shape, value.nbytes))
        with self._lock:
            memory = self._memory_of(device)
            allocated, live, records = self._allocate(memory, item, outputs, uses, end_ns)
            in_use = memory.peak_here
            freed = self._release(memory, inputs_done)
            row = (item, start_ns, end_ns, described, threading.get_ident(), allocated, live, in_use, records)
            self._records.setdefault(device.name, []).append(row)
        if allocated:
            device.stats.allocate(allocated)
        if freed + allocated - live:
            device.stats.free(freed + allocated - live)

    @staticmethod
    def _allocate(memory: _DeviceMemory, item: Any, outputs: Iterable[Any], uses: Sequence[int],
                  end_ns: int) -> tuple[int, int, list[tuple[int, int]]]:
        """Holds a node's outputs (under the lock): (bytes newly allocated, of those the bytes
        still live after the node, TF's allocation records). Bytes are counted per buffer: an
        output that is the buffer of an input, or a view of it (Identity, Reshape), extends that
        buffer's life and allocates nothing, as TF forwards buffers; one that is the storage of
        a variable or a constant (a TF1 variable read) allocates nothing either."""
        persistent = not holds_memory(item)
        allocated = live = 0
        records = []
        short_lived = []
        for port, value in enumerate(outputs):
            if type(value) is VariableCell:
                value = value.value
            if type(value) is not np.ndarray:
                continue
            root = _buffer(value)
            key = id(root)
            if persistent:
                memory.persistent[key] = root
                continue
            if memory.persistent.get(key) is root:
                continue
            count = uses[port] if port < len(uses) else 0
            entry = memory.values.get(key)
            if entry is not None and entry[2] is root:
                entry[0] += count
                continue
            nbytes = root.nbytes
            memory.values[key] = [count, nbytes, root]
            memory.live += nbytes
            allocated += nbytes
            records.append((end_ns // _US, nbytes))
            if count:
                live += nbytes
            else:
                short_lived.append(key)
        memory.peak_here = memory.live
        memory.peak = max(memory.peak, memory.live)
        for key in short_lived:  # nobody reads it: freed as soon as the node is done
            entry = memory.values[key]
            if entry[0] <= 0:
                del memory.values[key]
                memory.live -= entry[1]
        return allocated, live, records

    @staticmethod
    def _release(memory: _DeviceMemory, values: Iterable[Any]) -> int:
        """One consumer is done with each of `values` (under the lock); returns bytes freed."""
        freed = 0
        for value in values:
            if type(value) is not np.ndarray:
                continue
            root = _buffer(value)
            entry = memory.values.get(id(root))
            if entry is None or entry[2] is not root:
                continue
            entry[0] -= 1
            if entry[0] <= 0:
                del memory.values[id(root)]
                freed += entry[1]
        memory.live -= freed
        return freed

    # -- live output bytes --------------------------------------------------------------------------
    def _memory_of(self, device: Any) -> _DeviceMemory:
        memory = self._memory.get(device.name)
        if memory is None:
            memory = self._memory[device.name] = _DeviceMemory(device)
        return memory

    def release(self, device: Any, values: Iterable[Any]) -> None:
        """One consumer on `device` that did not run (a dead node, a failed step) is done with
        each of `values`."""
        with self._lock:
            freed = self._release(self._memory_of(device), values)
        if freed:
            device.stats.free(freed)

    def finish(self) -> None:
        """The step is over: whatever it still holds is released."""
        with self._lock:
            leftovers = [(m.device, sum(e[1] for e in m.values.values())) for m in self._memory.values()]
            for m in self._memory.values():
                m.values.clear()
                m.persistent.clear()
                m.live = 0
        for device, nbytes in leftovers:
            if nbytes:
                device.stats.free(nbytes)

    def peak_bytes(self, device_name: str) -> int:
        memory = self._memory.get(device_name)
        return memory.peak if memory is not None else 0

    # -- results ----------------------------------------------------------------------------------
    def fill(self, step_stats: Any) -> None:
        """Appends one DeviceStepStats per device to a StepStats proto."""
        for device_name, rows in self._records.items():
            dev = step_stats.dev_stats.add()
            dev.device = device_name
            for row in sorted(rows, key=lambda r: r[1]):
                _fill_node(dev.node_stats.add(), *row)

    def node_costs(self) -> dict[tuple[str, str], tuple[int, dict[int, tuple[Any, Any, int]]]]:
        """(device, node name) -> (microseconds, {output slot: (dtype, shape, bytes)})."""
        costs = {}
        for device_name, rows in self._records.items():
            for item, start, end, outputs, *_ in rows:
                costs[(device_name, item.name)] = ((end - start) // _US,
                                                   {slot: (dtype, shape, nbytes)
                                                    for slot, dtype, shape, nbytes in outputs})
        return costs

    def samples(self) -> list[tuple[str, str, float]]:
        """(node name, device type, seconds) of every user node, for the cost model."""
        found = []
        for device_name, rows in self._records.items():
            device_type = self._memory[device_name].device.device_type
            for item, start, end, *_ in rows:
                op = item.op
                if op is not None and getattr(op, "graph", None) is not None:  # not a synthetic node
                    found.append((op.name, device_type, (end - start) / 1e9))
        return found


def consumers_per_output(tables: Any) -> list[list[int]]:
    """How many data edges leave each output of each node of a partition's tables."""
    counts = [[0] * max(it.num_outputs, 1) for it in tables.items]
    for it in tables.items:
        for _, port, dst_index in it.out_edges:
            if dst_index >= 0:
                counts[it.id][port] += 1
    return counts


def _buffer(value: np.ndarray) -> np.ndarray:
    """The array that owns the memory `value` views (itself if it owns it)."""
    base = value.base
    while isinstance(base, np.ndarray):
        value, base = base, base.base
    return value


def peak_bytes_in_use(step_stats: Any) -> dict[str, int]:
    """Per device of a traced step's StepStats, the most bytes of live outputs it held at once
    (TF's DeviceStepStats has no field for it: the high point of its nodes' allocator bytes in
    use, as TF's timeline and tfprof read it)."""
    return {dev.device: max((m.allocator_bytes_in_use for n in dev.node_stats for m in n.memory), default=0)
            for dev in step_stats.dev_stats}


def holds_memory(item: Any) -> bool:
    """Whether a node's outputs count as live bytes (not a fetch, not persistent state)."""
    op = item.op
    return not item.is_sink and not (op is not None and op.op_def.persistent_output)


def _fill_node(node: Any, item: Any, start: int, end: int, outputs: list, thread: int, allocated: int,
               live: int, in_use: int, records: list[tuple[int, int]]) -> None:
    node.node_name = item.name
    node.all_start_micros = start // _US
    node.all_start_nanos = start
    node.op_start_rel_micros = 0
    node.op_end_rel_micros = node.all_end_rel_micros = (end - start) // _US
    node.op_end_rel_nanos = node.all_end_rel_nanos = end - start
    node.scheduled_micros = start // _US
    node.thread_id = thread & 0xFFFFFFFF
    node.timeline_label = timeline_label(item.op, item.name)
    for slot, dtype, shape, nbytes in outputs:
        out = node.output.add()
        out.slot = slot
        desc = out.tensor_description
        desc.dtype = _datatype_enum(dtype)
        for d in shape:
            desc.shape.dim.add().size = d
        desc.allocation_description.requested_bytes = nbytes
        desc.allocation_description.allocated_bytes = nbytes
        desc.allocation_description.allocator_name = "cpu"
    # TF's AllocatorMemoryUsed: the node's own allocations (its outputs; kernels' scratch
    # space is not tracked here), and the allocator's bytes in use with its inputs and outputs
    # both alive, the device's high point around this node.
    memory = node.memory.add()
    memory.allocator_name = "cpu"
    memory.total_bytes = allocated
    memory.peak_bytes = allocated
    memory.live_bytes = live
    memory.allocator_bytes_in_use = in_use
    for micros, nbytes in records:
        record = memory.allocation_records.add()
        record.alloc_micros = micros
        record.alloc_bytes = nbytes


def timeline_label(op: Optional[Any], name: str) -> str:
    """TF's label: `name = Type(inputs)`; a transfer names its tensor and the other device."""
    if op is None:  # a feed: TF's feeds are _Arg nodes
        return f"{name} = _Arg()"
    attrs = op.node_attrs
    if op.type == "_Send":
        return f"{name} = _Send({attrs['tensor_name']} @{attrs['recv_device']})"
    if op.type == "_Recv":
        return f"{name} = _Recv({attrs['tensor_name']} @{attrs['send_device']})"
    inputs = ", ".join(t.op.name if t.value_index == 0 else t.name
                       for t in op.inputs if hasattr(t, "value_index"))
    if op.type == "_XlaRun":  # a JIT cluster: the ops it runs as one kernel
        return f"{name} = _XlaRun({inputs}) [{', '.join(attrs['fused_ops'])}]"
    return f"{name} = {op.type}({inputs})"


def _datatype_enum(np_dtype: Any) -> int:
    try:
        return as_dtype(np_dtype).as_datatype_enum
    except (TypeError, ValueError, KeyError):
        return 0


def new_step_stats() -> Any:
    return step_stats_pb2.StepStats()
