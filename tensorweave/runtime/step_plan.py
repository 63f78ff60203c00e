"""Step plans (DESIGN.md "Running a step", step 2): built once per (feeds, fetches, targets)
signature by pruning, placing, partitioning per device (with Send/Recv) and compiling each
partition; run many times from precomputed tables. A plan on one device keeps the single
executor fast path; a plan over several devices runs its partitions together."""
from __future__ import annotations

import dataclasses
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.grappler import function_optimizer, jit, meta_optimizer
from tensorweave.runtime import pruning
from tensorweave.runtime.colocation import ref_argument_flags
from tensorweave.runtime.cost_model import CostModel
from tensorweave.runtime.executor_choice import ExecutorStrategy
from tensorweave.runtime.graph_compiler import CompileOptions, KernelCache, is_expensive
from tensorweave.runtime.inlining import has_calls, inline_calls
from tensorweave.runtime.partition import Partition, PartitionOptions, partition_graph
from tensorweave.runtime.partition_export import partition_to_graph_def
from tensorweave.runtime.partition_runner import (PartitionRunner, only_waits_for_receives, run_in_order,
                                                  run_partitions, senders_first)
from tensorweave.runtime.placer import Placer
from tensorweave.runtime.recv_scheduling import schedule_recvs
from tensorweave.runtime.step_context import StepContext


def _aliases_persistent_state(tensor: Tensor) -> bool:
    """Whether a fetched value may be a buffer the runtime keeps (a Const value, a variable's
    storage, or a view of one): such fetches are copied so callers can't corrupt state."""
    seen: set[int] = set()
    stack = [tensor]
    while stack:
        t = stack.pop()
        op = t.op
        if id(op) in seen:
            continue
        seen.add(id(op))
        if op.op_def.persistent_output or t.dtype.is_ref_dtype:
            return True
        if op.op_def.forwards_input:
            stack.extend(op.inputs)
    return False


def _fetch_finisher(tensor: Tensor, fed: bool) -> Callable[[Any], Any]:
    np_dtype = tensor.dtype.base_dtype.as_numpy_dtype
    copy = not fed and _aliases_persistent_state(tensor)
    is_ref = tensor.dtype.is_ref_dtype and not fed
    op = tensor.op

    def finish(value: Any) -> Any:
        if is_ref:  # a variable's reference: fetch its current value
            value = value.read(op)
        if type(value) is not np.ndarray:
            if not isinstance(value, np.generic):
                value = np.asarray(value, dtype=np_dtype)
            else:
                return value
        elif copy:
            value = value.copy()
        if value.ndim == 0:
            return value[()]
        return value

    return finish


def _check_fed_references(ops: Sequence[Operation], feed_index: dict[Tensor, int]) -> None:
    """A fed value is a plain tensor: an op taking that input by reference (Assign on a fed
    variable) cannot run, as in TF (InvalidArgumentError naming both)."""
    for op in ops:
        for i, is_ref in enumerate(ref_argument_flags(op)):
            t = op.inputs[i]
            if is_ref and t in feed_index:
                base = t.dtype.base_dtype.name
                raise errors.InvalidArgumentError(
                    None, op, f"Input {i} of node {op.name} was passed {base} from {t.name} incompatible with "
                    f"expected {base}_ref.")


# Below this estimated work a multi-device step runs on one thread: a thread hop costs tens of
# microseconds, more than running its partitions one after the other.
SMALL_STEP_S = 1e-3


def _is_small(partitions: Sequence[Partition], cost_model: CostModel, threshold: float) -> bool:
    total = 0.0
    for part in partitions:
        for node in part.nodes:
            if node.feed_index is None and is_expensive(node, threshold):
                return False
            op = node.op
            if op is not None and getattr(op, "graph", None) is not None:
                total += cost_model.compute_time(op, part.device)
    return total < SMALL_STEP_S


