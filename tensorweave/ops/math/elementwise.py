"""Element-wise math ops (white paper Table 1): unary arithmetic and functions, binary
arithmetic with broadcasting, comparisons and logic, and saturate_cast. Select, SelectV2 and
ClipByValue are in select.py, Cast in cast.py, the Python operators of `tf.Tensor` in
operators.py.

Kernels are NumPy ufuncs wherever TF's semantics allow (NumPy's floor division and remainder
already follow Python's signs, as TF's FloorDiv/FloorMod do). Binary ops broadcast like NumPy;
a kernel checks shapes at run time only when the graph could not check them statically. Large
element-wise results go into an input nothing else holds (ops/kernels/elementwise.py).
"""
from __future__ import annotations

import builtins
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor, name_scope
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import OpDef, define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import _util
from tensorweave.ops._util import format_dims, invalid
from tensorweave.ops._util import register_kernel as _kernel
from tensorweave.ops.kernels.saturating_tanh import saturating_tanh
from tensorweave.ops.kernels.elementwise import forwarding_unary, split_binary
from tensorweave.ops.math.cast import cast

__all__ = [
    "add", "subtract", "multiply", "scalar_mul", "divide", "truediv", "realdiv", "div", "div_no_nan",
    "floordiv", "floor_div", "mod", "floormod", "truncatediv", "truncatemod", "pow", "negative",
    "abs", "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "log", "log1p", "expm1", "sin",
    "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "tanh",
    "sigmoid", "maximum", "minimum", "floor", "ceil", "round", "rint", "is_nan", "is_inf",
    "is_finite", "squared_difference", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "saturate_cast",
]

_F = "float16, float32, float64"
_C = "complex64, complex128"
_SI = "int8, int16, int32, int64"
_UI = "uint8, uint16, uint32, uint64"


# ---------------------------------------------------------------------------------------------
# Kernel helpers
# ---------------------------------------------------------------------------------------------
def _guard_broadcast(ctx: KernelContext, fn: Callable) -> Callable:
    """`fn` itself when the static shapes already proved the inputs broadcast; otherwise a
    wrapper turning NumPy's broadcast ValueError into TF's InvalidArgumentError."""
    if all(t.shape.is_fully_defined() for t in ctx.op.inputs):
        return fn
    broadcast_shapes = np.broadcast_shapes

    def compute(x: Any, y: Any) -> Any:
        try:
            return fn(x, y)
        except ValueError:
            try:
                broadcast_shapes(x.shape, y.shape)
            except ValueError:
                raise invalid(f"Incompatible shapes: {format_dims(x.shape)} vs. "
                              f"{format_dims(y.shape)}") from None
            raise

    return compute


# TF 2.21's error for an integer divisor of zero: Div, FloorDiv and FloorMod check it
# (InvalidArgumentError); TruncateDiv and TruncateMod run the generic binary kernel, whose error
# flag only these checked ops expect (InternalError) -- tests/data/tf_malformed_expected.json.
_CHECKED_DIVISION_ERROR = (errors.InvalidArgumentError, "Integer division by zero")
_UNCHECKED_DIVISION_ERROR = (errors.InternalError,
                             "Unexpected error in binary operator (only integer div and mod should have errors)")


def _nonzero_divisor(xp: Any, fn: Callable, error: tuple = _CHECKED_DIVISION_ERROR) -> Callable:
    """Integer division and modulo: TF raises where NumPy would quietly return 0."""
    count_nonzero = xp.count_nonzero
    cls, message = error

    def compute(x: Any, y: Any) -> Any:
        if count_nonzero(y) != y.size:
            raise cls(None, None, message)
        return fn(x, y)

    return compute


def _fold(fn: Callable) -> Callable:
    """A `constant_value` rule: evaluates the op at graph time when all inputs are constant,
    so shape functions downstream see through small shape arithmetic (as TF's C++ does)."""

    def rule(t: Tensor) -> Optional[np.ndarray]:
        values = [tensor_util.constant_value(i) for i in t.op.inputs]
        if any(v is None for v in values):
            return None
        with np.errstate(all="ignore"):
            return np.asarray(fn(*values)).astype(t.dtype.base_dtype.as_numpy_dtype)

    return rule


