"""Which frame each node runs in (white paper 4.4), for partitioning loops over devices.

Frames are found by walking the plan from its sources: an Enter starts the frame it names
(a child of the frame its input is in), an Exit's output is in its frame's parent, and every
other node is in the frame of its inputs. A frame's LoopCond is its pivot: the partitioner sends
its value to every device taking part in the loop."""
from __future__ import annotations

import collections
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import errors
from tensorweave.framework.kernel_contract import ControlFlowKind
from tensorweave.framework.graph import Operation, Tensor


class ControlFlowInfo:
    def __init__(self, ops: Sequence[Operation], feeds: set[Tensor]) -> None:
        in_plan = {id(op) for op in ops}
        self._frame: dict[int, str] = {}
        self._parent: dict[str, str] = {"": ""}
        self._loop_cond: dict[str, Operation] = {}
        self._parallel: dict[str, int] = {}
        # A node takes its frame from a data input when it has one in the plan (a control input
        # may come from an enclosing frame), else from a control input.
        walk_frames(ops, lambda op: [t.op for t in op.inputs if t not in feeds and id(t.op) in in_plan]
                    or [c for c in op.control_inputs if id(c) in in_plan],
                    self._frame, self._assign, self.output_frame)
        for op in ops:
            if id(op) not in self._frame:  # unreachable from sources: treat as top level
                self._assign(op, "")
            _check_in_loop(op, self._frame[id(op)])

    def _assign(self, op: Operation, input_frame: str) -> None:
        if op.op_def.control_flow == ControlFlowKind.ENTER:
            frame = op._get_attr("frame_name")
            self._parent.setdefault(frame, input_frame)
            self._parallel.setdefault(frame, op._get_attr("parallel_iterations"))
        else:
            frame = input_frame
        self._frame[id(op)] = frame
        if op.op_def.control_flow == ControlFlowKind.LOOP_COND:
            self._loop_cond[frame] = op

    def frame_of(self, op: Operation) -> str:
        return self._frame[id(op)]

    def output_frame(self, op: Operation) -> str:
        """The frame of the node's outputs: an Exit's go to the parent frame."""
        frame = self._frame[id(op)]
        return self._parent.get(frame, "") if op.op_def.control_flow == ControlFlowKind.EXIT else frame

    def parent_frame(self, frame: str) -> str:
        return self._parent.get(frame, "")

    def loop_cond(self, frame: str) -> Optional[Operation]:
        return self._loop_cond.get(frame)

    def parallel_iterations(self, frame: str) -> int:
        return self._parallel.get(frame, 10)


def walk_frames(nodes: Sequence[Any], producers: Callable[[Any], list[Any]], frame: dict[int, str],
                assign: Callable[[Any, str], None], output_frame: Callable[[Any], str]) -> None:
    """Gives each node reachable from the sources (nodes with no producers) its frame, breadth
    first: `assign(node, frame of its first producer's outputs)` records it in `frame`. Shared by
    the plan's frames (above) and Grappler's loop optimizer, which walks its own node type."""
    consumers: dict[int, list[Any]] = collections.defaultdict(list)
    sources = []
    for node in nodes:
        feeding = producers(node)
        for p in feeding:
            consumers[id(p)].append(node)
        if not feeding:
            sources.append(node)
    queue = collections.deque(sources)
    for node in sources:
        assign(node, "")
    while queue:
        node = queue.popleft()
        out = output_frame(node)
        for c in consumers[id(node)]:
            if id(c) not in frame:
                assign(c, out)
                queue.append(c)


def _check_in_loop(op: Operation, frame: str) -> None:
    """An Exit or NextIteration outside every frame has no loop to leave or to go round (a
    damaged or hand-edited GraphDef): TensorFlow's executor refuses such a graph."""
    kind = op.op_def.control_flow
    if frame == "" and kind in (ControlFlowKind.EXIT, ControlFlowKind.NEXT_ITERATION):
        what = "Exit" if kind == ControlFlowKind.EXIT else "NextIteration"
        raise errors.InvalidArgumentError(
            None, op, f"Invalid {what} op {op.name!r}: cannot find a corresponding Enter op (the node is "
                      "not inside any while-loop frame)")
