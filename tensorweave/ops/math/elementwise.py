"""Element-wise math ops (white paper Table 1): arithmetic, comparisons, logic, Select,
saturate_cast, ClipByValue, and the Python operators of `tf.Tensor`. Reductions, AddN and
ArgMax/ArgMin live in reduction_ops.py, Cast and the cast helpers in cast_ops.py; their names
are re-exported here, as in TensorFlow's math_ops.

Kernels are NumPy ufuncs wherever TF's semantics allow (NumPy's floor division and remainder
already follow Python's signs, as TF's FloorDiv/FloorMod do). Binary ops broadcast like NumPy;
a kernel checks shapes at run time only when the graph could not check them statically. Large
element-wise results go into an input nothing else holds (elementwise_kernels.py).
"""
from __future__ import annotations

import builtins
import numbers
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Tensor, name_scope
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import _util
from tensorweave.ops.math.cast import Cast, cast, to_double, to_float, to_int32, to_int64  # noqa: F401
from tensorweave.ops.kernels.elementwise import forwarding_unary, split_binary
from tensorweave.ops.math.reduction import count_nonzero
from tensorweave.ops._util import invalid
from tensorweave.ops.math.reduction import _dims, broadcast_gradient_args  # noqa: F401
from tensorweave.ops._util import register_kernel as _kernel

__all__ = [
    "add", "subtract", "multiply", "scalar_mul", "divide", "truediv", "realdiv", "div", "div_no_nan",
    "floordiv", "floor_div", "mod", "floormod", "truncatediv", "truncatemod", "pow", "negative",
    "abs", "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "log", "log1p", "expm1", "sin",
    "cos", "tan", "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "tanh",
    "sigmoid", "maximum", "minimum", "floor", "ceil", "round", "rint", "is_nan", "is_inf",
    "is_finite", "squared_difference", "equal", "not_equal", "less", "less_equal", "greater",
    "greater_equal", "logical_and", "logical_or", "logical_not", "logical_xor", "where", "where_v2",
    "cast", "to_float", "to_double", "to_int32", "to_int64", "saturate_cast", "clip_by_value",
]

_F = "float16, float32, float64"
_C = "complex64, complex128"
_SI = "int8, int16, int32, int64"
_UI = "uint8, uint16, uint32, uint64"


# ---------------------------------------------------------------------------------------------
# Kernel helpers
# ---------------------------------------------------------------------------------------------
def _guard_broadcast(ctx: Any, fn: Callable) -> Callable:
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
                raise invalid(f"Incompatible shapes: {_dims(x.shape)} vs. {_dims(y.shape)}") from None
            raise

    return compute


def _nonzero_divisor(xp: Any, fn: Callable) -> Callable:
    """Integer division and modulo: TF raises where NumPy would quietly return 0."""
    count_nonzero = xp.count_nonzero

    def compute(x: Any, y: Any) -> Any:
        if count_nonzero(y) != y.size:
            raise invalid("Integer division by zero")
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
def _ufunc_unary(ctx: Any, ufunc: Callable) -> Callable:
    """The ufunc itself, or for large values a kernel writing into its input when it may."""
    return forwarding_unary(ctx, ufunc, lambda out, x: ufunc(x, out=out))


def _unary(name: str, types: str, ufunc: Optional[str], public: str, doc: str,
           fold: bool = False, out: str = "T") -> tuple[Any, Callable]:
    """Defines unary op `name` (kernel: the array namespace's `ufunc`, unless registered
    separately) and returns it with its public wrapper `public(x, name=None)`."""
    op = define_op(name, inputs=["x: T"], outputs=[f"y: {out}"], attrs=[f"T: {{{types}}}"],
                   shape_fn=_util.unchanged)
    if ufunc is not None:
        _kernel(op)(lambda ctx: _ufunc_unary(ctx, getattr(ctx.xp, ufunc)))
        if fold:
            op.registration.constant_value = _fold(getattr(np, ufunc))

    def wrapper(x: Any, name: Optional[str] = None) -> Any:
        return apply_op(op, name=name, x=x)

    wrapper.__name__ = wrapper.__qualname__ = public
    wrapper.__doc__ = doc
    return op, wrapper


