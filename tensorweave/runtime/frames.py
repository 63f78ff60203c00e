"""Frames and iterations (white paper 4.4), the tagged-token part of the dataflow executor.

Enter moves a value into a child frame (one execution of a loop, per iteration of its parent),
NextIteration into the next iteration of the same frame, Exit back to the parent. State lives
per (frame, iteration): an IterationState holds the input slots, pending counts and dead counts
of its frame's nodes only (executor_tables.FrameLayout), up to `parallel_iterations`
iterations of a frame overlap (further NextIterations are deferred), iterations are released
in order once no work is outstanding in them, and a frame is released, sending its dead Exits
to the parent, once all its iterations are. Loop invariants (constant Enters) reach every
iteration; a new iteration starts from a copy of an IterationTemplate that already holds them.
The frame lets go of them (and of the template) as soon as the loop exits (a live Exit in its
newest iteration), even while older iterations still run: no new iteration can need them then,
and a variable read as a loop invariant can be updated in place later in the step.

`FrameMachine` holds these rules; each dataflow step with loops has one (a member of its
ExecutorState). It runs under the step's lock, or on the only thread running the step. Edge
propagation within an iteration is control_flow_semantics.activate.
"""
from __future__ import annotations

import collections
from typing import Any, Optional

from tensorweave.framework import errors
from tensorweave.runtime.control_flow_semantics import TaggedNode, activate
from tensorweave.runtime.executor_tables import FrameLayout, IterationTemplate
from tensorweave.runtime.graph_compiler import NodeItem, PartitionTables
from tensorweave.runtime.step_context import DEAD, StepContext



class IterationState:
    """Input slots, pending counts and dead counts of one iteration of one frame, sized by
    the frame's layout (its own nodes only)."""

    __slots__ = ("input_tensors", "pending", "dead_count", "outstanding_ops", "outstanding_frames",
                 "frame", "iteration", "step_view", "children")

    def __init__(self, template: IterationTemplate, frame: FrameState, iteration: int,
                 step_view: Optional[StepContext]) -> None:
        self.input_tensors: list[Any] = template.input_tensors.copy()
        self.pending = template.pending.copy()
        self.dead_count = template.dead_count.copy()
        self.outstanding_ops = 0
        self.outstanding_frames = 0
        self.frame = frame
        self.iteration = iteration
        self.step_view = step_view  # the step as kernels here see it (created when first needed)
        self.children: Optional[dict[str, FrameState]] = None  # child frames by name


class FrameState:
    """One execution of a loop: a child frame of one iteration of its parent frame."""

    __slots__ = ("frame_id", "name", "parent_state", "layout", "iterations", "iteration_count",
                 "outstanding_iterations", "max_parallel", "pending_enters", "loop_invariants",
                 "deferred_next", "dead_exits", "live_exits", "template", "iterating")

    def __init__(self, frame_id: str, name: str, parent_state: Optional[IterationState],
                 layout: FrameLayout, max_parallel: int, pending_enters: int) -> None:
        self.frame_id = frame_id
        self.name = name
        self.parent_state = parent_state
        self.layout = layout
        # Live iterations by number; inserted in increasing order and released from the lowest,
        # so the first key is always the oldest live iteration.
        self.iterations: dict[int, IterationState] = {}
        self.iteration_count = 0
        self.outstanding_iterations = 1
        self.max_parallel = max_parallel
        self.pending_enters = pending_enters
        self.loop_invariants: list[tuple[NodeItem, Any]] = []
        self.deferred_next: list[tuple[NodeItem, Any]] = []
        # Each Exit delivers one value to the parent: live from the last iteration, or dead
        # (when the whole loop is dead) once the frame is done.
        self.dead_exits: dict[int, NodeItem] = {}
        self.live_exits: set[int] = set()
        self.template: Optional[IterationTemplate] = None  # with the invariants so far
        # False once the loop has exited (a live Exit in its newest iteration): no iteration
        # follows, so the frame lets go of the loop invariants that only new ones would need.
        self.iterating = True


