"""Gradients of the math family's ops, with TensorFlow's formulas: element-wise ops and Cast,
Select and ClipByValue, reductions, AddN and UnsortedSegmentSum, the segment reductions, and
cumulative sums and products; imported only by tensorweave/gradients.py.

Each gradient is built from ordinary public ops, so it is itself differentiable (second
derivatives, Hessians). Unary ops whose derivative is a function of their own output use the
output, as TF's kernels do: Sigmoid, Tanh, Sqrt, Rsqrt and Reciprocal through TF's fused ops
SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad and ReciprocalGrad (grad_ops.py), whose own
gradients are here too. Binary ops that broadcast return gradients of the broadcast shape and
say so (`gradient(broadcasts=True)`); tf.gradients sums them down to each input's shape. For
complex inputs the derivative is conjugated, as in TF.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_def import OpDef
from tensorweave.ops import array as array_ops
from tensorweave.ops import math as m
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.math.cumulative import Cumprod, Cumsum, cumprod, cumsum
from tensorweave.ops.math.grad_ops import (
    ReciprocalGrad, RsqrtGrad, SigmoidGrad, SqrtGrad, TanhGrad, reciprocal_grad, rsqrt_grad,
    sigmoid_grad, sqrt_grad, tanh_grad)
from tensorweave.ops.math.math_impl import conj
from tensorweave.ops.math.reduction import AddN, Max, Mean, Min, Prod, Sum, UnsortedSegmentSum
from tensorweave.ops.math.segment import (
    SegmentMax, SegmentMean, SegmentMin, SegmentProd, SegmentSum, UnsortedSegmentMax,
    UnsortedSegmentMin, UnsortedSegmentProd, segment_prod, segment_sum, unsorted_segment_prod)

_FLOAT_OR_COMPLEX = frozenset(_dtypes.FLOATS + _dtypes.COMPLEX)


def _zero(t: Tensor) -> Tensor:
    """A scalar zero of `t`'s dtype (broadcast by where_v2)."""
    return array_ops.zeros([], dtype=t.dtype.base_dtype)


