"""The Python operators of `tf.Tensor` (+, -, *, /, //, %, **, @, &, |, ^, <, <=, >, >=, unary -,
abs, ~), installed on Tensor when the math family is imported, as TF's math_ops does. Each builds
the op TF builds, under a name scope named after the operator."""
from __future__ import annotations

import numbers
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.math.elementwise import (
    Add, AddV2, abs, floordiv, floormod, greater, greater_equal, less, less_equal, logical_and,
    logical_not, logical_or, logical_xor, multiply, negative, pow, subtract, truediv)

__all__ = ["OVERLOADED_OPERATORS"]

_CONVERTIBLE = (numbers.Number, np.ndarray, np.generic, list, tuple, str, bytes)


def _add_dispatch(x: Tensor, y: Tensor, name: Optional[str] = None) -> Any:
    op = Add if x.dtype.base_dtype == _dtypes.string else AddV2
    return apply_op(op, name=name, x=x, y=y)


def _matmul(x: Any, y: Any, name: Optional[str] = None) -> Any:
    # late: linalg's matmul is built from math's ops, and importing any of them runs this
    # family's package, which installs these operators
    from tensorweave.ops.linalg.linalg_impl import matmul
    return matmul(x, y, name=name)


def _as_tensor(value: Any) -> Tensor:
    return value if isinstance(value, Tensor) else convert_to_tensor(value)


def _binary_operators(func: Callable, op_name: str) -> tuple[Callable, Callable]:
    """`x <op> y` and `y <op> x` for Tensor x: the other operand converts to x's dtype (so
    `x + 1` works for float x and `x + 1.5` is a TypeError for int x), under a name scope
    named after the operator ("add", "truediv", ...) as in TF."""

    def binary(x: Any, y: Any) -> Any:
        with name_scope(None, op_name, [x, y]) as scope:
            x = _as_tensor(x)
            if not isinstance(y, Tensor):
                try:
                    y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
                except (TypeError, ValueError) as err:
                    if not isinstance(y, _CONVERTIBLE) and hasattr(type(y), f"__r{op_name}__"):
                        return NotImplemented
                    raise TypeError(str(err)) from None
            return func(x, y, name=scope)

    def r_binary(y: Any, x: Any) -> Any:
        with name_scope(None, op_name, [x, y]) as scope:
            y = _as_tensor(y)
            try:
                x = convert_to_tensor(x, dtype=y.dtype.base_dtype, name="x")
            except (TypeError, ValueError) as err:
                raise TypeError(str(err)) from None
            return func(x, y, name=scope)

    binary.__name__, r_binary.__name__ = f"__{op_name}__", f"__r{op_name}__"
    return binary, r_binary


def _install_operators() -> list[str]:
    installed: list[str] = []
    for op_name, func in (("add", _add_dispatch), ("sub", subtract), ("mul", multiply),
                          ("truediv", truediv), ("floordiv", floordiv), ("mod", floormod),
                          ("pow", pow), ("matmul", _matmul), ("and", logical_and),
                          ("or", logical_or), ("xor", logical_xor)):
        forward, reverse = _binary_operators(func, op_name)
        Tensor._override_operator(f"__{op_name}__", forward)
        Tensor._override_operator(f"__r{op_name}__", reverse)
        installed += [f"__{op_name}__", f"__r{op_name}__"]
    for method, func in (("__lt__", less), ("__le__", less_equal), ("__gt__", greater),
                         ("__ge__", greater_equal)):
        Tensor._override_operator(method, lambda x, y, _f=func: _f(_as_tensor(x), y))
        installed.append(method)
    for method, func in (("__neg__", negative), ("__abs__", abs), ("__invert__", logical_not)):
        Tensor._override_operator(method, lambda x, _f=func: _f(_as_tensor(x)))
        installed.append(method)
    return installed


# TF1 keeps Tensor.__eq__/__ne__ identity-based (tensors are dict keys), so they are not here.
OVERLOADED_OPERATORS: list[str] = _install_operators()