class FrameMachine:
    """Propagation across frames and iterations (Enter, Exit, NextIteration), iteration and
    frame ends, for one step of one partition."""

    __slots__ = ("tables", "root")

    def __init__(self, tables: PartitionTables, root: FrameState) -> None:
        self.tables = tables
        self.root = root

    def propagate_enter(self, item: NodeItem, outputs: tuple, is_dead: bool, state: IterationState,
                        ready: "collections.deque[TaggedNode]") -> None:
        child = self.find_or_create_child(state, item)
        child.pending_enters -= 1
        if item.is_constant_enter and not is_dead:
            if child.iterating:
                child.loop_invariants.append((item, outputs[0]))
                child.template = None
            for child_state in list(child.iterations.values()):
                activate(item, outputs, False, child_state, ready)
        else:
            activate(item, outputs, is_dead, child.iterations[0], ready)
        self.maybe_finish_iteration(child, 0, ready)

    def propagate_exit(self, item: NodeItem, outputs: tuple, is_dead: bool, state: IterationState,
                       ready: "collections.deque[TaggedNode]") -> None:
        frame = state.frame
        if is_dead:
            frame.dead_exits[item.id] = item
        else:
            frame.live_exits.add(item.id)
            activate(item, outputs, False, frame.parent_state, ready)  # type: ignore[arg-type]
            if frame.iterating and state.iteration == frame.iteration_count and not frame.deferred_next:
                # The loop's predicate was false in its newest iteration: nothing will start
                # another, and the iterations still running hold their own invariants. Letting
                # go now (not when the frame is done) matters when a later node of the step
                # may update a loop-invariant variable in place (ops/training_ops.py).
                frame.iterating = False
                frame.loop_invariants = []
                frame.template = None

    def propagate_next_iteration(self, item: NodeItem, outputs: tuple, is_dead: bool,
                                 state: IterationState, ready: "collections.deque[TaggedNode]") -> None:
        if is_dead:
            return
        frame = state.frame
        nxt = state.iteration + 1
        next_state = frame.iterations.get(nxt)
        if next_state is None:
            if nxt <= frame.iteration_count:
                # that iteration already finished and was released: nothing can arrive here
                raise errors.InternalError(None, item.op, "NextIteration into a released iteration")
            if frame.outstanding_iterations >= frame.max_parallel:
                frame.deferred_next.append((item, outputs[0]))
                return
            next_state = self.new_iteration(frame, ready)
        activate(item, outputs, False, next_state, ready)

    # -- frames and iterations ------------------------------------------------------------------
    def find_or_create_child(self, state: IterationState, enter: NodeItem) -> FrameState:
        children = state.children
        if children is None:
            children = state.children = {}
        child = children.get(enter.frame_name)
        if child is None:
            name = enter.frame_name
            child = FrameState(f"{state.frame.frame_id};{state.iteration};{name}", name, state,
                               self.tables.layout(name), enter.parallel_iterations,
                               self.tables.enter_counts[name])
            child.iterations[0] = IterationState(child.layout.template, child, 0, None)  # type: ignore[arg-type]
            children[name] = child
            state.outstanding_frames += 1
        return child

    def new_iteration(self, frame: FrameState, ready: "collections.deque[TaggedNode]") -> IterationState:
        if not frame.iterating:
            raise errors.InternalError(None, None, f"Loop frame {frame.name}: an iteration started after "
                                       "the loop exited (a NextIteration ran live after a live Exit)")
        frame.iteration_count += 1
        frame.outstanding_iterations += 1
        number = frame.iteration_count
        template = frame.template or self.iteration_template(frame)
        state = frame.iterations[number] = IterationState(template, frame, number, None)
        if template.ready:
            for dst_item, is_dead in template.ready:
                ready.append((dst_item, state, is_dead))
            state.outstanding_ops = len(template.ready)
        return state

    def iteration_template(self, frame: FrameState) -> IterationTemplate:
        """Delivers the loop invariants to a scratch iteration, once: later iterations copy it."""
        template = IterationTemplate(frame.layout)
        scratch = IterationState(template, frame, -1, None)
        made_ready: collections.deque = collections.deque()
        for enter_item, value in frame.loop_invariants:
            activate(enter_item, (value,), False, scratch, made_ready)
        template.input_tensors, template.pending = scratch.input_tensors, scratch.pending
        template.dead_count = scratch.dead_count
        template.ready = [(dst_item, is_dead) for dst_item, _, is_dead in made_ready]
        frame.template = template
        return template

    @staticmethod
    def iteration_done(frame: FrameState, iteration: int) -> bool:
        state = frame.iterations.get(iteration)
        if state is None or state.outstanding_ops or state.outstanding_frames:
            return False
        if iteration == 0:
            return frame.pending_enters == 0
        return (iteration - 1) not in frame.iterations

    def maybe_finish_iteration(self, frame: FrameState, iteration: int, ready: "collections.deque[TaggedNode]") -> None:
        """Releases finished iterations in order, starts deferred ones, and when the whole frame
        is done releases it and sends its dead Exits to the parent."""
        if frame is self.root:
            return
        it = next(iter(frame.iterations)) if frame.iterations else iteration
        while self.iteration_done(frame, it):
            del frame.iterations[it]
            frame.outstanding_iterations -= 1
            if frame.deferred_next:
                state = self.new_iteration(frame, ready)
                deferred, frame.deferred_next = frame.deferred_next, []
                for item, value in deferred:
                    activate(item, (value,), False, state, ready)
            it += 1
        if not frame.iterations and frame.pending_enters == 0:
            self.finish_frame(frame, ready)

    def finish_frame(self, frame: FrameState, ready: "collections.deque[TaggedNode]") -> None:
        parent_state: IterationState = frame.parent_state  # type: ignore[assignment]
        del parent_state.children[frame.name]  # type: ignore[union-attr]
        for exit_id, exit_item in frame.dead_exits.items():
            if exit_id in frame.live_exits:
                continue  # it delivered its live value in the last iteration
            activate(exit_item, (DEAD,), True, parent_state, ready)
        parent_state.outstanding_frames -= 1
        self.maybe_finish_iteration(parent_state.frame, parent_state.iteration, ready)
