"""EagerTensor's arithmetic and comparison operators straight onto the call plans.

Tensor's operators (ops/math/operators.py) open a name scope, convert the other operand to the
tensor's dtype and call the wrapper, which calls `apply_op`. While executing eagerly, for an
other operand that is an EagerTensor or a Python scalar whose conversion is a plain cast
(call_plans.py), that comes to exactly `apply_op(op, x=..., y=...)` with the raw operands (the
name scope names nothing in eager mode, and the scalar converts to the same dtype either way,
since the tensor fixes the type attr), so the operators here call the eager context's
`_apply_op` directly. Anything else (NumPy arrays, lists, graph mode, integer division, string
concatenation) goes to Tensor's operator unchanged.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tensorweave.eager.call_plans import castable, in_int32_range
from tensorweave.eager.tensor import EagerTensor
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Tensor
from tensorweave.framework.op_def import OpDef
from tensorweave.ops.array.slicing import StridedSlice
from tensorweave.ops.math import operators as _math_operators  # noqa: F401  (Tensor's own first)
from tensorweave.ops.math.elementwise import (
    AddV2, Greater, GreaterEqual, Less, LessEqual, Mul, Neg, RealDiv, Sub)

_stack = _graph._default_graph_stack
_Stack = _graph._DefaultGraphStack


def _eager_graph() -> Any:
    """The default graph when it executes eagerly (what apply_op tests), else None."""
    stack = _stack.stack
    graph = stack[-1] if stack else _Stack.global_default
    return graph if graph is not None and graph.executes_eagerly else None


def _binary(op_def: OpDef, method: str, reverse: bool, dtype_ok: Callable[[Any], bool]) -> Callable:
    slow = getattr(Tensor, method)

    def operator(self: EagerTensor, other: Any) -> Any:
        graph = _eager_graph()
        if graph is not None and type(self._value) is np.ndarray and dtype_ok(self._dtype) and (
                type(other) is EagerTensor or castable(other, self._dtype)):
            kwargs = {"x": other, "y": self} if reverse else {"x": self, "y": other}
            return graph._apply_op(op_def, None, kwargs)
        return slow(self, other)

    operator.__name__ = method
    return operator


def _unary(op_def: OpDef, method: str) -> Callable:
    slow = getattr(Tensor, method)

    def operator(self: EagerTensor) -> Any:
        graph = _eager_graph()
        if graph is not None and type(self._value) is np.ndarray:
            return graph._apply_op(op_def, None, {"x": self})
        return slow(self)

    operator.__name__ = method
    return operator


_slow_getitem = Tensor.__getitem__
_INT32 = np.int32


def _bound(value: Any) -> bool:
    return value is None or (type(value) is int and in_int32_range(value))


def _getitem(self: EagerTensor, spec: Any) -> Any:
    """`t[i]` and `t[start:stop:step]` with Python ints: the StridedSlice Tensor's operator
    builds (begin/end/strides of int32, the masks), given straight to the eager context."""
    graph = _eager_graph()
    kind = type(spec)
    if graph is None or type(self._value) is not np.ndarray:
        return _slow_getitem(self, spec)
    if kind is int and in_int32_range(spec) and in_int32_range(spec + 1):
        begin, end, stride, masks = spec, spec + 1, 1, (0, 0, 1)
    elif kind is slice and _bound(spec.start) and _bound(spec.stop) and _bound(spec.step):
        start, stop, step = spec.start, spec.stop, spec.step
        begin, end, stride = start or 0, stop or 0, 1 if step is None else step
        masks = (start is None, stop is None, 0)
    else:
        return _slow_getitem(self, spec)
    return graph._apply_op(StridedSlice, None, {
        "input": self, "begin": EagerTensor(np.array([begin], _INT32), _dtypes.int32),
        "end": EagerTensor(np.array([end], _INT32), _dtypes.int32),
        "strides": EagerTensor(np.array([stride], _INT32), _dtypes.int32),
        "begin_mask": int(masks[0]), "end_mask": int(masks[1]), "ellipsis_mask": 0, "new_axis_mask": 0,
        "shrink_axis_mask": masks[2]})


def _not_string(dtype: Any) -> bool:
    return dtype._enum != 7 and dtype._enum != 107  # tf.string: `+` concatenates (op Add)


def _inexact(dtype: Any) -> bool:
    return dtype.is_floating or dtype.is_complex  # integers are cast first (tf.truediv)


def _any(dtype: Any) -> bool:
    return True


def _install() -> list[str]:
    installed = []
    for name, op_def, dtype_ok in (("add", AddV2, _not_string), ("sub", Sub, _any), ("mul", Mul, _any),
                                   ("truediv", RealDiv, _inexact)):
        for method, reverse in ((f"__{name}__", False), (f"__r{name}__", True)):
            setattr(EagerTensor, method, _binary(op_def, method, reverse, dtype_ok))
            installed.append(method)
    for method, op_def in (("__lt__", Less), ("__le__", LessEqual), ("__gt__", Greater),
                           ("__ge__", GreaterEqual)):
        setattr(EagerTensor, method, _binary(op_def, method, False, _any))
        installed.append(method)
    EagerTensor.__neg__ = _unary(Neg, "__neg__")  # type: ignore[method-assign]
    EagerTensor.__getitem__ = _getitem  # type: ignore[method-assign]
    return installed + ["__neg__", "__getitem__"]


INSTALLED = _install()
