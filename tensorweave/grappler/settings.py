"""Which passes run, read from a session's ConfigProto as TensorFlow reads it.

`graph_options.rewrite_options` is TF's RewriterConfig: a Toggle per optimizer (DEFAULT, ON, OFF,
AGGRESSIVE; DEFAULT means TF's default, which is on for the passes built here),
`disable_meta_optimizer`, `meta_optimizer_iterations` (DEFAULT_NUM_ITERS means TWO) and
`min_graph_nodes` (0: TF's default of 4; negative: optimise every graph).
`memory_optimization` is a MemOptType, not a Toggle (memory_optimizer.py reads it), and
`memory_optimizer_target_node_name_scope` names the gradient nodes it serves.
`graph_options.optimizer_options` is the older OptimizerOptions, read by TF's classic graph
optimizer, which runs besides Grappler: at opt_level L1 (the default), or with
do_common_subexpression_elimination / do_constant_folding set, it eliminates common
subexpressions and folds constants even when the meta optimizer is disabled; so a pass is off
only when both say so. `max_folded_constant_in_bytes` caps folded constants (0: TF's 10 MiB).

For tests and benchmarks the environment variable TW_GRAPPLER overrides the configuration:
`aggressive` turns every pass on for every graph (and makes optimizer errors fail the step),
`off` turns every pass off but function inlining, which the configuration still decides (it
runs after placement, on the partitions: grappler/function_optimizer.py). `aggressive` also
recomputes, with RECOMPUTATION_HEURISTICS.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Any

from tensorboard.compat.proto import config_pb2, rewriter_config_pb2

_RC = rewriter_config_pb2.RewriterConfig
_DEFAULT_MIN_GRAPH_NODES = 4    # TF's kDefaultMinGraphNodes
_MAX_CONSTANT_BYTES = 10 << 20  # TF's kMaxConstantSize


@dataclasses.dataclass(frozen=True)
class Settings:
    common_subgraph_elimination: bool = True
    constant_folding: bool = True
    arithmetic_optimization: bool = True
    remapping: bool = True
    dependency_optimization: bool = True
    iterations: int = 2
    min_graph_nodes: int = _DEFAULT_MIN_GRAPH_NODES
    max_constant_bytes: int = _MAX_CONSTANT_BYTES
    fail_on_errors: bool = False
    loop_optimization: bool = True
    function_optimization: bool = True   # function calls inlined into the plan (runtime/inlining.py)
    shape_optimization: bool = True
    layout_optimizer: bool = True
    memory_optimization: int = _RC.DEFAULT_MEM_OPT
    memory_target_scope: str = ""  # "": TF's "gradients/"

    @property
    def any_pass(self) -> bool:
        return (self.common_subgraph_elimination or self.constant_folding or self.arithmetic_optimization
                or self.remapping or self.dependency_optimization or self.loop_optimization
                or self.shape_optimization or self.layout_optimizer or self.recomputation)

    @property
    def recomputation(self) -> bool:
        """Whether memory_optimization is a MemOptType that recomputes (TF's
        RecomputationRewritingPass runs for these; the others need a GPU here)."""
        return self.memory_optimization in _RECOMPUTING


_RECOMPUTING = (_RC.RECOMPUTATION_HEURISTICS, _RC.HEURISTICS, _RC.MANUAL)
ALL_ON = Settings(min_graph_nodes=-1, fail_on_errors=True, memory_optimization=_RC.RECOMPUTATION_HEURISTICS)
ALL_OFF = Settings(False, False, False, False, False, loop_optimization=False, function_optimization=False,
                   shape_optimization=False, layout_optimizer=False, memory_optimization=_RC.NO_MEM_OPT)
_ALL_OFF_INLINING = dataclasses.replace(ALL_OFF, function_optimization=True)


def _on(toggle: int) -> bool:
    return toggle != _RC.OFF


def settings_for(config: Any) -> Settings:
    """The passes a plan of a session with this ConfigProto runs."""
    mode = os.environ.get("TW_GRAPPLER", "").lower()
    if mode == "aggressive":
        return ALL_ON
    graph_options = config.graph_options
    rewrite = graph_options.rewrite_options
    classic = graph_options.optimizer_options
    meta = not rewrite.disable_meta_optimizer
    inlining = (meta and _on(rewrite.function_optimization)) or classic.do_function_inlining
    if mode == "off":
        # the graph as written; calls are still inlined (after placement) as the config says
        return ALL_OFF if not inlining else _ALL_OFF_INLINING
    classic_l1 = classic.opt_level != config_pb2.OptimizerOptions.L0
    iterations = 1 if rewrite.meta_optimizer_iterations == _RC.ONE else 2
    min_nodes = rewrite.min_graph_nodes or _DEFAULT_MIN_GRAPH_NODES
    return Settings(
        common_subgraph_elimination=(meta and _on(rewrite.common_subgraph_elimination)) or classic_l1
        or classic.do_common_subexpression_elimination,
        constant_folding=(meta and _on(rewrite.constant_folding)) or classic_l1 or classic.do_constant_folding,
        arithmetic_optimization=meta and _on(rewrite.arithmetic_optimization),
        remapping=meta and _on(rewrite.remapping),
        dependency_optimization=meta and _on(rewrite.dependency_optimization),
        iterations=iterations,
        min_graph_nodes=min_nodes,
        max_constant_bytes=classic.max_folded_constant_in_bytes or _MAX_CONSTANT_BYTES,
        fail_on_errors=rewrite.fail_on_optimizer_errors,
        loop_optimization=meta and _on(rewrite.loop_optimization),
        # TF's classic optimizer inlines too when OptimizerOptions.do_function_inlining is set
        function_optimization=inlining,
        shape_optimization=meta and _on(rewrite.shape_optimization),
        layout_optimizer=meta and _on(rewrite.layout_optimizer),
        memory_optimization=rewrite.memory_optimization if meta else _RC.NO_MEM_OPT,
        memory_target_scope=rewrite.memory_optimizer_target_node_name_scope)
