"""Step plans (DESIGN.md "Running a step", step 2): built once per (feeds, fetches, targets)
signature by pruning, placing and compiling; run many times from precomputed tables."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework.graph import Operation, Tensor
from tensorweave.runtime import placer, pruning
from tensorweave.runtime.executor import DataflowExecutor
from tensorweave.runtime.graph_compiler import KernelCache, PartitionTables, compile_partition
from tensorweave.runtime.step_context import StepContext
from tensorweave.runtime.straight_line import StraightLineExecutor, topological_order


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


def _has_independent_expensive(tables: PartitionTables) -> bool:
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


class StepPlan:
    """Everything one run signature needs: the executor and the fetch post-processing."""

    def __init__(self, fetches: Sequence[Tensor], targets: Sequence[Operation], feeds: Sequence[Tensor],
                 devices: Sequence[Any], kernels: KernelCache, config: Any) -> None:
        feed_index = {t: i for i, t in enumerate(feeds)}
        ops = pruning.prune(fetches, targets, set(feeds))
        assignment = placer.place(ops, devices, config.allow_soft_placement, config.log_device_placement)
        device = devices[0]
        # One partition for now: kernels are built against their assigned device (its
        # resources and namespace); Send/Recv partitioning splits this per device.
        tables = compile_partition(ops, device, _AssignedKernels(kernels, assignment), feed_index, fetches)
        self.straight_line = not (tables.has_control_flow or tables.has_async) and not (
            config.inter_op_parallelism_threads != 1 and _has_independent_expensive(tables))
        if self.straight_line:
            self.executor: Any = StraightLineExecutor(tables)
        else:
            self.executor = DataflowExecutor(tables, device)
        self.finishers = [_fetch_finisher(t, t in feed_index) for t in fetches]
        self.num_ops = len(ops)

    def run(self, step: StepContext, timeout: Optional[float], active: Any) -> list[Any]:
        if self.straight_line:
            values = self.executor.run(step)
        else:
            state = self.executor.start(step)
            active.add(state)
            try:
                values = state.wait(timeout)
            finally:
                active.discard(state)
        return [f(v) for f, v in zip(self.finishers, values)]


class _AssignedKernels:
    """KernelCache view that builds each node's kernel against its assigned device."""

    def __init__(self, cache: KernelCache, assignment: dict[int, Any]) -> None:
        self._cache = cache
        self._assignment = assignment

    def get(self, op: Operation, device: Any) -> Callable[..., Any]:
        return self._cache.get(op, self._assignment.get(id(op), device))

