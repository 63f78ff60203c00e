"""Compiles one partition of a pruned graph into the executor's static tables (DESIGN.md
"Running a step", step 2): kernels, input slots, output edges, initial pending counts and
control-flow flags, computed once per plan so each step only walks tables."""
from __future__ import annotations

import threading
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.runtime.colocation import ref_argument_flags
from tensorweave.runtime.cost_model import static_flops
from tensorweave.runtime.partition import Endpoint, PNode
from tensorweave.runtime.placer import kernel_dtype
from tensorweave.runtime.step_context import DEAD


class NodeItem:
    """A node's row in the executor tables."""

    __slots__ = ("id", "name", "op", "compute", "num_inputs", "input_start", "out_edges",
                 "num_outputs", "pending_init", "num_data_inputs", "control_flow", "frame_name",
                 "is_constant_enter", "parallel_iterations", "is_async", "needs_step", "expensive",
                 "deref_inputs", "is_sink", "is_transfer",
                 # run-time rows, filled by executor_tables.ExecutorTables
                 "kind", "local_id", "slot", "slot_end", "plain_edges", "merge_edges",
                 "dead_outputs", "cleared_inputs", "fetch_index",
                 # scheduling: critical_path.py's static priority; whether the kernel split its
                 # work over the device's pool when it last ran (learned by the executor)
                 "priority", "splits")

    def __init__(self, node_id: int, name: str, op: Optional[Operation]) -> None:
        self.id = node_id
        self.name = name
        self.op = op
        self.compute: Callable[..., Any] = _no_kernel
        self.num_inputs = 0
        self.input_start = 0
        # (destination node id, source output index, destination input index or -1 for control)
        self.out_edges: list[tuple[int, int, int]] = []
        self.num_outputs = 0
        self.pending_init = 0
        self.num_data_inputs = 0
        self.control_flow: Optional[str] = None
        self.frame_name = ""
        self.is_constant_enter = False
        self.parallel_iterations = 10
        self.is_async = False
        self.needs_step = False
        self.expensive = False
        self.deref_inputs: tuple[int, ...] = ()
        self.is_sink = False
        self.is_transfer = False  # Send/Recv: run even when dead, to carry the deadness across
        self.kind = 0
        self.local_id = node_id
        self.slot = self.slot_end = 0
        self.plain_edges: tuple[tuple[Any, ...], ...] = ()
        self.merge_edges: tuple[tuple[Any, ...], ...] = ()
        self.dead_outputs: tuple[Any, ...] = ()
        self.cleared_inputs: list[None] = []
        self.fetch_index = -1
        self.priority = 0.0
        self.splits = False


def _no_kernel(*args: Any) -> Any:
    raise errors.InternalError(None, None, "node has no kernel")


class PartitionTables:
    """Everything a step needs to run one partition."""

    def __init__(self) -> None:
        self.items: list[NodeItem] = []
        self.total_inputs = 0
        self.roots: list[int] = []
        self.fetch_items: list[int] = []       # sink node id per fetch
        self.fetch_indices: list[int] = []     # each fetch's index among the plan's fetches
        self.enter_counts: dict[str, int] = {}  # frame name -> number of Enter nodes
        self.has_control_flow = False
        self.has_async = False
        self.num_expensive = 0


class KernelCache:
    """Kernels are built once per (session, node, device) and reused by every plan, so stateful
    kernels (random generators) keep their state across plans, as TF's do. Nodes the partitioner
    adds (Send, Recv, control loops) belong to one plan and get fresh kernels."""

    def __init__(self, session_state: Any = None) -> None:
        self._kernels: dict[tuple[int, str], Callable[..., Any]] = {}
        self.session_state = session_state
        # Two threads compiling plans at once (queue runners and the main loop) must share one
        # kernel per node: a stateful kernel (a queue) built twice would be two queues.
        self._build_lock = threading.RLock()

    def get(self, op: Operation, device: Any) -> Callable[..., Any]:
        key = (id(op), device.name)
        compute = self._kernels.get(key)
        if compute is None:
            with self._build_lock:
                compute = self._kernels.get(key)
                if compute is None:
                    compute = self._kernels[key] = build_kernel(op, device, self.session_state)
        return compute

    def for_node(self, node: PNode) -> Callable[..., Any]:
        if node.is_synthetic:
            return build_kernel(node.op, node.device, self.session_state)
        return self.get(node.op, node.device)


def build_kernel(op: Any, device: Any, session_state: Any = None) -> Callable[..., Any]:
    dtype = kernel_dtype(op)
    kdef = op.op_def.find_kernel(device.device_type, dtype)
    if kdef is None:
        raise errors.NotFoundError(
            None, op, f"No registered '{op.type}' OpKernel for {device.device_type} devices "
            f"compatible with node {op.name} (T={getattr(dtype, 'name', dtype)})")
    return kdef.build(KernelContext(op, device, session_state))


