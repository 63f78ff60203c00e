"""Gradient cases for the neural-network ops (tensorweave/ops/nn_ops.py, nn_grad.py, nn_xent.py,
nn_norm.py): activations and their *Grad ops (second derivatives), softmax, bias_add, the
fused cross-entropies (both outputs: the backprop output carries the second derivative), fused
batch norm in training and inference mode with its grad ops, LRN, and the composites.

Inputs stay away from kinks (0 for relu-like units, 6 for relu6) and from ties (top_k)."""
import numpy as np

import tensorweave as tf
from tensorweave.ops.nn import cross_entropy as nn_xent, normalization as nn_norm
from tensorweave.ops import nn as nn_ops
from tests.gradient_cases import GradCase

S = (2, 3)
X4 = (2, 2, 3, 3)   # NHWC with 3 channels


def _away_from(points, shape, margin=0.15, low=-2.0, high=2.0):
    """Values in [low, high] at least `margin` from every kink in `points`."""
    def draw(rng):
        v = rng.uniform(low, high, shape)
        for p in points:
            close = np.abs(v - p) < margin
            v[close] = p + np.where(v[close] >= p, margin, -margin) * 2
        return v
    return draw


def _inits(*draws):
    return lambda rng: [d(rng) for d in draws]


def _uniform(shape, low=-1.0, high=1.0):
    return lambda rng: rng.uniform(low, high, shape)


def _mix(*tensors):
    """One scalar from several outputs, each weighted by fixed random numbers (so that every
    output's gradient is checked, none cancels)."""
    rng = np.random.RandomState(3)
    terms = [tf.reduce_sum(t * tf.constant(rng.uniform(0.5, 1.5, t.shape.as_list()), tf.float64))
             for t in tensors]
    return tf.add_n(terms)


def _raw(op_def, **attrs):
    return lambda *inputs: tf._apply_op(op_def, **dict(zip([a.name for a in op_def.inputs], inputs)), **attrs)


# ---------------------------------------------------------------------------------------------
# Activations and their grad ops
# ---------------------------------------------------------------------------------------------
def _activation(name, op_type, fn, kinks=(0.0,)):
    return GradCase(f"nn_{name}", (op_type,), fn, [S], init=_inits(_away_from(kinks, S, low=-3, high=8)))


def _grad_op(name, op_def, second_from=None, kinks=(0.0,), **attrs):
    """Checks op_def(gradients, features) in both inputs; `second_from` maps the drawn x to the
    op's second input (the forward output for Elu/Selu)."""
    raw = _raw(op_def, **attrs)
    build = (lambda g, x: raw(g, second_from(x))) if second_from else raw
    ops = (op_def.name,) if second_from is None else (op_def.name, op_def.name[:-4])
    return GradCase(f"nn_{name}", ops, build, [S, S],
                    init=_inits(_uniform(S), _away_from(kinks, S, low=-3, high=8)))


ACTIVATIONS = [
    _activation("relu", "Relu", tf.nn.relu),
    _activation("relu6", "Relu6", tf.nn.relu6, kinks=(0.0, 6.0)),
    _activation("elu", "Elu", tf.nn.elu),
    _activation("selu", "Selu", tf.nn.selu),
    _activation("softplus", "Softplus", tf.nn.softplus),
    _activation("softsign", "Softsign", tf.nn.softsign),
    _activation("leaky_relu", "LeakyRelu", lambda x: tf.nn.leaky_relu(x, alpha=0.3)),
    _grad_op("relu_grad", nn_ops.ReluGrad),
    _grad_op("relu6_grad", nn_ops.Relu6Grad, kinks=(0.0, 6.0)),
    _grad_op("elu_grad", nn_ops.EluGrad, second_from=tf.nn.elu),
    _grad_op("selu_grad", nn_ops.SeluGrad, second_from=tf.nn.selu),
    _grad_op("softplus_grad", nn_ops.SoftplusGrad),
    _grad_op("softsign_grad", nn_ops.SoftsignGrad),
    _grad_op("leaky_relu_grad", nn_ops.LeakyReluGrad, alpha=0.3),
    # A true second derivative through tf.gradients: d/dx sum(dsoftplus/dx * x).
    GradCase("nn_softplus_second_derivative", ("Softplus", "SoftplusGrad"),
             lambda x: tf.gradients(tf.nn.softplus(x) * x, x)[0], [S]),
]

# ---------------------------------------------------------------------------------------------
# Softmax, bias_add, l2_loss, top_k
# ---------------------------------------------------------------------------------------------
_DISTINCT = lambda rng: [rng.permutation(12).reshape(3, 4) * 0.25 - 1.0]  # noqa: E731  (no ties)