_FC = f"{_F}, {_C}"
Neg, negative = _unary("Neg", f"{_F}, {_SI}, {_C}", "negative", "negative",
                       "Computes -x element-wise.", fold=True)
Abs, _ = _unary("Abs", f"{_F}, {_SI}", "absolute", "abs", "|x| for real x.", fold=True)
Sign, sign = _unary("Sign", f"{_F}, {_SI}, {_C}", "sign", "sign",
                    "Returns -1, 0 or 1 by the sign of x (x/|x| for complex).")
Square, square = _unary("Square", f"{_F}, {_SI}, {_UI}, {_C}", "square", "square",
                        "Computes x * x element-wise.", fold=True)
Sqrt, sqrt = _unary("Sqrt", _FC, "sqrt", "sqrt", "Computes the square root of x.")
Rsqrt, rsqrt = _unary("Rsqrt", _FC, None, "rsqrt", "Computes 1 / sqrt(x) element-wise.")
Reciprocal, reciprocal = _unary("Reciprocal", _FC, "reciprocal", "reciprocal", "Computes 1 / x.")
Exp, exp = _unary("Exp", _FC, "exp", "exp", "Computes e ** x element-wise.")
Log, log = _unary("Log", _FC, "log", "log", "Computes the natural logarithm of x.")
Log1p, log1p = _unary("Log1p", _FC, "log1p", "log1p", "Computes log(1 + x) element-wise.")
Expm1, expm1 = _unary("Expm1", _FC, "expm1", "expm1", "Computes exp(x) - 1 element-wise.")
Sin, sin = _unary("Sin", _FC, "sin", "sin", "Computes sine element-wise.")
Cos, cos = _unary("Cos", _FC, "cos", "cos", "Computes cosine element-wise.")
Tan, tan = _unary("Tan", _FC, "tan", "tan", "Computes tangent element-wise.")
Asin, asin = _unary("Asin", _FC, "arcsin", "asin", "Computes arcsine element-wise.")
Acos, acos = _unary("Acos", _FC, "arccos", "acos", "Computes arccosine element-wise.")
Atan, atan = _unary("Atan", _FC, "arctan", "atan", "Computes arctangent element-wise.")
Sinh, sinh = _unary("Sinh", _FC, "sinh", "sinh", "Computes hyperbolic sine element-wise.")
Cosh, cosh = _unary("Cosh", _FC, "cosh", "cosh", "Computes hyperbolic cosine element-wise.")
Asinh, asinh = _unary("Asinh", _FC, "arcsinh", "asinh", "Inverse hyperbolic sine, element-wise.")
Acosh, acosh = _unary("Acosh", _FC, "arccosh", "acosh", "Inverse hyperbolic cosine, element-wise.")
Atanh, atanh = _unary("Atanh", _FC, "arctanh", "atanh", "Inverse hyperbolic tangent, element-wise.")
Tanh, tanh = _unary("Tanh", _FC, "tanh", "tanh", "Hyperbolic tangent (tf.tanh, tf.nn.tanh).")
Sigmoid, _ = _unary("Sigmoid", _FC, None, "sigmoid", "1 / (1 + exp(-x)).")
Floor, floor = _unary("Floor", _F, "floor", "floor", "Largest integer not greater than x.")
Ceil, ceil = _unary("Ceil", _F, "ceil", "ceil", "Smallest integer not less than x.")
Rint, rint = _unary("Rint", _F, "rint", "rint", "Closest integer to x, halves to even.")
Round, _ = _unary("Round", f"{_F}, {_SI}", None, "round", "Rounds half to even.")
IsNan, is_nan = _unary("IsNan", _F, "isnan", "is_nan", "True where x is NaN.", out="bool")
IsInf, is_inf = _unary("IsInf", _F, "isinf", "is_inf", "True where x is +-inf.", out="bool")
IsFinite, is_finite = _unary("IsFinite", _F, "isfinite", "is_finite",
                             "True where x is neither NaN nor inf.", out="bool")
