"""Loop optimisation (TF's loop_optimizer.cc): less work in every iteration of a while loop, and
no branch a constant predicate never takes.

The one pass that edits nodes inside while-loop frames (the others leave them alone):

- Stack push removal (TF's RemoveStackOps): a stack a gradient loop would pop (the forward
  loop's history, ops/control_flow/grad_state.py) that nothing in the plan pops, as when only
  the forward result is fetched, needs no pushes: each StackPushV2 on it becomes an Identity
  of the pushed value (it still orders what waited on the push), and the stack is pruned.
- Loop-invariant node motion (TF's LoopInvariantNodeMotionOptimizer): a node of a frame whose
  data inputs are all loop invariants (constant Enters of the frame, or nodes already found
  invariant) computes the same value in every iteration, so it moves to the enclosing frame,
  reading the Enters' inputs, and its consumers in the frame read it through one new constant
  Enter (`LoopOptimizer/<frame>_enter_<n>`). Innermost frames first, so a node invariant in
  two nested loops leaves both. Its control inputs (the body's pivot, which only made it dead
  in the last, untaken iteration) are dropped; those of the Enters it read become its own (an
  inner loop's Enters wait for the outer body's pivot: the node stays dead in the outer loop's
  last iteration until it leaves that loop too).

- Dead branch removal (TF's RemoveDeadBranches): a Switch outside loops whose predicate is a
  constant (after constant folding) never takes one branch: what only that branch reaches is
  dropped, each Merge joining the branches becomes an Identity of the taken one, and the taken
  branch reads the Switch's input directly. Not when the untaken part reaches a fetched or
  target node, loop plumbing, a ControlTrigger, or a Merge's `value_index`.

What never moves: control flow, stateful, asynchronous and step-bound ops (variables' reads
by reference, random draws, stack and TensorArray ops), nodes with a ref or resource output or
input, nodes waiting on a stateful node, nodes something waits on, and nodes with a consumer
in the frame whose other inputs are all invariant too but which cannot move (a stateful op, an
Exit or a NextIteration): such a consumer's deadness in the last iteration came from the moved
node's pivot, and without it the consumer would run once more. A moved node runs once before
the loop, also when the loop runs no iteration (as in TF).
"""
from __future__ import annotations

import collections
import itertools
from typing import Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.grappler.graph_view import Node, OptGraph, Port, const_value
from tensorweave.grappler.pass_context import PassContext
from tensorweave.runtime.control_flow_info import walk_frames
from tensorweave.ops.array.shaping import Identity
from tensorweave.ops.control_flow.primitives import Enter

_FORWARDING = frozenset({"Enter", "RefEnter", "Exit", "RefExit", "Switch", "RefSwitch", "Merge", "RefMerge",
                         "NextIteration", "RefNextIteration", "Identity", "RefIdentity"})
_STACK_USERS = frozenset({"StackPushV2", "StackCloseV2"})


def optimize(graph: OptGraph, context: PassContext) -> bool:
    kinds = {n.type for n in graph.nodes if not n.removed}
    changed = False
    if "Switch" in kinds:
        changed |= _remove_dead_branches(graph)
    if "Enter" in kinds or "RefEnter" in kinds:
        changed |= _remove_stack_pushes(graph)
        changed |= _move_invariants(graph)
    return changed


# -- branches a constant predicate never takes --------------------------------------------------
_NEVER_DEAD = (ControlFlowKind.CONTROL_TRIGGER, ControlFlowKind.ENTER, ControlFlowKind.EXIT,
               ControlFlowKind.NEXT_ITERATION, ControlFlowKind.LOOP_COND)


def _remove_dead_branches(graph: OptGraph) -> bool:
    frames: Optional[_Frames] = None
    changed = False
    for switch in [n for n in graph.nodes if n.type == "Switch" and not n.removed]:
        pred = _constant_through_identities(switch.inputs[1])
        if pred is None or np.shape(pred) != () or switch.preserved:
            continue
        if frames is None:
            frames = _Frames(graph)
        if frames.frame.get(id(switch), ""):
            continue  # in a loop: left to the loop's own machinery
        changed |= _prune_branch(graph, switch, int(bool(pred)))
    return changed


def _constant_through_identities(port: Port) -> Optional[np.ndarray]:
    """A Const's value, also read through Identities (a cond's `pred_id`)."""
    seen = 0
    while port[0].type == "Identity" and not port[0].frozen and seen < 64:
        port = port[0].inputs[0]
        seen += 1
    return const_value(port)


