"""The one place that decides how a compiled partition runs, as TensorFlow's
ExecutorImpl::RunAsync chooses its propagator (DESIGN.md "The executor").

- SEQUENTIAL: the sequential interpreter (sequential.py), program order over a flat value
  array. For partitions without loops, where nothing is worth running in parallel: plain
  graphs, and (when the partition is the whole step) conditionals and asynchronous kernels,
  which may hand the step over to the dataflow executor when a kernel waits.
- DATAFLOW: the dataflow executor (executor.py): pending counts, a ready queue, frames.
- INTERPRETER (a test hook only): SEQUENTIAL, but never as generated code.

A SEQUENTIAL partition without dead values or asynchronous kernels also runs as straight-line
generated code (plan_codegen.py; ExecutorChoice.straight_line) once its plan has run a step.

Everything it looks at is fixed at compile time (graph_compiler.CompileOptions and the
compiled tables), so a plan decides once; tracing a step does not change the decision.
"""
from __future__ import annotations

import dataclasses
import enum
from typing import Optional

from tensorweave.runtime.graph_compiler import CompileOptions, PartitionTables, topological_order


class ExecutorStrategy(enum.Enum):
    SEQUENTIAL = "sequential"
    DATAFLOW = "dataflow"
    INTERPRETER = "interpreter"  # force only: SEQUENTIAL with the interpreter's table loop


@dataclasses.dataclass(frozen=True)
class ExecutorChoice:
    strategy: ExecutorStrategy
    # SEQUENTIAL only: an asynchronous kernel that has not completed when its call returns
    # hands the step to the dataflow executor (which then needs building too).
    hand_over: bool = False
    # SEQUENTIAL only: the program may run as generated straight-line code (plan_codegen.py).
    straight_line: bool = False

    @property
    def sequential(self) -> bool:
        return self.strategy is ExecutorStrategy.SEQUENTIAL

    @property
    def needs_dataflow(self) -> bool:
        return self.strategy is ExecutorStrategy.DATAFLOW or self.hand_over


def choose_executor(tables: PartitionTables, options: CompileOptions,
                    force: Optional[ExecutorStrategy] = None) -> ExecutorChoice:
    """How a partition runs. `force` (default: `options.force_strategy`, a test hook) picks a
    strategy wherever that strategy can run the partition."""
    force = force if force is not None else options.force_strategy
    may_hand_over = options.single_partition
    if force is ExecutorStrategy.DATAFLOW or not can_run_sequentially(tables, may_hand_over):
        return ExecutorChoice(ExecutorStrategy.DATAFLOW)
    if force is None and options.inter_op_threads != 1 and has_independent_expensive(tables):
        return ExecutorChoice(ExecutorStrategy.DATAFLOW)  # inter-op parallelism pays
    return ExecutorChoice(ExecutorStrategy.SEQUENTIAL, hand_over=tables.has_async,
                          straight_line=force is not ExecutorStrategy.INTERPRETER and can_write_straight_line(tables))


def can_write_straight_line(tables: PartitionTables) -> bool:
    """Generated code has no hooks: no dead values (no control flow) and no kernel that may wait."""
    return not tables.has_control_flow and not tables.has_async


def can_run_sequentially(tables: PartitionTables, may_hand_over: bool) -> bool:
    """No loops (frames need the dataflow executor); asynchronous kernels only where a wait can
    be handed over; dead values only where no transfer carries them to another device."""
    if tables.has_loops:
        return False
    if not tables.has_control_flow and not tables.has_async:
        return True
    return may_hand_over and not tables.has_transfers


def has_independent_expensive(tables: PartitionTables) -> bool:
    """True when two expensive kernels could run at once (neither depends on the other)."""
    expensive = [it.id for it in tables.items if it.expensive]
    if len(expensive) < 2:
        return False
    ancestors = [0] * len(tables.items)
    for nid in topological_order(tables):
        bits = ancestors[nid] | (1 << nid)
        for dst, _, _ in tables.items[nid].out_edges:
            ancestors[dst] |= bits
    for i, a in enumerate(expensive):
        for b in expensive[i + 1:]:
            if not (ancestors[b] >> a) & 1 and not (ancestors[a] >> b) & 1:
                return True
    return False