# ---------------------------------------------------------------------------------------------
# Unary ops: y = f(x), same dtype, same shape
# ---------------------------------------------------------------------------------------------
def _ufunc_unary(ctx: KernelContext, ufunc: Callable) -> Callable:
    """The ufunc itself, or for large values a kernel writing into its input when it may."""
    return forwarding_unary(ctx, ufunc, lambda out, x: ufunc(x, out=out))


def _unary(name: str, types: str, ufunc: Optional[str], fold: bool = False, out: str = "T") -> OpDef:
    """Declares unary op `name`; its kernel is the array namespace's `ufunc` unless registered
    separately (ufunc None), and `fold` also evaluates it at graph time on constants."""
    op = define_op(name, inputs=["x: T"], outputs=[f"y: {out}"], attrs=[f"T: {{{types}}}"],
                   shape_fn=_util.unchanged)
    if ufunc is not None:
        _kernel(op)(lambda ctx: _ufunc_unary(ctx, getattr(ctx.xp, ufunc)))
        if fold:
            op.constant_value(_fold(getattr(np, ufunc)))
    return op


_FC = f"{_F}, {_C}"
Neg = _unary("Neg", f"{_F}, {_SI}, {_C}", "negative", fold=True)
Abs = _unary("Abs", f"{_F}, {_SI}", "absolute", fold=True)
Sign = _unary("Sign", f"{_F}, {_SI}, {_C}", "sign")
Square = _unary("Square", f"{_F}, {_SI}, {_UI}, {_C}", "square", fold=True)
Sqrt = _unary("Sqrt", _FC, "sqrt")
Rsqrt = _unary("Rsqrt", _FC, None)
Reciprocal = _unary("Reciprocal", _FC, "reciprocal")
Exp = _unary("Exp", _FC, "exp")
Log = _unary("Log", _FC, "log")
Log1p = _unary("Log1p", _FC, "log1p")
Expm1 = _unary("Expm1", _FC, "expm1")
Sin = _unary("Sin", _FC, "sin")
Cos = _unary("Cos", _FC, "cos")
Tan = _unary("Tan", _FC, "tan")
Asin = _unary("Asin", _FC, "arcsin")
Acos = _unary("Acos", _FC, "arccos")
Atan = _unary("Atan", _FC, "arctan")
Sinh = _unary("Sinh", _FC, "sinh")
Cosh = _unary("Cosh", _FC, "cosh")
Asinh = _unary("Asinh", _FC, "arcsinh")
Acosh = _unary("Acosh", _FC, "arccosh")
Atanh = _unary("Atanh", _FC, "arctanh")
Tanh = _unary("Tanh", _FC, None)
Sigmoid = _unary("Sigmoid", _FC, None)
Floor = _unary("Floor", _F, "floor")
Ceil = _unary("Ceil", _F, "ceil")
Rint = _unary("Rint", _F, "rint")
Round = _unary("Round", f"{_F}, {_SI}", None)
IsNan = _unary("IsNan", _F, "isnan", out="bool")
IsInf = _unary("IsInf", _F, "isinf", out="bool")
IsFinite = _unary("IsFinite", _F, "isfinite", out="bool")
LogicalNot = define_op("LogicalNot", inputs=["x: bool"], outputs=["y: bool"],
                       shape_fn=_util.unchanged)
_kernel(LogicalNot)(lambda ctx: ctx.xp.logical_not)
for _op in (Floor, Ceil, Round, Rint, IsNan, IsInf, IsFinite, LogicalNot):
    _op.not_differentiable()  # TF: NotDifferentiable, or a gradient that returns only None
ComplexAbs = define_op("ComplexAbs", inputs=["x: T"], outputs=["y: Tout"],
                       attrs=[f"T: {{{_C}}} = complex64", "Tout: {float32, float64} = float32"],
                       shape_fn=_util.unchanged)
_kernel(ComplexAbs)(lambda ctx: ctx.xp.absolute)


@_kernel(Rsqrt)
def _rsqrt_kernel(ctx: KernelContext) -> Callable:
    reciprocal_, sqrt_ = ctx.xp.reciprocal, ctx.xp.sqrt

    def into(out: Any, x: Any) -> None:
        reciprocal_(sqrt_(x, out=out), out=out)

    return forwarding_unary(ctx, lambda x: reciprocal_(sqrt_(x)), into)


