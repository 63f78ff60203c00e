"""Gradient-check cases for the element-wise math ops (tensorweave/ops/math/grad.py).

Broadcasting cases pair shapes such as (2, 3) with (3,), (1, 3), (2, 1) and () so that the
driver's unbroadcast runs; inputs stay away from kinks, ties and discontinuities."""
import numpy as np

import tensorweave as tf
from tensorweave.ops import math as math_ops
from tests.gradient_cases import GradCase

S = (2, 3)


def _away_from_zero(*shapes, low=0.2, high=1.0):
    """Values with |v| in [low, high] and random signs."""
    def init(rng):
        return [rng.uniform(low, high, s) * rng.choice([-1.0, 1.0], s) for s in shapes]
    return init


def _ranges(*specs):
    """One (shape, low, high) per input."""
    def init(rng):
        return [rng.uniform(low, high, shape) for shape, low, high in specs]
    return init


def _fixed(*arrays):
    return lambda rng: [np.array(a, dtype=np.float64) for a in arrays]


def _unary(name, op_type, fn, low=-1.0, high=1.0, init=None):
    return GradCase(f"math_{name}", (op_type,), fn, [S], low=low, high=high, init=init)


def _as_complex(x):
    return tf.cast(x, tf.complex128)


UNARY = [
    _unary("neg", "Neg", lambda a: -a),
    _unary("abs", "Abs", tf.abs, init=_away_from_zero(S)),
    GradCase("math_sign", ("Sign", "Mul", "Square"), lambda a: tf.sign(a) * tf.square(a), [S],
             init=_away_from_zero(S)),
    _unary("square", "Square", tf.square),
    _unary("sqrt", "Sqrt", tf.sqrt, 0.5, 2.0),
    _unary("rsqrt", "Rsqrt", tf.rsqrt, 0.5, 2.0),
    _unary("reciprocal", "Reciprocal", tf.reciprocal, init=_away_from_zero(S, low=0.5, high=2.0)),
    _unary("exp", "Exp", tf.exp),
    _unary("log", "Log", tf.log, 0.5, 2.0),
    _unary("log1p", "Log1p", tf.log1p, -0.5, 1.0),
    _unary("expm1", "Expm1", tf.expm1),
    _unary("sin", "Sin", tf.sin, -3.0, 3.0),
    _unary("cos", "Cos", tf.cos, -3.0, 3.0),
    _unary("tan", "Tan", tf.tan),
    _unary("asin", "Asin", tf.asin, -0.8, 0.8),
    _unary("acos", "Acos", tf.acos, -0.8, 0.8),
    _unary("atan", "Atan", tf.atan, -2.0, 2.0),
    _unary("sinh", "Sinh", tf.sinh, -2.0, 2.0),
    _unary("cosh", "Cosh", tf.cosh, -2.0, 2.0),
    _unary("asinh", "Asinh", tf.asinh, -2.0, 2.0),
    _unary("acosh", "Acosh", tf.acosh, 1.5, 3.0),
    _unary("atanh", "Atanh", tf.atanh, -0.8, 0.8),
    _unary("tanh", "Tanh", tf.tanh, -2.0, 2.0),
    _unary("sigmoid", "Sigmoid", tf.sigmoid, -3.0, 3.0),
    # |a + i b| through complex Mul (needs the conjugate in Mul's gradient) and Cast.
    GradCase("math_complex_abs", ("ComplexAbs", "Cast", "Mul", "AddV2"),
             lambda a, b: tf.abs(_as_complex(a) + _as_complex(b) * tf.constant(1j, tf.complex128)),
             [S, S], init=_away_from_zero(S, S, low=0.3)),
    # float64 -> complex128 -> float64 (the real part of (2 - 3i) * a).
    GradCase("math_cast_complex_roundtrip", ("Cast", "Mul"),
             lambda a: tf.cast(_as_complex(a) * tf.constant(2 - 3j, tf.complex128), tf.float64), [S]),
]