LAYERS = [
    GradCase("nn_softmax", ("Softmax",), tf.nn.softmax, [S], low=-2, high=2),
    GradCase("nn_softmax_axis0", ("Softmax", "Transpose"), lambda x: tf.nn.softmax(x, axis=0), [(3, 2, 2)]),
    GradCase("nn_log_softmax", ("LogSoftmax",), tf.nn.log_softmax, [S], low=-2, high=2),
    GradCase("nn_log_softmax_dim1_of_3d", ("LogSoftmax",), lambda x: tf.nn.log_softmax(x, dim=1), [(2, 3, 2)]),
    GradCase("nn_bias_add", ("BiasAdd",), tf.nn.bias_add, [S, (3,)]),
    GradCase("nn_bias_add_nchw", ("BiasAdd",), lambda x, b: tf.nn.bias_add(x, b, data_format="NCHW"),
             [(2, 3, 2, 2), (3,)]),
    GradCase("nn_bias_add_grad", ("BiasAddGrad",), _raw(nn_ops.BiasAddGrad), [(2, 2, 3)]),
    GradCase("nn_bias_add_grad_nchw", ("BiasAddGrad",), _raw(nn_ops.BiasAddGrad, data_format="NCHW"),
             [(2, 3, 2)]),
    GradCase("nn_l2_loss", ("L2Loss",), tf.nn.l2_loss, [S]),
    GradCase("nn_top_k", ("TopKV2",), lambda x: tf.nn.top_k(x, 2).values * 1.0, [(3, 4)], init=_DISTINCT),
    GradCase("nn_top_k_3d", ("TopKV2",), lambda x: tf.nn.top_k(tf.reshape(x, [3, 2, 2]), 1)[0], [(3, 4)],
             init=_DISTINCT),
]

# ---------------------------------------------------------------------------------------------
# Cross-entropies
# ---------------------------------------------------------------------------------------------
_LABELS = [2, 0]


def _xent_both(logits, labels):
    # The op's gradient assumes each row of labels is a distribution (as TF's does).
    loss, backprop = tf._apply_op(nn_xent.SoftmaxCrossEntropyWithLogits, features=logits,
                                  labels=tf.nn.softmax(labels))
    return _mix(loss, backprop)


def _sparse_both(logits):
    loss, backprop = tf._apply_op(nn_xent.SparseSoftmaxCrossEntropyWithLogits, features=logits,
                                  labels=tf.constant(_LABELS, tf.int64))
    return _mix(loss, backprop)


LOSSES = [
    GradCase("nn_softmax_xent_v2", ("SoftmaxCrossEntropyWithLogits",),
             lambda logits, labels: tf.nn.softmax_cross_entropy_with_logits_v2(labels=tf.nn.softmax(labels),
                                                                               logits=logits), [S, S]),
    GradCase("nn_softmax_xent_both_outputs", ("SoftmaxCrossEntropyWithLogits",), _xent_both, [S, S]),
    GradCase("nn_softmax_xent_v1_axis0_3d", ("SoftmaxCrossEntropyWithLogits",),
             lambda logits: tf.nn.softmax_cross_entropy_with_logits(
                 labels=tf.constant(np.full((3, 2, 2), 1.0 / 3)), logits=logits, dim=0), [(3, 2, 2)]),
    GradCase("nn_sparse_softmax_xent", ("SparseSoftmaxCrossEntropyWithLogits",),
             lambda logits: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=_LABELS, logits=logits), [S]),
    GradCase("nn_sparse_softmax_xent_both_outputs", ("SparseSoftmaxCrossEntropyWithLogits",), _sparse_both, [S]),
    GradCase("nn_sparse_softmax_xent_3d", ("SparseSoftmaxCrossEntropyWithLogits",),
             lambda logits: tf.nn.sparse_softmax_cross_entropy_with_logits(labels=[[0, 2], [1, 1]],
                                                                           logits=logits), [(2, 2, 3)]),
    GradCase("nn_sigmoid_xent", ("Select", "Log1p", "Exp"),
             lambda logits, labels: tf.nn.sigmoid_cross_entropy_with_logits(labels=labels, logits=logits),
             [S, S], init=_inits(_away_from((0.0,), S, low=-3, high=3), _uniform(S, 0, 1))),
    GradCase("nn_weighted_xent", ("Abs", "Relu"),
             lambda logits, labels: tf.nn.weighted_cross_entropy_with_logits(labels=labels, logits=logits,
                                                                             pos_weight=1.7),
             [S, S], init=_inits(_away_from((0.0,), S, low=-3, high=3), _uniform(S, 0, 1))),
]

# ---------------------------------------------------------------------------------------------
# Normalization
# ---------------------------------------------------------------------------------------------
C = 3


def _bn_inputs(x_shape=X4):
    return _inits(_uniform(x_shape, -2, 2), _uniform((C,), 0.5, 1.5), _uniform((C,), -1, 1),
                  _uniform((C,), -0.5, 0.5), _uniform((C,), 0.5, 1.5))


def _fused(op_def, training, factor=1.0, data_format="NHWC", outputs=3):
    def build(x, scale, offset, mean, variance):
        attrs = {"epsilon": 0.01, "is_training": training, "data_format": data_format}
        if op_def is nn_norm.FusedBatchNormV3:
            attrs["exponential_avg_factor"] = factor
        outs = tf._apply_op(op_def, x=x, scale=scale, offset=offset, mean=mean, variance=variance, **attrs)
        return _mix(*outs[:outputs])
    return build


