"""`tf.contrib.training.GreedyLoadBalancingStrategy` and `byte_size_load_fn`: a `ps_strategy`
for `tf.train.replica_device_setter` that puts each parameter-server op on the task with the
least load so far, load measured by a user function (typically the variable's byte size)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tensorweave.framework.tensor_shape import TensorShape


class GreedyLoadBalancingStrategy:
    """Places each op on the least-loaded ps task so far (the first such task on ties) and adds
    `load_fn(op)` to that task's load. The result depends on the order ops are created in."""

    def __init__(self, num_tasks: int, load_fn: Callable[[Any], float]) -> None:
        self._num_tasks = num_tasks
        self._load_fn = load_fn
        self._ps_loads = np.zeros(num_tasks)

    def __call__(self, op: Any) -> int:
        task = int(np.argmin(self._ps_loads))
        self._ps_loads[task] += self._load_fn(op)
        return task


def byte_size_load_fn(op: Any) -> int:
    """The byte size of `op`'s single output (elements times the dtype's size). A variable's
    output shape may not be known yet when the device function runs, so its `shape` attr is
    used then. Raises ValueError for ops with several outputs or a shape not fully defined."""
    if len(op.outputs) != 1:
        raise ValueError(f"Op {op} must have a single output")
    output = op.outputs[0]
    shape = output.get_shape()
    if not shape.is_fully_defined():
        shape = TensorShape(op.get_attr("shape"))
    shape.assert_is_fully_defined()
    return shape.num_elements() * output.dtype.size