LogicalNot = define_op("LogicalNot", inputs=["x: bool"], outputs=["y: bool"],
                       shape_fn=_util.unchanged)
_kernel(LogicalNot)(lambda ctx: ctx.xp.logical_not)
ComplexAbs = define_op("ComplexAbs", inputs=["x: T"], outputs=["y: Tout"],
                       attrs=[f"T: {{{_C}}} = complex64", "Tout: {float32, float64} = float32"],
                       shape_fn=_util.unchanged)
_kernel(ComplexAbs)(lambda ctx: ctx.xp.absolute)


@_kernel(Rsqrt)
def _rsqrt_kernel(ctx: Any) -> Callable:
    reciprocal_, sqrt_ = ctx.xp.reciprocal, ctx.xp.sqrt

    def into(out: Any, x: Any) -> None:
        reciprocal_(sqrt_(x, out=out), out=out)

    return forwarding_unary(ctx, lambda x: reciprocal_(sqrt_(x)), into)


@_kernel(Sigmoid)
def _sigmoid_kernel(ctx: Any) -> Callable:
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
def _round_kernel(ctx: Any) -> Callable:
    if ctx.input_dtypes[0].is_integer:
        return ctx.xp.copy
    return ctx.xp.rint  # round half to even, as TF


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
def _binary_op(name: str, types: str, out: str = "T", attrs: tuple = ()) -> Any:
    return define_op(name, inputs=["x: T", "y: T"], outputs=[f"z: {out}"],
                     attrs=[f"T: {{{types}}}", *attrs], shape_fn=_util.broadcast_binary)


def _split_large(ctx: Any, ufunc: Callable, plain: Callable) -> Callable:
    """`plain`, with large outputs computed in blocks over the device's threads."""
    return split_binary(ctx, ufunc, plain, lambda xs, ys: invalid(
        f"Incompatible shapes: {_dims(xs)} vs. {_dims(ys)}"))


def _ufunc_kernel(op: Any, ufunc: str, fold: bool = False) -> None:
    _kernel(op)(lambda ctx: _split_large(ctx, getattr(ctx.xp, ufunc),
                                         _guard_broadcast(ctx, getattr(ctx.xp, ufunc))))
    if fold:
        op.registration.constant_value = _fold(getattr(np, ufunc))


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


def _equality_shape(op: Any) -> list[TensorShape]:
    try:
        return _util.broadcast_binary(op)
    except ValueError:
        if op.get_attr("incompatible_shape_error"):
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
FloorDiv.registration.constant_value = _fold(np.floor_divide)
FloorMod.registration.constant_value = _fold(np.remainder)


def _trunc_div_int(xp: Any) -> Callable:
    floor_divide, remainder = xp.floor_divide, xp.remainder

    def compute(x: Any, y: Any) -> Any:
        # C division rounds toward zero: floor, plus one where inexact with mixed signs.
        return floor_divide(x, y) + ((remainder(x, y) != 0) & ((x < 0) != (y < 0)))

    return compute


def _int_or_float_kernel(op: Any, int_fn: Callable, float_fn: Callable) -> None:
    """Kernel builder choosing the integer (zero-checked) or floating implementation."""

    @_kernel(op)
    def build(ctx: Any) -> Callable:
        xp = ctx.xp
        if ctx.input_dtypes[0].is_integer:
            return _guard_broadcast(ctx, _nonzero_divisor(xp, int_fn(xp)))
        return _guard_broadcast(ctx, float_fn(xp))


