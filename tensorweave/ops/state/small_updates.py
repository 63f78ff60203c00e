"""Dense optimizer updates of small variables (issue 17, "cheaper small ops"): the update rule on
whole arrays with its scalar hyperparameters as NumPy scalars, and for Adam the rule written
with `out=` into the new arrays, in TensorFlow's order of operations.

Why: a model of many small layers makes many small updates (bench/small_ops.py's 400-layer MLP:
800 ApplyAdam per step). There each NumPy call costs more in overhead than in arithmetic, and an
operation on a 0-d array costs several times one on a NumPy scalar: the general path spent about
30 us per 64x64 Adam update, mostly on the hyperparameters' 0-d arithmetic and the temporaries.

The results are the same numbers: a NumPy scalar of the variable's dtype computes in that dtype
exactly as a 0-d array of it does, and every element-wise operation runs in the rule's order.
Only plain cases take this path (unlocked, every state an initialised array of the variable's
shape and dtype, every hyperparameter a 0-d array of that dtype, a variable of at least one
dimension); anything else returns False and goes the general way, which raises the errors.
The new values are new arrays, as the general path's small updates: a value of the variable
read earlier in the step and still held keeps its snapshot.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

__all__ = ["adam", "small_update"]

_ndarray = np.ndarray
_add, _subtract, _multiply, _divide, _sqrt = np.add, np.subtract, np.multiply, np.divide, np.sqrt


def adam(var: Any, m: Any, v: Any, beta1_power: Any, beta2_power: Any, lr: Any, beta1: Any,
          beta2: Any, epsilon: Any, grad: Any, attrs: dict) -> Optional[tuple]:
    """training_ops._adam (not Nesterov's form) with each result built in its own new array."""
    if attrs["use_nesterov"]:
        return None
    lr_t = lr * _sqrt(1 - beta2_power) / (1 - beta1_power)
    new_m = _subtract(grad, m)                  # m + (grad - m) * (1 - beta1)
    _multiply(new_m, 1 - beta1, out=new_m)
    _add(m, new_m, out=new_m)
    new_v = _multiply(grad, grad)               # v + (grad * grad - v) * (1 - beta2)
    _subtract(new_v, v, out=new_v)
    _multiply(new_v, 1 - beta2, out=new_v)
    _add(v, new_v, out=new_v)
    denominator = _sqrt(new_v)                  # var - m * lr_t / (sqrt(v) + epsilon)
    _add(denominator, epsilon, out=denominator)
    new_var = _multiply(new_m, lr_t)
    _divide(new_var, denominator, out=new_var)
    _subtract(var, new_var, out=new_var)
    return new_var, new_m, new_v


def _same(a: np.dtype, b: np.dtype) -> bool:
    return a is b or a == b  # (the same dtype object, as a rule: no comparison)


def small_update(rule: Callable[..., tuple], written: Optional[Callable[..., Optional[tuple]]],
                 cells: Sequence[Any], args: Sequence[Any], grad_pos: int, attrs: dict, max_size: int) -> bool:
    """Applies `rule` (training_ops' form) to the cells' arrays if this is a plain small case
    (see the module docstring) of fewer than `max_size` elements; returns whether it did.
    `written`: the rule written out with `out=` (this module's `adam`), or None; it returns
    None for the cases it does not cover, which then take `rule`."""
    var = cells[0].value
    grad = args[grad_pos]
    if type(var) is not _ndarray or type(grad) is not _ndarray:
        return False
    shape, dtype = var.shape, var.dtype
    if not shape or var.size >= max_size or grad.shape != shape or not _same(grad.dtype, dtype):
        return False
    states = [var]
    for cell in cells[1:]:
        value = cell.value
        if type(value) is not _ndarray or value.shape != shape or not _same(value.dtype, dtype):
            return False
        states.append(value)
    scalars = []
    for a in args:
        if a is grad:
            scalars.append(a)
        elif type(a) is not _ndarray or a.shape or not _same(a.dtype, dtype):
            return False
        else:
            scalars.append(a[()])
    new = written(*states, *scalars, attrs) if written is not None else None
    if new is None:
        new = rule(*states, *scalars, attrs)
        if any(type(value) is not _ndarray or value.dtype != dtype for value in new):
            return False  # not computed in the variable's dtype: the general path converts
    for cell, value in zip(cells, new):
        cell.value = value
    return True