# TF's float32/float64 Tanh saturates to exactly +/-1 (NumPy gives 0.99999994 there):
# ops/kernels/saturating_tanh.py. Registered first, so it wins over the generic kernel.
@_kernel(Tanh, dtypes=[_dtypes.float32, _dtypes.float64])
def _tanh_saturating_kernel(ctx: KernelContext) -> Callable:
    if ctx.xp is not np:
        return _ufunc_unary(ctx, ctx.xp.tanh)
    return forwarding_unary(ctx, lambda x: saturating_tanh(x, np.empty(np.shape(x), x.dtype)),
                            lambda out, x: saturating_tanh(x, out))


_kernel(Tanh)(lambda ctx: _ufunc_unary(ctx, ctx.xp.tanh))


@_kernel(Sigmoid)
def _sigmoid_kernel(ctx: KernelContext) -> Callable:
    exp_, negative_, reciprocal_ = ctx.xp.exp, ctx.xp.negative, ctx.xp.reciprocal

    def compute(x: Any) -> Any:
        # 1 / (1 + exp(-x)): exact in the tails (sigmoid(-20) = 2.06e-9, like TF), unlike
        # the tanh form; exp overflow gives inf and so 0, which is the right limit.
        e = exp_(negative_(x))
        e += 1
        return reciprocal_(e)

    def into(out: Any, x: Any) -> None:  # the same operations, in place
        exp_(negative_(x, out=out), out=out)
        out += 1
        reciprocal_(out, out=out)

    return forwarding_unary(ctx, compute, into)


@_kernel(Round)
def _round_kernel(ctx: KernelContext) -> Callable:
    if ctx.input_dtypes[0].is_integer:
        return ctx.xp.copy
    return ctx.xp.rint  # round half to even, as TF


def negative(x: Any, name: Optional[str] = None) -> Any:
    """Computes -x element-wise."""
    return apply_op(Neg, name=name, x=x)


def sign(x: Any, name: Optional[str] = None) -> Any:
    """Returns -1, 0 or 1 by the sign of x (x/|x| for complex)."""
    return apply_op(Sign, name=name, x=x)


def square(x: Any, name: Optional[str] = None) -> Any:
    """Computes x * x element-wise."""
    return apply_op(Square, name=name, x=x)


def sqrt(x: Any, name: Optional[str] = None) -> Any:
    """Computes the square root of x."""
    return apply_op(Sqrt, name=name, x=x)


def rsqrt(x: Any, name: Optional[str] = None) -> Any:
    """Computes 1 / sqrt(x) element-wise."""
    return apply_op(Rsqrt, name=name, x=x)


def reciprocal(x: Any, name: Optional[str] = None) -> Any:
    """Computes 1 / x."""
    return apply_op(Reciprocal, name=name, x=x)


def exp(x: Any, name: Optional[str] = None) -> Any:
    """Computes e ** x element-wise."""
    return apply_op(Exp, name=name, x=x)


def log(x: Any, name: Optional[str] = None) -> Any:
    """Computes the natural logarithm of x."""
    return apply_op(Log, name=name, x=x)


def log1p(x: Any, name: Optional[str] = None) -> Any:
    """Computes log(1 + x) element-wise."""
    return apply_op(Log1p, name=name, x=x)


def expm1(x: Any, name: Optional[str] = None) -> Any:
    """Computes exp(x) - 1 element-wise."""
    return apply_op(Expm1, name=name, x=x)


def sin(x: Any, name: Optional[str] = None) -> Any:
    """Computes sine element-wise."""
    return apply_op(Sin, name=name, x=x)


def cos(x: Any, name: Optional[str] = None) -> Any:
    """Computes cosine element-wise."""
    return apply_op(Cos, name=name, x=x)


def tan(x: Any, name: Optional[str] = None) -> Any:
    """Computes tangent element-wise."""
    return apply_op(Tan, name=name, x=x)


def asin(x: Any, name: Optional[str] = None) -> Any:
    """Computes arcsine element-wise."""
    return apply_op(Asin, name=name, x=x)


def acos(x: Any, name: Optional[str] = None) -> Any:
    """Computes arccosine element-wise."""
    return apply_op(Acos, name=name, x=x)


