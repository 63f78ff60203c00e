"""Gradients of the element-wise math ops (math_ops.py), with TensorFlow's formulas.

Each gradient is built from ordinary public ops, so it is itself differentiable (second
derivatives, Hessians). Unary ops whose derivative is a function of their own output use the
output, as TF's kernels do: Sigmoid, Tanh, Sqrt, Rsqrt and Reciprocal through TF's fused ops
SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad(y, dy), defined here with their own
gradients (one kernel per backward step instead of two or three element-wise ops: an LSTM cell's
backward pass has five of them per time step). Binary ops
that broadcast return gradients of the broadcast shape and say so with
`registration.broadcasts`; tf.gradients sums them down to each input's shape. For complex
inputs the derivative is conjugated, as in TF. Imported at the end of math_ops.py (the
reductions' gradients are at the end of reduction_ops.py).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import _util, array as array_ops
from tensorweave.ops import math as m
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops._util import register_kernel as _kernel
from tensorweave.ops._util import dense

_FLOAT_OR_COMPLEX = frozenset(_dtypes.FLOATS + _dtypes.COMPLEX)


def conj(x: Any) -> Any:
    """Complex conjugate; `x` itself for real tensors (TF's math_ops.conj). There is no Conj
    op yet, so a ConjugateTranspose with the identity permutation stands in for it."""
    x = convert_to_tensor(x)
    if not x.dtype.base_dtype.is_complex:
        return x
    ndims = x.shape.ndims
    perm: Any = list(range(ndims)) if ndims is not None else array_ops.range(0, array_ops.rank(x), 1)
    return array_ops.transpose(x, perm, conjugate=True)


def _zero(t: Any) -> Any:
    """A scalar zero of `t`'s dtype (broadcast by where_v2)."""
    return array_ops.zeros([], dtype=t.dtype.base_dtype)


def _register(op_def: Any, broadcasts: bool = False) -> Callable:
    """`@op_def.gradient`, with the output gradient made dense first (a gradient function
    multiplies it by tensors) and the broadcasting flag set."""
    if broadcasts:
        op_def.registration.broadcasts = True

    def decorate(fn: Callable) -> Callable:
        def grad_fn(op: Any, grad: Any) -> Any:
            return fn(op, dense(grad))

        grad_fn.__name__ = grad_fn.__qualname__ = fn.__name__
        grad_fn.__doc__ = fn.__doc__
        op_def.gradient(grad_fn)
        return fn

    return decorate


# ---------------------------------------------------------------------------------------------
# Not differentiable (TF: NotDifferentiable, or a gradient that returns only None)
# ---------------------------------------------------------------------------------------------
for _op in (m.Less, m.LessEqual, m.Greater, m.GreaterEqual, m.Equal, m.NotEqual, m.LogicalAnd,
            m.LogicalOr, m.LogicalNot, m.IsNan, m.IsInf, m.IsFinite, m.Floor, m.Ceil, m.Round,
            m.Rint, m.FloorDiv, m.TruncateDiv,
            # TF registers no gradient for TruncateMod at all; None is the closest answer.
            m.TruncateMod):
    _op.not_differentiable()


# ---------------------------------------------------------------------------------------------
# Unary ops: grad * f'(x), f' written from x or, where TF does, from y = f(x)
# ---------------------------------------------------------------------------------------------
_DERIVATIVES: dict[Any, Callable[[Any, Any], Any]] = {
    m.Abs: lambda x, y: m.sign(x),
    m.Square: lambda x, y: m.multiply(x, constant(2, dtype=x.dtype.base_dtype)),
    m.Exp: lambda x, y: y,
    m.Log: lambda x, y: m.reciprocal(x),
    m.Log1p: lambda x, y: m.reciprocal(1 + x),
    m.Expm1: lambda x, y: m.exp(x),
    m.Sin: lambda x, y: m.cos(x),
    m.Cos: lambda x, y: -m.sin(x),
    m.Tan: lambda x, y: m.square(m.reciprocal(m.cos(x))),
    m.Asin: lambda x, y: m.reciprocal(m.sqrt(1 - m.square(x))),
    m.Acos: lambda x, y: -m.reciprocal(m.sqrt(1 - m.square(x))),
    m.Atan: lambda x, y: m.reciprocal(1 + m.square(x)),
    m.Sinh: lambda x, y: m.cosh(x),
    m.Cosh: lambda x, y: m.sinh(x),
    m.Asinh: lambda x, y: m.reciprocal(m.cosh(y)),
    m.Acosh: lambda x, y: m.reciprocal(m.sinh(y)),
    m.Atanh: lambda x, y: m.reciprocal(1 - m.square(x)),
}


def _register_unary(op_def: Any, derivative: Callable[[Any, Any], Any]) -> None:
    @_register(op_def)
    def _unary_grad(op: Any, grad: Any) -> list[Any]:
        return [m.multiply(grad, conj(derivative(op.inputs[0], op.outputs[0])))]


for _op, _derivative in _DERIVATIVES.items():
    _register_unary(_op, _derivative)


# ---------------------------------------------------------------------------------------------
# Fused gradient ops (TF's SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad): z = dy *
# conj(f'(y)) with f' written from the forward output y, each computed in one kernel with one
# temporary and in the same order as the composite graph it replaces (the same float results).
# ---------------------------------------------------------------------------------------------
def _fused_grad_op(name: str) -> Any:
    op = define_op(name, inputs=["y: T", "dy: T"], outputs=["z: T"],
                   attrs=["T: {float16, float32, float64, complex64, complex128}"],
                   shape_fn=_util.merge_all_inputs)

    def wrapper(y: Any, dy: Any, name: Optional[str] = None) -> Any:
        return apply_op(op, name=name, y=y, dy=dy)

    return op, wrapper


SigmoidGrad, sigmoid_grad = _fused_grad_op("SigmoidGrad")
TanhGrad, tanh_grad = _fused_grad_op("TanhGrad")
SqrtGrad, sqrt_grad = _fused_grad_op("SqrtGrad")
RsqrtGrad, rsqrt_grad = _fused_grad_op("RsqrtGrad")
ReciprocalGrad, reciprocal_grad = _fused_grad_op("ReciprocalGrad")


def _sigmoid_derivative(y: Any) -> Any:   # y * (1 - y)
    t = 1 - y
    return np.multiply(y, t, out=t)


def _tanh_derivative(y: Any) -> Any:      # 1 - y * y
    t = y * y
    return np.subtract(1, t, out=t)


def _sqrt_derivative(y: Any) -> Any:      # 0.5 / y
    return 0.5 / y


def _rsqrt_derivative(y: Any) -> Any:     # -0.5 * y^3
    t = y * y
    t *= y
    return np.multiply(-0.5, t, out=t)


def _reciprocal_derivative(y: Any) -> Any:  # -y^2
    t = y * y
    return np.negative(t, out=t)


def _fused_kernel(derivative: Callable[[Any], Any]) -> Callable:
    def build(ctx: Any) -> Callable:
        conj = np.conjugate if ctx.attr("T").is_complex else None

        def compute(y: Any, dy: Any) -> Any:
            y = np.asarray(y)
            if y.ndim == 0:  # NumPy returns scalars, not arrays, for 0-d operands: no out=
                t = derivative(y.reshape(1)).reshape(())
                return np.multiply(dy, t.conj() if conj is not None else t)
            t = derivative(y)
            if conj is not None:
                conj(t, out=t)
            if t.shape != np.shape(dy):  # unknown static shapes: let NumPy broadcast or raise
                return np.multiply(dy, t)
            return np.multiply(dy, t, out=t)

        return compute

    return build


for _op, _derivative in ((SigmoidGrad, _sigmoid_derivative), (TanhGrad, _tanh_derivative),
                         (SqrtGrad, _sqrt_derivative), (RsqrtGrad, _rsqrt_derivative),
                         (ReciprocalGrad, _reciprocal_derivative)):
    _kernel(_op)(_fused_kernel(_derivative))

_FUSED_GRADS = {m.Sigmoid: sigmoid_grad, m.Tanh: tanh_grad, m.Sqrt: sqrt_grad, m.Rsqrt: rsqrt_grad,
                m.Reciprocal: reciprocal_grad}


def _register_fused(op_def: Any, fused: Callable[[Any, Any], Any]) -> None:
    @_register(op_def)
    def _unary_grad(op: Any, grad: Any) -> list[Any]:
        return [fused(op.outputs[0], grad)]


for _op, _fused in _FUSED_GRADS.items():
    _register_fused(_op, _fused)

# The fused ops' own gradients (second derivatives): z(y, dy) is linear in dy, so dz/ddy applied
# to the incoming gradient g is the same fused op on g; dz/dy is written out below.
_SECOND_DERIVATIVES: dict[Any, tuple[Callable, Callable[[Any, Any], Any]]] = {
    SigmoidGrad: (sigmoid_grad, lambda y, dy: dy * (1 - 2 * y)),
    TanhGrad: (tanh_grad, lambda y, dy: -2 * dy * y),
    SqrtGrad: (sqrt_grad, lambda y, dy: -0.5 * dy / (y * y)),
    RsqrtGrad: (rsqrt_grad, lambda y, dy: -1.5 * dy * (y * y)),
    ReciprocalGrad: (reciprocal_grad, lambda y, dy: -2 * dy * y),
}


def _register_second(op_def: Any, fused: Callable, d_dy: Callable[[Any, Any], Any]) -> None:
    @_register(op_def)
    def _fused_grad_grad(op: Any, grad: Any) -> list[Any]:
        y, dy = op.inputs
        return [m.multiply(grad, conj(d_dy(y, dy))), fused(y, grad)]


for _op, (_fused, _d_dy) in _SECOND_DERIVATIVES.items():
    _register_second(_op, _fused, _d_dy)


@_register(m.Neg)
def _neg_grad(op: Any, grad: Any) -> list[Any]:
    return [m.negative(grad)]


@_register(m.Sign)
def _sign_grad(op: Any, grad: Any) -> list[Any]:
    return [array_ops.zeros_like(op.inputs[0])]  # TF: zeros, not None


@_register(m.ComplexAbs)
def _complex_abs_grad(op: Any, grad: Any) -> list[Any]:
    """grad * x / |x| (0 at x = 0), in the complex dtype of x."""
    x = op.inputs[0]
    complex_dtype = x.dtype.base_dtype
    return [m.div_no_nan(m.cast(grad, complex_dtype) * x, m.cast(op.outputs[0], complex_dtype))]


@_register(m.Cast)
def _cast_grad(op: Any, grad: Any) -> list[Optional[Any]]:
    """The gradient cast back to the source type, between float/complex types only."""
    src = op.inputs[0].dtype.base_dtype
    if src in _FLOAT_OR_COMPLEX and grad.dtype.base_dtype in _FLOAT_OR_COMPLEX:
        return [m.cast(grad, src)]
    return [None]


# ---------------------------------------------------------------------------------------------
# Binary ops (broadcasting: the driver sums each gradient down to its input's shape)
# ---------------------------------------------------------------------------------------------
@_register(m.Add, broadcasts=True)
def _add_grad(op: Any, grad: Any) -> list[Any]:
    return [grad, grad]


_register(m.AddV2, broadcasts=True)(_add_grad)


@_register(m.Sub, broadcasts=True)
def _sub_grad(op: Any, grad: Any) -> list[Any]:
    return [grad, m.negative(grad)]


@_register(m.Mul, broadcasts=True)
def _mul_grad(op: Any, grad: Any) -> list[Any]:
    x, y = op.inputs
    return [m.multiply(grad, conj(y)), m.multiply(conj(x), grad)]


def _div_grad(op: Any, grad: Any) -> list[Any]:
    """x / y: (grad / y, grad * (-x / y) / y)."""
    x, y = conj(op.inputs[0]), conj(op.inputs[1])
    return [m.realdiv(grad, y), m.multiply(grad, m.realdiv(m.realdiv(m.negative(x), y), y))]


_register(m.RealDiv, broadcasts=True)(_div_grad)
_register(m.Div, broadcasts=True)(_div_grad)


@_register(m.DivNoNan, broadcasts=True)
def _div_no_nan_grad(op: Any, grad: Any) -> list[Any]:
    x, y = conj(op.inputs[0]), conj(op.inputs[1])
    return [m.div_no_nan(grad, y),
            m.multiply(grad, m.div_no_nan(m.div_no_nan(m.negative(x), y), y))]


@_register(m.FloorMod, broadcasts=True)
def _floor_mod_grad(op: Any, grad: Any) -> list[Any]:
    """x - floor(x / y) * y: (grad, -grad * floor(x / y))."""
    x, y = op.inputs
    return [grad, m.multiply(grad, m.negative(m.floor_div(x, y)))]


@_register(m.Pow, broadcasts=True)
def _pow_grad(op: Any, grad: Any) -> list[Any]:
    """z = x^y: (grad * y * x^(y-1), grad * z * log(x)), with log(x) taken as 0 where x <= 0
    (x = 0 for complex), so there is no false singularity at x = 0."""
    x, y = conj(op.inputs[0]), conj(op.inputs[1])
    gx = m.multiply(grad, y * m.pow(x, y - 1))
    if x.dtype.base_dtype.is_complex:
        mask = m.not_equal(x, _zero(x))
    else:
        mask = m.greater(x, _zero(x))
    safe_x = m.where_v2(mask, x, array_ops.ones_like(x))
    log_x = m.where_v2(mask, m.log(safe_x), array_ops.zeros_like(x))
    gy = m.multiply(grad, conj(op.outputs[0]) * log_x)
    return [gx, gy]


def _max_min_grad(selector: Callable) -> Callable:
    """The gradient goes to x where selector(x, y) (x >= y for Maximum, x <= y for
    Minimum: ties go to x, as in TF), to y elsewhere."""

    def grad_fn(op: Any, grad: Any) -> list[Any]:
        x, y = op.inputs
        xmask = selector(x, y)
        zero = _zero(grad)
        return [m.where_v2(xmask, grad, zero), m.where_v2(xmask, zero, grad)]

    return grad_fn


_register(m.Maximum, broadcasts=True)(_max_min_grad(m.greater_equal))
_register(m.Minimum, broadcasts=True)(_max_min_grad(m.less_equal))


@_register(m.SquaredDifference, broadcasts=True)
def _squared_difference_grad(op: Any, grad: Any) -> list[Any]:
    x, y = op.inputs
    x_grad = m.multiply(m.scalar_mul(2.0, grad), x - y)
    return [x_grad, m.negative(x_grad)]


@_register(m.Atan2, broadcasts=True)
def _atan2_grad(op: Any, grad: Any) -> list[Any]:
    """atan2(y, x): (grad * x / (x^2 + y^2), -grad * y / (x^2 + y^2))."""
    y, x = op.inputs
    grad_inv = m.realdiv(grad, m.square(y) + m.square(x))
    return [m.multiply(x, grad_inv), m.multiply(m.negative(y), grad_inv)]


# ---------------------------------------------------------------------------------------------
# Select, ClipByValue
# ---------------------------------------------------------------------------------------------
@_register(m.Select)
def _select_grad(op: Any, grad: Any) -> list[Any]:
    c, x = op.inputs[0], op.inputs[1]
    zeros = array_ops.zeros_like(x)
    return [None, m.where(c, grad, zeros), m.where(c, zeros, grad)]


@_register(m.SelectV2, broadcasts=True)
def _select_v2_grad(op: Any, grad: Any) -> list[Any]:
    c = op.inputs[0]
    zero = _zero(grad)
    return [None, m.where_v2(c, grad, zero), m.where_v2(c, zero, grad)]


@_register(m.ClipByValue, broadcasts=True)
def _clip_by_value_grad(op: Any, grad: Any) -> list[Any]:
    """grad flows to t where it was not clipped, else to the bound that clipped it."""
    t, lo, hi = op.inputs
    below, above = m.less(t, lo), m.greater(t, hi)
    zero = _zero(grad)
    return [m.where_v2(m.logical_or(below, above), zero, grad),
            m.where_v2(below, grad, zero), m.where_v2(above, grad, zero)]
