"""Running a step's partitions (white paper 3.2.2): each partition is compiled for its own device
and run by its own executor; the partitions of a step start together and synchronise only
through the step's rendezvous. The step ends when every partition has; the first error cancels
the step, which aborts the rendezvous and so wakes every partition still waiting for a value.

Small steps run all partitions on the caller's thread. Otherwise (the threaded path) partitions
with work to do start on their devices' pools, those that begin by waiting for a received value
start on the caller's thread (no thread hop), and the caller's thread, instead of only waiting,
runs work that received values make ready (thread_pool.CallerHelp); where that work may be
expensive it also goes to the device's pool, and whichever thread claims it first runs it.

How each partition runs (sequential interpreter or dataflow executor) is
executor_choice.choose_executor's decision, made once when the partition is compiled."""
from __future__ import annotations

from typing import Any, Callable, Optional, Protocol, Sequence

from tensorweave.framework import errors
from tensorweave.framework.kernel_contract import KernelCall
from tensorweave.runtime import kernel_errors
from tensorweave.runtime.cost_model import CostModel
from tensorweave.runtime.critical_path import plan_priorities
from tensorweave.runtime.executor import DataflowExecutor, wait_until_done
from tensorweave.runtime.executor_choice import ExecutorChoice, choose_executor
from tensorweave.runtime.graph_compiler import (TRANSFER_TYPES, CompileOptions, KernelCache, PartitionTables,
                                                compile_partition)
from tensorweave.runtime.partition import Partition
from tensorweave.runtime.plan_learning import PlanLearning
from tensorweave.runtime.rendezvous import LocalRendezvous
from tensorweave.runtime.sequential import SequentialInterpreter
from tensorweave.runtime.step_context import StepContext, deadline_exceeded
from tensorweave.runtime.thread_pool import CallerHelp, Wakeup


def _reaches_expensive(tables: PartitionTables) -> bool:
    """Whether an expensive kernel can run before any Recv (asynchronous transfer) completes."""
    items = tables.items
    seen = set(tables.roots)
    stack = list(tables.roots)
    while stack:
        item = items[stack.pop()]
        if item.expensive:
            return True
        if item.is_transfer and item.kernel_call is KernelCall.ASYNC:
            continue  # what follows waits for the received value
        for dst, _, _ in item.out_edges:
            if dst not in seen:
                seen.add(dst)
                stack.append(dst)
    return False


class PartitionHandle(Protocol):
    """A partition started as part of a multi-partition step (an ExecutorState, or a
    _SequentialRun)."""

    finished: bool

    def wait(self, timeout: Optional[float]) -> list[Any]: ...

    def record_error(self, err: BaseException) -> None: ...


def only_waits_for_receives(partition: Partition) -> bool:
    """No control flow (so no dead values) and no asynchronous kernel but Recv: run after its
    senders, the partition can compile its Recvs as synchronous kernels."""
    for node in partition.nodes:
        op_def = node.op_def
        if op_def is None:
            continue
        if op_def.control_flow is not None:
            return False
        if op_def.kernel_call is KernelCall.ASYNC and op_def.name not in TRANSFER_TYPES:
            return False
    return True