def _prune_branch(graph: OptGraph, switch: Node, live: int) -> bool:
    """Drops what only the untaken output of `switch` reaches; each Merge joining the branch
    becomes an Identity of its one live input. Nothing changes when the dead part reaches a
    fetched or target node, loop plumbing, a ControlTrigger, or a Merge in any other way."""
    consumers, control_consumers = graph.consumers(), graph.control_consumers()
    if control_consumers.get(id(switch)):
        return False
    dead_port = (switch, 1 - live)
    dead: dict[int, Node] = {}
    merges: dict[int, Node] = {}
    todo = [u for u, i in consumers.get(id(switch), []) if not u.removed and u.inputs[i] == dead_port]
    while todo:
        node = todo.pop()
        if id(node) in dead or id(node) in merges:
            continue
        kind = _kind(node)
        if kind == ControlFlowKind.MERGE:
            merges[id(node)] = node
            continue
        if node.preserved or kind in _NEVER_DEAD:
            return False
        dead[id(node)] = node
        todo.extend(u for u, _ in consumers.get(id(node), []) if not u.removed)
        for user in control_consumers.get(id(node), []):
            if _kind(user) == ControlFlowKind.MERGE:
                return False
            todo.append(user)
    plans = []
    for merge in merges.values():
        live_inputs = [p for p in merge.inputs if id(p[0]) not in dead and p != dead_port]
        if len(live_inputs) != 1 or (merge, 1) in graph.fetches or merge.type != "Merge":
            return False
        if any(u.inputs[i] == (merge, 1) for u, i in consumers.get(id(merge), []) if not u.removed):
            return False
        plans.append((merge, live_inputs[0]))
    for merge, port in plans:
        merge.set_op_def(Identity)
        merge.attrs = {"T": merge.dtypes[0].base_dtype}
        merge.inputs = [port]
        merge.dtypes = [merge.dtypes[0]]
        merge.shapes = [merge.shapes[0]]
    graph.redirect((switch, live), switch.inputs[0])  # a scan: the Merges' inputs just changed
    for node in dead.values():
        node.removed = True
    switch.removed = True
    return True


# -- stack pushes nobody pops -------------------------------------------------------------------
def _remove_stack_pushes(graph: OptGraph) -> bool:
    stacks = [n for n in graph.nodes if n.type == "StackV2" and not n.removed]
    if not stacks:
        return False
    consumers = graph.consumers()
    changed = False
    for stack in stacks:
        pushes = _pushes_if_never_popped(stack, consumers)
        for push in pushes or ():
            elem = push.inputs[1]
            push.set_op_def(Identity)
            push.attrs = {"T": elem[0].dtypes[elem[1]].base_dtype}
            push.inputs = [elem]
            changed = True
    return changed


def _pushes_if_never_popped(stack: Node, consumers: dict) -> Optional[list[Node]]:
    """The pushes on `stack` (following its handle through forwarding nodes), or None when
    something else uses the handle (a pop, or any op this pass does not know)."""
    pushes: list[Node] = []
    seen = {id(stack)}
    todo = [stack]
    while todo:
        node = todo.pop()
        for user, index in consumers.get(id(node), []):
            if user.removed or id(user) in seen:
                continue
            seen.add(id(user))
            if user.type in _STACK_USERS and index == 0:
                if user.type == "StackPushV2":
                    if user.preserved:
                        return None
                    pushes.append(user)
            elif user.type in _FORWARDING:
                todo.append(user)
            else:
                return None
    return pushes


# -- loop-invariant node motion -----------------------------------------------------------------
class _Frames:
    """The frame each node runs in, found as runtime/control_flow_info.py finds it, on the
    optimised graph's nodes: an Enter starts its frame, an Exit's output is in the parent
    frame, any other node is in the frame of its first data producer (else of a control input)."""

    def __init__(self, graph: OptGraph) -> None:
        self.frame: dict[int, str] = {}
        self.parent: dict[str, str] = {}
        walk_frames([n for n in graph.nodes if not n.removed],
                    lambda node: [src for src, _ in node.inputs if src.fed is None] or list(node.controls),
                    self.frame, self._assign, self.output_frame)

    def _assign(self, node: Node, input_frame: str) -> None:
        frame = input_frame
        if _kind(node) == ControlFlowKind.ENTER:
            frame = node.attrs["frame_name"]
            self.parent.setdefault(frame, input_frame)
        self.frame[id(node)] = frame

    def output_frame(self, node: Node) -> str:
        frame = self.frame[id(node)]
        return self.parent.get(frame, "") if _kind(node) == ControlFlowKind.EXIT else frame

    def depth(self, frame: str) -> int:
        d = 0
        while frame:
            frame = self.parent.get(frame, "")
            d += 1
        return d


def _kind(node: Node) -> Optional[ControlFlowKind]:
    return None if node.op_def is None else node.op_def.control_flow


def _movable_kind(node: Node) -> bool:
    """What the node is allows it to move (its inputs are checked apart)."""
    d = node.op_def
    if d is None or d.control_flow is not None or d.is_stateful or d.is_async or d.needs_step:
        return False
    if node.preserved or not node.inputs or not node.dtypes:
        return False
    return all(not dt.is_ref_dtype and dt.base_dtype not in (_dtypes.resource, _dtypes.variant)
               for dt in node.dtypes)


