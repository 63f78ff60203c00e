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

A step's overhead is Python, so the run loop works from precomputed tables
(executor_tables.py): each node's kind picks its path with one comparison, a tagged node is
a plain tuple (node row, iteration state, is_dead), and an iteration holds slots only for
its own frame's nodes (frames.py). The step's lock is taken only while more than one thread
may touch its tables (`runners`); a step run by one thread propagates without it.

Cancellation and deadlines (StepContext.interrupted) are looked at when a thread takes work
(run_ready), before each expensive kernel, at every loop iteration (NextIteration, Exit) and
at one cheap kernel in CHECK_EVERY (executor_tables.CHECKED_KERNEL): never per cheap kernel,
so a step without a deadline pays nothing measurable. A step found interrupted records its
error and drains as a failed step does (every node after is dead).

The rules for Switch, Merge, dead values and edge propagation are control_flow_semantics.py's;
an ExecutorState has a FrameMachine (frames.py) when its partition has loops and an
ExpensiveKernels (kernel_scheduling.py) when it has expensive kernels. A traced step
(FULL_TRACE) runs in a TracingExecutorState: the same executor, watching every node.
"""
from __future__ import annotations

import collections
import threading
from typing import Any, Callable, Optional

from tensorweave.framework import errors
from tensorweave.framework.kernel_contract import KernelCall
from tensorweave.runtime import kernel_errors
from tensorweave.runtime.device import Device
from tensorweave.runtime.control_flow_semantics import (TaggedNode, activate, activate_merges,
                                                        control_flow_outputs, merge_outputs,
                                                        read_references,
                                                        outputs_are_dead)
from tensorweave.runtime.executor_tables import (
    ASYNC, ASYNC_TRANSFER, CHECKED_KERNEL, CONTROL_FLOW_KINDS, CONTROL_TRIGGER, ENTER, EXIT, EXPENSIVE,
    KERNEL, KERNEL_KINDS, MERGE, NEXT_ITERATION, SINK, SWITCH, TRANSFER)
from tensorweave.runtime.frames import FrameMachine, FrameState, IterationState
from tensorweave.runtime.graph_compiler import NodeItem, PartitionTables
from tensorweave.runtime.kernel_scheduling import ExpensiveKernels
from tensorweave.runtime.plan_learning import PlanLearning
from tensorweave.runtime.step_context import DEAD, StepContext, deadline_exceeded
from tensorweave.runtime.step_stats import StepTracer, consumers_per_output
from tensorweave.runtime.thread_pool import CallerHelp, Continuation, Wakeup

RETURNED = object()  # marks that an asynchronous kernel's call returned before its `done`


class _Nesting(threading.local):
    depth = 0


_nesting = _Nesting()
_MAX_INLINE_NESTING = 8


class ExecutorState:
    """One step of one partition through the dataflow executor."""

    def __init__(self, executor: DataflowExecutor, step: StepContext) -> None:
        tables = executor.tables
        self.tables = tables
        self.device = executor.device
        self.step = step
        self.lock = threading.Lock()
        self.done_event: Optional[Wakeup] = None  # created only if someone must wait
        self.finished = False
        self.num_outstanding = 0
        self.error: Optional[BaseException] = None
        # Threads that may touch this step's tables: each thread in a run loop of this state,
        # and each asynchronous kernel still to call `done`, holds one count. A thread that
        # holds the only count propagates without the lock: nobody else can start running
        # this step's nodes except through it.
        self.runners = 1
        self.results: list[Any] = [None] * tables.num_fetches
        self.root = FrameState("", "", None, tables.root_layout, 1, 0)
        self.root_state = self.root.iterations[0] = IterationState(tables.root_layout.template, self.root, 0, step)
        # Small multi-partition steps continue received values on the sending thread (a thread
        # hop would cost more than the work); others on the receiving device's pool.
        self.inline_continuations = False
        # Multi-partition steps on the threaded path: continuations go to the caller's thread
        # (which would otherwise only wait), and to the pool where they may be expensive.
        self.helpers: Optional[CallerHelp] = None
        self.frames: FrameMachine = FrameMachine(tables, self.root) if tables.has_loops else None  # type: ignore[assignment]
        self.expensive: ExpensiveKernels = (ExpensiveKernels(self, executor.learning)  # type: ignore[assignment]
                                            if tables.num_expensive else None)

    # -- the run loop ---------------------------------------------------------------------------
    def start(self) -> None:
        root_state = self.root_state
        ready = collections.deque([(item, root_state, False) for item in self.tables.root_items])
        root_state.outstanding_ops = self.num_outstanding = len(ready)
        if not ready:
            self.runners = 0
            self.complete()
            return
        self.run_ready(ready)

    def run_ready(self, ready: "collections.deque[TaggedNode]") -> None:
        """Runs ready nodes until none is left here; the calling thread holds a runner count,
        released at the end."""
        try:
            if self.error is None:
                self.checkpoint(None)
            self.run_nodes(ready)
        finally:
            self.release_runner()

    def run_nodes(self, ready: "collections.deque[TaggedNode]") -> None:
        """Cheap synchronous kernels, Switches and Merges with live inputs (most nodes) run
        inline, and when this thread runs the step alone they propagate their outputs inline
        too; every other node goes through `process` and `finish_node`."""
        popleft = ready.popleft
        while ready:
            # No earlier node's outputs stay referenced here while a kernel runs: a kernel may
            # write into an input nothing else holds (ops/buffer_forwarding.py).
            result = outputs = value = None
            tagged = popleft()
            item, state, is_dead = tagged
            kind = item.kind
            if kind > MERGE or is_dead or self.error is not None:
                self.run_other(tagged, ready)
                continue
            inputs = state.input_tensors
            start, end = item.slot, item.slot_end
            args = inputs[start:end]
            inputs[start:end] = item.cleared_inputs  # the kernel owns its inputs now
            if kind == SWITCH or kind == MERGE:
                if item.deref_inputs:
                    read = self.read_references(tagged, args, ready)
                    if read is None:
                        continue
                    args = read
                outputs = ((DEAD, args[0]) if args[1] else (args[0], DEAD)) if kind == SWITCH \
                    else merge_outputs(args)  # switch_outputs, inlined
            else:
                try:
                    if kind == KERNEL:
                        result = item.compute(*args)
                    else:
                        result = item.compute(state.step_view or self.step_view(state), *args)
                except Exception as err:  # noqa: BLE001  (becomes the step's error)
                    self.record_error(kernel_errors.annotate(err, item.op))
                    self.finish_node(tagged, item.dead_outputs, ready)
                    continue
                n = item.num_outputs
                outputs = (result,) if n == 1 else tuple(result) if n else ()
            if self.runners != 1:
                with self.lock:
                    self.propagate_live(item, state, outputs, ready)
                continue
            # control_flow_semantics.activate for live outputs, inlined: this thread runs the
            # step alone, so no lock
            before = len(ready)
            pending, dead_count = state.pending, state.dead_count
            for dst_item, dst, slot, port in item.plain_edges:
                if slot >= 0:
                    value = inputs[slot] = outputs[port]
                    if value is DEAD:  # an untaken Switch output
                        dead_count[dst] += 1
                count = pending[dst] - 1
                pending[dst] = count
                if not count:
                    ready.append((dst_item, state, dead_count[dst] > 0))
            if item.merge_edges:
                activate_merges(item, outputs, False, state, ready)
            added = len(ready) - before - 1
            state.outstanding_ops += added
            if not state.outstanding_ops and state.frame is not self.root:
                self.finish_iteration_work(state, ready, before)
            elif added:
                self.num_outstanding += added
                if not self.num_outstanding:
                    self.complete()

    def run_other(self, tagged: TaggedNode, ready: "collections.deque[TaggedNode]") -> None:
        """A node off the inlined path: control flow but Switch and Merge, dead, asynchronous,
        expensive, a transfer or a fetch, or any node once the step has failed."""
        item, state, is_dead = tagged
        kind = item.kind
        if kind == NEXT_ITERATION or kind == EXIT:
            self.run_loop_edge(item, state, is_dead, ready)
        elif kind == EXPENSIVE and not is_dead and self.error is None and not self.checkpoint(None):
            self.expensive.run_expensive(tagged, ready)  # kernel_scheduling.py
        else:
            if kind == CHECKED_KERNEL and self.error is None:
                self.checkpoint(None)
            outputs = self.process(tagged)
            if outputs is not None:  # None: asynchronous, its continuation propagates later
                self.finish_node(tagged, outputs, ready)

    def read_references(self, tagged: TaggedNode, args: list[Any],
                        ready: "collections.deque[TaggedNode]") -> Optional[list[Any]]:
        """A control-flow node's reference inputs read as values (control_flow_semantics.py);
        None when a read failed (an uninitialized variable): the node has finished dead."""
        item = tagged[0]
        try:
            return read_references(item, args)
        except Exception as err:  # noqa: BLE001  (becomes the step's error)
            self.record_error(kernel_errors.annotate(err, item.op))
            self.finish_node(tagged, item.dead_outputs, ready)
            return None

    def run_loop_edge(self, item: NodeItem, state: IterationState, is_dead: bool,
                      ready: "collections.deque[TaggedNode]") -> None:
        """NextIteration and Exit (each runs once per iteration): `process` and `finish_node`
        for them, without the checks they do not need."""
        inputs = state.input_tensors
        value = inputs[item.slot]
        inputs[item.slot:item.slot_end] = item.cleared_inputs
        if item.deref_inputs and not is_dead and self.error is None:
            try:
                value = read_references(item, [value])[0]
            except Exception as err:  # noqa: BLE001  (becomes the step's error)
                self.record_error(kernel_errors.annotate(err, item.op))
        if self.error is None and not is_dead:
            self.checkpoint(item)
        if is_dead or self.error is not None:
            outputs, is_dead = item.dead_outputs, True
        else:
            outputs = (value,)
        if self.runners != 1:
            with self.lock:
                self.propagate(item, outputs, is_dead, state, ready)
            return
        before = len(ready)
        if item.kind == EXIT:
            self.frames.propagate_exit(item, outputs, is_dead, state, ready)
        elif not is_dead:
            self.frames.propagate_next_iteration(item, outputs, False, state, ready)
        state.outstanding_ops -= 1
        self.finish_iteration_work(state, ready, before)

    def checkpoint(self, loop_edge: Optional[NodeItem]) -> bool:
        """Whether the step is cancelled or past its deadline; if so, records its error (at a
        loop edge a cancellation as TF's "Loop execution was cancelled." naming the node)."""
        err = self.step.interrupted()
        if err is None:
            return False
        if loop_edge is not None and isinstance(err, errors.CancelledError):
            op = loop_edge.op
            err = errors.CancelledError(None, op, "Loop execution was cancelled." + errors.node_context(op))
        self.record_error(err)
        return True

    def add_runner(self) -> None:
        if self.runners == 1:
            self.runners = 2  # the caller holds the only count: nobody else can change it
        else:
            with self.lock:
                self.runners += 1

    def release_runner(self) -> None:
        if self.runners == 1:
            self.runners = 0
        else:
            with self.lock:
                self.runners -= 1

    def complete(self) -> None:
        """No node is ready or running any more: wake the waiter, if there is one.

        Called with or without the lock held (the last propagation may run under it while
        another thread still holds a runner count, e.g. a Session.close aborting the
        rendezvous), so it takes no lock: `finished` is written before `done_event` is read,
        and `wait` reads `finished` again after publishing its event, so one of the two sees
        the other."""
        self.finished = True
        event = self.done_event
        if event is not None:
            event.set()

    def process(self, tagged: TaggedNode) -> Optional[tuple]:
        """Runs any node's kernel (or control-flow rule); returns its outputs, DEAD where dead,
        or None when an asynchronous kernel will finish later."""
        item, state, is_dead = tagged
        kind = item.kind
        if self.error is not None or (is_dead and kind in KERNEL_KINDS):
            # A node that does not run lets go of its live inputs too (a loop invariant in a
            # dead iteration, a value sent into an untaken branch): the iteration may live on.
            state.input_tensors[item.slot:item.slot_end] = item.cleared_inputs
            return item.dead_outputs
        inputs = state.input_tensors
        args = inputs[item.slot:item.slot_end]
        inputs[item.slot:item.slot_end] = item.cleared_inputs
        if kind in CONTROL_FLOW_KINDS:
            if not item.deref_inputs:
                return control_flow_outputs(item, args, is_dead)
            try:
                return control_flow_outputs(item, args, is_dead)
            except Exception as err:  # noqa: BLE001  (a reference read failed: the step's error)
                self.record_error(kernel_errors.annotate(err, item.op))
                return item.dead_outputs
        # Transfers run even when dead: Send passes the deadness on, and a Recv's output is dead
        # only if what it receives is (its control inputs may be dead while the value is live).
        if kind == SINK:
            return (args[0],)  # finish_node stores it in the results
        try:
            if kind == ASYNC or kind == ASYNC_TRANSFER:
                return self.start_async(tagged, args)
            if kind == KERNEL or ((kind == EXPENSIVE or kind == CHECKED_KERNEL) and
                                  item.kernel_call is KernelCall.PLAIN):
                result = item.compute(*args)
            else:
                result = item.compute(state.step_view or self.step_view(state), *args)
        except Exception as err:  # noqa: BLE001  (becomes the step's error)
            self.record_error(kernel_errors.annotate(err, item.op))
            return item.dead_outputs
        n = item.num_outputs
        return (result,) if n == 1 else tuple(result) if n else ()

    def step_view(self, state: IterationState) -> StepContext:
        """The step as kernels running in this (frame, iteration) see it; one per iteration."""
        view = state.step_view
        if view is None:
            view = state.step_view = self.step.at(state.frame.frame_id, state.iteration)
        return view

    def start_async(self, tagged: TaggedNode, args: list[Any]) -> Optional[tuple]:
        """Calls an asynchronous kernel. If its `done` runs before the call returns (the value
        was ready) the outputs are returned here and the run loop goes on; otherwise `done`
        propagates them later, on whichever thread calls it. Until then the kernel holds a
        runner count."""
        item, state, _ = tagged
        box: list[Any] = []  # appends are atomic: whichever of call and `done` comes first wins

        def done(result: Any) -> None:
            box.append(result)
            if box[0] is RETURNED:
                self.finish_async(tagged, result)
            # otherwise it completed during the call: the caller takes the result

        self.add_runner()
        try:
            item.compute(state.step_view or self.step_view(state), done, *args)
        except BaseException:
            self.release_runner()
            raise
        box.append(RETURNED)
        first = box[0]
        if first is RETURNED:
            return None
        self.release_runner()
        return self.async_outputs(item, first)

    def async_outputs(self, item: NodeItem, result: Any) -> tuple:
        """What an asynchronous kernel passed to `done`: its outputs, or an exception."""
        if isinstance(result, BaseException):
            self.record_error(kernel_errors.annotate(result, item.op))
            return item.dead_outputs
        return (result,) if item.num_outputs == 1 else tuple(result)

    def finish_async(self, tagged: TaggedNode, result: Any) -> None:
        """An asynchronous kernel completed after its call returned: propagates its outputs on
        this thread, which takes over the kernel's runner count."""
        continuation: collections.deque[TaggedNode] = collections.deque()
        try:
            self.finish_node(tagged, self.async_outputs(tagged[0], result), continuation)
        finally:
            if continuation:
                self.resume(continuation)
            else:
                self.release_runner()

    def take_over(self, executed: list[tuple[NodeItem, tuple, bool]], waiting: NodeItem,
                  not_run: Callable[[NodeItem], bool]) -> "collections.deque[TaggedNode]":
        """Continues a step the sequential interpreter began: it ran `executed` (in order, each
        with its outputs and whether it was dead) and then called `waiting`, an asynchronous
        kernel that has not completed. Delivers those outputs as the run loop would have and
        returns the nodes now ready; `not_run(item)` tells which of them the interpreter has
        not run. The caller runs them (run_ready), and hands the kernel's completion to
        `finish_async((waiting, root_state, False), result)`."""
        root = self.root_state
        made_ready: collections.deque[TaggedNode] = collections.deque(
            [(item, root, False) for item in self.tables.root_items])
        for item, outputs, is_dead in executed:
            activate(item, outputs, is_dead, root, made_ready)
        # The nodes already run (and the waiting one) will not take the inputs just delivered
        # to them: drop those, or they would live until the step ends.
        inputs = root.input_tensors
        for item in [entry[0] for entry in executed] + [waiting]:
            inputs[item.slot:item.slot_end] = item.cleared_inputs
        ready = collections.deque(t for t in made_ready if t[0] is not waiting and not_run(t[0]))
        root.outstanding_ops = self.num_outstanding = len(ready) + 1
        self.runners = 2  # this thread, and the waiting kernel
        return ready

    def resume(self, continuation: "collections.deque[TaggedNode]") -> None:
        """Runs the work an asynchronous kernel's completion made ready (the caller's runner
        count goes with it)."""
        if self.inline_continuations and _nesting.depth < _MAX_INLINE_NESTING:
            _nesting.depth += 1  # bounded: partitions that keep handing values back and forth
            try:
                self.run_ready(continuation)
            finally:
                _nesting.depth -= 1
        elif self.helpers is not None:
            task = Continuation(self.run_ready, continuation)
            self.helpers.post(task)
            if self.tables.num_expensive:
                # Work worth a thread of its own: a pool thread may start it before the caller.
                self.device.thread_pool.schedule(task.run)
        else:
            self.device.thread_pool.schedule(self.run_ready, continuation)

    def record_error(self, err: BaseException) -> None:
        with self.lock:
            if self.error is None:
                self.error = err
        self.step.cancel(err)

    # -- propagation ------------------------------------------------------------------------------
    def propagate_live(self, item: NodeItem, state: IterationState, outputs: tuple,
                       ready: "collections.deque[TaggedNode]") -> None:
        """Propagation for the common case, under the lock: a live node in `state` (a kernel, a
        Switch or a Merge) produced its outputs; its consumers are in the same iteration."""
        before = len(ready)
        activate(item, outputs, False, state, ready)
        state.outstanding_ops -= 1
        self.finish_iteration_work(state, ready, before)

    def finish_iteration_work(self, state: IterationState, ready: "collections.deque", before: int) -> None:
        """After a node of `state` propagated (adding nodes to `ready` past `before`): releases
        the iteration if that was its last op, and counts the step's outstanding nodes."""
        if not state.outstanding_ops and state.frame is not self.root:
            # Only an iteration whose last op just finished can let iterations be released.
            self.frames.maybe_finish_iteration(state.frame, state.iteration, ready)
        self.num_outstanding += len(ready) - before - 1
        if not self.num_outstanding:
            self.complete()

    def finish_node(self, tagged: TaggedNode, outputs: tuple, ready: "collections.deque") -> None:
        """Propagation for any node: deadness, the control-flow rules, iteration and frame ends."""
        item, state, is_dead = tagged
        kind = item.kind
        if kind == SINK:
            self.results[item.fetch_index] = outputs[0]
        if is_dead and (kind == TRANSFER or kind == ASYNC_TRANSFER) and item.num_outputs:
            is_dead = False  # a Recv ran: its output tells whether the value was dead
        if not is_dead and kind != MERGE and outputs_are_dead(outputs):
            is_dead = True
        if self.runners == 1:  # this thread runs the step alone
            self.propagate(item, outputs, is_dead, state, ready)
        else:
            with self.lock:
                self.propagate(item, outputs, is_dead, state, ready)

    def propagate(self, item: NodeItem, outputs: tuple, is_dead: bool, state: IterationState,
                  ready: "collections.deque") -> None:
        before = len(ready)
        kind = item.kind
        if kind == ENTER:
            self.frames.propagate_enter(item, outputs, is_dead, state, ready)
        elif kind == EXIT:
            self.frames.propagate_exit(item, outputs, is_dead, state, ready)
        elif kind == NEXT_ITERATION:
            self.frames.propagate_next_iteration(item, outputs, is_dead, state, ready)
        else:
            # A ControlTrigger signals live even after dead inputs (it orders ops that may not run).
            activate(item, outputs, is_dead and kind != CONTROL_TRIGGER, state, ready)
        state.outstanding_ops -= 1
        self.finish_iteration_work(state, ready, before)

    # -- waiting --------------------------------------------------------------------------------
    def wait(self, timeout: Optional[float]) -> list[Any]:
        if not self.finished:
            with self.lock:
                if not self.finished and self.done_event is None:
                    self.done_event = Wakeup()
                event = None if self.finished else self.done_event
            if event is not None:
                wait_until_done(event, timeout, self.record_error)
        if self.error is not None:
            raise self.error
        for i, value in enumerate(self.results):
            if value is DEAD:
                raise dead_fetch_error(self.tables, i)
        return self.results


def dead_fetch_error(tables: PartitionTables, i: int) -> errors.OpError:
    """The error for fetching a value whose branch was not taken (the partition's `i`th fetch)."""
    sink = tables.items[tables.fetch_items[i]]
    return errors.InvalidArgumentError(
        None, sink.op, f"Retval[{tables.fetch_indices[i]}] does not have value: fetched "
        f"tensor {sink.name[len('_Fetch/'):]} is dead (its branch was not taken)")


def wait_until_done(done: Wakeup, timeout: Optional[float],
                    record_error: Callable[[BaseException], None]) -> None:
    """Waits for a step (or partition) to end; past `timeout` it fails it with
    DeadlineExceededError and waits for the cancellation to take effect."""
    if not done.wait(timeout):
        record_error(deadline_exceeded())
        done.wait()


class TracingExecutorState(ExecutorState):
    """The tracing hook of the dataflow executor (FULL_TRACE steps): reports each node's time
    and outputs and the live bytes it holds (step_stats.StepTracer). Every node goes through
    `process` and `finish_node` (no inlined fast path)."""

    def __init__(self, executor: DataflowExecutor, step: StepContext) -> None:
        super().__init__(executor, step)
        tracer = step.stats
        assert tracer is not None  # new_state: only for traced steps
        self.tracer: StepTracer = tracer
        self.consumers = executor.consumers()
        self.started: dict[int, tuple[int, list[Any]]] = {}

    def run_nodes(self, ready: "collections.deque[TaggedNode]") -> None:
        while ready:
            tagged = ready.popleft()
            if self.error is None:  # a traced step may look at every node
                self.checkpoint(tagged[0] if tagged[0].kind in (NEXT_ITERATION, EXIT) else None)
            if tagged[0].kind == EXPENSIVE and not tagged[2] and self.error is None:
                self.expensive.run_expensive(tagged, ready)
                continue
            outputs = self.process(tagged)
            if outputs is not None:
                self.finish_node(tagged, outputs, ready)

    def process(self, tagged: TaggedNode) -> Optional[tuple]:
        item, state, _ = tagged
        # Its inputs stay counted while it runs and its outputs are allocated (finish_node).
        self.started[id(tagged)] = (self.tracer.now(), state.input_tensors[item.slot:item.slot_end])
        return super().process(tagged)

    def finish_node(self, tagged: TaggedNode, outputs: tuple, ready: "collections.deque[TaggedNode]") -> None:
        item, _, is_dead = tagged
        start, inputs = self.started.pop(id(tagged), (None, ()))
        ran = not is_dead or item.control_flow is not None or (item.is_transfer and item.num_outputs > 0)
        if start is not None and not item.is_sink and ran:
            self.tracer.node_done(self.device, item, start, self.tracer.now(), outputs, self.consumers[item.id],
                                  inputs)
        else:
            self.tracer.release(self.device, inputs)  # one use of each input is over
        super().finish_node(tagged, outputs, ready)


class DataflowExecutor:
    """The dataflow executor of one compiled partition; `learning` is its plan's
    PlanLearning (priorities read, splits learned)."""

    def __init__(self, tables: PartitionTables, device: Device, learning: PlanLearning) -> None:
        self.tables = tables
        self.device = device
        self.learning = learning
        self._consumers: Optional[list[list[int]]] = None

    def consumers(self) -> list[list[int]]:
        """Data edges per output of each node (for traced steps)."""
        if self._consumers is None:
            self._consumers = consumers_per_output(self.tables)
        return self._consumers

    def new_state(self, step: StepContext) -> ExecutorState:
        """A step's state: the tracing hook only when the step is traced."""
        if step.stats is None:
            return ExecutorState(self, step)
        return TracingExecutorState(self, step)

    def start(self, step: StepContext) -> ExecutorState:
        """Runs the partition on this thread until it waits or finishes."""
        state = self.new_state(step)
        state.start()
        return state

    def run(self, step: StepContext) -> list[Any]:
        """Runs a step of this partition alone to its end (by its deadline, if it has one)."""
        return self.start(step).wait(step.remaining())
