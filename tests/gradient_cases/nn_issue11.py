"""Gradient cases for the tf.nn composites of issue 11 (swish, crelu, log_poisson_loss, dilated
pool, weighted_moments, nce_loss / sampled_softmax_loss with given samples): they add no op, but
their gradients run through several ops' formulas at once."""
import numpy as np

import tensorweave as tf
from tests.gradient_cases import GradCase

_SAMPLED = (np.array([0, 4, 5, 2], np.int64), np.array([[0.3], [0.2], [0.1]]), np.array([0.5, 0.2, 0.1, 0.3]))


def _sampled_values():
    return tuple(tf.constant(v) for v in _SAMPLED)


CASES = [
    GradCase("nn_swish", ("Sigmoid", "Mul"), lambda x: tf.nn.swish(x), [(3, 4)], low=-3, high=3),
    GradCase("nn_crelu", ("Relu", "ConcatV2", "Neg"), lambda x: tf.nn.crelu(x, axis=0), [(3, 4)]),
    GradCase("nn_log_poisson_full", ("Exp", "Log"),
             lambda t, x: tf.nn.log_poisson_loss(t, x, compute_full_loss=True), [(2, 3), (2, 3)], low=1.2, high=3),
    GradCase("nn_pool_dilated_max", ("MaxPool",),
             lambda x: tf.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[2, 1]), [(1, 5, 4, 2)]),
    GradCase("nn_pool_1d_avg_dilated", ("AvgPool",),
             lambda x: tf.nn.pool(x, [2], "AVG", "VALID", dilation_rate=[2]), [(2, 6, 3)]),
    GradCase("nn_weighted_moments", ("SquaredDifference",),
             lambda x, w: tf.add_n(list(tf.nn.weighted_moments(x, [1], w))), [(3, 4), (3, 1)], low=0.5, high=1.5),
    GradCase("nn_nce_loss", ("SigmoidCrossEntropyWithLogits",),
             lambda x, w: tf.nn.nce_loss(w, tf.zeros([6], tf.float64), tf.constant([[1], [3], [5]], tf.int64), x,
                                         4, 6, sampled_values=_sampled_values()), [(3, 2), (6, 2)]),
    GradCase("nn_sampled_softmax_loss", ("SoftmaxCrossEntropyWithLogits",),
             lambda x, w: tf.nn.sampled_softmax_loss(w, tf.zeros([6], tf.float64),
                                                     tf.constant([[1], [4], [5]], tf.int64), x, 4, 6,
                                                     sampled_values=_sampled_values()), [(3, 2), (6, 2)]),
]


def _ctc(x):
    labels = tf.SparseTensor([[0, 0], [0, 1], [1, 0]], tf.constant([1, 1, 2], tf.int32), [2, 2])
    return tf.nn.ctc_loss(labels, x, tf.constant([5, 3], tf.int32)) * tf.constant([1.0, 0.5], tf.float64)


CASES.append(GradCase("nn_ctc_loss", ("CTCLoss",), _ctc, [(5, 2, 4)], low=-2, high=2))
