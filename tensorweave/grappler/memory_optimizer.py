"""Grappler's memory optimizer (TF's memory_optimizer.cc): recomputation of cheap forward values
in gradient graphs, instead of keeping them alive from the forward pass to the backward pass
(white paper 4.1 names this as future work; TF's RewriterConfig.memory_optimization).

A gradient node (a "target": its name starts with, or contains, `/` + the target scope,
`gradients/` by default, RewriterConfig.memory_optimizer_target_node_name_scope) that reads a
forward activation keeps that activation alive until the backward pass reaches it. When the
activation is cheap to compute again from values that are kept anyway, the pass makes a copy of
it (`Recomputed/<name>`) that the gradient nodes read instead, so the forward value dies as soon
as the forward pass is done with it. Each copy waits, by a control edge, for a trigger NoOp
(`RecomputeTrigger/<name>`) that waits for the other inputs of the gradient nodes it serves (the
gradient flowing back from the later layer), so the copy runs just before its consumers, not
right after the original.

Which nodes (TF's rules):
- RECOMPUTATION_HEURISTICS and HEURISTICS: cheap ops (CHEAP_OPS: TF's list, plus AddV2, the
  `+` of TF 2-era graphs, and the smooth activations Tanh, Elu, Selu, Softplus, Softsign,
  which are as cheap as Sigmoid), and any node carrying a `_recompute_hint` attr;
- MANUAL: only nodes carrying `_recompute_hint`;
- DEFAULT_MEM_OPT, SWAPPING_HEURISTICS, SCHEDULING_HEURISTICS, NO_MEM_OPT: no recomputation (as
  in TF, where the default runs only the GPU swapping and AddN scheduling passes, which need a
  GPU and memory pressure; there is no GPU memory to relieve here).
A candidate is never a target itself, fed, stateful, control flow or inside a loop, nor
downstream of a target (TF skips only those with a target input; a value computed from
gradients is not a forward activation), nor a reader of a variable or other state (unlike TF: a
copy that reads a TF1 variable read late sees the update the optimizer may have applied to it
meanwhile, so its gradient would be wrong). Candidates are grouped by data edges into connected
groups (an MLP's layers are apart: MatMul is not cheap); in each group the nodes feeding targets
and the group nodes they are computed from are copied.

The pass runs once per plan (TF's run-once optimizers), after dependency optimisation.
"""
from __future__ import annotations

from typing import Optional

from tensorboard.compat.proto import rewriter_config_pb2

from tensorweave.grappler.graph_view import Node, OptGraph, Port
from tensorweave.grappler.pass_context import PassContext
from tensorweave.ops.control_flow.grouping import NoOp

_RC = rewriter_config_pb2.RewriterConfig
RECOMPUTE_HINT = "_recompute_hint"
RECOMPUTED_PREFIX = "Recomputed"
TRIGGER_PREFIX = "RecomputeTrigger"
DEFAULT_TARGET_SCOPE = "gradients/"

CHEAP_OPS = frozenset((
    # TF's GetCheapToRecomputeOps
    "Add", "AddN", "BiasAdd", "Cast", "Fill", "FloorDiv", "FloorMod", "FusedBatchNorm", "Mul", "Neg",
    "RealDiv", "Reciprocal", "Relu", "Relu6", "Reshape", "Rsqrt", "Sigmoid", "Sqrt", "Square",
    "SquaredDifference", "Sub", "Tile", "Transpose",
    # here too (see the module docstring)
    "AddV2", "Tanh", "Elu", "Selu", "Softplus", "Softsign"))



def _reads_state(node: Node) -> bool:
    """Whether a value may change during the step after it was made: a variable's storage (a
    TF1 read aliases it) or any stateful op's output. A copy reading it late could see an
    update the optimizer applied meanwhile (the weights of later layers are updated while the
    backward pass goes on), so such readers are not recomputed."""
    if node.fed is not None or node.op_def is None:
        return False
    if node.op_def.is_stateful:
        return True
    return node.type == "Identity" and bool(node.inputs) and _reads_state(node.inputs[0][0])


def optimize(graph: OptGraph, context: PassContext) -> bool:
    settings = context.settings
    if not settings.recomputation:
        return False
    scope = settings.memory_target_scope or DEFAULT_TARGET_SCOPE
    return Recomputation(graph, scope, heuristic=settings.memory_optimization != _RC.MANUAL).run()


