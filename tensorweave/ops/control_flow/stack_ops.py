"""Stacks (TF's StackV2, StackPushV2, StackPopV2, StackCloseV2): how a loop's gradient keeps
the forward values its backward loop needs (OSDI 4.1). The forward loop pushes a value in each
iteration; the backward loop, which runs the same number of iterations in reverse, pops them.

A stack lives for one step. StackV2 runs once per execution of its context, so a stack saving
values of an inner loop is made afresh for each iteration of the enclosing loop: one stack per
frame instance, and nested loops never interleave their histories. Each stack is also listed in
the step's resources under (node, frame, iteration).

Pushes may complete out of order when independent iterations overlap (parallel_iterations), so
a push files its value under the forward iteration it ran in; a pop always takes the value of
the latest iteration still held. The backward loop orders its pops (grad_state.py)."""
from __future__ import annotations

import bisect
import threading
from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import _util

__all__ = ["stack", "stack_push", "stack_pop", "stack_close"]


class StackState:
    """The values behind one stack handle, ordered by the iteration that pushed them."""

    def __init__(self, name: str, max_size: int) -> None:
        self.name = name
        self.max_size = max_size
        self.keys: list[int] = []
        self.values: list[Any] = []
        self.closed = False
        self.lock = threading.Lock()

    def push(self, iteration: int, value: Any) -> None:
        with self.lock:
            if self.closed:
                raise errors.InvalidArgumentError(None, None, f"Stack[{self.name}] has already been closed.")
            if 0 <= self.max_size <= len(self.values):
                raise errors.InvalidArgumentError(
                    None, None, f"Stack[{self.name}] overflowed its max_size ({self.max_size})")
            if not self.keys or self.keys[-1] <= iteration:
                self.keys.append(iteration)
                self.values.append(value)
            else:  # a later iteration's push finished first
                at = bisect.bisect_right(self.keys, iteration)
                self.keys.insert(at, iteration)
                self.values.insert(at, value)

    def pop(self) -> Any:
        with self.lock:
            if self.closed:
                raise errors.InvalidArgumentError(None, None, f"Stack[{self.name}] has already been closed.")
            if not self.values:
                raise errors.InvalidArgumentError(None, None, "Calling Pop() when the stack is empty.")
            self.keys.pop()
            return self.values.pop()

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.keys, self.values = [], []


def state_of(handle: Any) -> Any:
    """The Python object behind a stack's or TensorArray's handle value."""
    return handle[0] if isinstance(handle, np.ndarray) else handle


def make_handle(state: Any) -> np.ndarray:
    """A handle value: a 2-element object array holding the state, since TF declares these
    handles as vectors of 2 (its legacy string handles: container and name), and GraphDefs that
    TF reads again carry that shape."""
    handle = np.empty(2, dtype=object)
    handle[0] = state
    return handle


StackV2 = define_op("StackV2", inputs=["max_size: int32"], outputs=["handle: resource"],
                    attrs=["elem_type: type", "stack_name: string = ''"],
                    shape_fn=lambda op: [TensorShape([2])], is_stateful=True, needs_step=True)
StackPushV2 = define_op("StackPushV2", inputs=["handle: resource", "elem: T"], outputs=["output: T"],
                        attrs=["T: type", "swap_memory: bool = false"],
                        shape_fn=lambda op: [op.inputs[1].shape], is_stateful=True, needs_step=True,
                        forwards_input=True)
StackPopV2 = define_op("StackPopV2", inputs=["handle: resource"], outputs=["elem: elem_type"],
                       attrs=["elem_type: type"], shape_fn=lambda op: [unknown_shape()], is_stateful=True)
StackCloseV2 = define_op("StackCloseV2", inputs=["handle: resource"], shape_fn=_util.no_outputs,
                         is_stateful=True)


@StackV2.kernel()
def _stack_kernel(ctx: KernelContext) -> Any:
    name = ctx.attr("stack_name") or ctx.node_name
    node = ctx.node_name

    def create(step: Any, max_size: Any) -> Any:
        state = StackState(name, int(max_size))
        step.step_resources[("stack", node, step.frame_id, step.iteration)] = state
        return make_handle(state)

    return create


@StackPushV2.kernel()
def _push_kernel(ctx: KernelContext) -> Any:
    # swap_memory moves GPU values to host memory in TF; CPU values already live there.
    def push(step: Any, handle: Any, value: Any) -> Any:
        state_of(handle).push(step.iteration, value)
        return value

    return push


@StackPopV2.kernel()
def _pop_kernel(ctx: KernelContext) -> Any:
    return lambda handle: state_of(handle).pop()


@StackCloseV2.kernel()
def _close_kernel(ctx: KernelContext) -> Any:
    def close(handle: Any) -> None:
        state_of(handle).close()
    return close


for _op in (StackV2, StackPushV2, StackPopV2, StackCloseV2):
    _op.not_differentiable()


def stack(elem_type: Any, max_size: Any = -1, stack_name: str = "", name: Optional[str] = None) -> Any:
    """A new stack of `elem_type` values (max_size < 0: unbounded); returns its handle."""
    return apply_op(StackV2, name=name, max_size=max_size, elem_type=_dtypes.as_dtype(elem_type).base_dtype,
                    stack_name=stack_name)


def stack_push(handle: Any, elem: Any, swap_memory: bool = False, name: Optional[str] = None) -> Any:
    """Pushes `elem`; returns it (so later ops can depend on the push)."""
    return apply_op(StackPushV2, name=name, handle=handle, elem=elem, swap_memory=swap_memory)


def stack_pop(handle: Any, elem_type: Any, shape: Optional[TensorShape] = None, name: Optional[str] = None) -> Any:
    """Pops the most recent value; `shape` sets the static shape (the stack cannot know it)."""
    value = apply_op(StackPopV2, name=name, handle=handle, elem_type=_dtypes.as_dtype(elem_type).base_dtype)
    if shape is not None:
        value.set_shape(shape)
    return value


def stack_close(handle: Any, name: Optional[str] = None) -> Any:
    return apply_op(StackCloseV2, name=name, handle=handle)
