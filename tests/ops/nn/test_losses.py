"""The tf.nn cross-entropies and tf.losses. Expected numbers marked "TF" were produced by
TensorFlow 2.21 (tf.compat.v1, graph mode) for the same inputs; the rest are NumPy references."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.nn import cross_entropy as nn_xent
from tensorweave.testing.op_test import check_op, evaluate

LOGITS = np.array([[0.5, 0.1, 2.5], [1.5, -0.5, 2.0]], np.float32)
LABELS = np.array([[1.0, 0.0, 2.0], [0.5, -1.0, 3.0]], np.float32)


def np_log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def np_xent(labels, logits, axis=-1):
    return -(labels * np_log_softmax(logits, axis)).sum(axis=axis)


# ---------------------------------------------------------------------------------------------
# softmax_cross_entropy_with_logits (v1, v2, the OSDI call form)
# ---------------------------------------------------------------------------------------------
def test_softmax_xent_is_stable_for_huge_logits():  # TF
    y = tf.nn.softmax_cross_entropy_with_logits(labels=[[0.2, 0.8, 0.0], [0, 0, 1.0]],
                                                logits=[[1000.0, 0.0, -1000.0], [1.0, 2.0, 3.0]])
    check_op(y, np.array([800.0, 0.40760594606399536], np.float32))


def test_osdi_positional_form_equals_keyword_form():
    labels = np.eye(3, dtype=np.float32)[[2, 0]]
    positional = tf.nn.softmax_cross_entropy_with_logits(LOGITS, labels)  # Figure 1: (logits, labels)
    keyword = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=LOGITS)
    expected = np_xent(labels.astype(np.float64), LOGITS.astype(np.float64)).astype(np.float32)
    check_op(positional, expected)
    check_op(keyword, expected)
    assert keyword.op.type == "SoftmaxCrossEntropyWithLogits"
    with pytest.raises(ValueError, match="named arguments"):
        tf.nn.softmax_cross_entropy_with_logits(LOGITS, labels=labels, logits=LOGITS)
    with pytest.raises(ValueError):
        tf.nn.softmax_cross_entropy_with_logits(labels=labels)


def test_fused_op_returns_backprop_softmax_minus_labels():
    labels = np.array([[0.3, 0.3, 0.4], [0.0, 1.0, 0.0]])
    loss, backprop = tf._apply_op(nn_xent.SoftmaxCrossEntropyWithLogits, features=LOGITS.astype(np.float64),
                                  labels=labels)
    check_op(loss, np_xent(labels, LOGITS.astype(np.float64)), rtol=1e-12)
    check_op(backprop, np.exp(np_log_softmax(LOGITS.astype(np.float64))) - labels, rtol=1e-12)


def test_v1_stops_gradient_into_labels_and_v2_does_not():
    logits = tf.constant(LOGITS)
    labels = tf.constant(np.array([[0.2, 0.3, 0.5], [1.0, 0.0, 0.0]], np.float32))
    v1 = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    v2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits)
    assert tf.gradients(v1, labels) == [None]
    (g_labels,) = tf.gradients(v2, labels)
    check_op(g_labels, -np_log_softmax(LOGITS.astype(np.float64)).astype(np.float32), rtol=1e-5)
    (g_logits,) = tf.gradients(v1, logits)
    softmax = np.exp(np_log_softmax(LOGITS.astype(np.float64)))
    check_op(g_logits, (softmax - evaluate(labels)).astype(np.float32), rtol=1e-5)


@pytest.mark.parametrize("dim", [0, 1, -1, 2])
def test_softmax_xent_along_other_axes_of_3d(dim):
    rng = np.random.RandomState(0)
    logits, labels = rng.randn(2, 3, 4), rng.rand(2, 3, 4)
    y = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits, dim=dim)
    check_op(y, np_xent(labels, logits, dim), rtol=1e-12)
    y2 = tf.nn.softmax_cross_entropy_with_logits_v2(labels=labels, logits=logits, axis=dim)
    check_op(y2, np_xent(labels, logits, dim), rtol=1e-12)


def test_softmax_xent_unknown_shapes_and_errors():
    logits = tf.placeholder(tf.float32, [None, None])
    labels = tf.placeholder(tf.float32, [None, None])
    y = tf.nn.softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    check_op(y, np_xent(LABELS, LOGITS).astype(np.float32), {logits: LOGITS, labels: LABELS}, rtol=1e-5)
    with pytest.raises(tf.errors.InvalidArgumentError, match="same size"):
        evaluate(y, {logits: LOGITS, labels: LABELS[:, :2]})
    with pytest.raises(ValueError):
        tf.nn.softmax_cross_entropy_with_logits(labels=tf.zeros([2, 3]), logits=tf.zeros([2, 4]))


def test_softmax_xent_float16_computes_in_float32():
    y = tf.nn.softmax_cross_entropy_with_logits_v2(labels=LABELS.astype(np.float16), logits=LOGITS.astype(np.float16))
    assert y.dtype == tf.float16
    check_op(y, np_xent(LABELS.astype(np.float16).astype(np.float64),
                        LOGITS.astype(np.float16).astype(np.float64)).astype(np.float16), rtol=1e-3)


# ---------------------------------------------------------------------------------------------
# sparse_softmax_cross_entropy_with_logits
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("label_dtype", [np.int32, np.int64])
def test_sparse_softmax_xent(label_dtype):
    labels = np.array([2, 0], label_dtype)
    y = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=LOGITS)
    assert y.op.type == "SparseSoftmaxCrossEntropyWithLogits"
    check_op(y, -np_log_softmax(LOGITS)[[0, 1], labels], rtol=1e-6)
    positional = tf.nn.sparse_softmax_cross_entropy_with_logits(LOGITS, labels)  # (logits, labels)
    check_op(positional, -np_log_softmax(LOGITS)[[0, 1], labels], rtol=1e-6)


def test_sparse_fused_op_returns_backprop():
    labels = np.array([1, 2], np.int64)
    loss, backprop = tf._apply_op(nn_xent.SparseSoftmaxCrossEntropyWithLogits, features=LOGITS, labels=labels)
    check_op(loss, -np_log_softmax(LOGITS)[[0, 1], labels], rtol=1e-6)
    check_op(backprop, np.exp(np_log_softmax(LOGITS)) - np.eye(3, dtype=np.float32)[labels], rtol=1e-5, atol=1e-7)


def test_sparse_softmax_xent_3d_and_gradient():
    rng = np.random.RandomState(1)
    logits, labels = rng.randn(2, 3, 4), rng.randint(0, 4, (2, 3))
    y = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits)
    expected = -np.take_along_axis(np_log_softmax(logits), labels[..., None], -1)[..., 0]
    check_op(y, expected, rtol=1e-12)
    x = tf.constant(logits)
    (g,) = tf.gradients(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=x), x)
    check_op(g, np.exp(np_log_softmax(logits)) - np.eye(4)[labels], rtol=1e-12)


def test_sparse_softmax_xent_out_of_range_label():  # message as TF's
    labels = tf.placeholder(tf.int32, [None])
    y = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=tf.zeros([3, 4]))
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"Received a label value of 5 which is outside the valid range of \[0, 4\)"):
        evaluate(y, {labels: [1, 5, 0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="label value of -1"):
        evaluate(y, {labels: [1, -1, 0]})


def test_sparse_softmax_xent_rank_and_shape_errors():
    with pytest.raises(ValueError, match="rank"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.zeros([2, 3], tf.int32), logits=tf.zeros([2, 3]))
    with pytest.raises(ValueError, match="shape"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.zeros([3], tf.int32), logits=tf.zeros([2, 3]))
    with pytest.raises(ValueError, match="scalar"):
        tf.nn.sparse_softmax_cross_entropy_with_logits(labels=tf.zeros([], tf.int32), logits=tf.zeros([]))


# ---------------------------------------------------------------------------------------------
# sigmoid / weighted cross entropy
# ---------------------------------------------------------------------------------------------
XL = np.array([[-100.0, 0.0, 50.0], [3.0, -2.0, 1e-3]], np.float32)
ZL = np.array([[0.0, 1.0, 1.0], [0.3, 0.7, 0.0]], np.float32)


def test_sigmoid_xent_matches_tensorflow_in_the_tails():  # TF
    y = tf.nn.sigmoid_cross_entropy_with_logits(labels=ZL, logits=XL)
    assert y.op.name == "logistic_loss"
    check_op(y, np.array([[0.0, 0.6931471824645996, 1.9287498933537385e-22],
                          [2.148587226867676, 1.5269279479980469, 0.6936472654342651]], np.float32))
    check_op(tf.nn.sigmoid_cross_entropy_with_logits(XL, ZL), evaluate(y))  # (logits, labels)


def test_weighted_xent_matches_tensorflow():  # TF
    expected = np.array([[0.0, 1.732867956161499, 4.821874796493219e-22],
                         [2.1704516410827637, 3.760202407836914, 0.6936472654342651]], np.float32)
    check_op(tf.nn.weighted_cross_entropy_with_logits(labels=ZL, logits=XL, pos_weight=2.5), expected)
    check_op(tf.nn.weighted_cross_entropy_with_logits(targets=ZL, logits=XL, pos_weight=2.5), expected)


def test_sigmoid_xent_shape_mismatch():
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.sigmoid_cross_entropy_with_logits(labels=tf.zeros([2, 3]), logits=tf.zeros([3, 2]))
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.weighted_cross_entropy_with_logits(labels=tf.zeros([2]), logits=tf.zeros([3]), pos_weight=2.0)


# ---------------------------------------------------------------------------------------------
# tf.losses
# ---------------------------------------------------------------------------------------------
W = np.array([[1.0], [0.0]], np.float32)
REDUCED = {  # TF: mean_squared_error(LABELS, LOGITS, weights=W, reduction=...)
    tf.losses.Reduction.SUM: 0.51,
    tf.losses.Reduction.MEAN: 0.17,
    tf.losses.Reduction.SUM_OVER_BATCH_SIZE: 0.085,
    tf.losses.Reduction.SUM_BY_NONZERO_WEIGHTS: 0.17,
}


@pytest.mark.parametrize("reduction", sorted(REDUCED))
def test_mean_squared_error_reductions(reduction):
    loss = tf.losses.mean_squared_error(LABELS, LOGITS, weights=W, reduction=reduction)
    assert loss.dtype == tf.float32
    check_op(loss, np.float32(REDUCED[reduction]), rtol=1e-6)
    assert tf.losses.get_losses() == [loss]


def test_reduction_none_and_default():
    loss = tf.losses.mean_squared_error(LABELS, LOGITS, weights=W, reduction=tf.losses.Reduction.NONE)
    check_op(loss, np.array([[0.25, 0.010000000707805157, 0.25], [0, 0, 0]], np.float32))
    default = tf.losses.mean_squared_error(LABELS, LOGITS, weights=np.array([[2.0, 0.0, 1.0]], np.float32))
    check_op(default, np.float32(0.9375))  # TF
    assert tf.losses.Reduction.all()[-1] == tf.losses.Reduction.SUM_BY_NONZERO_WEIGHTS


def test_weights_must_broadcast_and_reduction_must_be_known():
    with pytest.raises(ValueError, match="weights can not be broadcast"):
        tf.losses.mean_squared_error(LABELS, LOGITS, weights=np.array([2.0, 0.0], np.float32))
    with pytest.raises(ValueError, match="Invalid Reduction Key bad"):
        tf.losses.mean_squared_error(LABELS, LOGITS, reduction="bad")
    with pytest.raises(ValueError, match="labels must not be None"):
        tf.losses.mean_squared_error(None, LOGITS)


def test_softmax_cross_entropy_with_label_smoothing_keeps_float64():  # TF
    loss = tf.losses.softmax_cross_entropy(np.eye(3)[[0, 2]], LOGITS.astype(np.float64), label_smoothing=0.1)
    assert loss.dtype == tf.float64
    check_op(loss, 1.3871879577636719, rtol=1e-7)


@pytest.mark.parametrize("labels,weights", [([[0], [2]], [[1.0], [3.0]]), ([0, 2], [1.0, 3.0])])
def test_sparse_softmax_cross_entropy_squeezes_labels_and_weights(labels, weights):  # TF
    loss = tf.losses.sparse_softmax_cross_entropy(labels, LOGITS, weights=np.array(weights, np.float32))
    assert loss.op.name == "sparse_softmax_cross_entropy_loss/value"
    check_op(loss, np.float32(1.8877637), rtol=1e-6)


def test_sigmoid_cross_entropy_absolute_difference_and_others():  # TF
    check_op(tf.losses.sigmoid_cross_entropy(np.array([[1, 0, 1], [0, 0, 1]]), LOGITS, label_smoothing=0.2),
             np.float32(0.6649636), rtol=1e-6)
    check_op(tf.losses.absolute_difference(LABELS, LOGITS, weights=0.0), np.float32(0.0))
    check_op(tf.losses.absolute_difference(LABELS, LOGITS), np.float32(np.abs(LABELS - LOGITS).mean()), rtol=1e-6)
    check_op(tf.losses.huber_loss(LABELS, LOGITS, delta=0.7), np.float32(0.21499999), rtol=1e-6)
    check_op(tf.losses.log_loss(np.array([1, 0, 1.0]), np.array([0.9, 0.2, 0.6])), np.float32(0.2797764), rtol=1e-6)
    check_op(tf.losses.hinge_loss(np.array([1, 0, 1.0]), np.array([0.3, 0.2, -2.0])), np.float32(1.6333333),
             rtol=1e-6)


def test_compute_weighted_loss_edge_cases():
    none = tf.losses.compute_weighted_loss(np.ones((2, 3), np.float32), reduction=tf.losses.Reduction.NONE,
                                           loss_collection=None)
    assert none.op.name == "weighted_loss/Mul" and tf.losses.get_losses() == []
    check_op(tf.losses.compute_weighted_loss(np.zeros((0,), np.float32)), np.float32(0.0))  # no NaN
    check_op(tf.losses.compute_weighted_loss([1.0, 2.0, 3.0], weights=[0.0, 2.0, 1.0]), np.float32(3.5))
    check_op(tf.losses.compute_weighted_loss([1.0, 2.0], weights=[3.0, 1.0], reduction=tf.losses.Reduction.MEAN),
             np.float32(1.25))


def test_total_and_regularization_losses():
    reg = tf.losses.get_regularization_loss()
    check_op(reg, np.float32(0.0))
    with pytest.raises(ValueError):
        tf.losses.get_total_loss()
    a = tf.losses.mean_squared_error([1.0, 2.0], [1.5, 2.0])
    tf.add_to_collection(tf.GraphKeys.REGULARIZATION_LOSSES, tf.constant(0.5))
    b = tf.losses.absolute_difference([1.0], [3.0], loss_collection="mine")
    total = tf.losses.get_total_loss()
    assert total.op.name == "total_loss"
    check_op(total, np.float32(0.125 + 0.5))
    check_op(tf.losses.get_total_loss(add_regularization_losses=False), np.float32(0.125))
    check_op(tf.losses.get_regularization_loss(), np.float32(0.5))
    assert tf.losses.get_losses(loss_collection="mine") == [b] and tf.losses.get_losses() == [a]
    tf.losses.add_loss(b)
    assert tf.losses.get_losses() == [a, b]


# ---------------------------------------------------------------------------------------------
# The fused kernels' row blocks (split over the device's threads for large batches)
# ---------------------------------------------------------------------------------------------
@pytest.fixture
def split_rows(monkeypatch):
    from tensorweave.ops.kernels import intra_op
    monkeypatch.setattr(nn_xent, "_PARALLEL_LOGITS", 0)
    monkeypatch.setattr(intra_op, "available_cores", lambda: 3)


@pytest.mark.parametrize("rows", [1, 2, 7, 25])
def test_xent_kernels_in_row_blocks_match_numpy(split_rows, rows):
    rng = np.random.RandomState(rows)
    logits = (rng.randn(rows, 13) * 4).astype(np.float32)
    labels = rng.randint(0, 13, rows).astype(np.int64)
    soft = rng.rand(rows, 13).astype(np.float32)
    sparse = tf._apply_op(nn_xent.SparseSoftmaxCrossEntropyWithLogits, features=logits, labels=labels)
    dense = tf._apply_op(nn_xent.SoftmaxCrossEntropyWithLogits, features=logits, labels=soft)
    (loss, backprop), (dloss, dbackprop) = evaluate([sparse, dense])
    log_probs = np_log_softmax(logits.astype(np.float64))
    onehot = np.eye(13)[labels]
    np.testing.assert_allclose(loss, -log_probs[np.arange(rows), labels], rtol=1e-5)
    np.testing.assert_allclose(backprop, np.exp(log_probs) - onehot, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(dloss, np_xent(soft, logits.astype(np.float64)), rtol=1e-5)
    np.testing.assert_allclose(dbackprop, np.exp(log_probs) - soft, rtol=1e-5, atol=1e-6)


def test_xent_kernels_empty_batch_and_float64():
    logits = np.zeros((0, 4))
    loss, backprop = evaluate(tf._apply_op(nn_xent.SparseSoftmaxCrossEntropyWithLogits, features=logits,
                                           labels=np.zeros(0, np.int32)))
    assert loss.shape == (0,) and backprop.shape == (0, 4) and loss.dtype == np.float64
    logits = np.array([[1.0, 2.0, 3.0]])
    loss, _ = evaluate(tf._apply_op(nn_xent.SoftmaxCrossEntropyWithLogits, features=logits,
                                    labels=np.array([[0.0, 0.0, 1.0]])))
    np.testing.assert_allclose(loss, -np_log_softmax(logits)[:, 2], rtol=1e-14)