class PartitionRunner:
    """One partition compiled once (graph_compiler.compile_partition, with its options) and
    run as choose_executor decided: by the sequential interpreter, the dataflow executor, or
    the interpreter with the dataflow executor to hand over to. What the plan learns while
    it runs lives in `learning`, beside the compiled tables."""

    def __init__(self, partition: Partition, kernels: KernelCache, options: CompileOptions,
                 cost_model: Optional[CostModel] = None) -> None:
        self.device = partition.device
        self.fetch_indices = [index for index, _ in partition.fetches]
        tables = compile_partition(partition.nodes, self.device, kernels.for_node, partition.fetches, options)
        self.tables = tables
        self.choice: ExecutorChoice = choose_executor(tables, options)
        self._starts_by_waiting: Optional[bool] = None
        self.dataflow: Optional[DataflowExecutor] = None
        self.sequential: Optional[SequentialInterpreter] = None
        if self.choice.needs_dataflow:
            priorities = plan_priorities(tables, cost_model, self.device)
            self.learning = PlanLearning(len(tables.items), priorities)
            self.dataflow = DataflowExecutor(tables, self.device, self.learning)
        else:
            self.learning = PlanLearning(len(tables.items))
        # run(step): a single-partition step to its end on this thread (by step.deadline)
        self.run: Callable[..., list[Any]]
        if self.choice.sequential:
            self.sequential = SequentialInterpreter(tables, self.device, self.dataflow, self.choice.straight_line)
            self.run = self.sequential.run
        else:
            self.run = self.dataflow.run  # type: ignore[union-attr]

    @property
    def starts_by_waiting(self) -> bool:
        """A dataflow partition that reaches no expensive kernel before a Recv: started on the
        caller's thread, it soon waits, holding no thread, instead of costing a thread hop."""
        if self._starts_by_waiting is None:
            self._starts_by_waiting = not self.choice.sequential and not _reaches_expensive(self.tables)
        return self._starts_by_waiting

    def start(self, step: StepContext, inline: bool, small_step: bool = False,
              helpers: Optional[CallerHelp] = None) -> PartitionHandle:
        """Starts this partition as part of a multi-partition step, on this thread (`inline`) or
        on its device's pool; returns a handle with `finished`, `wait(timeout)` and
        `record_error(err)`. In a `small_step` values received later are processed on the
        sending thread; otherwise by the caller's thread through `helpers` (which it wakes
        when the partition finishes) or the device's pool."""
        if self.sequential is None:
            state = self.dataflow.new_state(step)  # type: ignore[union-attr]
            state.inline_continuations = small_step
            if helpers is not None:
                state.helpers = helpers
                state.done_event = helpers.wake
            if inline:
                state.start()
            else:
                self.device.thread_pool.schedule(state.start)
            return state
        run = _SequentialRun(self.sequential, step, None if helpers is None else helpers.wake)
        if inline:
            run()
        else:
            self.device.thread_pool.schedule(run)
        return run


class _SequentialRun:
    """A sequential partition of a multi-partition step (it only sends, or receives values
    sent before it runs: it never waits) run as one task."""

    def __init__(self, interpreter: SequentialInterpreter, step: StepContext, done: Optional[Wakeup]) -> None:
        self.interpreter = interpreter
        self.step = step
        self.done = done or Wakeup()
        self.finished = False
        self.results: list[Any] = []
        self.error: Optional[BaseException] = None

    def __call__(self) -> None:
        try:
            self.results = self.interpreter.run(self.step)
        except BaseException as err:  # noqa: BLE001  (becomes the step's error)
            self.error = kernel_errors.annotate(err, None)
            self.step.cancel(self.error)
        finally:
            self.finished = True
            self.done.set()

    def wait(self, timeout: Optional[float]) -> list[Any]:
        if not self.finished:
            wait_until_done(self.done, timeout, self.record_error)
        if self.error is not None:
            raise self.error
        return self.results

    def record_error(self, err: BaseException) -> None:
        self.step.cancel(err)  # its Sends fail from now on, so it ends soon


def _fail_all(step: StepContext, runs: list[PartitionHandle], err: BaseException) -> None:
    """Fails a multi-partition step: cancels it (aborting its rendezvous) and every partition."""
    step.cancel(err)
    for run in runs:
        run.record_error(err)


