"""`tf.train.ExponentialMovingAverage` and `assign_moving_average`: shadow variables that track
an exponential moving average of variables (or tensors), updated by an op from `apply`."""
from __future__ import annotations

from typing import Any, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.state.variables import Variable
from tensorweave.ops import array as array_ops, math as math_ops
from tensorweave.ops.control_flow.grouping import group
from tensorweave.ops.state import variable_ops as state_ops
from tensorweave.ops.state.init_ops import zeros_initializer
from tensorweave.ops.state.variable_scope import get_variable, variable_scope
from tensorweave.ops.state.variables import global_variables, moving_average_variables, trainable_variables
from tensorweave.training.slot_creator import copy_save_slice_info

__all__ = ["ExponentialMovingAverage", "assign_moving_average"]

_FLOATS = (_dtypes.float16, _dtypes.float32, _dtypes.float64)


def _zero_debias(unbiased: Any, value: Any, one_minus_decay: Any) -> Any:
    """The delta that sets `unbiased` to biased / (1 - decay^t), where `biased` is the plain
    moving average started from zero and t counts the updates (Adam's bias correction)."""
    with variable_scope(unbiased.op.name, values=[unbiased, value, one_minus_decay]):
        with _graph.name_scope(None), _graph.get_default_graph().colocate_with(unbiased.op):
            dtype = unbiased.dtype.base_dtype
            biased = get_variable("biased", shape=unbiased.get_shape().as_list(), dtype=dtype,
                                  initializer=zeros_initializer(), trainable=False)
            local_step = get_variable("local_step", shape=[], dtype=dtype, initializer=zeros_initializer(),
                                      trainable=False)
        update_biased = state_ops.assign_sub(biased, (biased - value) * one_minus_decay)
        update_step = state_ops.assign_add(local_step, array_ops.ones([], dtype))
        bias_factor = 1 - math_ops.pow(1.0 - one_minus_decay, update_step)
        return unbiased - update_biased / bias_factor


def assign_moving_average(variable: Any, value: Any, decay: Any, zero_debias: bool = True,
                          name: Optional[str] = None) -> Any:
    """variable -= (1 - decay) * (variable - value), i.e. variable = decay * variable + (1 -
    decay) * value; with zero_debias the result is divided by (1 - decay^t)."""
    with _graph.name_scope(name, "AssignMovingAvg", [variable, value, decay]) as scope:
        with _graph.get_default_graph().colocate_with(variable.op):
            dtype = variable.dtype.base_dtype
            decay = convert_to_tensor(decay, name="decay")
            if decay.dtype.base_dtype != dtype:
                decay = math_ops.cast(decay, dtype)
            one_minus_decay = 1.0 - decay
            if isinstance(value, Variable):
                # TF's `read` snapshot of a ref variable aliases its buffer, so the average sees
                # the value at the time it runs (after a train op it depends on, in the usual
                # `with control_dependencies([train_op]): ema.apply()`); our snapshots are
                # copy-on-write, so read the variable afresh here, under the caller's control
                # dependencies.
                value = value.read_value()
            value = convert_to_tensor(value, dtype=dtype)
            if zero_debias:
                delta = _zero_debias(variable, value, one_minus_decay)
            else:
                delta = (variable - value) * one_minus_decay
            return state_ops.assign_sub(variable, delta, name=scope)


class ExponentialMovingAverage:
    """Maintains moving averages of variables: shadow = decay * shadow + (1 - decay) * value.

    With `num_updates`, the decay used is min(decay, (1 + num_updates) / (10 + num_updates)),
    so that early averages move faster."""

    def __init__(self, decay: Any, num_updates: Any = None, zero_debias: bool = False,
                 name: str = "ExponentialMovingAverage") -> None:
        self._decay = decay
        self._num_updates = num_updates
        self._zero_debias = zero_debias
        self._name = name
        self._averages: dict[int, tuple[Any, Any]] = {}   # id(var) -> (var, shadow)

    @property
    def name(self) -> str:
        return self._name

    def _create_shadow(self, var: Any) -> tuple[Any, bool]:
        graph = var.graph
        with graph.as_default(), _graph.name_scope(None), graph.colocate_with(var.op):
            if isinstance(var, Variable):
                shadow = Variable(lambda: var.initialized_value(), trainable=False, name=f"{var.op.name}/{self._name}",
                                  dtype=var.dtype.base_dtype)
                copy_save_slice_info(var, shadow)
                _graph.add_to_collection(GraphKeys.MOVING_AVERAGE_VARIABLES, var)
                return shadow, False
            shape = var.get_shape()
            if not shape.is_fully_defined():
                raise ValueError(f"The shape of {var.name} must be fully defined to keep its moving average, "
                                 f"got {shape}")
            shadow = Variable(lambda: array_ops.zeros(shape.as_list(), var.dtype.base_dtype), trainable=False,
                              name=f"{var.op.name}/{self._name}", dtype=var.dtype.base_dtype)
            return shadow, self._zero_debias

    def apply(self, var_list: Optional[Sequence[Any]] = None) -> Any:
        """Creates shadow variables for `var_list` (default: the trainable variables) and returns
        an op that updates all their moving averages."""
        var_list = list(trainable_variables() if var_list is None else var_list)
        debiased = set()
        for var in var_list:
            if var.dtype.base_dtype not in _FLOATS:
                raise TypeError(f"The variables must be half, float, or double: {var.name}")
            if id(var) in self._averages:
                raise ValueError(f"Moving average already computed for: {var.name}")
            shadow, debias = self._create_shadow(var)
            if debias:
                debiased.add(id(var))
            self._averages[id(var)] = (var, shadow)
        with _graph.name_scope(self._name) as scope:
            decay = convert_to_tensor(self._decay, name="decay")
            if self._num_updates is not None:
                num_updates = self._num_updates
                if isinstance(num_updates, Variable):  # a fresh read, as for the averaged values
                    num_updates = num_updates.read_value()
                num_updates = math_ops.cast(num_updates, _dtypes.float32, name="num_updates")
                decay = math_ops.minimum(decay, (1.0 + num_updates) / (10.0 + num_updates))
            updates = [assign_moving_average(self._averages[id(v)][1], v, decay, zero_debias=id(v) in debiased)
                       for v in var_list]
            return group(*updates, name=scope)

    def average(self, var: Any) -> Any:
        """The shadow variable of `var`, or None if `apply` has not seen it."""
        entry = self._averages.get(id(var))
        return entry[1] if entry is not None else None

    def average_name(self, var: Any) -> str:
        """The name of `var`'s shadow variable (in checkpoints), whether or not it exists yet."""
        entry = self._averages.get(id(var))
        return entry[1].op.name if entry is not None else f"{var.op.name}/{self._name}"

    def variables_to_restore(self, moving_avg_variables: Optional[Sequence[Any]] = None) -> dict[str, Any]:
        """A Saver var_list that restores each moving average into its variable: {shadow name:
        variable}, plus {name: variable} for the other global variables."""
        if moving_avg_variables is None:
            moving_avg_variables = trainable_variables() + moving_average_variables()
        averaged = list({id(v): v for v in moving_avg_variables}.values())
        name_map = {self.average_name(v): v for v in averaged}
        averaged_names = {v.name for v in averaged}
        for v in global_variables():
            if v.name not in averaged_names and v.op.name not in name_map:
                name_map[v.op.name] = v
        return name_map
