"""The dataflow executor (white paper 3.1, 4.4, 5.3; OSDI 3.4).

Pending counts and a ready queue drive execution: a node is ready when its count reaches zero.
Dead values: an untaken Switch output is dead, a node with a dead input produces dead outputs
without running its kernel, and a Merge fires on its first live input (or dead when all its
inputs are dead). Frames and iterations, as in the tagged-token machine: Enter moves a value
into a child frame, NextIteration into the next iteration, Exit back to the parent frame;
state lives per (frame, iteration), up to `parallel_iterations` iterations overlap, and a
frame's state is released when no work is outstanding in it.

Cheap kernels run inline on the thread that made them ready; expensive ones go to the
device's thread pool when other work is ready too. Asynchronous kernels get a `done`
continuation and hold no thread while they wait.
"""
from __future__ import annotations

import collections
import threading
from typing import Any, Optional

from tensorweave.framework import errors
from tensorweave.runtime import kernel_errors
from tensorweave.runtime.graph_compiler import NodeItem, PartitionTables
from tensorweave.runtime.step_context import DEAD, StepContext

import numpy as np


class _Nesting(threading.local):
    depth = 0


_nesting = _Nesting()
_MAX_INLINE_NESTING = 8


class IterationState:
    """Input slots, pending counts and dead counts of one iteration of one frame."""

    __slots__ = ("input_tensors", "pending", "dead_count", "outstanding_ops", "outstanding_frames")

    def __init__(self, tables: PartitionTables, pending_init: list[int]) -> None:
        self.input_tensors: list[Any] = [None] * tables.total_inputs
        self.pending = list(pending_init)
        self.dead_count = [0] * len(pending_init)
        self.outstanding_ops = 0
        self.outstanding_frames = 0


class FrameState:
    """One execution of a loop: a child frame of (parent frame, parent iteration)."""

    __slots__ = ("frame_id", "name", "parent", "parent_iter", "iterations", "iteration_count",
                 "outstanding_iterations", "max_parallel", "pending_enters", "loop_invariants",
                 "deferred_next", "dead_exits", "live_exits")

    def __init__(self, frame_id: str, name: str, parent: Optional["FrameState"], parent_iter: int,
                 max_parallel: int, pending_enters: int) -> None:
        self.frame_id = frame_id
        self.name = name
        self.parent = parent
        self.parent_iter = parent_iter
        self.iterations: dict[int, IterationState] = {}
        self.iteration_count = 0
        self.outstanding_iterations = 1
        self.max_parallel = max_parallel
        self.pending_enters = pending_enters
        self.loop_invariants: list[tuple[NodeItem, Any]] = []
        self.deferred_next: list[tuple[NodeItem, Any]] = []
        # Each Exit delivers one value to the parent: live from the last iteration, or dead
        # (when the whole loop is dead) once the frame is done.
        self.dead_exits: dict[int, NodeItem] = {}
        self.live_exits: set[int] = set()


class TaggedNode:
    __slots__ = ("item", "frame", "iteration", "is_dead")

    def __init__(self, item: NodeItem, frame: FrameState, iteration: int, is_dead: bool) -> None:
        self.item = item
        self.frame = frame
        self.iteration = iteration
        self.is_dead = is_dead