def _is_invariant_enter(node: Node, frame: str) -> bool:
    if node.type != "Enter" or not node.attrs.get("is_constant") or node.attrs.get("frame_name") != frame:
        return False
    dt = node.dtypes[0]
    return not dt.is_ref_dtype and dt.base_dtype not in (_dtypes.resource, _dtypes.variant)


def _move_invariants(graph: OptGraph) -> bool:
    frames = _Frames(graph)
    by_frame: dict[str, list[Node]] = collections.defaultdict(list)
    for node in graph.ordered():
        if not node.removed:
            by_frame[frames.frame.get(id(node), "")].append(node)
    loops = sorted((f for f in by_frame if f), key=frames.depth, reverse=True)
    changed = False
    counter = itertools.count()
    for frame in loops:
        moved = _hoist(graph, frame, by_frame[frame], frames, counter)
        if moved:
            parent = frames.parent.get(frame, "")
            for node in moved:
                frames.frame[id(node)] = parent
                by_frame[parent].append(node)
            changed = True
    return changed


def _hoist(graph: OptGraph, frame: str, nodes: list[Node], frames: _Frames,
           counter: "itertools.count[int]") -> list[Node]:
    consumers = graph.consumers()
    control_consumers = graph.control_consumers()
    nodes = sorted(nodes, key=lambda n: n.key)
    enters = [n for n in nodes if _is_invariant_enter(n, frame)]
    if not enters:
        return []
    invariant = {id(n) for n in enters}
    candidates: list[Node] = []
    for node in nodes:  # in order, so producers are decided before their consumers
        if id(node) in invariant or not _movable_kind(node) or control_consumers.get(id(node)):
            continue
        if any(id(src) not in invariant for src, _ in node.inputs):
            continue
        if any(_side_effect(c) for c in node.controls):
            continue
        invariant.add(id(node))
        candidates.append(node)
    # A consumer staying in the frame needs a variant data input of its own (see the docstring);
    # a node failing that stays, and so do the invariant nodes reading it (to a fixpoint).
    dropped = True
    while dropped:
        dropped = False
        for node in candidates:
            if id(node) not in invariant:
                continue
            if any(id(src) not in invariant for src, _ in node.inputs) or any(
                    _needs_liveness(user, invariant) for user, _ in consumers.get(id(node), [])):
                invariant.discard(id(node))
                dropped = True
    moved = [n for n in candidates if id(n) in invariant]
    if not moved:
        return []
    parallel = enters[0].attrs.get("parallel_iterations", 10)
    for node in moved:
        # What an Enter it read waited for (an outer loop's pivot, for an inner loop's Enter)
        # now orders the node itself, which runs in the Enter's input frame.
        carried: list[Node] = []
        for src, _ in node.inputs:
            if src.type == "Enter":
                carried.extend(c for c in src.controls if c not in carried)
        node.inputs = [_outside(src, port) for src, port in node.inputs]
        node.controls = carried
        node.changed = True
    for node in moved:
        _enter_for_consumers(graph, node, frame, parallel, consumers, invariant, counter)
    return moved


def _needs_liveness(user: Node, invariant: set[int]) -> bool:
    """Whether `user`, staying in the frame, would lose its deadness in the last iteration if
    its invariant inputs moved out: when its other inputs are all constant Enters (live in
    every iteration). A constant Enter of an inner loop is live in every iteration anyway."""
    if user.removed or id(user) in invariant:
        return False
    if _kind(user) == ControlFlowKind.ENTER and user.attrs.get("is_constant"):
        return False
    return all(id(src) in invariant or (_kind(src) == ControlFlowKind.ENTER and src.attrs.get("is_constant"))
               for src, _ in user.inputs)


def _side_effect(node: Node) -> bool:
    d = node.op_def
    return d is None or d.is_stateful or d.is_async or d.needs_step


def _outside(src: Node, port: int) -> Port:
    """A moved node's input: an invariant Enter's own input, or a moved node as it is."""
    if src.type == "Enter":
        return src.inputs[0]
    return src, port


def _enter_for_consumers(graph: OptGraph, node: Node, frame: str, parallel: int, consumers: dict,
                         invariant: set[int], counter: "itertools.count[int]") -> None:
    """The consumers left in the frame read the moved node through one constant Enter per
    output."""
    per_output: dict[int, list[tuple[Node, int]]] = collections.defaultdict(list)
    for user, i in consumers.get(id(node), []):
        if not user.removed and id(user) not in invariant and user.inputs[i][0] is node:
            per_output[user.inputs[i][1]].append((user, i))
    for port, users in sorted(per_output.items()):
        first = min((u for u, _ in users), key=lambda u: u.key)
        dtype, shape = node.dtypes[port], node.shapes[port]
        enter = graph.new_node(graph.unique_name(f"LoopOptimizer/{frame}_enter_{next(counter)}"), Enter,
                               {"T": dtype.base_dtype, "frame_name": frame, "is_constant": True,
                                "parallel_iterations": parallel},
                               [(node, port)], node.device, [dtype], [shape], first)
        enter.frozen = enter.opaque = True
        graph.redirect((node, port), (enter, 0), users)