def atan(x: Any, name: Optional[str] = None) -> Any:
    """Computes arctangent element-wise."""
    return apply_op(Atan, name=name, x=x)


def sinh(x: Any, name: Optional[str] = None) -> Any:
    """Computes hyperbolic sine element-wise."""
    return apply_op(Sinh, name=name, x=x)


def cosh(x: Any, name: Optional[str] = None) -> Any:
    """Computes hyperbolic cosine element-wise."""
    return apply_op(Cosh, name=name, x=x)


def asinh(x: Any, name: Optional[str] = None) -> Any:
    """Inverse hyperbolic sine, element-wise."""
    return apply_op(Asinh, name=name, x=x)


def acosh(x: Any, name: Optional[str] = None) -> Any:
    """Inverse hyperbolic cosine, element-wise."""
    return apply_op(Acosh, name=name, x=x)


def atanh(x: Any, name: Optional[str] = None) -> Any:
    """Inverse hyperbolic tangent, element-wise."""
    return apply_op(Atanh, name=name, x=x)


def tanh(x: Any, name: Optional[str] = None) -> Any:
    """Hyperbolic tangent (tf.tanh, tf.nn.tanh)."""
    return apply_op(Tanh, name=name, x=x)


def floor(x: Any, name: Optional[str] = None) -> Any:
    """Largest integer not greater than x."""
    return apply_op(Floor, name=name, x=x)


def ceil(x: Any, name: Optional[str] = None) -> Any:
    """Smallest integer not less than x."""
    return apply_op(Ceil, name=name, x=x)


def rint(x: Any, name: Optional[str] = None) -> Any:
    """Closest integer to x, halves to even."""
    return apply_op(Rint, name=name, x=x)


def is_nan(x: Any, name: Optional[str] = None) -> Any:
    """True where x is NaN."""
    return apply_op(IsNan, name=name, x=x)


def is_inf(x: Any, name: Optional[str] = None) -> Any:
    """True where x is +-inf."""
    return apply_op(IsInf, name=name, x=x)


def is_finite(x: Any, name: Optional[str] = None) -> Any:
    """True where x is neither NaN nor inf."""
    return apply_op(IsFinite, name=name, x=x)


def logical_not(x: Any, name: Optional[str] = None) -> Any:
    """Computes NOT x element-wise (bool)."""
    return apply_op(LogicalNot, name=name, x=x)


def abs(x: Any, name: Optional[str] = None) -> Any:  # noqa: A001  (TF's name)
    """|x| element-wise; for complex x, the float magnitude (op ComplexAbs)."""
    with name_scope(name, "Abs", [x]) as scope:
        x = convert_to_tensor(x, name="x")
        if x.dtype.base_dtype.is_complex:
            return apply_op(ComplexAbs, name=scope, x=x, Tout=x.dtype.base_dtype.real_dtype)
        return apply_op(Abs, name=scope, x=x)


def sigmoid(x: Any, name: Optional[str] = None) -> Any:
    """Computes 1 / (1 + exp(-x)) element-wise (tf.sigmoid, tf.nn.sigmoid)."""
    with name_scope(name, "Sigmoid", [x]) as scope:
        return apply_op(Sigmoid, name=scope, x=convert_to_tensor(x, name="x"))


def round(x: Any, name: Optional[str] = None) -> Any:  # noqa: A001  (TF's name)
    """Rounds half to even, element-wise; integer tensors are returned unchanged (as TF)."""
    x = convert_to_tensor(x, name="x")
    if x.dtype.base_dtype.is_integer:
        return x
    return apply_op(Round, name=name, x=x)


# ---------------------------------------------------------------------------------------------
# Binary ops: z = f(x, y) with NumPy broadcasting
# ---------------------------------------------------------------------------------------------
def _binary_op(name: str, types: str, out: str = "T", attrs: tuple = ()) -> OpDef:
    return define_op(name, inputs=["x: T", "y: T"], outputs=[f"z: {out}"],
                     attrs=[f"T: {{{types}}}", *attrs], shape_fn=_util.broadcast_binary)


def _split_large(ctx: KernelContext, ufunc: Callable, plain: Callable) -> Callable:
    """`plain`, with large outputs computed in blocks over the device's threads."""
    return split_binary(ctx, ufunc, plain, lambda xs, ys: invalid(
        f"Incompatible shapes: {format_dims(xs)} vs. {format_dims(ys)}"))


