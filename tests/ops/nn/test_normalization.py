"""Fused batch norm (training, running averages, inference, NCHW, the grad ops), LRN and its
grad, moments, batch_normalization and l2_normalize, against NumPy references. The batch-norm
and LRN conventions (unbiased batch_variance, reserve spaces, the LRN window) were checked
against TensorFlow 2.21."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.nn import normalization as nn_norm
from tensorweave.testing.op_test import check_op, evaluate

RNG = np.random.RandomState(0)
X = RNG.randn(2, 3, 2, 4).astype(np.float32)
SCALE = (RNG.rand(4) + 0.5).astype(np.float32)
OFFSET = RNG.rand(4).astype(np.float32)
RUNNING_MEAN = RNG.rand(4).astype(np.float32)
RUNNING_VAR = (RNG.rand(4) + 0.5).astype(np.float32)
AXES = (0, 1, 2)


def np_batch_norm(x, mean, var, scale, offset, eps):
    return (x - mean) / np.sqrt(var + eps) * scale + offset


def test_fused_batch_norm_training_returns_unbiased_batch_variance():
    y, mean, var = tf.nn.fused_batch_norm(X, SCALE, OFFSET, epsilon=0.001)
    assert y.op.type == "FusedBatchNormV3"
    m, v = X.mean(AXES), X.var(AXES)
    n = X.size // 4
    check_op(y, np_batch_norm(X, m, v, SCALE, OFFSET, 0.001), rtol=1e-5, atol=1e-5)  # normalizes with biased var
    check_op(mean, m, rtol=1e-5)
    check_op(var, v * n / (n - 1), rtol=1e-5)
    reserve = evaluate(list(y.op.outputs[3:]))
    np.testing.assert_allclose(reserve[0], m, rtol=1e-5)
    np.testing.assert_allclose(reserve[1], v, rtol=1e-5)  # the biased variance
    assert reserve[2].shape == (0,)


def test_fused_batch_norm_exponential_average():
    _, mean, var = tf.nn.fused_batch_norm(X, SCALE, OFFSET, RUNNING_MEAN, RUNNING_VAR, epsilon=0.001,
                                          exponential_avg_factor=0.3)
    n = X.size // 4
    check_op(mean, 0.7 * RUNNING_MEAN + 0.3 * X.mean(AXES), rtol=1e-5)
    check_op(var, 0.7 * RUNNING_VAR + 0.3 * X.var(AXES) * n / (n - 1), rtol=1e-5)


def test_fused_batch_norm_inference_uses_given_statistics():
    y, mean, var = tf.nn.fused_batch_norm(X, SCALE, OFFSET, RUNNING_MEAN, RUNNING_VAR, is_training=False)
    check_op(y, np_batch_norm(X, RUNNING_MEAN, RUNNING_VAR, SCALE, OFFSET, 0.001), rtol=1e-5, atol=1e-5)
    check_op(mean, RUNNING_MEAN)
    check_op(var, RUNNING_VAR)


def test_fused_batch_norm_nchw_and_v1_op():
    x = np.transpose(X, (0, 3, 1, 2))
    y, mean, _ = tf.nn.fused_batch_norm(x, SCALE, OFFSET, data_format="NCHW", epsilon=0.01)
    expected = np_batch_norm(X, X.mean(AXES), X.var(AXES), SCALE, OFFSET, 0.01)
    check_op(y, np.transpose(expected, (0, 3, 1, 2)), rtol=1e-5, atol=1e-5)
    check_op(mean, X.mean(AXES), rtol=1e-5)
    outs = tf._apply_op(nn_norm.FusedBatchNorm, x=X, scale=SCALE, offset=OFFSET, mean=[], variance=[],
                        epsilon=0.01)
    assert len(outs) == 5
    check_op(outs[0], expected, rtol=1e-5, atol=1e-5)


def test_fused_batch_norm_float16_input_with_float32_statistics():
    y, mean, var = tf.nn.fused_batch_norm(X.astype(np.float16), SCALE, OFFSET, epsilon=0.001)
    assert y.dtype == tf.float16 and mean.dtype == tf.float32
    x = X.astype(np.float16).astype(np.float32)
    check_op(y, np_batch_norm(x, x.mean(AXES), x.var(AXES), SCALE, OFFSET, 0.001).astype(np.float16),
             rtol=1e-2, atol=1e-2)
    check_op(mean, x.mean(AXES), rtol=1e-5)


def test_fused_batch_norm_argument_errors():
    with pytest.raises(ValueError, match="must be a 1D tensor"):
        tf.nn.fused_batch_norm(X, SCALE, OFFSET, is_training=False)
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.fused_batch_norm(X[0], SCALE, OFFSET)
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.nn.fused_batch_norm(X, SCALE[:3], OFFSET[:3])
    x = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError):
        evaluate(tf.nn.fused_batch_norm(x, SCALE, OFFSET)[0], {x: np.zeros((2, 2, 2, 3), np.float32)})


def _np_bn_grad(dy, x, scale, mean, var, eps, training):
    inv = 1 / np.sqrt(var + eps)
    x_hat = (x - mean) * inv
    d_offset, d_scale = dy.sum(AXES), (dy * x_hat).sum(AXES)
    if not training:
        return dy * scale * inv, d_scale, d_offset
    n = x.size / x.shape[-1]
    return scale * inv * (dy - d_offset / n - x_hat * d_scale / n), d_scale, d_offset


@pytest.mark.parametrize("v3", [True, False])
@pytest.mark.parametrize("training", [True, False])
def test_fused_batch_norm_grad_op(training, v3):
    x, dy = X.astype(np.float64), RNG.randn(*X.shape)
    scale = SCALE.astype(np.float64)
    mean, var = (x.mean(AXES), x.var(AXES)) if training else (RUNNING_MEAN.astype(np.float64),
                                                              RUNNING_VAR.astype(np.float64))
    op_def = nn_norm.FusedBatchNormGradV3 if v3 else nn_norm.FusedBatchNormGrad
    extra = {"reserve_space_3": np.zeros(0)} if v3 else {}
    outs = tf._apply_op(op_def, y_backprop=dy, x=x, scale=scale, reserve_space_1=mean, reserve_space_2=var,
                        epsilon=0.01, is_training=training, **extra)
    for got, want in zip(outs[:3], _np_bn_grad(dy, x, scale, mean, var, 0.01, training)):
        check_op(got, want, rtol=1e-10, atol=1e-12)
    for reserve in outs[3:]:
        check_op(reserve, np.zeros(0))


def test_fused_batch_norm_gradient_through_tf_gradients():
    x = tf.constant(X.astype(np.float64))
    scale = tf.constant(SCALE.astype(np.float64))
    offset = tf.constant(OFFSET.astype(np.float64))
    dy = RNG.randn(*X.shape)
    y, _, _ = tf.nn.fused_batch_norm(x, scale, offset, epsilon=0.01)
    gx, gs, go = tf.gradients(y, [x, scale, offset], grad_ys=tf.constant(dy))
    want = _np_bn_grad(dy, X.astype(np.float64), SCALE, X.astype(np.float64).mean(AXES),
                       X.astype(np.float64).var(AXES), 0.01, True)
    for got, expected in zip(evaluate([gx, gs, go]), want):
        np.testing.assert_allclose(got, expected, rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------------------------------------
# LRN
# ---------------------------------------------------------------------------------------------
def np_lrn(x, radius, bias, alpha, beta):
    out = np.zeros_like(x)
    depth = x.shape[-1]
    for d in range(depth):
        lo, hi = max(0, d - radius), min(depth, d + radius + 1)
        out[..., d] = x[..., d] / (bias + alpha * (x[..., lo:hi] ** 2).sum(-1)) ** beta
    return out


@pytest.mark.parametrize("radius", [0, 2, 5, 10])
def test_lrn_matches_window_formula(radius):
    x = RNG.randn(1, 2, 2, 7)
    y = tf.nn.lrn(x, depth_radius=radius, bias=1.5, alpha=0.3, beta=0.75)
    assert y.op.type == "LRN"
    check_op(y, np_lrn(x, radius, 1.5, 0.3, 0.75), rtol=1e-12)
    check_op(tf.nn.local_response_normalization(x.astype(np.float32)), np_lrn(x, 5, 1.0, 1.0, 0.5).astype(np.float32),
             rtol=1e-5)


def test_lrn_grad_matches_numeric_derivative():
    x = RNG.randn(1, 1, 2, 5)
    dy = RNG.randn(*x.shape)
    xt = tf.constant(x)
    (g,) = tf.gradients(tf.nn.lrn(xt, 2, 1.2, 0.5, 0.6), xt, grad_ys=tf.constant(dy))
    assert g.op.type == "LRNGrad"
    numeric = np.zeros_like(x)
    for i in np.ndindex(x.shape):
        e = np.zeros_like(x)
        e[i] = 1e-6
        numeric[i] = ((np_lrn(x + e, 2, 1.2, 0.5, 0.6) - np_lrn(x - e, 2, 1.2, 0.5, 0.6)) * dy).sum() / 2e-6
    check_op(g, numeric, rtol=1e-6, atol=1e-8)


def test_lrn_rank_check():
    with pytest.raises(ValueError, match="rank 4"):
        tf.nn.lrn(np.zeros((2, 3), np.float32))


# ---------------------------------------------------------------------------------------------
# Composites
# ---------------------------------------------------------------------------------------------
def test_moments():
    x = RNG.randn(3, 4, 5)
    mean, var = tf.nn.moments(tf.constant(x), [0, 2])
    assert mean.op.name == "moments/Squeeze"
    check_op(mean, x.mean((0, 2)), rtol=1e-12)
    check_op(var, x.var((0, 2)), rtol=1e-12)
    mean, var = tf.nn.moments(tf.constant(x), [1], keep_dims=True)
    check_op(var, x.var(1, keepdims=True), rtol=1e-12)
    _, var16 = tf.nn.moments(tf.constant(x.astype(np.float16)), [0, 1, 2], keepdims=False)
    check_op(var16, np.float16(x.astype(np.float16).astype(np.float32).var()), rtol=1e-3)


def test_batch_normalization():
    x, m, v, o, s = RNG.randn(4, 3), RNG.randn(3), RNG.rand(3) + 0.5, RNG.randn(3), RNG.randn(3)
    check_op(tf.nn.batch_normalization(x, m, v, o, s, 1e-3), np_batch_norm(x, m, v, s, o, 1e-3), rtol=1e-12)
    check_op(tf.nn.batch_normalization(x, m, v, None, None, 1e-3), (x - m) / np.sqrt(v + 1e-3), rtol=1e-12)


def test_l2_normalize():
    x = np.array([[3.0, 4.0], [0.0, 0.0]])
    check_op(tf.nn.l2_normalize(x, axis=1), np.array([[0.6, 0.8], [0.0, 0.0]]))
    check_op(tf.nn.l2_normalize(x, dim=0), x / np.sqrt((x ** 2).sum(0)))
    y = RNG.randn(3, 4)
    check_op(tf.nn.l2_normalize(y), y / np.sqrt((y ** 2).sum()), rtol=1e-12)
