"""Math ops (white paper Table 1): element-wise arithmetic, comparisons and logic, casts, reductions, cumulative sums and products, segment reductions, and the composites built on them (clipping, sorting).

The family's public names (TF's math_ops namespace) are re-exported here."""
from tensorweave.ops.math.cast import Cast, cast, to_int64
from tensorweave.ops.math.reduction import (
    add_n, broadcast_gradient_args, count_nonzero, reduce_all, reduce_max, reduce_mean, reduce_prod,
    reduce_sum, unsorted_segment_sum)
from tensorweave.ops.math.elementwise import (
    Abs, abs, Acos, Acosh, add, Add, AddV2, Asin, Asinh, Atan, Atan2, Atanh, ceil, Ceil, clip_by_value,
    ClipByValue, ComplexAbs, cos, Cos, Cosh, cosh, div, Div, div_no_nan, divide, DivNoNan, equal, Equal,
    exp, Exp, Expm1, floor, Floor, floor_div, FloorDiv, floordiv, floormod, FloorMod, Greater, greater,
    greater_equal, GreaterEqual, is_finite, IsFinite, IsInf, IsNan, less, Less, less_equal, LessEqual, log,
    Log, log1p, Log1p, logical_and, logical_not, logical_or, LogicalAnd, LogicalNot, LogicalOr, maximum,
    Maximum, Minimum, minimum, Mul, multiply, Neg, negative, not_equal, NotEqual, OVERLOADED_OPERATORS,
    Pow, pow, realdiv, RealDiv, Reciprocal, reciprocal, Rint, Round, rsqrt, Rsqrt, scalar_mul, Select,
    SelectV2, Sigmoid, sigmoid, sign, Sign, sin, Sin, sinh, Sinh, sqrt, Sqrt, Square, square,
    squared_difference, SquaredDifference, Sub, subtract, Tan, Tanh, tanh, truediv, TruncateDiv,
    TruncateMod, where, where_v2)

from tensorweave.ops.math.elementwise import (acos, acosh, asin, asinh, atan, atan2, atanh, expm1, is_inf, is_nan, logical_xor, mod, rint, round, saturate_cast, tan, to_double, to_float, to_int32, truncatediv, truncatemod)
from tensorweave.ops.math.reduction import (arg_max, arg_min, argmax, argmin, reduce_any, reduce_logsumexp, reduce_min)

__all__ = [
    "add", "subtract", "multiply", "scalar_mul", "divide", "truediv", "realdiv", "div", "div_no_nan",
    "floordiv", "floor_div", "mod", "floormod", "truncatediv", "truncatemod", "pow", "negative", "abs",
    "sign", "square", "sqrt", "rsqrt", "reciprocal", "exp", "log", "log1p", "expm1", "sin", "cos", "tan",
    "asin", "acos", "atan", "atan2", "sinh", "cosh", "asinh", "acosh", "atanh", "tanh", "sigmoid",
    "maximum", "minimum", "floor", "ceil", "round", "rint", "is_nan", "is_inf", "is_finite",
    "squared_difference", "equal", "not_equal", "less", "less_equal", "greater", "greater_equal",
    "logical_and", "logical_or", "logical_not", "logical_xor", "where", "where_v2", "cast", "to_float",
    "to_double", "to_int32", "to_int64", "saturate_cast", "clip_by_value", "reduce_sum", "reduce_mean",
    "reduce_max", "reduce_min", "reduce_prod", "reduce_all", "reduce_any", "reduce_logsumexp",
    "count_nonzero", "argmax", "argmin", "arg_max", "arg_min", "add_n", "unsorted_segment_sum",
]