def _ufunc_kernel(op: OpDef, ufunc: str, fold: bool = False) -> None:
    _kernel(op)(lambda ctx: _split_large(ctx, getattr(ctx.xp, ufunc),
                                         _guard_broadcast(ctx, getattr(ctx.xp, ufunc))))
    if fold:
        op.constant_value(_fold(getattr(np, ufunc)))


_NUMBERS = f"{_F}, {_SI}, {_UI}, {_C}"
_REALS = f"{_F}, {_SI}, {_UI}"
Add = _binary_op("Add", f"{_NUMBERS}, string")
AddV2 = _binary_op("AddV2", _NUMBERS)
Sub = _binary_op("Sub", _NUMBERS)
Mul = _binary_op("Mul", f"{_NUMBERS}, bool")
RealDiv = _binary_op("RealDiv", _NUMBERS)
Div = _binary_op("Div", _NUMBERS)
DivNoNan = _binary_op("DivNoNan", f"{_F}, {_C}")
FloorDiv = _binary_op("FloorDiv", _REALS)
FloorMod = _binary_op("FloorMod", _REALS)
TruncateDiv = _binary_op("TruncateDiv", _REALS)
TruncateMod = _binary_op("TruncateMod", _REALS)
Pow = _binary_op("Pow", f"{_F}, {_SI}, {_C}")
Maximum = _binary_op("Maximum", _REALS)
Minimum = _binary_op("Minimum", _REALS)
SquaredDifference = _binary_op("SquaredDifference", f"{_F}, int32, int64, {_C}")
Atan2 = define_op("Atan2", inputs=["y: T", "x: T"], outputs=["z: T"], attrs=[f"T: {{{_F}}}"],
                  shape_fn=_util.broadcast_binary)
Less = _binary_op("Less", _REALS, out="bool")
LessEqual = _binary_op("LessEqual", _REALS, out="bool")
Greater = _binary_op("Greater", _REALS, out="bool")
GreaterEqual = _binary_op("GreaterEqual", _REALS, out="bool")


def _equality_shape(op: Operation) -> list[TensorShape]:
    try:
        return _util.broadcast_binary(op)
    except ValueError:
        if op._get_attr("incompatible_shape_error"):
            raise
        return [TensorShape(None)]  # TF2: shapes that don't broadcast compare unequal


Equal = define_op("Equal", inputs=["x: T", "y: T"], outputs=["z: bool"],
                  attrs=[f"T: {{{_NUMBERS}, bool, string}}", "incompatible_shape_error: bool = true"],
                  shape_fn=_equality_shape)
NotEqual = define_op("NotEqual", inputs=["x: T", "y: T"], outputs=["z: bool"],
                     attrs=[f"T: {{{_NUMBERS}, bool, string}}",
                            "incompatible_shape_error: bool = true"], shape_fn=_equality_shape)
LogicalAnd = define_op("LogicalAnd", inputs=["x: bool", "y: bool"], outputs=["z: bool"],
                       shape_fn=_util.broadcast_binary)
LogicalOr = define_op("LogicalOr", inputs=["x: bool", "y: bool"], outputs=["z: bool"],
                      shape_fn=_util.broadcast_binary)
for _op in (Less, LessEqual, Greater, GreaterEqual, Equal, NotEqual, LogicalAnd, LogicalOr,
            FloorDiv, TruncateDiv,
            # TF registers no gradient for TruncateMod at all; None is the closest answer.
            TruncateMod):
    _op.not_differentiable()

for _op, _ufunc, _folds in ((Add, "add", True), (AddV2, "add", True), (Sub, "subtract", True),
                            (Mul, "multiply", True), (Maximum, "maximum", True),
                            (Minimum, "minimum", True), (Atan2, "arctan2", False),
                            (Less, "less", False), (LessEqual, "less_equal", False),
                            (Greater, "greater", False), (GreaterEqual, "greater_equal", False),
                            (LogicalAnd, "logical_and", False), (LogicalOr, "logical_or", False)):
    _ufunc_kernel(_op, _ufunc, _folds)
# RealDiv has no integer kernels in TF either: tf.truediv casts integers to floats first.
_kernel(RealDiv, dtypes=_dtypes.FLOATS + _dtypes.COMPLEX)(
    lambda ctx: _split_large(ctx, ctx.xp.true_divide, _guard_broadcast(ctx, ctx.xp.true_divide)))
