"""Compiles one partition of a pruned graph into the executor's static tables (DESIGN.md
"Running a step", step 2): kernels, input slots, output edges, initial pending counts and
control-flow flags, computed once per plan so each step only walks tables."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_def import KernelContext


class NodeItem:
    """A node's row in the executor tables."""

    __slots__ = ("id", "name", "op", "compute", "num_inputs", "input_start", "out_edges",
                 "num_outputs", "pending_init", "num_data_inputs", "control_flow", "frame_name",
                 "is_constant_enter", "parallel_iterations", "is_async", "needs_step", "expensive",
                 "deref_inputs", "is_sink")

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


def _no_kernel(*args: Any) -> Any:
    raise errors.InternalError(None, None, "node has no kernel")


class PartitionTables:
    """Everything a step needs to run one partition."""

    def __init__(self) -> None:
        self.items: list[NodeItem] = []
        self.total_inputs = 0
        self.roots: list[int] = []
        self.fetch_items: list[int] = []       # sink node id per fetch
        self.enter_counts: dict[str, int] = {}  # frame name -> number of Enter nodes
        self.has_control_flow = False
        self.has_async = False
        self.num_expensive = 0


class KernelCache:
    """Kernels are built once per (session, node, device) and reused by every plan, so stateful
    kernels (random generators) keep their state across plans, as TF's do."""

    def __init__(self, session_state: Any = None) -> None:
        self._kernels: dict[tuple[int, str], Callable[..., Any]] = {}
        self.session_state = session_state

    def get(self, op: Operation, device: Any) -> Callable[..., Any]:
        key = (id(op), device.name)
        compute = self._kernels.get(key)
        if compute is None:
            op_def = op.op_def
            dtype = op._attrs.get("T") or (op._attrs.get("dtype") if "dtype" in op._attrs else None)
            kdef = op_def.find_kernel(device.device_type, dtype if hasattr(dtype, "base_dtype") else None)
            if kdef is None:
                raise errors.NotFoundError(
                    None, op, f"No registered '{op.type}' OpKernel for {device.device_type} devices "
                    f"compatible with node {op.name} (T={getattr(dtype, 'name', dtype)})")
            compute = kdef.build(KernelContext(op, device, self.session_state))
            self._kernels[key] = compute
        return compute


def _deref_wrapper(compute: Callable[..., Any], positions: tuple[int, ...], op: Operation,
                   offset: int) -> Callable[..., Any]:
    """Reference inputs feeding non-reference arguments are read (TF's automatic dereference)."""

    def run(*args: Any) -> Any:
        args = list(args)
        for p in positions:
            args[p + offset] = args[p + offset].read(op)
        return compute(*args)

    return run


def compile_partition(ops: Sequence[Operation], device: Any, kernels: KernelCache,
                      feeds: dict[Tensor, int], fetches: Sequence[Tensor],
                      expensive_threshold: float = 2e5) -> PartitionTables:
    """`ops` are the pruned nodes placed on `device`; fed tensors come from pseudo source
    nodes, fetched tensors go to pseudo sink nodes."""
    tables = PartitionTables()
    items = tables.items
    node_of: dict[int, int] = {}
    for op in ops:
        item = NodeItem(len(items), op.name, op)
        node_of[id(op)] = item.id
        items.append(item)
    feed_node: dict[Tensor, int] = {}
    for tensor, index in feeds.items():
        item = NodeItem(len(items), f"_Feed/{tensor.name}", None)
        item.compute = _feed_kernel(index)
        item.needs_step = True
        item.num_outputs = 1
        feed_node[tensor] = item.id
        items.append(item)

    def source_of(t: Tensor) -> tuple[int, int]:
        if t in feed_node:
            return feed_node[t], 0
        return node_of[id(t.op)], t.value_index

    offset = 0
    for op in ops:
        item = items[node_of[id(op)]]
        op_def = op.op_def
        item.num_inputs = len(op.inputs)
        item.num_data_inputs = len(op.inputs)
        item.input_start = offset
        offset += item.num_inputs
        item.num_outputs = len(op.outputs)
        item.control_flow = op_def.control_flow
        item.is_async = op_def.is_async
        item.needs_step = op_def.needs_step or op_def.is_async
        item.expensive = op_def.expensive and _estimated_cost(op) >= expensive_threshold
        if op_def.control_flow is None:
            compute = kernels.get(op, device)
            arg_is_ref = _input_ref_flags(op)
            deref = tuple(i for i, t in enumerate(op.inputs)
                          if t.dtype.is_ref_dtype and not arg_is_ref[i] and t not in feed_node)
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
        for i, t in enumerate(op.inputs):
            src, port = source_of(t)
            items[src].out_edges.append((item.id, port, i))
        num_controls = 0
        for c in op.control_inputs:
            if id(c) in node_of:
                items[node_of[id(c)]].out_edges.append((item.id, 0, -1))
                num_controls += 1
        if item.control_flow == "merge":
            item.pending_init = (num_controls << 1) | 1  # controls count 2 each; bit 0: no live input yet
        else:
            item.pending_init = item.num_inputs + num_controls
    for i, t in enumerate(fetches):
        sink = NodeItem(len(items), f"_Fetch/{t.name}", t.op)
        sink.is_sink = True
        sink.num_inputs = sink.num_data_inputs = sink.num_outputs = 1
        sink.input_start = offset
        offset += 1
        sink.pending_init = 1
        sink.compute = _identity
        items.append(sink)
        src, port = source_of(t)
        items[src].out_edges.append((sink.id, port, 0))
        tables.fetch_items.append(sink.id)
    tables.total_inputs = offset
    tables.roots = [it.id for it in items if it.pending_init == 0 and it.control_flow != "merge"]
    tables.roots += [it.id for it in items if it.control_flow == "merge" and it.pending_init == 1
                     and it.num_data_inputs == 0]
    return tables


def _identity(x: Any) -> Any:
    return x


def _feed_kernel(index: int) -> Callable[..., Any]:
    def feed(step: Any) -> Any:
        return step.feeds[index]
    return feed


def _input_ref_flags(op: Operation) -> list[bool]:
    flags: list[bool] = []
    for arg in op.op_def.inputs:
        if arg.number_attr:
            n = op._attrs[arg.number_attr]
        elif arg.type_list_attr:
            n = len(op._attrs[arg.type_list_attr])
        else:
            n = 1
        flags.extend([arg.is_ref] * n)
    return flags


def _estimated_cost(op: Operation) -> float:
    """Static cost estimate (elements touched) used to decide whether a kernel is worth a
    thread hop; unknown shapes count as expensive."""
    total = 0.0
    for t in list(op.inputs) + list(op.outputs):
        n = t.shape.num_elements()
        if n is None:
            return float("inf")
        total += n
    if op.type in ("MatMul", "BatchMatMul", "BatchMatMulV2") and len(op.inputs) == 2:
        a, b = op.inputs[0].shape, op.inputs[1].shape
        if a.is_fully_defined() and b.is_fully_defined() and a.ndims and b.ndims:
            dims_a, dims_b = a.as_list(), b.as_list()
            inner = dims_a[-2] if op._attrs.get("transpose_a") or op._attrs.get("adj_x") else dims_a[-1]
            out = op.outputs[0].shape.num_elements() or 0
            total = float(out) * inner
            del dims_b
    return total