_int_or_float_kernel(FloorDiv, lambda xp: xp.floor_divide, lambda xp: xp.floor_divide)
_int_or_float_kernel(FloorMod, lambda xp: xp.remainder, lambda xp: xp.remainder)
_int_or_float_kernel(TruncateDiv, _trunc_div_int, lambda xp: lambda x, y: xp.trunc(x / y))
_int_or_float_kernel(TruncateMod, lambda xp: xp.fmod, lambda xp: xp.fmod)
_int_or_float_kernel(Div, _trunc_div_int, lambda xp: xp.true_divide)


@_kernel(DivNoNan)
def _div_no_nan_kernel(ctx: Any) -> Callable:
    xp = ctx.xp
    zero = xp.zeros((), ctx.output_dtypes[0].as_numpy_dtype)
    return _guard_broadcast(ctx, lambda x, y: xp.where(y == 0, zero, x / y))


@_kernel(Pow)
def _pow_kernel(ctx: Any) -> Callable:
    power = ctx.xp.power
    if not ctx.input_dtypes[0].is_integer:
        return _guard_broadcast(ctx, power)

    def compute(x: Any, y: Any) -> Any:
        if (y < 0).any():
            raise invalid("Integers to negative integer powers are not allowed")
        return power(x, y)

    return _guard_broadcast(ctx, compute)


@_kernel(SquaredDifference)
def _squared_difference_kernel(ctx: Any) -> Callable:
    xp = ctx.xp
    if ctx.input_dtypes[0].is_complex:
        return _guard_broadcast(ctx, lambda x, y: (lambda d: d * xp.conj(d))(x - y))
    return _guard_broadcast(ctx, lambda x, y: xp.square(x - y))


def _equality_kernel(op: Any, ufunc: str, mismatch: bool) -> None:
    @_kernel(op)
    def build(ctx: Any) -> Callable:
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


def _binary_wrapper(op: Any, public: str, doc: str) -> Callable:
    def wrapper(x: Any, y: Any, name: Optional[str] = None) -> Any:
        return apply_op(op, name=name, x=x, y=y)

    wrapper.__name__ = wrapper.__qualname__ = public
    wrapper.__doc__ = doc
    return wrapper


subtract = _binary_wrapper(Sub, "subtract", "Returns x - y element-wise, with broadcasting.")
multiply = _binary_wrapper(Mul, "multiply", "Returns x * y element-wise, with broadcasting.")
realdiv = _binary_wrapper(RealDiv, "realdiv", "Returns x / y for real or complex x and y.")
div_no_nan = _binary_wrapper(DivNoNan, "div_no_nan", "Returns x / y, or 0 where y is 0.")
floor_div = _binary_wrapper(FloorDiv, "floor_div", "Returns floor(x / y) element-wise.")
floormod = _binary_wrapper(FloorMod, "floormod", "x mod y; the result has the sign of y.")
mod = _binary_wrapper(FloorMod, "mod", "x mod y; the result has the sign of y.")
truncatediv = _binary_wrapper(TruncateDiv, "truncatediv", "x / y rounded toward zero.")
truncatemod = _binary_wrapper(TruncateMod, "truncatemod", "x mod y with the sign of x (C fmod).")
maximum = _binary_wrapper(Maximum, "maximum", "Returns max(x, y) element-wise (NaN wins).")
minimum = _binary_wrapper(Minimum, "minimum", "Returns min(x, y) element-wise (NaN wins).")
squared_difference = _binary_wrapper(SquaredDifference, "squared_difference",
                                     "Returns (x - y) * conj(x - y) element-wise.")
