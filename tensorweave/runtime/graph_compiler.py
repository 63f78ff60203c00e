"""Compiles one partition of a pruned graph into the executor's static tables (DESIGN.md
"Running a step", step 2): kernels, input slots, output edges, initial pending counts and
control-flow flags, computed once per plan so each step only walks tables."""
from __future__ import annotations

import collections
import dataclasses
import threading
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import (Compute, ControlFlowKind, KernelCall, KernelContext,
                                                   StepView)
from tensorweave.grappler.graph_view import RewrittenOperation
from tensorweave.runtime.colocation import ref_argument_flags
from tensorweave.runtime.cost_model import static_flops
from tensorweave.runtime.partition import Endpoint, InlinedOp, PNode
from tensorweave.runtime.placer import kernel_dtype
from tensorweave.runtime.step_context import DEAD
from tensorweave.runtime.executor_tables import build_run_tables


class NodeItem:
    """A node's row in the executor tables.

    Rows are written only while `compile_partition` builds them (here and in
    executor_tables.py, which it calls) and never after it returns: every step, and every
    executor strategy, reads the same rows. What a plan learns while it runs (priorities,
    which kernels split their work) lives beside the rows, in plan_learning.PlanLearning.
    A plain class with __slots__ rather than a frozen one: attribute reads on the hot path
    stay plain slot reads."""

    __slots__ = ("id", "name", "op", "compute", "kernel_call", "num_inputs", "input_start",
                 "out_edges", "num_outputs", "pending_init", "num_data_inputs", "control_flow",
                 "frame_name", "is_constant_enter", "parallel_iterations", "expensive",
                 "deref_inputs", "is_sink", "is_transfer",
                 # run-time rows (executor_tables.py): the node's kind, its local id and input
                 # slots in its frame's layout, its edges as tuples, and constant outputs
                 "kind", "local_id", "slot", "slot_end", "plain_edges", "merge_edges",
                 "dead_outputs", "cleared_inputs", "fetch_index")

    def __init__(self, node_id: int, name: str, op: Optional[Operation]) -> None:
        self.id = node_id
        self.name = name
        self.op = op
        self.compute: Compute = _no_kernel
        self.kernel_call = KernelCall.PLAIN
        self.num_inputs = 0
        self.input_start = 0
        # (destination node id, source output index, destination input index or -1 for control)
        self.out_edges: list[tuple[int, int, int]] = []
        self.num_outputs = 0
        self.pending_init = 0
        self.num_data_inputs = 0
        self.control_flow: Optional[ControlFlowKind] = None
        self.frame_name = ""
        self.is_constant_enter = False
        self.parallel_iterations = 10
        self.expensive = False
        self.deref_inputs: tuple[int, ...] = ()
        self.is_sink = False
        self.is_transfer = False  # Send/Recv: run even when dead, to carry the deadness across
        self.kind = 0
        self.local_id = node_id
        self.slot = self.slot_end = 0
        self.plain_edges: tuple[Edge, ...] = ()
        self.merge_edges: tuple[Edge, ...] = ()
        self.dead_outputs: tuple[Any, ...] = ()
        self.cleared_inputs: list[None] = []
        self.fetch_index = -1

    @property
    def is_async(self) -> bool:
        """Called as compute(step, done, *inputs) (not for hot paths: kinds say it there)."""
        return self.kernel_call is KernelCall.ASYNC


# An output edge in the run-time rows: (destination row, destination local id, destination
# input slot or -1 for a control edge, source output index).
Edge = tuple["NodeItem", int, int, int]


def _no_kernel(*args: Any) -> Any:
    raise errors.InternalError(None, None, "node has no kernel")