BINARY = [
    GradCase("math_add_raw", ("Add",), lambda a, b: tf._apply_op(math_ops.Add, x=a, y=b), [S, (3,)]),
    GradCase("math_addv2_broadcast_row", ("AddV2",), lambda a, b: a + b, [S, (1, 3)]),
    GradCase("math_addv2_outer", ("AddV2",), lambda a, b: tf.add(a, b), [(2, 1), (1, 3)]),
    GradCase("math_sub", ("Sub",), lambda a, b: a - b, [S, (3,)]),
    GradCase("math_sub_scalar", ("Sub",), lambda a, b: b - a, [S, ()]),
    GradCase("math_mul", ("Mul",), lambda a, b: a * b, [S, S]),
    GradCase("math_mul_broadcast", ("Mul",), lambda a, b: a * b, [(2, 1), (3,)]),
    GradCase("math_realdiv", ("RealDiv",), lambda a, b: a / b, [S, (3,)],
             init=_ranges((S, -1.0, 1.0), ((3,), 0.5, 2.0))),
    GradCase("math_div_raw", ("Div",), lambda a, b: tf._apply_op(math_ops.Div, x=a, y=b), [(1, 3), S],
             init=_ranges(((1, 3), -1.0, 1.0), (S, 0.5, 2.0))),
    GradCase("math_div_no_nan", ("DivNoNan",), tf.div_no_nan, [S, (2, 1)],
             init=_ranges((S, -1.0, 1.0), ((2, 1), 0.5, 2.0))),
    # x / y stays clear of integers, where floor(x / y) jumps.
    GradCase("math_floormod", ("FloorMod",), tf.floormod, [S, (3,)],
             init=_fixed([[3.3, -2.7, 5.2], [0.4, -0.6, 7.7]], [1.5, 2.5, -3.0])),
    GradCase("math_pow", ("Pow",), tf.pow, [S, (3,)],
             init=_ranges((S, 0.5, 2.0), ((3,), -1.5, 2.5))),
    GradCase("math_pow_negative_base", ("Pow",), lambda a: tf.pow(a, tf.constant(3.0, tf.float64)), [S]),
    GradCase("math_maximum", ("Maximum",), tf.maximum, [S, (3,)]),
    GradCase("math_minimum", ("Minimum",), tf.minimum, [(2, 1), S]),
    GradCase("math_squared_difference", ("SquaredDifference",), tf.squared_difference, [S, (1, 3)]),
    GradCase("math_atan2", ("Atan2",), tf.atan2, [S, (3,)],
             init=_ranges((S, -1.0, 1.0), ((3,), 0.5, 1.5))),
]

SELECTION = [
    GradCase("math_select_same_shape", ("Select",),
             lambda a, b: tf.where(tf.constant([[True, False, True], [False, False, True]]), a, b),
             [S, S]),
    GradCase("math_select_vector_condition", ("Select",),
             lambda a, b: tf.where(tf.constant([False, True]), a, b), [S, S]),
    GradCase("math_select_v2_broadcast", ("SelectV2",),
             lambda a, b: tf.where_v2(tf.constant([[True], [False]]), a, b), [(3,), S]),
    GradCase("math_clip_by_value_raw", ("ClipByValue",),
             lambda t, lo, hi: tf._apply_op(math_ops.ClipByValue, t=t, clip_value_min=lo,
                                            clip_value_max=hi),
             [S, (), ()], init=_fixed([[-0.9, -0.3, 0.1], [0.45, 0.8, -0.6]], -0.5, 0.5)),
    GradCase("math_clip_by_value_tensor_bounds", ("ClipByValue",),
             lambda t, lo, hi: tf._apply_op(math_ops.ClipByValue, t=t, clip_value_min=lo,
                                            clip_value_max=hi),
             [S, S, S], init=_fixed([[-0.9, -0.3, 0.1], [0.45, 0.8, -0.6]],
                                    [[-0.5, -0.5, 0.0], [0.0, -0.2, -0.4]],
                                    [[0.5, 0.5, 0.5], [0.3, 0.9, 0.4]])),
]



def _fused_grad(name, op_def, wrapper, y_low, y_high):
    """A fused gradient op z(y, dy) checked in both inputs (y: a forward output's range)."""
    return GradCase(f"math_{name}", (op_def.name,), wrapper, [S, S],
                    init=_ranges((S, y_low, y_high), (S, -1.0, 1.0)))


def _second_derivative(name, forward, ops, low, high):
    """d/dx sum(f'(x) * x) through tf.gradients: the fused op's own gradient, chained."""
    return GradCase(f"math_{name}_second_derivative", ops,
                    lambda x: tf.gradients(forward(x) * x, x)[0], [S], low=low, high=high)


FUSED_GRADS = [
    _fused_grad("sigmoid_grad", math_ops.SigmoidGrad, math_ops.sigmoid_grad, 0.05, 0.95),
    _fused_grad("tanh_grad", math_ops.TanhGrad, math_ops.tanh_grad, -0.95, 0.95),
    _fused_grad("sqrt_grad", math_ops.SqrtGrad, math_ops.sqrt_grad, 0.5, 2.0),
    _fused_grad("rsqrt_grad", math_ops.RsqrtGrad, math_ops.rsqrt_grad, 0.5, 2.0),
    _fused_grad("reciprocal_grad", math_ops.ReciprocalGrad, math_ops.reciprocal_grad, 0.5, 2.0),
    _second_derivative("sigmoid", tf.sigmoid, ("Sigmoid", "SigmoidGrad"), -3.0, 3.0),
    _second_derivative("tanh", tf.tanh, ("Tanh", "TanhGrad"), -2.0, 2.0),
    _second_derivative("sqrt", tf.sqrt, ("Sqrt", "SqrtGrad"), 0.5, 2.0),
    _second_derivative("rsqrt", tf.rsqrt, ("Rsqrt", "RsqrtGrad"), 0.5, 2.0),
    _second_derivative("reciprocal", tf.reciprocal, ("Reciprocal", "ReciprocalGrad"), 0.5, 2.0),
]

CASES = UNARY + FUSED_GRADS + BINARY + SELECTION
