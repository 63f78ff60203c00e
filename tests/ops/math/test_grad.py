"""TF's fused gradient ops SigmoidGrad, TanhGrad, SqrtGrad, RsqrtGrad, ReciprocalGrad(y, dy):
results against NumPy formulas (real and complex, 0-d and unknown shapes), and the gradients of
Sigmoid, Tanh, Sqrt, Rsqrt and Reciprocal built from them."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import math as math_ops
from tensorweave.testing.op_test import evaluate

RNG = np.random.RandomState(3)

# name, wrapper, reference z(y, dy) (dy times the conjugated derivative, as TF), y range
FUSED = [
    ("SigmoidGrad", math_ops.sigmoid_grad, lambda y, dy: dy * np.conj(y * (1 - y)), (0.05, 0.95)),
    ("TanhGrad", math_ops.tanh_grad, lambda y, dy: dy * np.conj(1 - y * y), (-0.95, 0.95)),
    ("SqrtGrad", math_ops.sqrt_grad, lambda y, dy: dy * np.conj(0.5 / y), (0.5, 2.0)),
    ("RsqrtGrad", math_ops.rsqrt_grad, lambda y, dy: dy * np.conj(-0.5 * y ** 3), (0.5, 2.0)),
    ("ReciprocalGrad", math_ops.reciprocal_grad, lambda y, dy: dy * np.conj(-(y * y)), (0.5, 2.0)),
]


def _values(shape, dtype, low, high):
    y, dy = np.asarray(RNG.uniform(low, high, shape)), np.asarray(RNG.randn(*shape))
    if np.dtype(dtype).kind == "c":
        y, dy = y + 0.3j * RNG.uniform(low, high, shape), dy + 1j * RNG.randn(*shape)
    return y.astype(dtype), dy.astype(dtype)


@pytest.mark.parametrize("name,fn,ref,bounds", FUSED, ids=[f[0] for f in FUSED])
@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, np.complex64, np.complex128])
def test_fused_grad_matches_numpy(name, fn, ref, bounds, dtype):
    y, dy = _values((3, 5), dtype, *bounds)
    z = fn(tf.constant(y), tf.constant(dy))
    assert z.op.type == name
    result = evaluate(z)
    assert result.dtype == dtype and result.shape == (3, 5)
    tol = 2e-3 if dtype == np.float16 else 1e-5 if dtype in (np.float32, np.complex64) else 1e-12
    want = ref(y.astype(np.complex128), dy.astype(np.complex128))
    np.testing.assert_allclose(result, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("name,fn,ref,bounds", FUSED, ids=[f[0] for f in FUSED])
def test_fused_grad_scalars_and_unknown_shapes(name, fn, ref, bounds):
    y, dy = _values((), np.float32, *bounds)
    np.testing.assert_allclose(evaluate(fn(tf.constant(y), tf.constant(dy))), ref(y, dy), rtol=1e-6)
    yp, dyp = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    y, dy = _values((4, 2), np.float32, *bounds)
    np.testing.assert_allclose(evaluate(fn(yp, dyp), {yp: y, dyp: dy}), ref(y, dy), rtol=1e-6)


def test_unary_gradients_use_the_fused_ops_and_match_the_derivatives():
    x = tf.placeholder(tf.float64, [6])
    v = np.linspace(0.3, 2.0, 6)
    cases = [(tf.sigmoid, "SigmoidGrad", lambda v: np.exp(-v) / (1 + np.exp(-v)) ** 2),
             (tf.tanh, "TanhGrad", lambda v: 1 - np.tanh(v) ** 2),
             (tf.sqrt, "SqrtGrad", lambda v: 0.5 / np.sqrt(v)),
             (tf.rsqrt, "RsqrtGrad", lambda v: -0.5 * v ** -1.5),
             (tf.reciprocal, "ReciprocalGrad", lambda v: -1 / v ** 2)]
    for forward, op_type, derivative in cases:
        grad = tf.gradients(forward(x), x)[0]
        assert grad.op.type == op_type
        np.testing.assert_allclose(evaluate(grad, {x: v}), derivative(v), rtol=1e-12)


def test_complex_sigmoid_gradient_is_conjugated():
    x = tf.constant(np.array([0.3 + 0.4j, -1.0 + 0.2j]))
    y = tf.sigmoid(x)
    grad = tf.gradients(y, x, grad_ys=tf.constant(np.array([1.0 + 0j, 2.0 - 1j])))[0]
    yv = 1 / (1 + np.exp(-np.array([0.3 + 0.4j, -1.0 + 0.2j])))
    np.testing.assert_allclose(evaluate(grad), np.array([1.0 + 0j, 2.0 - 1j]) * np.conj(yv * (1 - yv)))
