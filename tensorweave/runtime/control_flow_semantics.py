"""The control-flow semantics, written once (white paper 4.4; OSDI 3.4): what Switch, Merge,
ControlTrigger and the loop primitives output, when a node is dead, and how a node's outputs
reach its consumers (edge propagation: input slots, pending counts, dead counts and Merge
readiness). Both executors follow these rules: the dataflow executor (executor.py, frames.py)
and the sequential interpreter (sequential.py).

- A Switch sends its data input to output 1 when its predicate is true, else to output 0; the
  other output is dead.
- A Merge forwards its first live input and that input's index; it is ready as soon as one
  live input (and every control input) has arrived, or once every data input is dead.
- Any other node with a dead input (data, or control from a dead node) is dead: it does not run
  and all its outputs are dead. A ControlTrigger signals live even after dead inputs; Send and
  Recv run even when dead, to carry the deadness to the other device.
- Enter, Exit and NextIteration forward their input (frames.py moves it between frames and
  iterations).

The dataflow executor's run loop (ExecutorState.run_nodes) keeps an inlined copy of
`activate` for live outputs on its lock-free path, where a function call per node would cost
more than the propagation itself.
"""
from __future__ import annotations

import collections
from typing import TYPE_CHECKING, Any

import numpy as np

from tensorweave.runtime.executor_tables import CONTROL_TRIGGER, ENTER, MERGE, SWITCH
from tensorweave.runtime.step_context import DEAD

if TYPE_CHECKING:
    from tensorweave.runtime.frames import IterationState
    from tensorweave.runtime.graph_compiler import NodeItem

__all__ = ["DEAD", "read_references", "merge_outputs", "switch_outputs", "control_flow_outputs", "sequential_outputs",
           "RUN", "outputs_are_dead", "activate", "activate_merges"]

# A tagged node in a ready queue: (node row, iteration state, is_dead).
TaggedNode = tuple["NodeItem", "IterationState", bool]

_MERGE_INDICES = tuple(np.int32(i) for i in range(64))  # a Merge's value_index output

RUN = object()  # sequential_outputs: the node is live, run its kernel


def merge_outputs(inputs: list[Any]) -> tuple[Any, Any]:
    """A live Merge forwards its first live input and that input's index."""
    for index, value in enumerate(inputs):
        if value is not None and value is not DEAD:
            return (value, _MERGE_INDICES[index] if index < 64 else np.int32(index))
    return (DEAD, DEAD)  # a Merge without data inputs


def switch_outputs(data: Any, pred: Any) -> tuple[Any, Any]:
    """(output_false, output_true): the untaken one is dead."""
    return (DEAD, data) if pred else (data, DEAD)


def read_references(item: NodeItem, args: list[Any]) -> list[Any]:
    """A control-flow node that takes values reads the references it is given (a variable
    updated in a branch or loop body), as every other kernel's inputs are read."""
    args = list(args)
    for i in item.deref_inputs:
        value = args[i]
        if value is not None and value is not DEAD:
            args[i] = value.read(item.op)
    return args


def control_flow_outputs(item: NodeItem, args: list[Any], is_dead: bool) -> tuple[Any, ...]:
    """The outputs of a control-flow node (not LoopCond, a plain forwarding kernel) given its
    data inputs and whether any input was dead."""
    kind = item.kind
    if item.deref_inputs:
        args = read_references(item, args)
    if kind == CONTROL_TRIGGER:
        return ()
    if kind == MERGE:
        return (DEAD, DEAD) if is_dead else merge_outputs(args)
    if is_dead:
        return item.dead_outputs
    if kind == SWITCH:
        return switch_outputs(args[0], bool(args[1]))
    return (args[0],)  # Enter, Exit and NextIteration forward their input


def sequential_outputs(item: NodeItem, args: list[Any], control_sources: tuple[int, ...],
                       dead: list[bool]) -> Any:
    """Program-order form of the rules, for a node that may see dead values (`dead`: which
    nodes so far were dead, by node id; `control_sources`: the node's control inputs that
    may be). Returns its outputs if it is a Switch, Merge or ControlTrigger or is dead (any
    data input dead, or a control input from a dead node), else RUN; marks it in `dead` where
    it is (a Merge: when all its inputs are)."""
    kind = item.kind
    if kind == MERGE:
        if item.deref_inputs:
            args = read_references(item, args)
        outputs = merge_outputs(args)
        if outputs[0] is DEAD and args:
            dead[item.id] = True  # every input dead
        return outputs
    if kind == CONTROL_TRIGGER:
        return ()  # signals live even after dead inputs
    if any(value is DEAD for value in args) or any(dead[c] for c in control_sources):
        dead[item.id] = True
        return item.dead_outputs
    if kind == SWITCH:
        if item.deref_inputs:
            args = read_references(item, args)
        return (DEAD, args[0]) if args[1] else (args[0], DEAD)  # switch_outputs, inlined
    return RUN


def outputs_are_dead(outputs: tuple[Any, ...]) -> bool:
    """Every output dead (a node that did not run, or a Merge whose inputs all were)."""
    return bool(outputs) and outputs[0] is DEAD and all(o is DEAD for o in outputs)


def activate(item: NodeItem, outputs: tuple[Any, ...], is_dead: bool, state: IterationState,
             ready: collections.deque[TaggedNode]) -> None:
    """Delivers a node's outputs (or its deadness) to its consumers in `state`: fills their
    input slots, counts dead inputs, and queues each consumer whose pending count reaches
    zero. Counts what it queued in `state.outstanding_ops`."""
    before = len(ready)
    inputs, pending, dead_count = state.input_tensors, state.pending, state.dead_count
    for dst_item, dst, slot, port in item.plain_edges:
        if slot >= 0:
            value = DEAD if is_dead else outputs[port]
            inputs[slot] = value
            edge_dead = value is DEAD
        else:
            edge_dead = is_dead
        if edge_dead:
            dead_count[dst] += 1
        count = pending[dst] - 1
        pending[dst] = count
        if not count:
            ready.append((dst_item, state, dead_count[dst] > 0))
    if item.merge_edges:
        activate_merges(item, outputs, is_dead, state, ready)
    state.outstanding_ops += len(ready) - before


def activate_merges(item: NodeItem, outputs: tuple[Any, ...], is_dead: bool, state: IterationState,
                    ready: collections.deque[TaggedNode]) -> None:
    """A Merge's pending count is (controls << 1) | 1: it is ready once every control input
    has arrived and either one live data input has (bit 0 cleared) or every data input is
    dead. Does not count the ready nodes in `state.outstanding_ops` (the caller does)."""
    inputs, pending, dead_count = state.input_tensors, state.pending, state.dead_count
    for dst_item, dst, slot, port in item.merge_edges:
        if slot < 0:
            pending[dst] -= 2
            dst_dead = dead_count[dst] == dst_item.num_data_inputs
            fire = pending[dst] == 0 or (pending[dst] == 1 and dst_dead)
        else:
            value = DEAD if is_dead else outputs[port]
            if value is not DEAD:
                count = pending[dst]
                if count & 1:
                    pending[dst] = count & ~1
                    inputs[slot] = value
                fire, dst_dead = count == 1, False
            else:
                dead_count[dst] += 1
                dst_dead = dead_count[dst] == dst_item.num_data_inputs or item.kind == ENTER
                fire = pending[dst] == 1 and dst_dead
        if fire:
            ready.append((dst_item, state, dst_dead))