@dataclasses.dataclass(frozen=True)
class CompileOptions:
    """Everything that decides how a partition is compiled and run, fixed before compiling
    (nothing rewrites the rows afterwards).

    - `synchronous_receives`: the step runs its partitions one after the other, senders
      first, so every Recv finds its value already sent: Recv is compiled as a synchronous
      kernel (StepPlan decides this).
    - `single_partition`: the partition is the whole step, so a sequential run may wait for
      an asynchronous kernel by handing the step to the dataflow executor.
    - `inter_op_threads`: ConfigProto's inter_op_parallelism_threads (1: no inter-op
      parallelism, so independent expensive kernels never call for the dataflow executor).
    - `force_strategy`: a test hook (executor_choice.ExecutorStrategy): run with this
      strategy wherever it can run the partition."""

    synchronous_receives: bool = False
    single_partition: bool = True
    inter_op_threads: int = 0
    expensive_threshold: float = 4e5
    force_strategy: Optional[Any] = None


class PartitionTables:
    """Everything a step needs to run one partition: the node rows and the frame layouts
    (executor_tables.py), written once by compile_partition."""

    def __init__(self) -> None:
        self.items: list[NodeItem] = []
        self.total_inputs = 0
        self.roots: list[int] = []
        self.root_items: list[NodeItem] = []
        self.fetch_items: list[int] = []       # sink node id per fetch
        self.fetch_indices: list[int] = []     # each fetch's index among the plan's fetches
        self.num_fetches = 0
        self.enter_counts: dict[str, int] = {}  # frame name -> number of Enter nodes
        self.has_control_flow = False  # Switch, Merge, ControlTrigger or a loop primitive
        self.has_loops = False         # Enter, Exit, NextIteration or LoopCond
        self.has_async = False
        self.has_transfers = False
        self.num_expensive = 0
        # frame layouts (executor_tables.build_run_tables)
        self.per_frame_layouts = False
        self.root_layout: Any = None
        self.layouts: dict[str, Any] = {}

    def layout(self, frame_name: str) -> Any:
        return self.layouts.get(frame_name, self.root_layout)


class KernelCache:
    """Kernels are built once per (session, node, device) and reused by every plan, so stateful
    kernels (random generators) keep their state across plans, as TF's do. Nodes the partitioner
    adds (Send, Recv, control loops) belong to one plan and get fresh kernels."""

    def __init__(self, session_state: Any = None) -> None:
        self._kernels: dict[tuple[int, str], Compute] = {}
        self.session_state = session_state
        # Two threads compiling plans at once (queue runners and the main loop) must share one
        # kernel per node: a stateful kernel (a queue) built twice would be two queues.
        self._build_lock = threading.RLock()

    def get(self, op: Operation, device: Any) -> Compute:
        key = (id(op), device.name)
        compute = self._kernels.get(key)
        if compute is None:
            with self._build_lock:
                compute = self._kernels.get(key)
                if compute is None:
                    compute = self._kernels[key] = build_kernel(op, device, self.session_state)
        return compute

    def for_node(self, node: PNode) -> Compute:
        op = node.op
        if node.is_synthetic:
            return build_kernel(op, node.device, self.session_state)
        if type(op) is RewrittenOperation:
            # A plan's rewritten copy (grappler): the user op's kernel when only its wiring
            # changed (a stateful kernel keeps its state), else one for this plan alone.
            if op.origin is not None:
                return self.get(op.origin, node.device)
            return build_kernel(op, node.device, self.session_state)
        # an inlined body node shares its body node's kernel (and state) with the sub-step
        return self.get(op.body_op if isinstance(op, InlinedOp) else op, node.device)


def build_kernel(op: Operation, device: Any, session_state: Any = None) -> Compute:
    dtype = kernel_dtype(op)
    kdef = op.op_def.find_kernel(device.device_type, dtype)
    if kdef is None:
        raise errors.NotFoundError(
            None, op, f"No registered '{op.type}' OpKernel for {device.device_type} devices "
            f"compatible with node {op.name} (T={getattr(dtype, 'name', dtype)})")
    return kdef.build(KernelContext(op, device, session_state))


