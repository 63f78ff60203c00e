"""The dataflow executor's run-time tables, derived once per plan from a partition's NodeItem
rows (DESIGN.md "a step's overhead is Python, so step plans are built once and each step runs
from precomputed tables").

- Node kinds: one small integer per node decides its path through the run loop, so the hot
  loop does one comparison for the common case (a cheap synchronous kernel).
- Frame layouts (white paper 4.4): every node belongs to one static frame (the root, or the
  loop an Enter names). An iteration of a frame only needs pending counts, dead counts and
  input slots for that frame's nodes, so each node gets a local id and local input slots in
  its frame's layout, and a new iteration allocates lists the size of the loop body, not of
  the whole partition. A graph whose edges do not agree on node frames (which TF rejects)
  keeps one partition-wide layout, so it behaves as before.
- Output edges as tuples of the destination's row and local slots, split into edges to
  Merge nodes (their own readiness rule) and all others.

`build_run_tables` is the last stage of graph_compiler.compile_partition: these rows are
written there, once, and read by every step.
"""
from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any, Optional

from tensorweave.framework.kernel_contract import ControlFlowKind, KernelCall
from tensorweave.runtime.step_context import DEAD

if TYPE_CHECKING:
    from tensorweave.runtime.graph_compiler import Edge, NodeItem, PartitionTables

# Node kinds. KERNEL, STEP_KERNEL, SWITCH and MERGE with live inputs are the hot path, run
# and propagated inline by the run loop; everything else goes through ExecutorState.process.
KERNEL = 0          # a cheap synchronous kernel: compute(*inputs)
STEP_KERNEL = 1     # compute(step, *inputs)
SWITCH = 2
MERGE = 3
EXPENSIVE = 4       # a kernel worth a pool thread when other work is ready
ASYNC = 5           # compute(step, done, *inputs)
TRANSFER = 6        # a synchronous Send or Recv: runs even when dead, to carry the deadness over
ASYNC_TRANSFER = 7  # an asynchronous Recv
ENTER = 8
EXIT = 9
NEXT_ITERATION = 10
CONTROL_TRIGGER = 11
SINK = 12           # a fetch: stores its input in the step's results
CHECKED_KERNEL = 13  # a cheap kernel (plain or step) that is also a cancellation checkpoint

CONTROL_FLOW_KINDS = frozenset((SWITCH, MERGE, ENTER, EXIT, NEXT_ITERATION, CONTROL_TRIGGER))
KERNEL_KINDS = frozenset((KERNEL, STEP_KERNEL, EXPENSIVE, ASYNC, CHECKED_KERNEL))  # dead inputs: not run

# Every this many cheap kernels (by node id) one is a checkpoint: the run loop's inlined path
# takes no kind above MERGE, so a long chain of cheap kernels stops at cancellation and at the
# deadline while every other kernel pays nothing for it.
CHECK_EVERY = 64

_KIND_OF_CONTROL_FLOW = {ControlFlowKind.MERGE: MERGE, ControlFlowKind.SWITCH: SWITCH,
                         ControlFlowKind.ENTER: ENTER, ControlFlowKind.EXIT: EXIT,
                         ControlFlowKind.NEXT_ITERATION: NEXT_ITERATION,
                         ControlFlowKind.CONTROL_TRIGGER: CONTROL_TRIGGER}


def _forward(x: Any) -> Any:
    return x


class FrameLayout:
    """The per-iteration state shape of one static frame: how many nodes and input slots an
    iteration of it holds, the pending counts it starts from, and the template a first
    iteration copies."""

    __slots__ = ("name", "num_nodes", "num_inputs", "pending_init", "template")

    def __init__(self, name: str) -> None:
        self.name = name
        self.num_nodes = 0
        self.num_inputs = 0
        self.pending_init: list[int] = []
        self.template: Optional[IterationTemplate] = None


class IterationTemplate:
    """What a new iteration of a frame starts from: the layout's initial pending counts, with
    the loop invariants (values of constant Enters) already delivered, and the nodes those
    invariants alone make ready. One per layout for first iterations (built here); one per
    frame execution, built by frames.FrameMachine, for later ones; copied per iteration."""

    __slots__ = ("input_tensors", "pending", "dead_count", "ready")

    def __init__(self, layout: FrameLayout) -> None:
        self.input_tensors: list[Any] = [None] * layout.num_inputs
        self.pending = layout.pending_init
        self.dead_count = [0] * layout.num_nodes
        self.ready: list[tuple[NodeItem, bool]] = []


