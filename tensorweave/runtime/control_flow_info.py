"""Which frame each node runs in (white paper 4.4), for partitioning loops over devices.

Frames are found by walking the plan from its sources: an Enter starts the frame it names
(a child of the frame its input is in), an Exit's output is in its frame's parent, and every
other node is in the frame of its inputs. A frame's LoopCond is its pivot: the partitioner sends
its value to every device taking part in the loop."""
from __future__ import annotations

import collections
from typing import Optional, Sequence

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
        consumers: dict[int, list[Operation]] = collections.defaultdict(list)
        sources = []
        for op in ops:
            producers = [t.op for t in op.inputs if t not in feeds and id(t.op) in in_plan]
            if not producers:
                producers = [c for c in op.control_inputs if id(c) in in_plan]
            for p in producers:
                consumers[id(p)].append(op)
            if not producers:
                sources.append(op)
        queue = collections.deque(sources)
        for op in sources:
            self._assign(op, "")
        while queue:
            op = queue.popleft()
            out = self.output_frame(op)
            for c in consumers[id(op)]:
                if id(c) not in self._frame:
                    self._assign(c, out)
                    queue.append(c)
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


def _check_in_loop(op: Operation, frame: str) -> None:
    """An Exit or NextIteration outside every frame has no loop to leave or to go round (a
    damaged or hand-edited GraphDef): TensorFlow's executor refuses such a graph."""
    kind = op.op_def.control_flow
    if frame == "" and kind in (ControlFlowKind.EXIT, ControlFlowKind.NEXT_ITERATION):
        what = "Exit" if kind == ControlFlowKind.EXIT else "NextIteration"
        raise errors.InvalidArgumentError(
            None, op, f"Invalid {what} op {op.name!r}: cannot find a corresponding Enter op (the node is "
                      "not inside any while-loop frame)")