def _deref_wrapper(compute: Compute, positions: tuple[int, ...], op: Operation,
                   offset: int) -> Compute:
    """Reference inputs feeding non-reference arguments are read (TF's automatic dereference).
    A transfer node may see a dead input here (it runs to send the deadness on)."""

    def run(*args: Any) -> Any:
        values = list(args)
        for p in positions:
            value = values[p + offset]
            if value is not DEAD:
                values[p + offset] = value.read(op)
        return compute(*values)

    run.unwrapped = compute  # type: ignore[attr-defined]  # generated code reads inline (plan_codegen)
    return run


TRANSFER_TYPES = ("_Send", "_Recv")


def is_expensive(node: PNode, threshold: float) -> bool:
    """Whether a node's kernel is worth a pool thread when other work is ready."""
    op_def = node.op_def
    return op_def is not None and op_def.expensive and static_flops(node.op) >= threshold


def compile_partition(nodes: Sequence[PNode], device: Any, kernel_for: Callable[[PNode], Compute],
                      fetches: Sequence[tuple[int, Endpoint]],
                      options: CompileOptions = CompileOptions()) -> PartitionTables:
    """`nodes` are one partition's nodes (partition.py), all placed on `device`; feed nodes
    yield fed values; each fetched endpoint (with its index among the plan's fetches) gets a
    pseudo sink node. The one compilation of a partition: the rows it returns are final."""
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
        _fill_item(item, node, kernel_for, tables, options)
        for i, (src, port) in enumerate(node.inputs):
            items[node_of[id(src)]].out_edges.append((item.id, port, i))
        for c in node.control_inputs:
            items[node_of[id(c)]].out_edges.append((item.id, 0, -1))
        num_controls = len(node.control_inputs)
        if item.control_flow == ControlFlowKind.MERGE:
            item.pending_init = (num_controls << 1) | 1  # controls count 2 each; bit 0: no live input yet
        else:
            item.pending_init = item.num_inputs + num_controls
    for fetch_index, (src, port) in fetches:
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
        tables.fetch_indices.append(fetch_index)
    tables.num_fetches = len(tables.fetch_items)
    tables.total_inputs = offset
    merge = ControlFlowKind.MERGE
    tables.roots = [it.id for it in items if it.pending_init == 0 and it.control_flow != merge]
    tables.roots += [it.id for it in items if it.control_flow == merge and it.pending_init == 1
                     and it.num_data_inputs == 0]
    build_run_tables(tables)
    return tables


_LOOP_KINDS = (ControlFlowKind.ENTER, ControlFlowKind.EXIT, ControlFlowKind.NEXT_ITERATION,
               ControlFlowKind.LOOP_COND)


def _deref_positions(node: PNode, op: Operation) -> tuple[int, ...]:
    """The inputs where a reference feeds an argument that takes a value."""
    arg_is_ref = ref_argument_flags(op)
    return tuple(i for i, (src, port) in enumerate(node.inputs)
                 if src.output_dtypes[port].is_ref_dtype and not arg_is_ref[i])


def _fill_item(item: NodeItem, node: PNode, kernel_for: Callable[[PNode], Compute],
               tables: PartitionTables, options: CompileOptions) -> None:
    """A node's kernel, calling convention, arity and flags."""
    item.num_inputs = item.num_data_inputs = len(node.inputs)
    item.num_outputs = len(node.output_dtypes)
    if node.feed_index is not None:
        item.compute = _feed_kernel(node.feed_index)
        item.kernel_call = KernelCall.STEP
        return
    op = node.op
    op_def = op.op_def
    item.control_flow = op_def.control_flow
    call = op_def.kernel_call
    item.is_transfer = op_def.name in TRANSFER_TYPES
    item.expensive = is_expensive(node, options.expensive_threshold)
    if op_def.control_flow is None:
        compute = kernel_for(node)
        deref = _deref_positions(node, op)
        if deref:
            compute = _deref_wrapper(compute, deref, op, call.leading_args)
        if item.is_transfer and call is KernelCall.ASYNC and options.synchronous_receives:
            compute, call = _synchronous(compute, op), KernelCall.STEP
        item.compute = compute
        item.deref_inputs = deref
    else:
        tables.has_control_flow = True
        tables.has_loops |= op_def.control_flow in _LOOP_KINDS
        # A reference (a branch's assign_add) reaching a Merge, Switch or loop primitive that
        # takes values is read there, as TF's executor dereferences any non-reference input.
        item.deref_inputs = _deref_positions(node, op)
        if op_def.control_flow == ControlFlowKind.ENTER:
            item.frame_name = op._get_attr("frame_name")
            item.is_constant_enter = op._get_attr("is_constant")
            item.parallel_iterations = op._get_attr("parallel_iterations")
            tables.enter_counts[item.frame_name] = tables.enter_counts.get(item.frame_name, 0) + 1
    item.kernel_call = call
    tables.has_async |= call is KernelCall.ASYNC
    tables.has_transfers |= item.is_transfer
    tables.num_expensive += item.expensive