class Recomputation:
    """One run of the recomputation rewrite over a plan's graph."""

    def __init__(self, graph: OptGraph, scope: str, heuristic: bool) -> None:
        self.graph = graph
        self.scope = scope
        self.heuristic = heuristic
        self.nodes = [n for n in graph.ordered() if not n.removed]
        self.position = {id(n): i for i, n in enumerate(self.nodes)}
        self.consumers = graph.consumers()
        fed = {t.op.name for t in graph._feed_nodes}
        below_target: set[int] = set()  # targets and everything computed from them
        for n in self.nodes:
            if self.is_target(n) or any(id(src) in below_target for src, _ in n.inputs) or \
                    any(id(c) in below_target for c in n.controls):
                below_target.add(id(n))
        self.candidates = {id(n) for n in self.nodes
                           if id(n) not in below_target and n.name not in fed and not n.opaque
                           and (RECOMPUTE_HINT in n.attrs or (heuristic and n.type in CHEAP_OPS))
                           and not any(_reads_state(src) for src, _ in n.inputs)}

    def is_target(self, node: Node) -> bool:
        name = node.name
        return name.startswith(self.scope) or ("/" + self.scope) in name

    def target_users(self, node: Node) -> list[tuple[Node, int]]:
        return [(u, i) for u, i in self.consumers.get(id(node), ()) if self.is_target(u)]

    def run(self) -> bool:
        changed = False
        seen: set[int] = set()
        for node in self.nodes:
            if id(node) not in self.candidates or id(node) in seen or not self.target_users(node):
                continue
            group = self.group_of(node)
            seen |= {id(n) for n in group}
            changed |= self.recompute(group)
        return changed

    def group_of(self, seed: Node) -> list[Node]:
        """The candidates connected to `seed` by data edges, in graph order."""
        group = {id(seed): seed}
        stack = [seed]
        while stack:
            node = stack.pop()
            near = [src for src, _ in node.inputs] + [u for u, _ in self.consumers.get(id(node), ())]
            for other in near:
                if id(other) in self.candidates and id(other) not in group:
                    group[id(other)] = other
                    stack.append(other)
        return sorted(group.values(), key=lambda n: self.position[id(n)])

    def recompute(self, group: list[Node]) -> bool:
        """Copies the group's nodes that feed targets (and what they are computed from in the
        group); the targets read the copies."""
        in_group = {id(n) for n in group}
        chosen: set[int] = set()
        stack = [n for n in group if self.target_users(n)]
        while stack:
            node = stack.pop()
            if id(node) in chosen:
                continue
            chosen.add(id(node))
            stack.extend(src for src, _ in node.inputs if id(src) in in_group)
        recomputed = [n for n in group if id(n) in chosen]  # graph order: inputs first
        if not recomputed:
            return False
        earliest = self.earliest_use(recomputed, chosen)
        targets = {id(u): u for n in recomputed for u, _ in self.target_users(n)}
        triggers = self.add_triggers(recomputed, list(targets.values()), chosen, earliest)
        copies: dict[int, Node] = {}
        for node in recomputed:
            copies[id(node)] = self.copy(node, copies, triggers.get(id(node)), earliest[id(node)])
        for target in targets.values():
            target.inputs = [(copies[id(src)], port) if id(src) in copies else (src, port)
                             for src, port in target.inputs]
            target.changed = True
        return True

    def earliest_use(self, recomputed: list[Node], chosen: set[int]) -> dict[int, int]:
        """Per recomputed node, the position of the first target that needs it, directly or
        through the copies of other group nodes (TF's max downstream component)."""
        earliest: dict[int, int] = {}
        for node in reversed(recomputed):  # consumers first
            uses = [self.position[id(u)] for u, _ in self.target_users(node)]
            uses += [earliest[id(u)] for u, _ in self.consumers.get(id(node), ()) if id(u) in chosen]
            earliest[id(node)] = min(uses)
        return earliest

    def add_triggers(self, recomputed: list[Node], targets: list[Node], chosen: set[int],
                     earliest: dict[int, int]) -> dict[int, Node]:
        """A chain of NoOps: the one for a recomputed node waits for every input of the targets
        computed before that node's first target use (the gradient coming back, the weights),
        and the one before it in the chain. Inputs after that use are never waited for, so no
        cycle can form (TF's AddRecomputeControlDependencyNodes)."""
        waits: dict[int, Node] = {}
        for target in targets:
            for src in [s for s, _ in target.inputs] + list(target.controls):
                if id(src) not in chosen and src is not target and src.fed is None:
                    waits[id(src)] = src
        pending = sorted(waits.values(), key=lambda n: self.position[id(n)])
        triggers: dict[int, Node] = {}
        previous: Optional[Node] = None
        for node in sorted(recomputed, key=lambda n: (earliest[id(n)], n.name)):
            controls = [previous] if previous is not None else []
            while pending and self.position[id(pending[0])] < earliest[id(node)]:
                controls.append(pending.pop(0))
            if not controls:
                continue  # nothing to wait for: the copy may run at once
            before = self.nodes[earliest[id(node)]]
            trigger = self.graph.new_node(self.graph.unique_name(f"{TRIGGER_PREFIX}/{node.name}"), NoOp, {}, [],
                                          node.device, [], [], before)
            trigger.controls = controls
            triggers[id(node)] = previous = trigger
        return triggers

    def copy(self, node: Node, copies: dict[int, Node], trigger: Optional[Node], use: int) -> Node:
        inputs: list[Port] = [(copies.get(id(src), src), port) for src, port in node.inputs]
        copy = self.graph.new_node(self.graph.unique_name(f"{RECOMPUTED_PREFIX}/{node.name}"),
                                   node.op_def, dict(node.attrs), inputs,  # type: ignore[arg-type]
                                   node.device, list(node.dtypes), list(node.shapes), self.nodes[use])
        copy.controls = [copies.get(id(c), c) for c in node.controls] + ([trigger] if trigger is not None else [])
        return copy
