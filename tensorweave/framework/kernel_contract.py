"""The contract between ops, their kernels and the runtime (DESIGN.md "Defining an op once").

An op family registers a kernel *builder* on its `OpDef`: `build(ctx: KernelContext) -> compute`,
run once per (session, node) when a step plan is compiled. How the executor then calls `compute`
is the op's `KernelCall`:

- `KernelCall.PLAIN`: `compute(*inputs)`, the common case;
- `KernelCall.STEP`: `compute(step, *inputs)`, for kernels that use the running step (its
  rendezvous, cancellation, step resources, the frame and iteration they run in);
- `KernelCall.ASYNC`: `compute(step, done, *inputs)`, for asynchronous kernels (Recv, queue
  Enqueue/Dequeue, readers). Such a kernel calls `done(result)` exactly once, during the call
  when the value is ready or later from whichever thread completes it, and holds no thread
  while it waits; an exception instance as result fails the node.

`step` satisfies `StepView`, the only part of the runtime's per-step state a kernel may touch.
Control-flow primitives (Switch, Merge, Enter, Exit, NextIteration, LoopCond, ControlTrigger) have
no kernel: the executor itself implements them, and their `ControlFlowKind` says which rule.

This module imports nothing from ops/ or runtime/: both sides are written against it.
"""
from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Any, Callable, Optional, Protocol

from tensorweave.framework import dtypes as _dtypes

if TYPE_CHECKING:  # annotations only: graph.py imports op_def, which imports this module
    from tensorweave.framework.graph import Operation


class ControlFlowKind(str, enum.Enum):
    """Which executor rule a control-flow primitive follows (white paper 4.4, OSDI 3.4).

    A `str` enum so that graphs and messages print TF's lower-case names."""

    SWITCH = "switch"
    MERGE = "merge"
    ENTER = "enter"
    EXIT = "exit"
    NEXT_ITERATION = "next_iteration"
    LOOP_COND = "loop_cond"
    CONTROL_TRIGGER = "control_trigger"

    def __str__(self) -> str:
        return self.value


class KernelCall(enum.Enum):
    """How the executor calls an op's compute function (see the module docstring)."""

    PLAIN = 0
    STEP = 1
    ASYNC = 2

    @property
    def leading_args(self) -> int:
        """How many runtime arguments come before the input values."""
        return self.value


class StepView(Protocol):
    """The running step as a kernel sees it: one `Session.run` (or one frame and iteration of
    it, for kernels inside a loop)."""

    step_id: int
    feeds: list[Any]
    session_state: Any
    rendezvous: Any
    stats: Any
    step_resources: dict[Any, Any]
    frame_id: str
    iteration: int

    @property
    def cancellation(self) -> Any: ...

    def cancel(self, error: Optional[BaseException] = None) -> None: ...

    def interrupted(self) -> Optional[BaseException]:
        """The error that ends the step now (cancelled, or past its deadline), if any."""
        ...


Compute = Callable[..., Any]
"""A compiled kernel: called with the input values (after the runtime arguments of its
`KernelCall`), returns the output value (one output) or a tuple of output values."""

DoneCallback = Callable[[Any], None]
"""The continuation an asynchronous kernel calls with its result (or an exception instance)."""

KernelBuilder = Callable[["KernelContext"], Compute]
"""Run once per (session, node) at plan compilation: reads attrs and dtypes, returns compute."""

ConstantValueFn = Callable[[Any], Any]
"""Folds an op's output at graph-construction time: `fn(tensor) -> ndarray or None`."""

PartialShapeFn = Callable[[Any], Any]
"""What is known of a shape-valued output at construction time: `fn(tensor) -> TensorShape`."""


class KernelContext:
    """What a kernel builder may look at: the node's attrs and dtypes, the device, and its
    array namespace (`xp`: NumPy on CPU, CuPy on GPU). Built once per (session, node)."""

    __slots__ = ("op", "attrs", "device", "xp", "input_dtypes", "output_dtypes", "session_state")

    def __init__(self, op: "Operation", device: Any, session_state: Any = None) -> None:
        self.op = op
        self.attrs: dict[str, Any] = op.node_attrs
        self.device = device
        self.xp = device.xp
        self.input_dtypes: list[_dtypes.DType] = [t.dtype for t in op.inputs]
        self.output_dtypes: list[_dtypes.DType] = [t.dtype for t in op.outputs]
        self.session_state = session_state

    def attr(self, name: str) -> Any:
        return self.attrs[name]

    @property
    def node_name(self) -> str:
        return self.op.name

    @property
    def resource_mgr(self) -> Any:
        """Where this node's resource lives: its device's manager, which belongs to the session
        (a shared_name shares a resource between the graphs a session runs, not between local
        sessions)."""
        return self.device.resource_manager
