"""What each op a JIT cluster may hold computes on one element, as a Python expression numba
compiles (`{0}`, `{1}`, `{2}` are the operands' variable names, `T` the op's result type).

Every result is converted back to its op's type (`T(...)`) so a float32 chain stays float32 as
the unfused kernels compute it (numba would otherwise widen mixed expressions and int32 sums),
and constants are typed. fastmath stays off: results equal the unfused graph's within float32
rounding.

Tanh is not libm's scalar tanhf (about 30 ns an element, no SIMD): `_tw_tanh_<T>` evaluates it
through expm1 in float64 with a polynomial numba can vectorize (error within 0.5 ulp of
float32, measured), and saturates to exactly +/-1 where TensorFlow's kernel does (ops/kernels/
saturating_tanh.py), so it matches the unfused Tanh.
"""
from __future__ import annotations

import dataclasses
from typing import Optional

__all__ = ["ScalarOp", "SCALAR_OPS", "HELPERS", "REDUCTIONS", "scalar_op"]

_FLOATS = frozenset(("float32", "float64"))
_INTS = frozenset(("int32", "int64"))
_NUMBERS = _FLOATS | _INTS
_BOOL = frozenset(("bool",))


@dataclasses.dataclass(frozen=True)
class ScalarOp:
    template: str              # the element's expression
    arity: int
    types: frozenset           # the op's input type T (its attr "T", or the inputs' type)
    boolean: bool = False      # the result is bool whatever T is (comparisons)


def _u(template: str, types: frozenset = _FLOATS) -> ScalarOp:
    return ScalarOp(template, 1, types)


def _b(template: str, types: frozenset = _NUMBERS) -> ScalarOp:
    return ScalarOp(template, 2, types)


def _cmp(template: str, types: frozenset = _NUMBERS) -> ScalarOp:
    return ScalarOp(template, 2, types, boolean=True)


SCALAR_OPS: dict[str, ScalarOp] = {
    "Neg": _u("-{0}", _NUMBERS),
    "Abs": _u("abs({0})", _NUMBERS),
    "Square": _u("{0} * {0}", _NUMBERS),
    "Sqrt": _u("math.sqrt({0})"),
    "Rsqrt": _u("T(1) / math.sqrt({0})"),
    "Reciprocal": _u("T(1) / {0}"),
    "Inv": _u("T(1) / {0}"),
    "Exp": _u("math.exp({0})"),
    "Log": _u("math.log({0})"),
    "Log1p": _u("math.log1p({0})"),
    "Expm1": _u("math.expm1({0})"),
    "Sin": _u("math.sin({0})"),
    "Cos": _u("math.cos({0})"),
    "Tanh": _u("_tw_tanh_{T}({0})"),
    "Sigmoid": _u("T(1) / (T(1) + math.exp(-{0}))"),
    "Relu": _u("T(0) if {0} < T(0) else {0}", _NUMBERS),
    "Floor": _u("np.floor({0})"),
    "Ceil": _u("np.ceil({0})"),
    "Sign": _u("np.sign({0})", _NUMBERS),
    "Add": _b("{0} + {1}"),
    "AddV2": _b("{0} + {1}"),
    "BiasAdd": _b("{0} + {1}"),
    "Sub": _b("{0} - {1}"),
    "Mul": _b("{0} * {1}"),
    "RealDiv": _b("{0} / {1}", _FLOATS),
    "Div": _b("{0} / {1}", _FLOATS),
    "Maximum": _b("np.maximum({0}, {1})"),
    "Minimum": _b("np.minimum({0}, {1})"),
    "Pow": _b("{0} ** {1}", _FLOATS),
    "SquaredDifference": _b("({0} - {1}) * ({0} - {1})"),
    "Less": _cmp("{0} < {1}"),
    "LessEqual": _cmp("{0} <= {1}"),
    "Greater": _cmp("{0} > {1}"),
    "GreaterEqual": _cmp("{0} >= {1}"),
    "Equal": _cmp("{0} == {1}", _NUMBERS | _BOOL),
    "NotEqual": _cmp("{0} != {1}", _NUMBERS | _BOOL),
    "LogicalAnd": ScalarOp("{0} and {1}", 2, _BOOL),
    "LogicalOr": ScalarOp("{0} or {1}", 2, _BOOL),
    "LogicalNot": ScalarOp("not {0}", 1, _BOOL),
    # the condition is input 0; T is the type of the values
    "SelectV2": ScalarOp("{1} if {0} else {2}", 3, _NUMBERS | _BOOL),
    "Select": ScalarOp("{1} if {0} else {2}", 3, _NUMBERS | _BOOL),
    "Cast": ScalarOp("{0}", 1, _NUMBERS | _BOOL),
}

# Reductions a cluster may end with (float types only: their NumPy calls are the unfused kernels').
REDUCTIONS = frozenset(("Sum", "Mean", "Max", "Min", "Prod"))

# Source every generated module starts with (after `import math`, `import numpy as np` and the
# numba import): the vectorizable tanh.
HELPERS = '''
_TW_LN2 = 0.6931471805599453
_TW_INV_LN2 = 1.4426950408889634


@numba.njit(inline="always", cache=True)
def _tw_expm1_parts(a, clamp):
    # 2|u| clamped (NaN too: k stays in range; its result is replaced by the caller), split
    # into k*ln2 + r with |r| <= ln2/2: expm1(2|u|) = 2^k * expm1(r) + (2^k - 1)
    c = a if a < clamp else clamp
    y = 2.0 * c
    k = np.floor(y * _TW_INV_LN2 + 0.5)
    return y - k * _TW_LN2, np.float64(np.int64(1) << np.int64(k))


@numba.njit(inline="always", cache=True)
def _tw_tanh_end(em1, a, v, clamp):
    t = em1 / (em1 + 2.0)
    t = 1.0 if a >= clamp else t  # saturated exactly, as TF's kernel
    t = np.copysign(t, v)
    return t if a == a else v     # NaN stays NaN


@numba.njit(inline="always", cache=True)
def _tw_tanh_float32(u):
    # tanh(|u|) = expm1(2|u|) / (expm1(2|u|) + 2) in float64, with expm1(r) from its Taylor
    # polynomial: no branches and no libm call, so the loop vectorizes. Degree 8 leaves an
    # error under 2e-9 relative, far below float32's rounding.
    v = np.float64(u)
    a = abs(v)
    clamp = 7.90738964080810547
    r, two_k = _tw_expm1_parts(a, clamp)
    p = r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720 + r * (
        1.0 / 5040 + r / 40320)))))))
    return _tw_tanh_end(two_k * p + (two_k - 1.0), a, v, clamp)


@numba.njit(inline="always", cache=True)
def _tw_tanh_float64(u):
    # as _tw_tanh_float32, to degree 14 (error under 1e-17 relative)
    v = np.float64(u)
    a = abs(v)
    clamp = 17.714196154005176
    r, two_k = _tw_expm1_parts(a, clamp)
    p = r * (1.0 + r * (0.5 + r * (1.0 / 6 + r * (1.0 / 24 + r * (1.0 / 120 + r * (1.0 / 720 + r * (
        1.0 / 5040 + r * (1.0 / 40320 + r * (1.0 / 362880 + r * (1.0 / 3628800 + r * (1.0 / 39916800 + r * (
            1.0 / 479001600 + r * (1.0 / 6227020800 + r / 87178291200)))))))))))))
    return _tw_tanh_end(two_k * p + (two_k - 1.0), a, v, clamp)
'''


def scalar_op(op_type: str) -> Optional[ScalarOp]:
    return SCALAR_OPS.get(op_type)
