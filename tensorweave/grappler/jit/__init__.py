"""JIT compilation (XLA's role, white paper 10): clusters of element-wise ops, and a reduction at
a cluster's end, become one `_XlaRun` node whose kernel numba compiles (ops/kernels/jit/).

Run by the step plan right after the Grappler passes, once per plan, on the pruned graph; the
user's Graph is never changed, and gradients, built before, come from the original ops. What is
clustered (mark_for_compilation.py):
- with `ConfigProto.graph_options.optimizer_options.global_jit_level` ON_1 or ON_2, every
  eligible op (TF's auto-clustering), clusters of at least 4 ops;
- otherwise only ops created inside `tf.xla.experimental.jit_scope()` or in the body of a
  `tf.function(jit_compile=True)` (they carry `_XlaCompile`), clusters of at least 2 ops, never
  mixing two scopes (`_XlaScope`).
Nothing is clustered when numba is missing (logged once), or on a plan using a device other
than the CPU (the kernel is NumPy's).
"""
from __future__ import annotations

import logging
from typing import Any, Optional, Sequence

from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.grappler.graph_view import OptGraph, RewrittenOperation
from tensorweave.grappler.jit import build_xla_ops, mark_for_compilation
from tensorweave.ops.kernels.jit.compiler import numba_available
from tensorweave.runtime.control_flow_info import ControlFlowInfo

__all__ = ["optimize"]

_log = logging.getLogger("tensorweave.jit")


def optimize(ops: list[Operation], fetches: Sequence[Tensor], targets: Sequence[Operation],
             feeds: Sequence[Tensor], config: Any, devices: Sequence[Any]) -> tuple[list[Operation],
                                                                                  Sequence[Tensor]]:
    """The plan's operations and fetches with its JIT clusters compiled (the inputs themselves
    when nothing is to be clustered)."""
    auto = mark_for_compilation.auto_jit(config)
    if not auto and not _any_marked(ops):
        return ops, fetches
    if any(d.device_type != "CPU" for d in devices) or not numba_available():
        return ops, fetches
    try:
        graph = OptGraph(ops, fetches, _plan_targets(ops, targets), feeds, _in_loops(ops, feeds))
        clusters = mark_for_compilation.clusters(graph, auto)
        if not clusters:
            return ops, fetches
        changed = False
        for cluster in clusters:
            changed |= build_xla_ops.rewrite(cluster)
        if not changed:
            return ops, fetches
        new_ops, new_fetches, _ = graph.materialize()
    except Exception as err:  # noqa: BLE001  (as a Grappler pass: a failure leaves the graph as it was)
        _log.warning("JIT clustering skipped for this step plan: %s: %s", type(err).__name__, err, exc_info=True)
        return ops, fetches
    return new_ops, new_fetches


def _any_marked(ops: Sequence[Operation]) -> bool:
    """Whether an op asked to be compiled (one pass over the plan; most plans have none)."""
    rewritten = RewrittenOperation
    for op in ops:
        if "_XlaCompile" in op._attrs:
            return True
        if type(op) is rewritten and op._source is not None and "_XlaCompile" in op._source._attrs:
            return True
    return False


def _plan_targets(ops: Sequence[Operation], targets: Sequence[Operation]) -> list[Operation]:
    """The plan's own nodes for the targets: a Grappler pass may have replaced a target by a
    rewritten copy of the same name."""
    if not targets:
        return []
    names = {op.name for op in targets}
    return [op for op in ops if op.name in names]


def _in_loops(ops: Sequence[Operation], feeds: Sequence[Tensor]) -> Optional[set[int]]:
    """ids of the ops inside while-loop frames (None when the plan has no loop): left unclustered."""
    if not any(op._op_def.control_flow == ControlFlowKind.ENTER for op in ops):
        return None
    info = ControlFlowInfo(ops, set(feeds))
    return {id(op) for op in ops if info.frame_of(op)}
