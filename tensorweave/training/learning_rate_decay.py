"""Learning-rate schedules of TF1 (tf.train.exponential_decay, piecewise_constant, ...), built
from ordinary ops on the global step."""
from __future__ import annotations

import math
from typing import Any, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import math as math_ops


def _floats(*values: Any) -> list[Any]:
    out = []
    for v in values:
        t = convert_to_tensor(v)
        out.append(t if t.dtype.base_dtype == _dtypes.float32 else math_ops.cast(t, _dtypes.float32))
    return out


def exponential_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: Optional[str] = None) -> Any:
    """learning_rate * decay_rate ^ (global_step / decay_steps), floored when staircase."""
    if global_step is None:
        raise ValueError("global_step is required for exponential_decay.")
    with _graph.name_scope(name, "ExponentialDecay", [learning_rate, global_step, decay_steps, decay_rate]) as scope:
        lr, step, steps, rate = _floats(learning_rate, global_step, decay_steps, decay_rate)
        p = step / steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(lr, math_ops.pow(rate, p), name=scope)


def inverse_time_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                       staircase: bool = False, name: Optional[str] = None) -> Any:
    with _graph.name_scope(name, "InverseTimeDecay", [learning_rate, global_step]) as scope:
        lr, step, steps, rate = _floats(learning_rate, global_step, decay_steps, decay_rate)
        p = step / steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.divide(lr, 1.0 + rate * p, name=scope)


def natural_exp_decay(learning_rate: Any, global_step: Any, decay_steps: Any, decay_rate: Any,
                      staircase: bool = False, name: Optional[str] = None) -> Any:
    with _graph.name_scope(name, "NaturalExpDecay", [learning_rate, global_step]) as scope:
        lr, step, steps, rate = _floats(learning_rate, global_step, decay_steps, decay_rate)
        p = step / steps
        if staircase:
            p = math_ops.floor(p)
        return math_ops.multiply(lr, math_ops.exp(-rate * p), name=scope)


def polynomial_decay(learning_rate: Any, global_step: Any, decay_steps: Any, end_learning_rate: Any = 0.0001,
                     power: Any = 1.0, cycle: bool = False, name: Optional[str] = None) -> Any:
    with _graph.name_scope(name, "PolynomialDecay", [learning_rate, global_step]) as scope:
        lr, step, steps, end, pw = _floats(learning_rate, global_step, decay_steps, end_learning_rate, power)
        if cycle:
            multiplier = math_ops.maximum(math_ops.ceil(step / steps), 1.0)
            steps = steps * multiplier
        else:
            step = math_ops.minimum(step, steps)
        frac = 1.0 - step / steps
        return math_ops.add((lr - end) * math_ops.pow(frac, pw), end, name=scope)


def piecewise_constant(x: Any, boundaries: Sequence[Any], values: Sequence[Any], name: Optional[str] = None) -> Any:
    """values[i] while boundaries[i-1] < x <= boundaries[i] (values has one more entry)."""
    if len(values) != len(boundaries) + 1:
        raise ValueError("The length of boundaries should be 1 less than the length of values")
    with _graph.name_scope(name, "PiecewiseConstant", [x]) as scope:
        x = convert_to_tensor(x)
        vals = [convert_to_tensor(v) for v in values]
        bounds = [convert_to_tensor(b, dtype=x.dtype.base_dtype) for b in boundaries]
        result = vals[-1]
        # Walk from the last interval back so the first matching interval wins.
        for b, v in reversed(list(zip(bounds, vals[:-1]))):
            result = math_ops.where(math_ops.less_equal(x, b), v, result)
        return math_ops.add(result, math_ops.cast(0, result.dtype.base_dtype), name=scope)


def cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any, alpha: Any = 0.0,
                 name: Optional[str] = None) -> Any:
    """learning_rate * ((1 - alpha) * 0.5 * (1 + cos(pi * min(global_step, decay_steps) /
    decay_steps)) + alpha) (Loshchilov & Hutter's SGDR without restarts)."""
    if global_step is None:
        raise ValueError("cosine decay requires global_step")
    with _graph.name_scope(name, "CosineDecay", [learning_rate, global_step]) as scope:
        lr, step, steps, a = _floats(learning_rate, global_step, decay_steps, alpha)
        step = math_ops.minimum(step, steps)
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * (step / steps)))
        return math_ops.multiply(lr, (1 - a) * cosine + a, name=scope)


def linear_cosine_decay(learning_rate: Any, global_step: Any, decay_steps: Any, num_periods: Any = 0.5,
                        alpha: Any = 0.0, beta: Any = 0.001, name: Optional[str] = None) -> Any:
    """learning_rate * ((alpha + linear) * cosine + beta), with linear = (decay_steps - step) /
    decay_steps and cosine = 0.5 * (1 + cos(2 pi num_periods step / decay_steps)), step capped
    at decay_steps."""
    if global_step is None:
        raise ValueError("linear cosine decay requires global_step")
    with _graph.name_scope(name, "LinearCosineDecay", [learning_rate, global_step]) as scope:
        lr, step, steps, periods, a, b = _floats(learning_rate, global_step, decay_steps, num_periods, alpha, beta)
        step = math_ops.minimum(step, steps)
        linear = (steps - step) / steps
        cosine = 0.5 * (1.0 + math_ops.cos(math.pi * 2.0 * periods * (step / steps)))
        return math_ops.multiply(lr, (a + linear) * cosine + b, name=scope)