# ---------------------------------------------------------------------------------------------
# Unary ops: grad * f'(x), f' written from x or, where TF does, from y = f(x)
# ---------------------------------------------------------------------------------------------
_DERIVATIVES: dict[OpDef, Callable[[Any, Any], Any]] = {
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


def _register_unary(op_def: OpDef, derivative: Callable[[Any, Any], Any]) -> None:
    @op_def.gradient(dense_grad=True)
    def _unary_grad(op: Operation, grad: Tensor) -> list[Any]:
        return [m.multiply(grad, conj(derivative(op.inputs[0], op.outputs[0])))]


for _op, _derivative in _DERIVATIVES.items():
    _register_unary(_op, _derivative)


# The fused gradient ops (grad_ops.py) serve as the gradients of the unary ops that have one.
_FUSED_GRADS = {m.Sigmoid: sigmoid_grad, m.Tanh: tanh_grad, m.Sqrt: sqrt_grad, m.Rsqrt: rsqrt_grad,
                m.Reciprocal: reciprocal_grad}


def _register_fused(op_def: OpDef, fused: Callable[[Any, Any], Any]) -> None:
    @op_def.gradient(dense_grad=True)
    def _unary_grad(op: Operation, grad: Tensor) -> list[Any]:
        return [fused(op.outputs[0], grad)]


for _op, _fused in _FUSED_GRADS.items():
    _register_fused(_op, _fused)

# The fused ops' own gradients (second derivatives): z(y, dy) is linear in dy, so dz/ddy applied
# to the incoming gradient g is the same fused op on g; dz/dy is written out below.
_SECOND_DERIVATIVES: dict[OpDef, tuple[Callable, Callable[[Any, Any], Any]]] = {
    SigmoidGrad: (sigmoid_grad, lambda y, dy: dy * (1 - 2 * y)),
    TanhGrad: (tanh_grad, lambda y, dy: -2 * dy * y),
    SqrtGrad: (sqrt_grad, lambda y, dy: -0.5 * dy / (y * y)),
    RsqrtGrad: (rsqrt_grad, lambda y, dy: -1.5 * dy * (y * y)),
    ReciprocalGrad: (reciprocal_grad, lambda y, dy: -2 * dy * y),
}


def _register_second(op_def: OpDef, fused: Callable, d_dy: Callable[[Any, Any], Any]) -> None:
    @op_def.gradient(dense_grad=True)
    def _fused_grad_grad(op: Operation, grad: Tensor) -> list[Any]:
        y, dy = op.inputs
        return [m.multiply(grad, conj(d_dy(y, dy))), fused(y, grad)]


for _op, (_fused, _d_dy) in _SECOND_DERIVATIVES.items():
    _register_second(_op, _fused, _d_dy)


@m.Neg.gradient(dense_grad=True)
def _neg_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [m.negative(grad)]


@m.Sign.gradient(dense_grad=True)
def _sign_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [array_ops.zeros_like(op.inputs[0])]  # TF: zeros, not None


@m.ComplexAbs.gradient(dense_grad=True)
def _complex_abs_grad(op: Operation, grad: Tensor) -> list[Any]:
    """grad * x / |x| (0 at x = 0), in the complex dtype of x."""
    x = op.inputs[0]
    complex_dtype = x.dtype.base_dtype
    return [m.div_no_nan(m.cast(grad, complex_dtype) * x, m.cast(op.outputs[0], complex_dtype))]


@m.Cast.gradient(dense_grad=True)
def _cast_grad(op: Operation, grad: Tensor) -> list[Optional[Any]]:
    """The gradient cast back to the source type, between float/complex types only."""
    src = op.inputs[0].dtype.base_dtype
    if src in _FLOAT_OR_COMPLEX and grad.dtype.base_dtype in _FLOAT_OR_COMPLEX:
        return [m.cast(grad, src)]
    return [None]


# ---------------------------------------------------------------------------------------------
# Binary ops (broadcasting: the driver sums each gradient down to its input's shape)
# ---------------------------------------------------------------------------------------------
@m.Add.gradient(dense_grad=True, broadcasts=True)
def _add_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [grad, grad]


m.AddV2.gradient(_add_grad, broadcasts=True)  # _add_grad is dense-first already


@m.Sub.gradient(dense_grad=True, broadcasts=True)
def _sub_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [grad, m.negative(grad)]


@m.Mul.gradient(dense_grad=True, broadcasts=True)
def _mul_grad(op: Operation, grad: Tensor) -> list[Any]:
    x, y = op.inputs
    return [m.multiply(grad, conj(y)), m.multiply(conj(x), grad)]


def _div_grad(op: Operation, grad: Tensor) -> list[Any]:
    """x / y: (grad / y, grad * (-x / y) / y)."""
    x, y = conj(op.inputs[0]), conj(op.inputs[1])
    return [m.realdiv(grad, y), m.multiply(grad, m.realdiv(m.realdiv(m.negative(x), y), y))]


m.RealDiv.gradient(_div_grad, dense_grad=True, broadcasts=True)
m.Div.gradient(_div_grad, dense_grad=True, broadcasts=True)


@m.DivNoNan.gradient(dense_grad=True, broadcasts=True)
def _div_no_nan_grad(op: Operation, grad: Tensor) -> list[Any]:
    x, y = conj(op.inputs[0]), conj(op.inputs[1])
    return [m.div_no_nan(grad, y),
            m.multiply(grad, m.div_no_nan(m.div_no_nan(m.negative(x), y), y))]


@m.FloorMod.gradient(dense_grad=True, broadcasts=True)
def _floor_mod_grad(op: Operation, grad: Tensor) -> list[Any]:
    """x - floor(x / y) * y: (grad, -grad * floor(x / y))."""
    x, y = op.inputs
    return [grad, m.multiply(grad, m.negative(m.floor_div(x, y)))]


@m.Pow.gradient(dense_grad=True, broadcasts=True)
def _pow_grad(op: Operation, grad: Tensor) -> list[Any]:
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

    def grad_fn(op: Operation, grad: Tensor) -> list[Any]:
        x, y = op.inputs
        xmask = selector(x, y)
        zero = _zero(grad)
        return [m.where_v2(xmask, grad, zero), m.where_v2(xmask, zero, grad)]

    return grad_fn


m.Maximum.gradient(_max_min_grad(m.greater_equal), dense_grad=True, broadcasts=True)
m.Minimum.gradient(_max_min_grad(m.less_equal), dense_grad=True, broadcasts=True)


@m.SquaredDifference.gradient(dense_grad=True, broadcasts=True)
def _squared_difference_grad(op: Operation, grad: Tensor) -> list[Any]:
    x, y = op.inputs
    x_grad = m.multiply(m.scalar_mul(2.0, grad), x - y)
    return [x_grad, m.negative(x_grad)]


@m.Atan2.gradient(dense_grad=True, broadcasts=True)
def _atan2_grad(op: Operation, grad: Tensor) -> list[Any]:
    """atan2(y, x): (grad * x / (x^2 + y^2), -grad * y / (x^2 + y^2))."""
    y, x = op.inputs
    grad_inv = m.realdiv(grad, m.square(y) + m.square(x))
    return [m.multiply(x, grad_inv), m.multiply(m.negative(y), grad_inv)]


# ---------------------------------------------------------------------------------------------
# Select, ClipByValue
# ---------------------------------------------------------------------------------------------
@m.Select.gradient(dense_grad=True)
def _select_grad(op: Operation, grad: Tensor) -> list[Any]:
    c, x = op.inputs[0], op.inputs[1]
    zeros = array_ops.zeros_like(x)
    return [None, m.where(c, grad, zeros), m.where(c, zeros, grad)]


@m.SelectV2.gradient(dense_grad=True, broadcasts=True)
def _select_v2_grad(op: Operation, grad: Tensor) -> list[Any]:
    c = op.inputs[0]
    zero = _zero(grad)
    return [None, m.where_v2(c, grad, zero), m.where_v2(c, zero, grad)]


@m.ClipByValue.gradient(dense_grad=True, broadcasts=True)
def _clip_by_value_grad(op: Operation, grad: Tensor) -> list[Any]:
    """grad flows to t where it was not clipped, else to the bound that clipped it."""
    t, lo, hi = op.inputs
    below, above = m.less(t, lo), m.greater(t, hi)
    zero = _zero(grad)
    return [m.where_v2(m.logical_or(below, above), zero, grad),
            m.where_v2(below, grad, zero), m.where_v2(above, grad, zero)]


# ---------------------------------------------------------------------------------------------
# Reductions, AddN, UnsortedSegmentSum
# ---------------------------------------------------------------------------------------------
def reduced_shape(input_shape: Any, axes: Any) -> Tensor:
    """TF's math_ops.reduced_shape: the int32 vector `input_shape` with the dimensions in
    `axes` (negative ones counted from the end) set to 1: the kept-dims output shape."""
    rank = array_ops.size(input_shape)
    axes = m.cast(array_ops.reshape(axes, [-1]), _dtypes.int32)
    axes = m.floormod(axes + rank, m.maximum(rank, 1))  # a scalar input has no axes
    hits = m.unsorted_segment_sum(array_ops.ones_like(axes), axes, rank)
    return m.where_v2(m.greater(hits, 0), array_ops.ones_like(input_shape), input_shape)


def _static_shapes(op: Operation) -> Optional[tuple[list[int], list[int]]]:
    """(input dims, kept-dims output dims) as lists when the input shape and the axes are
    known at graph time."""
    x_shape = op.inputs[0].shape
    axes = tensor_util.constant_value(op.inputs[1])
    if axes is None or not x_shape.is_fully_defined():
        return None
    dims = x_shape.as_list()
    reduced = {int(a) % len(dims) for a in np.reshape(axes, -1)} if dims else set()
    return dims, [1 if i in reduced else d for i, d in enumerate(dims)]


def _to_kept_dims(op: Operation, tensors: list[Any]) -> tuple[Any, bool, list[Any]]:
    """(input shape, whether it is static and equal to the kept-dims shape, `tensors` of the
    output's shape reshaped to the kept-dims shape, so that they broadcast against the input)."""
    static = _static_shapes(op)
    if static is not None:
        input_shape, kept = static
    else:
        input_shape = array_ops.shape(op.inputs[0])
        kept = None if op._get_attr("keep_dims") else reduced_shape(input_shape, op.inputs[1])
    if not op._get_attr("keep_dims"):
        tensors = [array_ops.reshape(t, kept) for t in tensors]
    return input_shape, static is not None and static[0] == static[1], tensors


@Sum.gradient(dense_grad=True)
def _sum_grad(op: Operation, grad: Tensor) -> list[Any]:
    """The gradient copied back over the reduced dimensions."""
    input_shape, unreduced, (grad,) = _to_kept_dims(op, [grad])
    if unreduced:
        return [grad, None]
    return [array_ops.broadcast_to(grad, input_shape), None]


@Mean.gradient
def _mean_grad(op: Operation, grad: Tensor) -> list[Any]:
    """Sum's gradient divided by the number of elements averaged."""
    sum_grad = _sum_grad(op, grad)[0]
    dtype = sum_grad.dtype.base_dtype
    x_shape, y_shape = op.inputs[0].shape, op.outputs[0].shape
    if x_shape.is_fully_defined() and y_shape.is_fully_defined():
        factor: Any = x_shape.num_elements() // max(y_shape.num_elements(), 1)
        factor = constant(factor, dtype=dtype)
    else:
        factor = m.floordiv(array_ops.size(op.inputs[0]),
                            m.maximum(array_ops.size(op.outputs[0]), 1))
        factor = m.cast(factor, dtype)
    return [m.realdiv(sum_grad, factor, name="truediv"), None]  # TF's name (tf.truediv)


@Prod.gradient(dense_grad=True)
def _prod_grad(op: Operation, grad: Tensor) -> list[Any]:
    """grad times the product of the other elements reduced together, computed without
    dividing by zero: with no zero it is prod / x; with one zero, the product of the
    non-zeros at the zero and 0 elsewhere; with two or more zeros, 0 (TF's values; TF gets
    them from exclusive cumulative products, which tensorweave has no op for)."""
    x, axes = op.inputs
    _, _, (grad,) = _to_kept_dims(op, [grad])
    zero = array_ops.zeros([], dtype=x.dtype.base_dtype)
    is_zero = m.equal(x, zero)
    safe_x = m.where_v2(is_zero, array_ops.ones([], dtype=x.dtype.base_dtype), x)
    nonzero_prod = m.reduce_prod(safe_x, axes, keepdims=True)
    num_zeros = m.reduce_sum(m.cast(is_zero, _dtypes.int32), axes, keepdims=True)
    at_zero = m.where_v2(m.equal(num_zeros, 1), nonzero_prod, zero)
    elsewhere = m.where_v2(m.equal(num_zeros, 0), m.realdiv(nonzero_prod, safe_x), zero)
    others = m.where_v2(is_zero, at_zero, elsewhere)
    return [m.multiply(grad, conj(others)), None]


def _reduce_max_min_grad(op: Operation, grad: Tensor) -> list[Any]:
    """The gradient goes to the elements equal to the extremum, split equally among ties."""
    x, axes = op.inputs
    _, _, (y, grad) = _to_kept_dims(op, [op.outputs[0], grad])
    indicators = m.cast(m.equal(y, x), grad.dtype.base_dtype)
    num_selected = m.reduce_sum(indicators, axes, keepdims=True)
    return [m.multiply(m.realdiv(indicators, num_selected), grad), None]


Max.gradient(_reduce_max_min_grad, dense_grad=True)
Min.gradient(_reduce_max_min_grad, dense_grad=True)


@AddN.gradient
def _add_n_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [grad] * len(op.inputs)


@UnsortedSegmentSum.gradient(dense_grad=True)
def _unsorted_segment_sum_grad(op: Operation, grad: Tensor) -> list[Any]:
    """output[i] sums data[j] with ids[j] == i, so data's gradient is grad gathered at the ids
    (0 where an id is negative: those elements were dropped)."""
    ids = op.inputs[1]
    gathered = array_ops.gather(grad, m.maximum(ids, array_ops.zeros_like(ids)))
    kept = m.greater_equal(ids, array_ops.zeros([], dtype=ids.dtype.base_dtype))
    if gathered.shape.ndims is not None and ids.shape.ndims is not None:
        trailing = constant([1] * (gathered.shape.ndims - ids.shape.ndims), dtype=_dtypes.int32)
    else:
        extra = array_ops.rank(gathered) - array_ops.rank(ids)
        trailing = array_ops.ones(array_ops.expand_dims(extra, 0), dtype=_dtypes.int32)
    kept = array_ops.reshape(kept, array_ops.concat([array_ops.shape(ids), trailing], 0))
    zero = array_ops.zeros([], dtype=gathered.dtype.base_dtype)
    return [m.where_v2(kept, gathered, zero), None, None]


# ---------------------------------------------------------------------------------------------
# Segment reductions
# ---------------------------------------------------------------------------------------------
@SegmentSum.gradient
def _segment_sum_grad(op: Operation, grad: Tensor) -> list[Any]:
    return [array_ops.gather(grad, op.inputs[1]), None]


def _per_row_column(values: Any, like: Any) -> Any:
    """`values` (one per row) reshaped to [rows, 1, 1, ...] so it broadcasts against `like`."""
    rank = like.shape.ndims
    if rank is not None:
        return array_ops.reshape(values, [-1] + [1] * (rank - 1))
    ones = array_ops.ones(array_ops.expand_dims(array_ops.rank(like) - 1, 0), _dtypes.int32)
    return array_ops.reshape(values, array_ops.concat([[-1], ones], 0))


@SegmentMean.gradient
def _segment_mean_grad(op: Operation, grad: Tensor) -> list[Any]:
    ids = op.inputs[1]
    counts = segment_sum(array_ops.ones_like(ids, dtype=grad.dtype), ids)
    scaled = m.divide(grad, _per_row_column(counts, grad))
    return [array_ops.gather(scaled, ids), None]


def _gather_drop_negatives(params: Any, ids: Any, clipped: Any = None, positive: Any = None) -> tuple:
    """gather(params, ids) with zero rows where ids < 0 (unsorted segment ops drop those);
    also returns the clipped ids and the (broadcast) mask so callers can reuse them."""
    if clipped is None:
        clipped = m.maximum(ids, array_ops.zeros_like(ids))
    gathered = array_ops.gather(params, clipped)
    if positive is None:
        positive = m.greater_equal(ids, 0)
        extra = array_ops.ones(array_ops.expand_dims(array_ops.rank(gathered) - array_ops.rank(positive), 0),
                               _dtypes.int32)
        positive = array_ops.reshape(positive, array_ops.concat([array_ops.shape(positive), extra], 0))
        positive = m.logical_and(positive, array_ops.ones_like(gathered, dtype=_dtypes.bool))
    return m.where_v2(positive, gathered, array_ops.zeros_like(gathered)), clipped, positive


def _segment_min_or_max_grad(op: Operation, grad: Tensor, sorted_ids: bool) -> list[Any]:
    """The gradient goes to the elements equal to their segment's extremum, split evenly among ties."""
    data, ids = op.inputs[0], op.inputs[1]
    if sorted_ids:
        selected = m.equal(data, array_ops.gather(op.outputs[0], ids))
        counts = segment_sum(m.cast(selected, grad.dtype), ids)
        shares = array_ops.gather(m.divide(grad, counts), ids)
        return [m.where_v2(selected, shares, array_ops.zeros_like(data)), None]
    extremes, clipped, positive = _gather_drop_negatives(op.outputs[0], ids)
    selected = m.logical_and(m.equal(data, extremes), positive)
    counts = m.unsorted_segment_sum(m.cast(selected, grad.dtype), ids, op.inputs[2])
    shares, _, _ = _gather_drop_negatives(m.divide(grad, counts), None, clipped, positive)
    return [m.where_v2(selected, shares, array_ops.zeros_like(shares)), None, None]


@SegmentMax.gradient
def _segment_max_grad(op: Operation, grad: Tensor) -> list[Any]:
    return _segment_min_or_max_grad(op, grad, sorted_ids=True)


@SegmentMin.gradient
def _segment_min_grad(op: Operation, grad: Tensor) -> list[Any]:
    return _segment_min_or_max_grad(op, grad, sorted_ids=True)


@UnsortedSegmentMax.gradient
def _unsorted_segment_max_grad(op: Operation, grad: Tensor) -> list[Any]:
    return _segment_min_or_max_grad(op, grad, sorted_ids=False)


@UnsortedSegmentMin.gradient
def _unsorted_segment_min_grad(op: Operation, grad: Tensor) -> list[Any]:
    return _segment_min_or_max_grad(op, grad, sorted_ids=False)


def _segment_prod_grad_of(op: Operation, grad: Tensor, sorted_ids: bool) -> list[Any]:
    """d prod / d x_i = product of the other elements of x_i's segment. Computed without dividing
    by zero: a segment with two or more zeros has zero gradient everywhere; with exactly one
    zero, only that element gets a gradient (the product of the non-zero elements)."""
    data, ids = op.inputs[0], op.inputs[1]
    if sorted_ids:
        gather_ids = ids
        count_of = lambda x: segment_sum(x, ids)  # noqa: E731
        prod_of = lambda x: segment_prod(x, ids)  # noqa: E731
    else:
        num = op.inputs[2]
        gather_ids = m.maximum(ids, array_ops.zeros_like(ids))
        count_of = lambda x: m.unsorted_segment_sum(x, ids, num)  # noqa: E731
        prod_of = lambda x: unsorted_segment_prod(x, ids, num)  # noqa: E731
    is_zero = m.equal(data, array_ops.zeros_like(data))
    zeros_per_segment = count_of(m.cast(is_zero, _dtypes.int32))
    grad = m.where_v2(m.greater(zeros_per_segment, 1), array_ops.zeros_like(grad), grad)
    nonzero_data = m.where_v2(is_zero, array_ops.ones_like(data), data)
    nonzero_prod = array_ops.gather(prod_of(nonzero_data), gather_ids)
    quotient = m.divide(array_ops.gather(op.outputs[0], gather_ids), nonzero_data)
    others = m.where_v2(is_zero, nonzero_prod, quotient)
    if sorted_ids:
        return [array_ops.gather(grad, ids) * others, None]
    # elements with negative ids were dropped from the product: they get zero gradient
    gathered = _gather_drop_negatives(grad, ids, gather_ids)[0]
    return [gathered * others, None, None]


@SegmentProd.gradient
def _segment_prod_grad(op: Operation, grad: Tensor) -> list[Any]:
    return _segment_prod_grad_of(op, grad, sorted_ids=True)


@UnsortedSegmentProd.gradient
def _unsorted_segment_prod_grad(op: Operation, grad: Tensor) -> list[Any]:
    return _segment_prod_grad_of(op, grad, sorted_ids=False)


# ---------------------------------------------------------------------------------------------
# Cumulative sums and products
# ---------------------------------------------------------------------------------------------
@Cumsum.gradient(dense_grad=True)
def _cumsum_grad(op: Operation, grad: Tensor) -> list[Any]:
    """Each input adds into every later output: the gradient is the cumulative sum the other way."""
    return [cumsum(grad, op.inputs[1], exclusive=op._get_attr("exclusive"),
                   reverse=not op._get_attr("reverse")), None]


@Cumprod.gradient(dense_grad=True)
def _cumprod_grad(op: Operation, grad: Tensor) -> list[Any]:
    """TF's formula, cumsum(prod * grad, reversed) / x (undefined where x is 0, as in TF)."""
    x, axis = op.inputs
    exclusive, reverse = op._get_attr("exclusive"), op._get_attr("reverse")
    prod = cumprod(x, axis, exclusive=exclusive, reverse=reverse)
    out = cumsum(prod * grad, axis, exclusive=exclusive, reverse=not reverse)
    return [out / x, None]