def _synchronous(recv: Compute, op: Operation) -> Compute:
    """A Recv whose value is always sent before it runs (CompileOptions.synchronous_receives):
    a synchronous kernel that takes the value from the rendezvous at once."""
    def receive_now(step: StepView) -> Any:
        box: list[Any] = []
        recv(step, box.append)
        if not box:
            raise errors.InternalError(None, op, f"{op.name}: value not sent before its receiver ran")
        if isinstance(box[0], BaseException):
            raise box[0]
        return box[0]
    return receive_now


def _identity(x: Any) -> Any:
    return x


def _feed_kernel(index: int) -> Compute:
    def feed(step: StepView) -> Any:
        return step.feeds[index]
    return feed


def _is_ref_read(item: NodeItem) -> bool:
    op = item.op
    return (op is not None and item.deref_inputs != () and op.type == "Identity" and not item.is_sink
            and item.control_flow is None)


def topological_order(tables: PartitionTables) -> list[int]:
    """A valid execution order (of one iteration, in a loop); Sends go as early as they can,
    since another device may be waiting for them.

    Ready nodes run first in, first out, as in TF's executor (its inline ready queue): nodes made
    ready together run before what they make ready, so a gradient that reads a weight runs
    before the update of another weight that became ready with it. A read of a reference
    variable (`Variable/read`, an Identity of the ref) runs just before its first consumer: in
    TF1 that read aliases the variable's buffer, so what its consumers see is the value when
    they run, and an update ordered before them (a function's assign, a control dependency)
    shows."""
    items = tables.items
    # In-degrees (a Merge's pending count is not one), without loops' back edges.
    pending = [0] * len(items)
    back_edge = ControlFlowKind.NEXT_ITERATION
    for it in items:
        if it.control_flow != back_edge:
            for dst, _, _ in it.out_edges:
                pending[dst] += 1
    order: list[int] = []
    ready = collections.deque(i for i, p in enumerate(pending) if p == 0)
    sends: list[int] = []
    deferred: dict[int, bool] = {}  # ref reads made ready, not yet placed: placed or not
    inputs_of: dict[int, list[int]] = {}  # consumer -> the deferred reads it waits for

    def release(nid: int) -> None:
        for dst, _, _ in items[nid].out_edges:
            if nid in deferred:
                inputs_of.setdefault(dst, []).append(nid)
            pending[dst] -= 1
            if pending[dst] == 0:
                (sends if items[dst].is_transfer else ready).append(dst)

    while ready or sends:
        nid = sends.pop() if sends else ready.popleft()
        if _is_ref_read(items[nid]) and nid not in deferred:
            deferred[nid] = False
            release(nid)
            continue
        for read in inputs_of.pop(nid, ()):
            if not deferred[read]:
                deferred[read] = True
                order.append(read)
        order.append(nid)
        if items[nid].control_flow == back_edge:
            continue
        release(nid)
    order.extend(read for read, placed in deferred.items() if not placed)  # reads nothing consumes
    if len(order) != len(tables.items):
        raise ValueError("Graph contains a cycle outside of a while loop")
    return order
