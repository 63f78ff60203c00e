"""Gradients of the ops in nn_ops.py, with TensorFlow's formulas.

Activations back-propagate through their *Grad ops (one fused kernel per step, as in TF), and
those *Grad ops have gradients too, so second derivatives work. Imported at the end of
nn_ops.py.
"""
from __future__ import annotations

from typing import Any, Callable

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array as array_ops, math as math_ops
from tensorweave.ops import nn
from tensorweave.ops._util import dense


def register(op_def: Any) -> Callable:
    """`@op_def.gradient` with the output gradients made dense first (the gradient functions
    multiply them by tensors)."""

    def decorate(fn: Callable) -> Callable:
        def grad_fn(op: Any, *grads: Any) -> Any:
            return fn(op, *(None if g is None else dense(g) for g in grads))

        grad_fn.__name__ = grad_fn.__qualname__ = fn.__name__
        grad_fn.__doc__ = fn.__doc__
        op_def.gradient(grad_fn)
        return fn

    return decorate


nn.InTopK.not_differentiable()
nn.InTopKV2.not_differentiable()


# ---------------------------------------------------------------------------------------------
# Activations
# ---------------------------------------------------------------------------------------------
def _grad_op(op_def: Any, grad: Any, second: Any, **attrs: Any) -> Any:
    return apply_op(op_def, gradients=grad, **{op_def.inputs[1].name: second}, **attrs)


# forward op -> (its grad op, whether the grad op reads the forward output rather than input).
# Relu reads its output as TF does (relu(x) > 0 exactly where x > 0); Elu/Selu need it.
_ACTIVATION_GRADS = {
    nn.Relu: (nn.ReluGrad, True), nn.Relu6: (nn.Relu6Grad, False), nn.Elu: (nn.EluGrad, True),
    nn.Selu: (nn.SeluGrad, True), nn.Softplus: (nn.SoftplusGrad, False),
    nn.Softsign: (nn.SoftsignGrad, False), nn.LeakyRelu: (nn.LeakyReluGrad, False),
}


def _activation_grad(op: Any, grad: Any) -> Any:
    grad_op, from_output = _ACTIVATION_GRADS[op.op_def]
    attrs = {"alpha": op.get_attr("alpha")} if op.type == "LeakyRelu" else {}
    return _grad_op(grad_op, grad, op.outputs[0] if from_output else op.inputs[0], **attrs)


for _op in _ACTIVATION_GRADS:
    register(_op)(_activation_grad)


def _piecewise_linear_grad_grad(op: Any, grad: Any) -> list[Any]:
    """ReluGrad, Relu6Grad, LeakyReluGrad are linear in `gradients` with a mask that is flat
    in `features`: d/dgradients = the same op on `grad`, d/dfeatures = 0."""
    x = op.inputs[1]
    attrs = {"alpha": op.get_attr("alpha")} if op.type == "LeakyReluGrad" else {}
    return [_grad_op(op.op_def, grad, x, **attrs), array_ops.zeros_like(x)]


for _op in (nn.ReluGrad, nn.Relu6Grad, nn.LeakyReluGrad):
    register(_op)(_piecewise_linear_grad_grad)


def _exponential_grad_grad(op: Any, grad: Any) -> list[Any]:
    """EluGrad / SeluGrad(g, y): g * (y + c) where y < 0 (c = 1 for Elu, scale * alpha for
    Selu), g (times scale) elsewhere: d/dy = g where y < 0."""
    g, y = op.inputs
    zero = array_ops.zeros_like(y)
    return [_grad_op(op.op_def, grad, y), math_ops.where_v2(math_ops.less(y, zero), grad * g, zero)]


for _op in (nn.EluGrad, nn.SeluGrad):
    register(_op)(_exponential_grad_grad)


@register(nn.SoftplusGrad)
def _softplus_grad_grad(op: Any, grad: Any) -> list[Any]:
    """SoftplusGrad(g, x) = g * sigmoid(x); sigmoid'(x) = 1 / (e^-x + 2 + e^x)."""
    g, x = op.inputs
    d2x = grad * g / (math_ops.exp(-x) + 2.0 + math_ops.exp(x))
    return [_grad_op(nn.SoftplusGrad, grad, x), d2x]


@register(nn.SoftsignGrad)
def _softsign_grad_grad(op: Any, grad: Any) -> list[Any]:
    """SoftsignGrad(g, x) = g / (1 + |x|)^2 (TF registers none; the formula is exact)."""
    g, x = op.inputs
    denom = 1.0 + math_ops.abs(x)
    d2x = -2.0 * grad * g * math_ops.sign(x) / (denom * denom * denom)
    return [_grad_op(nn.SoftsignGrad, grad, x), d2x]


# ---------------------------------------------------------------------------------------------
# Softmax, LogSoftmax, BiasAdd, L2Loss, TopKV2
# ---------------------------------------------------------------------------------------------
@register(nn.Softmax)
def _softmax_grad(op: Any, grad: Any) -> Any:
    """(grad - sum(grad * softmax)) * softmax, along the last axis."""
    y = op.outputs[0]
    return (grad - math_ops.reduce_sum(grad * y, -1, keepdims=True)) * y


@register(nn.LogSoftmax)
def _log_softmax_grad(op: Any, grad: Any) -> Any:
    """grad - sum(grad) * softmax, along the last axis."""
    return grad - math_ops.reduce_sum(grad, -1, keepdims=True) * math_ops.exp(op.outputs[0])


@register(nn.BiasAdd)
def _bias_add_grad(op: Any, grad: Any) -> list[Any]:
    return [grad, apply_op(nn.BiasAddGrad, out_backprop=grad, data_format=op.get_attr("data_format"))]


@register(nn.BiasAddGrad)
def _bias_add_grad_grad(op: Any, grad: Any) -> Any:
    """BiasAddGrad sums over all but the channel axis; its gradient broadcasts back."""
    out_backprop = op.inputs[0]
    rank = out_backprop.shape.ndims
    if op.get_attr("data_format") == "NCHW":
        if rank is None:
            raise ValueError(f"The gradient of {op.name} (NCHW) needs the rank of its input")
        grad = array_ops.reshape(grad, [-1] + [1] * (rank - 2))
    return array_ops.broadcast_to(grad, array_ops.shape(out_backprop))


@register(nn.L2Loss)
def _l2_loss_grad(op: Any, grad: Any) -> Any:
    return op.inputs[0] * grad


@register(nn.TopKV2)
def _top_k_grad(op: Any, grad: Any, _indices_grad: Any) -> list[Any]:
    """Scatters the values' gradient back to the chosen positions of each row."""
    x, indices = op.inputs[0], op.outputs[1]
    x_shape = array_ops.shape(x)
    k = array_ops.shape(indices)[-1]
    columns = x_shape[-1]
    flat_indices = math_ops.cast(array_ops.reshape(indices, array_ops.stack([-1, k])), _dtypes.int32)
    rows = array_ops.shape(flat_indices)[0]
    offsets = array_ops.expand_dims(array_ops.range(0, rows * columns, columns), -1)
    positions = array_ops.reshape(flat_indices + offsets, [-1])
    flat = math_ops.unsorted_segment_sum(array_ops.reshape(grad, [-1]), positions,
                                         math_ops.reduce_prod(x_shape))
    return [array_ops.reshape(flat, x_shape), None]