FloorDiv.constant_value(_fold(np.floor_divide))
FloorMod.constant_value(_fold(np.remainder))


def _trunc_div_int(xp: Any) -> Callable:
    floor_divide, remainder = xp.floor_divide, xp.remainder

    def compute(x: Any, y: Any) -> Any:
        # C division rounds toward zero: floor, plus one where inexact with mixed signs.
        return floor_divide(x, y) + ((remainder(x, y) != 0) & ((x < 0) != (y < 0)))

    return compute


def _int_or_float_kernel(op: OpDef, int_fn: Callable, float_fn: Callable,
                         zero_error: tuple = _CHECKED_DIVISION_ERROR) -> None:
    """Kernel builder choosing the integer (zero-checked) or floating implementation."""

    @_kernel(op)
    def build(ctx: KernelContext) -> Callable:
        xp = ctx.xp
        if ctx.input_dtypes[0].is_integer:
            return _guard_broadcast(ctx, _nonzero_divisor(xp, int_fn(xp), zero_error))
        return _guard_broadcast(ctx, float_fn(xp))


_int_or_float_kernel(FloorDiv, lambda xp: xp.floor_divide, lambda xp: xp.floor_divide)
_int_or_float_kernel(FloorMod, lambda xp: xp.remainder, lambda xp: xp.remainder)
_int_or_float_kernel(TruncateDiv, _trunc_div_int, lambda xp: lambda x, y: xp.trunc(x / y),
                     _UNCHECKED_DIVISION_ERROR)
_int_or_float_kernel(TruncateMod, lambda xp: xp.fmod, lambda xp: xp.fmod, _UNCHECKED_DIVISION_ERROR)
_int_or_float_kernel(Div, _trunc_div_int, lambda xp: xp.true_divide)


@_kernel(DivNoNan)
def _div_no_nan_kernel(ctx: KernelContext) -> Callable:
    xp = ctx.xp
    zero = xp.zeros((), ctx.output_dtypes[0].as_numpy_dtype)
    return _guard_broadcast(ctx, lambda x, y: xp.where(y == 0, zero, x / y))


@_kernel(Pow)
def _pow_kernel(ctx: KernelContext) -> Callable:
    power = ctx.xp.power
    if not ctx.input_dtypes[0].is_integer:
        return _guard_broadcast(ctx, power)

    def compute(x: Any, y: Any) -> Any:
        if (y < 0).any():
            raise invalid("Integers to negative integer powers are not allowed")
        return power(x, y)

    return _guard_broadcast(ctx, compute)


@_kernel(SquaredDifference)
def _squared_difference_kernel(ctx: KernelContext) -> Callable:
    xp = ctx.xp
    if ctx.input_dtypes[0].is_complex:
        return _guard_broadcast(ctx, lambda x, y: (lambda d: d * xp.conj(d))(x - y))
    return _guard_broadcast(ctx, lambda x, y: xp.square(x - y))


def _equality_kernel(op: OpDef, ufunc: str, mismatch: bool) -> None:
    @_kernel(op)
    def build(ctx: KernelContext) -> Callable:
        fn = getattr(ctx.xp, ufunc)
        if ctx.attr("incompatible_shape_error"):
            return _guard_broadcast(ctx, fn)
        answer = ctx.xp.asarray(mismatch)

        def compute(x: Any, y: Any) -> Any:
            try:
                return fn(x, y)
            except ValueError:
                return answer.copy()

        return compute


_equality_kernel(Equal, "equal", False)
_equality_kernel(NotEqual, "not_equal", True)