def _fused_grad(v3, training, data_format="NHWC"):
    """Forward op then its grad op directly (reserve spaces from the forward op, as in use)."""
    forward = nn_norm.FusedBatchNormV3 if v3 else nn_norm.FusedBatchNorm
    backward = nn_norm.FusedBatchNormGradV3 if v3 else nn_norm.FusedBatchNormGrad

    def build(dy, x, scale, mean, variance):
        attrs = {"epsilon": 0.01, "is_training": training, "data_format": data_format}
        outs = tf._apply_op(forward, x=x, scale=scale, offset=tf.zeros_like(scale), mean=mean,
                            variance=variance, **attrs)
        reserve = outs[3:5] if training else [mean, variance]
        extra = {"reserve_space_3": outs[5]} if v3 else {}
        grads = tf._apply_op(backward, y_backprop=dy, x=x, scale=scale, reserve_space_1=reserve[0],
                             reserve_space_2=reserve[1], **extra, **attrs)
        return _mix(*grads[:3])
    return build


def _bn_grad_inputs(x_shape=X4):
    return _inits(_uniform(x_shape), _uniform(x_shape, -2, 2), _uniform((C,), 0.5, 1.5),
                  _uniform((C,), -0.5, 0.5), _uniform((C,), 0.5, 1.5))


X4_NCHW = (2, 3, 2, 2)
_BN = [X4, (C,), (C,), (C,), (C,)]

NORMALIZATION = [
    GradCase("nn_fused_batch_norm_training", ("FusedBatchNorm",), _fused(nn_norm.FusedBatchNorm, True),
             _BN, init=_bn_inputs(), tol=1e-5),
    GradCase("nn_fused_batch_norm_inference", ("FusedBatchNorm",), _fused(nn_norm.FusedBatchNorm, False),
             _BN, init=_bn_inputs(), tol=1e-5),
    GradCase("nn_fused_batch_norm_v3_training_ema", ("FusedBatchNormV3",),
             _fused(nn_norm.FusedBatchNormV3, True, factor=0.3), _BN, init=_bn_inputs(), tol=1e-5),
    GradCase("nn_fused_batch_norm_v3_nchw", ("FusedBatchNormV3",),
             _fused(nn_norm.FusedBatchNormV3, True, data_format="NCHW"),
             [X4_NCHW, (C,), (C,), (C,), (C,)], init=_bn_inputs(X4_NCHW), tol=1e-5),
    GradCase("nn_fused_batch_norm_v3_inference_nchw", ("FusedBatchNormV3",),
             _fused(nn_norm.FusedBatchNormV3, False, data_format="NCHW"),
             [X4_NCHW, (C,), (C,), (C,), (C,)], init=_bn_inputs(X4_NCHW), tol=1e-5),
    GradCase("nn_fused_batch_norm_grad_training", ("FusedBatchNormGrad",), _fused_grad(False, True),
             [X4, X4, (C,), (C,), (C,)], init=_bn_grad_inputs(), tol=1e-5),
    GradCase("nn_fused_batch_norm_grad_inference", ("FusedBatchNormGrad",), _fused_grad(False, False),
             [X4, X4, (C,), (C,), (C,)], init=_bn_grad_inputs(), tol=1e-5),
    GradCase("nn_fused_batch_norm_grad_v3_training_nchw", ("FusedBatchNormGradV3",),
             _fused_grad(True, True, "NCHW"), [X4_NCHW, X4_NCHW, (C,), (C,), (C,)],
             init=_bn_grad_inputs(X4_NCHW), tol=1e-5),
    GradCase("nn_fused_batch_norm_grad_v3_inference", ("FusedBatchNormGradV3",), _fused_grad(True, False),
             [X4, X4, (C,), (C,), (C,)], init=_bn_grad_inputs(), tol=1e-5),
    GradCase("nn_lrn", ("LRN",), lambda x: tf.nn.lrn(x, depth_radius=1, bias=1.5, alpha=0.4, beta=0.75),
             [(1, 2, 2, 4)]),
    GradCase("nn_lrn_grad", ("LRNGrad", "LRN"),
             lambda dy, x: tf.gradients(tf.nn.lrn(x, depth_radius=2, bias=1.2, alpha=0.5, beta=0.6), x,
                                        grad_ys=dy)[0], [(1, 1, 2, 5), (1, 1, 2, 5)]),
    GradCase("nn_moments", ("Mean", "SquaredDifference"),
             lambda x: _mix(*tf.nn.moments(x, [0, 1])), [(3, 2, 2)]),
    GradCase("nn_batch_normalization", ("Rsqrt",),
             lambda x, m, v, o, s: tf.nn.batch_normalization(x, m, v, o, s, 0.01),
             [(2, 3), (3,), (3,), (3,), (3,)],
             init=_inits(_uniform((2, 3)), _uniform((3,)), _uniform((3,), 0.5, 1.5), _uniform((3,)),
                         _uniform((3,)))),
    GradCase("nn_l2_normalize", ("Rsqrt", "Maximum"), lambda x: tf.nn.l2_normalize(x, axis=1), [S]),
]

CASES = ACTIVATIONS + LAYERS + LOSSES + NORMALIZATION