class ExecutorState:
    """One step of one partition through the dataflow executor."""

    def __init__(self, tables: PartitionTables, device: Any, step: StepContext,
                 pending_init: list[int]) -> None:
        self.tables = tables
        self.device = device
        self.step = step
        self.pending_init = pending_init
        self.lock = threading.Lock()
        self.done_event = threading.Event()
        self.num_outstanding = 0
        self.error: Optional[BaseException] = None
        self.results: list[Any] = [None] * len(tables.fetch_items)
        self.fetch_index = {nid: i for i, nid in enumerate(tables.fetch_items)}
        self.root = FrameState("", "", None, 0, 1, 0)
        self.root.iterations[0] = IterationState(tables, pending_init)
        self.frames: dict[str, FrameState] = {}
        # Small multi-partition steps continue received values on the sending thread (a thread
        # hop would cost more than the work); others on the receiving device's pool.
        self.inline_continuations = False

    # -- the run loop ---------------------------------------------------------------------------
    def start(self) -> None:
        items = self.tables.items
        root_iter = self.root.iterations[0]
        ready = [TaggedNode(items[nid], self.root, 0, False) for nid in self.tables.roots]
        root_iter.outstanding_ops = len(ready)
        self.num_outstanding = len(ready)
        if not ready:
            self.done_event.set()
            return
        self.run_ready(collections.deque(ready))

    def run_ready(self, ready: "collections.deque[TaggedNode]") -> None:
        while ready:
            tagged = ready.popleft()
            item = tagged.item
            if item.expensive and ready and not tagged.is_dead:
                # Other work is ready here: hand this kernel to the pool, keep going inline.
                self.device.thread_pool.schedule(self.run_ready, collections.deque([tagged]))
                continue
            outputs = self.process(tagged)
            if outputs is None:  # asynchronous: its continuation propagates later
                continue
            self.finish_node(tagged, outputs, ready)

    def process(self, tagged: TaggedNode) -> Optional[list[Any]]:
        """Runs the node's kernel (or control-flow rule); returns its outputs, DEAD where dead."""
        item = tagged.item
        if self.error is not None:
            return [DEAD] * item.num_outputs
        iteration = tagged.frame.iterations[tagged.iteration]
        start = item.input_start
        inputs = iteration.input_tensors[start:start + item.num_inputs]
        if item.control_flow is not None:
            return self.control_flow_outputs(tagged, inputs)
        if tagged.is_dead:
            if not item.is_transfer:
                return [DEAD] * item.num_outputs
            # Send runs to pass the deadness on; a Recv's output is dead only if what it
            # receives is (its control inputs may be dead while the value is live).
            tagged.is_dead = item.num_outputs == 0
        for i in range(item.num_inputs):
            iteration.input_tensors[start + i] = None  # the kernel owns its inputs now
        try:
            if item.is_async:
                return self.start_async(tagged, inputs)
            if item.needs_step:
                result = item.compute(self.step.at(tagged.frame.frame_id, tagged.iteration), *inputs)
            else:
                result = item.compute(*inputs)
        except Exception as err:  # noqa: BLE001  (becomes the step's error)
            self.record_error(kernel_errors.annotate(err, item.op))
            return [DEAD] * item.num_outputs
        if item.num_outputs == 1:
            return [result]
        return list(result) if item.num_outputs else []

    def start_async(self, tagged: TaggedNode, inputs: list[Any]) -> Optional[list[Any]]:
        item = tagged.item
        sync: list[Any] = []
        in_call = [True]

        def done(result: Any) -> None:
            if isinstance(result, BaseException):
                self.record_error(kernel_errors.annotate(result, item.op))
                outputs = [DEAD] * item.num_outputs
            else:
                outputs = [result] if item.num_outputs == 1 else list(result)
            if in_call[0]:
                sync.append(outputs)
                return
            continuation: collections.deque = collections.deque()
            self.finish_node(tagged, outputs, continuation)
            if continuation:
                self.resume(continuation)

        item.compute(self.step.at(tagged.frame.frame_id, tagged.iteration), done, *inputs)
        in_call[0] = False
        return sync[0] if sync else None

    def resume(self, continuation: "collections.deque[TaggedNode]") -> None:
        """Runs the work an asynchronous kernel's completion made ready."""
        if self.inline_continuations and _nesting.depth < _MAX_INLINE_NESTING:
            _nesting.depth += 1  # bounded: partitions that keep handing values back and forth
            try:
                self.run_ready(continuation)
            finally:
                _nesting.depth -= 1
        else:
            self.device.thread_pool.schedule(self.run_ready, continuation)

    def record_error(self, err: BaseException) -> None:
        with self.lock:
            if self.error is None:
                self.error = err
        self.step.cancel(err)

    # -- control flow ---------------------------------------------------------------------------
    def control_flow_outputs(self, tagged: TaggedNode, inputs: list[Any]) -> list[Any]:
        kind = tagged.item.control_flow
        if kind == "control_trigger":
            return []
        if kind == "merge":
            if tagged.is_dead:
                return [DEAD, DEAD]
            for index, value in enumerate(inputs):
                if value is not None and value is not DEAD:
                    return [value, np.int32(index)]
            return [DEAD, DEAD]
        if tagged.is_dead:
            return [DEAD] * tagged.item.num_outputs
        if kind == "switch":
            data, pred = inputs
            return [DEAD, data] if bool(pred) else [data, DEAD]
        return [inputs[0]]  # enter, exit, next_iteration and loop_cond forward their input

    # -- propagation ------------------------------------------------------------------------------
    def finish_node(self, tagged: TaggedNode, outputs: list[Any], ready: "collections.deque") -> None:
        item = tagged.item
        if item.is_sink:
            self.results[self.fetch_index[item.id]] = outputs[0]
        with self.lock:
            new_ready: list[TaggedNode] = []
            self.propagate(tagged, outputs, new_ready)
            frame, iteration = tagged.frame, tagged.iteration
            state = frame.iterations[iteration]
            state.outstanding_ops -= 1
            if not state.outstanding_ops and frame is not self.root:
                # Only an iteration whose last op just finished can let iterations be released.
                self.maybe_finish_iteration(frame, iteration, new_ready)
            self.num_outstanding += len(new_ready) - 1
            done = self.num_outstanding == 0
        ready.extend(new_ready)
        if done:
            self.done_event.set()

    def propagate(self, tagged: TaggedNode, outputs: list[Any], new_ready: list[TaggedNode]) -> None:
        item, frame, iteration = tagged.item, tagged.frame, tagged.iteration
        kind = item.control_flow
        is_dead = tagged.is_dead or (kind != "merge" and bool(outputs) and outputs[0] is DEAD
                                     and all(o is DEAD for o in outputs))
        if kind == "enter":
            child = self.find_or_create_child(frame, iteration, item)
            child.pending_enters -= 1
            if item.is_constant_enter and not is_dead:
                child.loop_invariants.append((item, outputs[0]))
                for it in list(child.iterations):
                    self.activate(item, outputs, False, child, it, new_ready)
            else:
                self.activate(item, outputs, is_dead, child, 0, new_ready)
            self.maybe_finish_iteration(child, 0, new_ready)
        elif kind == "exit":
            if is_dead:
                frame.dead_exits[item.id] = item
            else:
                frame.live_exits.add(item.id)
                self.activate(item, outputs, False, frame.parent, frame.parent_iter, new_ready)  # type: ignore[arg-type]
        elif kind == "next_iteration":
            if is_dead:
                return
            nxt = iteration + 1
            if nxt not in frame.iterations:
                if nxt <= frame.iteration_count:
                    # that iteration already finished and was released: nothing can arrive here
                    raise errors.InternalError(None, item.op, "NextIteration into a released iteration")
                if frame.outstanding_iterations >= frame.max_parallel:
                    frame.deferred_next.append((item, outputs[0]))
                    return
                self.new_iteration(frame, new_ready)
            self.activate(item, outputs, False, frame, nxt, new_ready)
        else:
            # A ControlTrigger signals live even after dead inputs (it orders ops that may not run).
            self.activate(item, outputs, bool(is_dead) and kind != "control_trigger", frame, iteration, new_ready)

    def activate(self, item: NodeItem, outputs: list[Any], is_dead: bool, frame: FrameState,
                 iteration: int, new_ready: list[TaggedNode]) -> None:
        state = frame.iterations[iteration]
        items = self.tables.items
        input_tensors, pending, dead_count = state.input_tensors, state.pending, state.dead_count
        for dst, port, dst_index in item.out_edges:
            dst_item = items[dst]
            if dst_index < 0:
                edge_dead = is_dead
            else:
                value = outputs[port] if not is_dead else DEAD
                edge_dead = value is DEAD
            if dst_item.control_flow == "merge":
                # Pending is (controls << 1) | 1: ready once every control input has arrived and
                # either one live data input has (bit 0 cleared) or every data input is dead.
                if dst_index < 0:
                    pending[dst] -= 2
                    dst_dead = dead_count[dst] == dst_item.num_data_inputs
                    ready = pending[dst] == 0 or (pending[dst] == 1 and dst_dead)
                elif not edge_dead:
                    count = pending[dst]
                    if count & 1:
                        pending[dst] = count & ~1
                        input_tensors[dst_item.input_start + dst_index] = value
                    ready, dst_dead = count == 1, False
                else:
                    dead_count[dst] += 1
                    dst_dead = (dead_count[dst] == dst_item.num_data_inputs
                                or item.control_flow == "enter")
                    ready = pending[dst] == 1 and dst_dead
                if ready:
                    state.outstanding_ops += 1
                    new_ready.append(TaggedNode(dst_item, frame, iteration, dst_dead))
                continue
            if dst_index >= 0:
                input_tensors[dst_item.input_start + dst_index] = value
            if edge_dead:
                dead_count[dst] += 1
            pending[dst] -= 1
            if pending[dst] == 0:
                state.outstanding_ops += 1
                new_ready.append(TaggedNode(dst_item, frame, iteration, dead_count[dst] > 0))

    # -- frames and iterations ------------------------------------------------------------------
    def find_or_create_child(self, frame: FrameState, iteration: int, enter: NodeItem) -> FrameState:
        frame_id = f"{frame.frame_id};{iteration};{enter.frame_name}"
        child = self.frames.get(frame_id)
        if child is None:
            child = FrameState(frame_id, enter.frame_name, frame, iteration, enter.parallel_iterations,
                               self.tables.enter_counts[enter.frame_name])
            child.iterations[0] = IterationState(self.tables, self.pending_init)
            self.frames[frame_id] = child
            frame.iterations[iteration].outstanding_frames += 1
        return child

    def new_iteration(self, frame: FrameState, new_ready: list[TaggedNode]) -> None:
        frame.iteration_count += 1
        frame.outstanding_iterations += 1
        it = frame.iteration_count
        frame.iterations[it] = IterationState(self.tables, self.pending_init)
        for enter_item, value in frame.loop_invariants:
            self.activate(enter_item, [value], False, frame, it, new_ready)

    def iteration_done(self, frame: FrameState, iteration: int) -> bool:
        state = frame.iterations.get(iteration)
        if state is None or state.outstanding_ops or state.outstanding_frames:
            return False
        if iteration == 0:
            return frame.pending_enters == 0
        return (iteration - 1) not in frame.iterations

    def maybe_finish_iteration(self, frame: FrameState, iteration: int, new_ready: list[TaggedNode]) -> None:
        """Releases finished iterations in order, starts deferred ones, and when the whole frame
        is done releases it and sends its dead Exits to the parent."""
        if frame is self.root:
            return
        it = min(frame.iterations) if frame.iterations else iteration
        while self.iteration_done(frame, it):
            del frame.iterations[it]
            frame.outstanding_iterations -= 1
            if frame.deferred_next:
                self.new_iteration(frame, new_ready)
                deferred, frame.deferred_next = frame.deferred_next, []
                for item, value in deferred:
                    self.activate(item, [value], False, frame, frame.iteration_count, new_ready)
            it += 1
        if not frame.iterations and frame.pending_enters == 0:
            self.finish_frame(frame, new_ready)

    def finish_frame(self, frame: FrameState, new_ready: list[TaggedNode]) -> None:
        parent, parent_iter = frame.parent, frame.parent_iter
        del self.frames[frame.frame_id]
        for exit_id, exit_item in frame.dead_exits.items():
            if exit_id in frame.live_exits:
                continue  # it delivered its live value in the last iteration
            self.activate(exit_item, [DEAD], True, parent, parent_iter, new_ready)  # type: ignore[arg-type]
        parent.iterations[parent_iter].outstanding_frames -= 1  # type: ignore[union-attr]
        self.maybe_finish_iteration(parent, parent_iter, new_ready)  # type: ignore[arg-type]

    # -- waiting --------------------------------------------------------------------------------
    def wait(self, timeout: Optional[float]) -> list[Any]:
        wait_until_done(self.done_event, timeout, self.record_error)
        if self.error is not None:
            raise self.error
        for i, value in enumerate(self.results):
            if value is DEAD:
                sink = self.tables.items[self.tables.fetch_items[i]]
                raise errors.InvalidArgumentError(
                    None, sink.op, f"Retval[{self.tables.fetch_indices[i]}] does not have value: fetched "
                    f"tensor {sink.name[len('_Fetch/'):]} is dead (its branch was not taken)")
        return self.results


def wait_until_done(done: threading.Event, timeout: Optional[float], record_error: Any) -> None:
    """Waits for a step (or partition) to end; past `timeout` it fails it with
    DeadlineExceededError and waits for the cancellation to take effect."""
    if not done.wait(timeout):
        record_error(errors.DeadlineExceededError(None, None, "Timed out waiting for step to finish"))
        done.wait()


class DataflowExecutor:
    def __init__(self, tables: PartitionTables, device: Any) -> None:
        self.tables = tables
        self.device = device
        self.pending_init = [it.pending_init for it in tables.items]

    def start(self, step: StepContext, state_class: type = ExecutorState) -> ExecutorState:
        """Runs the partition on this thread until it waits or finishes."""
        state = state_class(self.tables, self.device, step, self.pending_init)
        state.start()
        return state

    def launch(self, step: StepContext, state_class: type = ExecutorState) -> ExecutorState:
        """Starts the partition on its device's thread pool (partitions of a step run at once)."""
        state = state_class(self.tables, self.device, step, self.pending_init)
        self.device.thread_pool.schedule(state.start)
        return state

    def run(self, step: StepContext, timeout: Optional[float] = None) -> list[Any]:
        return self.start(step).wait(timeout)