def subtract(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns x - y element-wise, with broadcasting."""
    return apply_op(Sub, name=name, x=x, y=y)


def multiply(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns x * y element-wise, with broadcasting."""
    return apply_op(Mul, name=name, x=x, y=y)


def realdiv(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns x / y for real or complex x and y."""
    return apply_op(RealDiv, name=name, x=x, y=y)


def div_no_nan(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns x / y, or 0 where y is 0."""
    return apply_op(DivNoNan, name=name, x=x, y=y)


def floor_div(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns floor(x / y) element-wise."""
    return apply_op(FloorDiv, name=name, x=x, y=y)


def floormod(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """x mod y; the result has the sign of y."""
    return apply_op(FloorMod, name=name, x=x, y=y)


mod = floormod  # TF: tf.mod is tf.floormod, one function


def truncatediv(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """x / y rounded toward zero."""
    return apply_op(TruncateDiv, name=name, x=x, y=y)


def truncatemod(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """x mod y with the sign of x (C fmod)."""
    return apply_op(TruncateMod, name=name, x=x, y=y)


def maximum(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns max(x, y) element-wise (NaN wins)."""
    return apply_op(Maximum, name=name, x=x, y=y)


def minimum(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns min(x, y) element-wise (NaN wins)."""
    return apply_op(Minimum, name=name, x=x, y=y)


def squared_difference(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns (x - y) * conj(x - y) element-wise."""
    return apply_op(SquaredDifference, name=name, x=x, y=y)


def less(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns the truth value of x < y element-wise."""
    return apply_op(Less, name=name, x=x, y=y)


def less_equal(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns the truth value of x <= y."""
    return apply_op(LessEqual, name=name, x=x, y=y)


def greater(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns the truth value of x > y element-wise."""
    return apply_op(Greater, name=name, x=x, y=y)


def greater_equal(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns the truth value of x >= y."""
    return apply_op(GreaterEqual, name=name, x=x, y=y)


def equal(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns the truth value of x == y element-wise."""
    return apply_op(Equal, name=name, x=x, y=y)


def not_equal(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns the truth value of x != y."""
    return apply_op(NotEqual, name=name, x=x, y=y)


def logical_and(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns x AND y element-wise (bool)."""
    return apply_op(LogicalAnd, name=name, x=x, y=y)


def logical_or(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns x OR y element-wise (bool)."""
    return apply_op(LogicalOr, name=name, x=x, y=y)


def add(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns x + y element-wise (op AddV2; Add, which also concatenates strings, for
    tf.string)."""
    if _is_string(x) or _is_string(y):
        return apply_op(Add, name=name or "Add", x=x, y=y)
    return apply_op(AddV2, name=name or "Add", x=x, y=y)


def _is_string(v: Any) -> bool:
    if isinstance(v, Tensor):  # the common case, first: an eager add pays little for it
        return v._dtype.base_dtype is _dtypes.string
    dtype = getattr(v, "dtype", None)
    if isinstance(dtype, _dtypes.DType):
        return dtype.base_dtype == _dtypes.string
    if isinstance(v, (str, bytes)):
        return True
    if isinstance(v, (list, tuple)) and v:
        return _is_string(v[0])
    return isinstance(dtype, np.dtype) and dtype.kind in ("U", "S", "O")


def atan2(y: Any, x: Any, name: Optional[str] = None) -> Any:
    """Element-wise arctangent of y / x, using the signs of both to pick the quadrant."""
    return apply_op(Atan2, name=name, y=y, x=x)


def scalar_mul(scalar: Any, x: Any, name: Optional[str] = None) -> Any:
    """Multiplies tensor `x` by a scalar (TF1's tf.scalar_mul)."""
    x = convert_to_tensor(x, name="x")
    scalar = convert_to_tensor(scalar, dtype=x.dtype.base_dtype, name="scalar")
    if scalar.shape.ndims != 0:
        raise ValueError(f"Only scalar multiply works, got shape {scalar.shape}")
    return apply_op(Mul, name=name, x=scalar, y=x)


def pow(x: Any, y: Any, name: Optional[str] = None) -> Any:  # noqa: A001  (TF's name)
    """x ** y element-wise; integers to negative powers fail at run time, as in TF."""
    with name_scope(name, "Pow", [x]) as scope:
        return apply_op(Pow, name=scope, x=x, y=y)


def floordiv(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """floor(x / y) element-wise (FloorDiv); integer division by zero fails at run time."""
    with name_scope(name, "floordiv", [x, y]) as scope:
        return apply_op(FloorDiv, name=scope, x=x, y=y)


def _same_dtype_pair(x: Any, y: Any) -> tuple[Tensor, Tensor]:
    x = convert_to_tensor(x, name="x")
    if not isinstance(y, Tensor) and not hasattr(y, "_as_graph_element"):
        y = convert_to_tensor(y, dtype=x.dtype.base_dtype, name="y")
    y = convert_to_tensor(y, name="y")
    if x.dtype.base_dtype != y.dtype.base_dtype:
        raise TypeError(f"x and y must have the same dtype, got {x.dtype.base_dtype!r} != "
                        f"{y.dtype.base_dtype!r}.")
    return x, y


# Python 3 true division: integers become floats first (int8/16, uint8/16 -> float32;
# int32/64, uint32/64 -> float64), as TF's _TRUEDIV_TABLE.
_TRUEDIV_CAST = {_dtypes.int8: _dtypes.float32, _dtypes.int16: _dtypes.float32,
                 _dtypes.uint8: _dtypes.float32, _dtypes.uint16: _dtypes.float32,
                 _dtypes.int32: _dtypes.float64, _dtypes.int64: _dtypes.float64,
                 _dtypes.uint32: _dtypes.float64, _dtypes.uint64: _dtypes.float64}


def truediv(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """x / y with Python 3 semantics: integer inputs are cast to floating point first."""
    with name_scope(name, "truediv", [x, y]) as scope:
        x, y = _same_dtype_pair(x, y)
        dtype = x.dtype.base_dtype
        if not (dtype.is_floating or dtype.is_complex or dtype in _TRUEDIV_CAST):
            raise TypeError(f"Invalid dtype {dtype!r} in __truediv__")
        if dtype in _TRUEDIV_CAST:
            x, y = cast(x, _TRUEDIV_CAST[dtype]), cast(y, _TRUEDIV_CAST[dtype])
        return apply_op(RealDiv, name=scope, x=x, y=y)


def divide(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Python 3 division x / y (tf.divide)."""
    if name is not None:
        return truediv(x, y, name=name)
    if not isinstance(x, Tensor):
        x = convert_to_tensor(x, dtype=y.dtype.base_dtype if isinstance(y, Tensor) else None)
    return x / y


def div(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """TF1's tf.div: Python 2 division, floor division for integers, x / y for floats."""
    with name_scope(name, "div", [x, y]) as scope:
        x, y = _same_dtype_pair(x, y)
        dtype = x.dtype.base_dtype
        op = RealDiv if dtype.is_floating or dtype.is_complex else FloorDiv
        return apply_op(op, name=scope, x=x, y=y)


def logical_xor(x: Any, y: Any, name: str = "LogicalXor") -> Any:
    """x XOR y element-wise, built as (x OR y) AND NOT (x AND y), as TF does."""
    with name_scope(name, "LogicalXor", [x, y]) as scope:
        return apply_op(LogicalAnd, name=scope, x=logical_or(x, y),
                        y=logical_not(logical_and(x, y)))


# ---------------------------------------------------------------------------------------------
# saturate_cast (Cast itself and the cast helpers: cast.py)
# ---------------------------------------------------------------------------------------------
def _saturation_bound(src: _dtypes.DType, bound: Any) -> np.ndarray:
    """`bound` in `src`, moved toward zero if rounding pushed it out of range (float32 can't
    hold 2**31 - 1: its nearest value 2**31 would wrap when cast)."""
    value = np.asarray(bound).astype(src.as_numpy_dtype)
    if src.is_floating:
        # Python compares float and int exactly (NumPy would round the int to a float).
        while builtins.abs(float(value)) > builtins.abs(int(bound)):
            value = np.nextafter(value, value.dtype.type(0))
    return value


def saturate_cast(value: Any, dtype: Any, name: Optional[str] = None) -> Any:
    """Casts to `dtype`, clamping to its range first so nothing wraps around."""
    with name_scope(name, "saturate_cast", [value]) as scope:
        value = convert_to_tensor(value, name="value")
        dtype = _dtypes.as_dtype(dtype).base_dtype
        src = value.dtype.base_dtype
        # bool fits every type (and has no min/max); complex and bool targets clamp nothing
        if not (src.is_complex or dtype.is_complex or _dtypes.bool in (src, dtype)):
            if src.min < dtype.min:
                value = maximum(value, _saturation_bound(src, dtype.min))
            if src.max > dtype.max:
                value = minimum(value, _saturation_bound(src, dtype.max))
        return cast(value, dtype, name=scope)