less = _binary_wrapper(Less, "less", "Returns the truth value of x < y element-wise.")
less_equal = _binary_wrapper(LessEqual, "less_equal", "Returns the truth value of x <= y.")
greater = _binary_wrapper(Greater, "greater", "Returns the truth value of x > y element-wise.")
greater_equal = _binary_wrapper(GreaterEqual, "greater_equal", "Returns the truth value of x >= y.")
equal = _binary_wrapper(Equal, "equal", "Returns the truth value of x == y element-wise.")
not_equal = _binary_wrapper(NotEqual, "not_equal", "Returns the truth value of x != y.")
logical_and = _binary_wrapper(LogicalAnd, "logical_and", "Returns x AND y element-wise (bool).")
logical_or = _binary_wrapper(LogicalOr, "logical_or", "Returns x OR y element-wise (bool).")


def add(x: Any, y: Any, name: Optional[str] = None) -> Any:
    """Returns x + y element-wise (op AddV2; Add, which also concatenates strings, for
    tf.string)."""
    if _is_string(x) or _is_string(y):
        return apply_op(Add, name=name or "Add", x=x, y=y)
    return apply_op(AddV2, name=name or "Add", x=x, y=y)


def _is_string(v: Any) -> bool:
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
# Select / SelectV2 (tf.where)
# ---------------------------------------------------------------------------------------------
def _select_shape(op: Any) -> list[TensorShape]:
    cond, x, y = (t.shape for t in op.inputs)
    try:
        out = x.merge_with(y)
        if cond.ndims is None or out.ndims is None or cond.ndims == 0:
            return [out]
        if cond.ndims == 1 and out.ndims > 1:  # TF1: a vector picks whole rows
            return [TensorShape([cond.dims[0].merge_with(out.dims[0])] + out.dims[1:])]
        return [out.merge_with(cond)]
    except ValueError as err:
        raise ValueError(f"{err} for '{op.name}' (op: 'Select') with input shapes: "
                         f"{cond}, {x}, {y}.") from None


def _select_v2_shape(op: Any) -> list[TensorShape]:
    cond, x, y = (t.shape for t in op.inputs)
    return [_util.broadcast_shapes(_util.broadcast_shapes(cond, x, op.name), y, op.name)]


Select = define_op("Select", inputs=["condition: bool", "t: T", "e: T"], outputs=["output: T"],
                   attrs=["T: type"], shape_fn=_select_shape)
SelectV2 = define_op("SelectV2", inputs=["condition: bool", "t: T", "e: T"],
                     outputs=["output: T"], attrs=["T: type"], shape_fn=_select_v2_shape)


@_kernel(Select)
def _select_kernel(ctx: Any) -> Callable:
    where = ctx.xp.where

    def compute(cond: Any, x: Any, y: Any) -> Any:
        if x.shape != y.shape:
            raise invalid(f"'then' and 'else' must have the same size.  but received: "
                           f"{_dims(x.shape)} vs. {_dims(y.shape)}")
        if cond.shape == x.shape or cond.ndim == 0:
            return where(cond, x, y)
        if cond.ndim != 1 or x.ndim == 0:
            raise invalid(f"'cond' must be a scalar, vector or the same shape as 'then', but "
                           f"received: {_dims(cond.shape)} vs. {_dims(x.shape)}")
        if cond.shape[0] != x.shape[0]:
            raise invalid(f"Number of batches of 'then' must match size of 'cond', but saw: "
                           f"{x.shape[0]} vs. {cond.shape[0]}")
        return where(cond.reshape(cond.shape + (1,) * (x.ndim - 1)), x, y)

    return compute


@_kernel(SelectV2)
def _select_v2_kernel(ctx: Any) -> Callable:
    where = ctx.xp.where

    def compute(cond: Any, x: Any, y: Any) -> Any:
        try:
            return where(cond, x, y)
        except ValueError:
            raise invalid(f"condition {_dims(cond.shape)}, then {_dims(x.shape)}, and else "
                           f"{_dims(y.shape)} must be broadcastable") from None

    return compute


def _where_indices(condition: Any, name: Optional[str]) -> Any:
    from tensorweave.ops import array as array_ops  # written alongside; imported late to avoid a cycle
    return array_ops._where_indices(condition, name)