def build_run_tables(tables: PartitionTables) -> None:
    """Node kinds, frame layouts, local slots and edge tuples for every row (called by
    compile_partition, once)."""
    frames = assign_frames(tables)
    tables.per_frame_layouts = frames is not None
    tables.root_layout, tables.layouts = _build_layouts(tables.items, frames)
    cheap = 0
    for item in tables.items:
        _set_kind(item)
        if item.kind == KERNEL or item.kind == STEP_KERNEL:
            cheap += 1
            if cheap % CHECK_EVERY == 0:
                item.kind = CHECKED_KERNEL
    _build_edges(tables.items)
    for index, nid in enumerate(tables.fetch_items):
        tables.items[nid].fetch_index = index
    tables.root_items = [tables.items[nid] for nid in tables.roots]
    for layout in [tables.root_layout, *tables.layouts.values()]:
        layout.template = IterationTemplate(layout)


def assign_frames(tables: PartitionTables) -> Optional[list[str]]:
    """The static frame of every node, found from the roots as the executor will find them at
    run time: an Enter's outputs are in the frame it names, an Exit's in its frame's parent,
    any other node's in its own frame. None when two edges disagree about a node's frame."""
    items = tables.items
    frame: list[Optional[str]] = [None] * len(items)
    parent: dict[str, str] = {}
    queue = collections.deque(tables.roots)
    for nid in tables.roots:
        frame[nid] = ""
    while queue:
        nid = queue.popleft()
        item = items[nid]
        here = frame[nid]
        if item.control_flow == ControlFlowKind.ENTER:
            out = item.frame_name
            if parent.setdefault(out, here) != here:  # type: ignore[arg-type]
                return None
        elif item.control_flow == ControlFlowKind.EXIT:
            if here not in parent:
                return None
            out = parent[here]  # type: ignore[index]
        else:
            out = here  # type: ignore[assignment]
        for dst, _, _ in item.out_edges:
            if frame[dst] is None:
                frame[dst] = out
                queue.append(dst)
            elif frame[dst] != out:
                return None
    return [f if f is not None else "" for f in frame]  # unreachable nodes never run


def _build_layouts(items: list[NodeItem], frames: Optional[list[str]]) -> tuple[FrameLayout, dict[str, FrameLayout]]:
    """Local ids and input slots per frame (one partition-wide layout when `frames` is None)."""
    root = FrameLayout("")
    layouts: dict[str, FrameLayout] = {"": root}
    for item in items:
        name = frames[item.id] if frames is not None else ""
        layout = layouts.get(name)
        if layout is None:
            layout = layouts[name] = FrameLayout(name)
        item.local_id = layout.num_nodes
        item.slot = layout.num_inputs
        item.slot_end = item.slot + item.num_inputs
        layout.num_nodes += 1
        layout.num_inputs += item.num_inputs
        layout.pending_init.append(item.pending_init)
    if frames is None:
        layouts = {}  # every frame uses the root layout
    return root, layouts


def _set_kind(item: NodeItem) -> None:
    item.dead_outputs = (DEAD,) * item.num_outputs
    item.cleared_inputs = [None] * item.num_inputs
    if item.is_sink:
        item.kind = SINK
    elif item.control_flow in _KIND_OF_CONTROL_FLOW:
        item.kind = _KIND_OF_CONTROL_FLOW[item.control_flow]  # type: ignore[index]
    elif item.control_flow == ControlFlowKind.LOOP_COND:
        # LoopCond forwards its input, dead or live: a cheap kernel, as far as the loop goes.
        item.kind, item.compute = KERNEL, _forward
    elif item.is_transfer:
        item.kind = ASYNC_TRANSFER if item.kernel_call is KernelCall.ASYNC else TRANSFER
    elif item.kernel_call is KernelCall.ASYNC:
        item.kind = ASYNC
    elif item.expensive:
        item.kind = EXPENSIVE
    else:
        item.kind = KERNEL if item.kernel_call is KernelCall.PLAIN else STEP_KERNEL


def _build_edges(items: list[NodeItem]) -> None:
    """Each output edge as (destination row, destination local id, destination input slot or
    -1 for a control edge, source output index), in the destination's frame layout."""
    for item in items:
        plain: list[Edge] = []
        merges: list[Edge] = []
        for dst, port, dst_index in item.out_edges:
            dst_item = items[dst]
            slot = dst_item.slot + dst_index if dst_index >= 0 else -1
            edge = (dst_item, dst_item.local_id, slot, port)
            (merges if dst_item.control_flow == ControlFlowKind.MERGE else plain).append(edge)
        item.plain_edges = tuple(plain)
        item.merge_edges = tuple(merges)