class StepPlan:
    """Everything one run signature needs: the placed, partitioned and compiled graph (one
    executor per device it uses) and the fetch post-processing."""

    def __init__(self, fetches: Sequence[Tensor], targets: Sequence[Operation], feeds: Sequence[Tensor],
                 devices: Sequence[Any], kernels: KernelCache, config: Any,
                 placer: Optional[Placer] = None, force_strategy: Optional[ExecutorStrategy] = None,
                 optimize: bool = True) -> None:
        feed_index = {t: i for i, t in enumerate(feeds)}
        ops = pruning.prune(fetches, targets, set(feeds))
        # Graph optimisation passes (Grappler), once per plan: may give rewritten copies of
        # nodes and of the fetched tensors; the user's graph is never changed. Not on a
        # worker's registered partition (`optimize` False): Grappler runs where the whole
        # graph is seen, as TF's does on the master.
        if optimize:
            ops, fetches = meta_optimizer.optimize(ops, fetches, targets, feeds, config, devices)
            ops, fetches = jit.optimize(ops, fetches, targets, feeds, config, devices)  # XLA's place
        if any(t.dtype.is_ref_dtype for t in feeds):
            _check_fed_references(ops, feed_index)
        if placer is None:
            placer = Placer(devices, config.allow_soft_placement, config.log_device_placement)
        assignment = placer.place(ops, feeds)
        graph_options = config.graph_options
        options = PartitionOptions(compress_float32=graph_options.enable_bfloat16_sendrecv)
        self.partitions = partition_graph(ops, assignment, feed_index, fetches, devices, options) or [
            Partition(devices[0])]
        if has_calls(ops) and function_optimizer.inlines_calls(config):
            inline_calls(self.partitions)
        if len(self.partitions) > 1 and graph_options.enable_recv_scheduling:
            schedule_recvs(self.partitions, placer.cost_model)
        # How the partitions run together, decided before compiling them: a small step over
        # several devices runs its partitions one after the other on this thread, senders
        # first where values go one way only; if then no partition waits for anything but
        # received values, those are always sent before their Recv runs (synchronous receives).
        compile_options = CompileOptions(inter_op_threads=config.inter_op_parallelism_threads,
                                         force_strategy=force_strategy)
        single = len(self.partitions) == 1
        self.small_step = not single and _is_small(self.partitions, placer.cost_model,
                                                   compile_options.expensive_threshold)
        order = senders_first(self.partitions) if self.small_step else None
        partitions = self.partitions if order is None else [self.partitions[i] for i in order]
        synchronous_receives = order is not None and all(only_waits_for_receives(p) for p in partitions)
        compile_options = dataclasses.replace(compile_options, single_partition=single,
                                              synchronous_receives=synchronous_receives)
        self.runners = [PartitionRunner(p, kernels, compile_options, placer.cost_model) for p in partitions]
        self.single = self.runners[0] if single else None
        # Every partition sequential, senders first: the step is one pass on this thread.
        self.synchronous = order is not None and all(r.choice.sequential for r in self.runners)
        self.finishers = [_fetch_finisher(t, t in feed_index) for t in fetches]
        self.num_ops = len(ops)
        self._graph_defs: Optional[list[Any]] = None

    def run(self, step: StepContext) -> list[Any]:
        """Runs the step (by `step.deadline`, if it has one) and returns the fetched values."""
        if self.single is not None:
            values = self.single.run(step)
        elif self.synchronous:
            values = run_in_order(self.runners, len(self.finishers), step)
        else:
            values = run_partitions(self.runners, len(self.finishers), step, self.small_step)
        return [f(v) for f, v in zip(self.finishers, values)]

    def partition_graph_defs(self) -> list[Any]:
        """One GraphDef per partition (RunOptions.output_partition_graphs)."""
        if self._graph_defs is None:
            self._graph_defs = [partition_to_graph_def(p) for p in self.partitions]
        return self._graph_defs