def where(condition: Any, x: Any = None, y: Any = None, name: Optional[str] = None) -> Any:
    """TF1's tf.where: with x and y, picks from x where `condition` else from y (op Select;
    `condition` is a scalar, has x's shape, or is a vector over x's first dimension); with
    neither, returns the coordinates of the true elements."""
    if x is None and y is None:
        return _where_indices(condition, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply_op(Select, name=name, condition=condition, t=x, e=y)


def where_v2(condition: Any, x: Any = None, y: Any = None, name: Optional[str] = None) -> Any:
    """tf.where_v2: like where, but condition, x and y broadcast together (op SelectV2)."""
    if x is None and y is None:
        return _where_indices(condition, name)
    if x is None or y is None:
        raise ValueError("x and y must both be non-None or both be None.")
    return apply_op(SelectV2, name=name, condition=condition, t=x, e=y)


# ---------------------------------------------------------------------------------------------
# saturate_cast (Cast itself and the cast helpers: cast_ops.py)
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


# ---------------------------------------------------------------------------------------------
# ClipByValue
# ---------------------------------------------------------------------------------------------
def _clip_by_value_shape(op: Any) -> list[TensorShape]:
    t = op.inputs[0].shape
    for bound in op.inputs[1:]:
        if bound.shape.ndims != 0 and not bound.shape.is_compatible_with(t):
            raise ValueError(f"clip_value_min and clip_value_max must be either scalars or have "
                             f"the same shape as the input for '{op.name}': {t} vs. {bound.shape}")
    return [t]


ClipByValue = define_op("ClipByValue", inputs=["t: T", "clip_value_min: T", "clip_value_max: T"],
                        outputs=["output: T"], attrs=[f"T: {{{_REALS}}}"],
                        shape_fn=_clip_by_value_shape)


@_kernel(ClipByValue)
def _clip_by_value_kernel(ctx: Any) -> Callable:
    maximum_, minimum_ = ctx.xp.maximum, ctx.xp.minimum

    def compute(t: Any, lo: Any, hi: Any) -> Any:
        for bound in (lo, hi):
            if bound.ndim != 0 and bound.shape != t.shape:
                raise invalid("clip_value_min and clip_value_max must be either scalars or have "
                               f"the same shape as the input: {_dims(bound.shape)} vs. "
                               f"{_dims(t.shape)}")
        return maximum_(minimum_(t, hi), lo)

    return compute


def clip_by_value(t: Any, clip_value_min: Any, clip_value_max: Any,
                  name: Optional[str] = None) -> Any:
    """Clips `t` to [clip_value_min, clip_value_max] (Minimum then Maximum, as TF builds it);
    the bounds may broadcast but must not change `t`'s shape."""
    with name_scope(name, "clip_by_value", [t, clip_value_min, clip_value_max]) as scope:
        values = convert_to_tensor(t, name="t")
        t_min = minimum(values, clip_value_max)
        values.shape.assert_is_compatible_with(t_min.shape)
        t_max = maximum(t_min, clip_value_min, name=scope)
        values.shape.assert_is_compatible_with(t_max.shape)
        return t_max


# ---------------------------------------------------------------------------------------------
# The Python operators of tf.Tensor
# ---------------------------------------------------------------------------------------------
_CONVERTIBLE = (numbers.Number, np.ndarray, np.generic, list, tuple, str, bytes)


def _add_dispatch(x: Tensor, y: Tensor, name: Optional[str] = None) -> Any:
    op = Add if x.dtype.base_dtype == _dtypes.string else AddV2
    return apply_op(op, name=name, x=x, y=y)


def _matmul(x: Any, y: Any, name: Optional[str] = None) -> Any:
    from tensorweave.ops.linalg import matrix as linalg_ops  # written alongside; imported late
    return linalg_ops.matmul(x, y, name=name)


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


# The gradients of these ops (imported last: they are built from the wrappers above).
