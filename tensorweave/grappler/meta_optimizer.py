"""Grappler's meta optimizer: runs the enabled passes on a step's pruned graph, before placement.

Once per step plan (plans are cached per run signature, so steady steps pay nothing). The
passes run in TensorFlow's order (common subgraph elimination, constant folding, shape
optimisation, arithmetic simplification, loop optimisation, layout optimisation, remapper
fusion, dependency optimisation, memory optimisation), the whole sequence
`meta_optimizer_iterations` times or until a round changes nothing. Graphs with fewer nodes than
`min_graph_nodes` are left alone. The user's Graph is never modified: the result is a list of
Operations where rewritten nodes are plan-private copies (graph_view.py).

Nodes inside while loops are left alone by every pass but the loop optimizer (they are only
rewired where their inputs outside the loop change), as are control-flow primitives, stateful
and asynchronous ops, fed tensors, and the names and outputs of fetched and target nodes.

An optimizer that fails leaves the graph as it was and logs a warning, as TF does unless
RewriterConfig.fail_on_optimizer_errors is set. With TF_DUMP_GRAPH_PREFIX set, each optimised
graph is written there as a text GraphDef (`after_MetaOptimizer_<n>.pbtxt`), TF's dump name.
"""
from __future__ import annotations

import contextlib
import gc
import itertools
import logging
import os
from typing import Any, Callable, Iterator, Optional, Sequence

from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.graph_def import GraphDef, node_def
from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.grappler import (arithmetic_optimizer, common_subgraph_elimination, constant_folding,
                                  dependency_optimizer, remapper)
from tensorweave.grappler import layout_optimizer, loop_optimizer, memory_optimizer, shape_optimizer
from tensorweave.grappler.graph_view import OptGraph
from tensorweave.grappler.pass_context import PassContext
from tensorweave.grappler.settings import Settings, settings_for
from tensorweave.runtime.control_flow_info import ControlFlowInfo

_log = logging.getLogger("tensorweave.grappler")
_dump_counter = itertools.count()

Pass = Callable[[OptGraph, PassContext], bool]
# Passes that run in the first round only (TF's IsRunOnceOptimizer).
RUN_ONCE = frozenset(("memory_optimization",))


def enabled_passes(settings: Settings) -> list[tuple[str, Pass]]:
    """(RewriterConfig name, pass) in TF's order."""
    table: list[tuple[str, bool, Pass]] = [
        ("common_subgraph_elimination", settings.common_subgraph_elimination, common_subgraph_elimination.optimize),
        ("constant_folding", settings.constant_folding, constant_folding.optimize),
        ("shape_optimization", settings.shape_optimization, shape_optimizer.optimize),
        ("arithmetic_optimization", settings.arithmetic_optimization, arithmetic_optimizer.optimize),
        ("loop_optimization", settings.loop_optimization, loop_optimizer.optimize),
        ("layout_optimizer", settings.layout_optimizer, layout_optimizer.optimize),
        ("remapping", settings.remapping, remapper.optimize),
        ("dependency_optimization", settings.dependency_optimization, dependency_optimizer.optimize),
        ("memory_optimization", settings.recomputation, memory_optimizer.optimize),
    ]
    return [(name, fn) for name, on, fn in table if on]


def optimize(ops: list[Operation], fetches: Sequence[Tensor], targets: Sequence[Operation],
             feeds: Sequence[Tensor], config: Any, devices: Sequence[Any]) -> tuple[list[Operation],
                                                                                  Sequence[Tensor]]:
    """The plan's operations and fetches after the enabled passes (the inputs themselves when
    nothing is enabled or nothing changed)."""
    settings = settings_for(config)
    if not settings.any_pass or (0 <= settings.min_graph_nodes and len(ops) < settings.min_graph_nodes):
        return ops, fetches
    try:
        with _collector_paused():
            result = run_passes(ops, fetches, targets, feeds, settings, devices)
    except Exception as err:  # noqa: BLE001  (TF: a failing optimizer leaves the graph as it was)
        if settings.fail_on_errors:
            raise
        _log.warning("Grappler skipped for this step plan: %s: %s", type(err).__name__, err)
        return ops, fetches
    if result is None:
        return ops, fetches
    new_ops, new_fetches = result
    prefix = os.environ.get("TF_DUMP_GRAPH_PREFIX")
    if prefix:
        _dump(new_ops, prefix)
    return new_ops, new_fetches


def run_passes(ops: Sequence[Operation], fetches: Sequence[Tensor], targets: Sequence[Operation],
               feeds: Sequence[Tensor], settings: Settings,
               devices: Sequence[Any]) -> Optional[tuple[list[Operation], list[Tensor]]]:
    """None when no pass changed anything."""
    passes = enabled_passes(settings)
    graph = OptGraph(ops, fetches, targets, feeds, _in_loops(ops, feeds))
    context = PassContext(settings, devices)
    changed = False
    for iteration in range(settings.iterations):
        round_changed = False
        for name, fn in passes:
            if iteration and name in RUN_ONCE:
                continue
            round_changed |= fn(graph, context)
        changed |= round_changed
        if not round_changed:
            break
    if not changed:
        return None
    new_ops, new_fetches, _ = graph.materialize()
    return new_ops, new_fetches


@contextlib.contextmanager
def _collector_paused() -> Iterator[None]:
    """The passes allocate a node per graph node and nothing that outlives them but the copies;
    with the user's large graph alive, each full collection CPython starts meanwhile walks all
    of it (0.3-1 s for a 20,000-op graph here), for no garbage: pause the collector."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def _in_loops(ops: Sequence[Operation], feeds: Sequence[Tensor]) -> Optional[set[int]]:
    """ids of the ops inside while-loop frames (None when the plan has no loop)."""
    if not any(op._op_def.control_flow == ControlFlowKind.ENTER for op in ops):
        return None
    info = ControlFlowInfo(ops, set(feeds))
    return {id(op) for op in ops if info.frame_of(op)}


def _dump(ops: Sequence[Operation], prefix: str) -> None:
    os.makedirs(prefix, exist_ok=True)
    path = os.path.join(prefix, f"after_MetaOptimizer_{next(_dump_counter)}.pbtxt")
    graph_def = GraphDef()
    for op in ops:
        node_def(op, False, graph_def.node.add())
    with open(path, "w") as f:
        f.write(str(graph_def))