def _deref_wrapper(compute: Callable[..., Any], positions: tuple[int, ...], op: Any,
                   offset: int) -> Callable[..., Any]:
    """Reference inputs feeding non-reference arguments are read (TF's automatic dereference).
    A transfer node may see a dead input here (it runs to send the deadness on)."""

    def run(*args: Any) -> Any:
        args = list(args)
        for p in positions:
            value = args[p + offset]
            if value is not DEAD:
                args[p + offset] = value.read(op)
        return compute(*args)

    return run


_TRANSFER_TYPES = ("_Send", "_Recv")


def compile_partition(nodes: Sequence[PNode], device: Any, kernel_for: Callable[[PNode], Callable[..., Any]],
                      fetches: Sequence[Endpoint], expensive_threshold: float = 4e5) -> PartitionTables:
    """`nodes` are one partition's nodes (partition.py), all placed on `device`; feed nodes
    yield fed values; each fetched endpoint gets a pseudo sink node."""
    tables = PartitionTables()
    items = tables.items
    node_of: dict[int, int] = {}
    for node in nodes:
        item = NodeItem(len(items), node.name, node.op)
        node_of[id(node)] = item.id
        items.append(item)
    offset = 0
    for node in nodes:
        item = items[node_of[id(node)]]
        item.input_start = offset
        offset += len(node.inputs)
        _fill_item(item, node, kernel_for, tables, expensive_threshold)
        for i, (src, port) in enumerate(node.inputs):
            items[node_of[id(src)]].out_edges.append((item.id, port, i))
        for c in node.control_inputs:
            items[node_of[id(c)]].out_edges.append((item.id, 0, -1))
        num_controls = len(node.control_inputs)
        if item.control_flow == "merge":
            item.pending_init = (num_controls << 1) | 1  # controls count 2 each; bit 0: no live input yet
        else:
            item.pending_init = item.num_inputs + num_controls
    for src, port in fetches:
        sink = NodeItem(len(items), f"_Fetch/{src.name}:{port}", src.op)
        sink.is_sink = True
        sink.num_inputs = sink.num_data_inputs = sink.num_outputs = 1
        sink.input_start = offset
        offset += 1
        sink.pending_init = 1
        sink.compute = _identity
        items.append(sink)
        items[node_of[id(src)]].out_edges.append((sink.id, port, 0))
        tables.fetch_items.append(sink.id)
        tables.fetch_indices.append(len(tables.fetch_indices))
    tables.total_inputs = offset
    tables.roots = [it.id for it in items if it.pending_init == 0 and it.control_flow != "merge"]
    tables.roots += [it.id for it in items if it.control_flow == "merge" and it.pending_init == 1
                     and it.num_data_inputs == 0]
    return tables


def _fill_item(item: NodeItem, node: PNode, kernel_for: Callable[[PNode], Callable[..., Any]],
               tables: PartitionTables, expensive_threshold: float) -> None:
    """A node's kernel, arity and flags."""
    item.num_inputs = item.num_data_inputs = len(node.inputs)
    item.num_outputs = len(node.output_dtypes)
    if node.feed_index is not None:
        item.compute = _feed_kernel(node.feed_index)
        item.needs_step = True
        return
    op = node.op
    op_def = op.op_def
    item.control_flow = op_def.control_flow
    item.is_async = op_def.is_async
    item.needs_step = op_def.needs_step or op_def.is_async
    item.is_transfer = op_def.name in _TRANSFER_TYPES
    item.expensive = op_def.expensive and static_flops(op) >= expensive_threshold
    if op_def.control_flow is None:
        compute = kernel_for(node)
        arg_is_ref = ref_argument_flags(op)
        deref = tuple(i for i, (src, port) in enumerate(node.inputs)
                      if src.output_dtypes[port].is_ref_dtype and not arg_is_ref[i])
        if deref:
            compute = _deref_wrapper(compute, deref, op, 2 if item.is_async else 1 if item.needs_step else 0)
        item.compute = compute
        item.deref_inputs = deref
    else:
        tables.has_control_flow = True
        if op_def.control_flow == "enter":
            item.frame_name = op.get_attr("frame_name")
            item.is_constant_enter = op.get_attr("is_constant")
            item.parallel_iterations = op.get_attr("parallel_iterations")
            tables.enter_counts[item.frame_name] = tables.enter_counts.get(item.frame_name, 0) + 1
    tables.has_async |= item.is_async
    tables.num_expensive += item.expensive


def _identity(x: Any) -> Any:
    return x


def _feed_kernel(index: int) -> Callable[..., Any]:
    def feed(step: Any) -> Any:
        return step.feeds[index]
    return feed