def run_partitions(runners: Sequence[PartitionRunner], num_fetches: int, step: StepContext,
                   small_step: bool = False) -> list[Any]:
    """Runs a step's partitions. A `small_step` (estimated to cost less than a few thread hops)
    starts them all on this thread, senders before receivers, so values wait in the
    rendezvous instead of waking threads; otherwise each runs on its device's pool but the
    first, which runs here. Session.close and the deadline cancel the step, which aborts the
    rendezvous; each partition stops at its next checkpoint."""
    rendezvous = step.rendezvous  # a worker's step brings its own (remote values arrive there)
    if rendezvous is None:
        rendezvous = step.rendezvous = LocalRendezvous()
    token = step.cancellation.register(rendezvous.start_abort)
    if token is None:  # cancelled before it started
        raise step.cancellation.cancelled  # type: ignore[misc]
    if small_step:
        runs = [runner.start(step, inline=True, small_step=True) for runner in runners]
    else:
        helpers = CallerHelp()
        runs = _start_threaded(runners, step, helpers)
    results: list[Any] = [None] * num_fetches
    failed: Optional[BaseException] = None
    try:
        if not small_step:
            _help_until_finished(helpers, runs, step)
        for runner, run in zip(runners, runs):
            try:
                values = run.wait(step.remaining())
            except errors.OpError as err:
                failed = failed or err
                continue
            for index, value in zip(runner.fetch_indices, values):
                results[index] = value
    finally:
        step.cancellation.deregister(token)
    if failed is not None:
        # the error that cancelled the step, not the cancellations it caused elsewhere
        raise step.cancellation.cancelled or failed
    return results


def _start_threaded(runners: Sequence[PartitionRunner], step: StepContext,
                    helpers: CallerHelp) -> list[PartitionHandle]:
    """Starts a step's partitions for the threaded path: first, on their devices' pools, those
    with work to do at once (they run alongside this thread); then, on this thread, those that
    wait for received values before any expensive work (they run until they wait, leaving their
    receivers in the rendezvous, at no thread hop); then the first partition, here."""
    inline = [i == 0 or runner.starts_by_waiting for i, runner in enumerate(runners)]
    runs: list[PartitionHandle] = [None] * len(runners)  # type: ignore[list-item]
    for i, runner in enumerate(runners):
        if not inline[i]:
            runs[i] = runner.start(step, inline=False, helpers=helpers)
    for i in [*range(1, len(runners)), 0]:
        if inline[i]:
            runs[i] = runners[i].start(step, inline=True, helpers=helpers)
    return runs


def _help_until_finished(helpers: CallerHelp, runs: list[PartitionHandle], step: StepContext) -> None:
    """The caller's thread runs the step's posted work until every partition has finished;
    past the deadline it fails the step with DeadlineExceededError and waits for the end."""
    timed_out = False
    while True:
        helpers.wake.clear()  # before looking: a post or finish from now on sets it again
        while helpers.tasks:
            helpers.tasks.popleft().run()
        if all(run.finished for run in runs):
            return
        remaining = None if timed_out else step.remaining()
        if remaining is not None and (remaining <= 0 or not helpers.wake.wait(remaining)):
            _fail_all(step, runs, deadline_exceeded())
            timed_out = True
        elif remaining is None:
            helpers.wake.wait()


def run_in_order(runners: Sequence[PartitionRunner], num_fetches: int, step: StepContext) -> list[Any]:
    """Sequential partitions, senders first, one after the other on this thread: nothing
    ever waits, so no thread, event or cancellation is involved."""
    if step.rendezvous is None:
        step.rendezvous = LocalRendezvous()
    results: list[Any] = [None] * num_fetches
    for runner in runners:
        values = runner.sequential.run(step)  # type: ignore[union-attr]
        for index, value in zip(runner.fetch_indices, values):
            results[index] = value
    return results


def senders_first(partitions: Sequence[Partition]) -> Optional[list[int]]:
    """Partition indices ordered so that each one's Sends come before the matching Recvs
    (Kahn's algorithm on the partition graph); None when values go both ways."""
    sends: dict[str, int] = {}
    for i, part in enumerate(partitions):
        for node in part.nodes_of_type("_Send"):
            sends[node.op.node_attrs["tensor_name"]] = i
    after: list[set[int]] = [set() for _ in partitions]
    for i, part in enumerate(partitions):
        for node in part.nodes_of_type("_Recv"):
            src = sends.get(node.op.node_attrs["tensor_name"])
            if src is not None and src != i:
                after[src].add(i)
    pending = [0] * len(partitions)
    for targets in after:
        for t in targets:
            pending[t] += 1
    order = [i for i, n in enumerate(pending) if n == 0]
    for i in order:  # grows while iterating
        for t in sorted(after[i]):
            pending[t] -= 1
            if pending[t] == 0:
                order.append(t)
    return order if len(order) == len(partitions) else None
