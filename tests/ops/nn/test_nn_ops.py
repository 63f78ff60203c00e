"""tf.nn activations and their grad ops, softmax / log_softmax, bias_add, l2_loss, top_k,
in_top_k and dropout, against NumPy references (and facts checked with TensorFlow 2.21's
tf.compat.v1, recorded here as expected values)."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import nn as nn_ops
from tensorweave.testing.op_test import check_op, evaluate

SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946
X = np.array([[-100.0, -6.5, -1.0, -1e-3, 0.0], [1e-3, 0.7, 5.99, 6.0, 100.0]])


def np_softplus(x):
    return np.maximum(x, 0) + np.log1p(np.exp(-np.abs(x)))


ACTIVATIONS = [
    (tf.nn.relu, "Relu", lambda x: np.maximum(x, 0)),
    (tf.nn.relu6, "Relu6", lambda x: np.minimum(np.maximum(x, 0), 6)),
    (tf.nn.elu, "Elu", lambda x: np.where(x < 0, np.expm1(np.minimum(x, 0)), x)),
    (tf.nn.selu, "Selu", lambda x: SELU_SCALE * np.where(x < 0, SELU_ALPHA * np.expm1(np.minimum(x, 0)), x)),
    (tf.nn.softplus, "Softplus", np_softplus),
    (tf.nn.softsign, "Softsign", lambda x: x / (1 + np.abs(x))),
    (tf.nn.leaky_relu, "LeakyRelu", lambda x: np.where(x > 0, x, 0.2 * x)),
    (lambda x: tf.nn.leaky_relu(x, alpha=0.5), "LeakyRelu", lambda x: np.where(x > 0, x, 0.5 * x)),
]


@pytest.mark.parametrize("fn,op_type,ref", ACTIVATIONS, ids=[a[1] + str(i) for i, a in enumerate(ACTIVATIONS)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_activation_matches_numpy_including_large_inputs(fn, op_type, ref, dtype):
    x = X.astype(dtype)
    y = fn(tf.constant(x))
    assert y.op.type == op_type
    check_op(y, ref(x.astype(np.float64)).astype(dtype), rtol=1e-6 if dtype == np.float32 else 1e-12)


def test_activation_on_unknown_shape_and_float16():
    x = tf.placeholder(tf.float16, [None, None])
    y = tf.nn.relu6(x)
    value = np.array([[-1, 3, 7]], np.float16)
    check_op(y, np.array([[0, 3, 6]], np.float16), {x: value})
    check_op(tf.nn.softplus(x), np_softplus(value.astype(np.float64)).astype(np.float16), {x: value}, rtol=1e-3)


def test_relu_on_integers_and_leaky_relu_casts_integers():
    check_op(tf.nn.relu(tf.constant([-3, 0, 4])), np.array([0, 0, 4], np.int32))
    y = tf.nn.leaky_relu(tf.constant([-10, 5]))
    assert y.dtype == tf.float32
    check_op(y, np.array([-2.0, 5.0], np.float32))


def test_activation_rejects_bad_dtype():
    with pytest.raises(TypeError):
        tf.nn.elu(tf.constant([1, 2]))


GRAD_OPS = [
    (nn_ops.ReluGrad, {}, lambda g, x: np.where(x > 0, g, 0)),
    (nn_ops.Relu6Grad, {}, lambda g, x: np.where((x > 0) & (x < 6), g, 0)),
    (nn_ops.EluGrad, {}, lambda g, y: np.where(y < 0, g * (y + 1), g)),
    (nn_ops.SeluGrad, {}, lambda g, y: np.where(y < 0, g * (y + SELU_SCALE * SELU_ALPHA), g * SELU_SCALE)),
    (nn_ops.SoftplusGrad, {}, lambda g, x: g / (1 + np.exp(-x))),
    (nn_ops.SoftsignGrad, {}, lambda g, x: g / (1 + np.abs(x)) ** 2),
    (nn_ops.LeakyReluGrad, {"alpha": 0.3}, lambda g, x: np.where(x > 0, g, 0.3 * g)),
]


@pytest.mark.parametrize("op_def,attrs,ref", GRAD_OPS, ids=[g[0].name for g in GRAD_OPS])
def test_grad_op_matches_numpy(op_def, attrs, ref):
    rng = np.random.RandomState(0)
    g = rng.uniform(-2, 2, X.shape)
    second = np.maximum(X, -5)  # the output-side inputs of Elu/Selu are > -1 / -1.76 in use
    out = tf._apply_op(op_def, gradients=tf.constant(g), **{op_def.inputs[1].name: tf.constant(second)}, **attrs)
    check_op(out, ref(g, second), rtol=1e-12)


def test_relu_grad_multiplies_by_the_mask_as_tensorflow():
    # TF: ReluGrad([inf, nan, 1], [-1, -2, 2]) = [nan, nan, 1] (a product, not a select).
    out = tf._apply_op(nn_ops.ReluGrad, gradients=[np.inf, np.nan, 1.0], features=[-1.0, -2.0, 2.0])
    check_op(out, np.array([np.nan, np.nan, 1.0], np.float32))
    check_op(tf.nn.relu([np.nan, -np.inf, np.inf]), np.array([np.nan, 0, np.inf], np.float32))
    check_op(tf.nn.elu([np.nan, -np.inf, np.inf]), np.array([np.nan, -1, np.inf], np.float32))


def test_grad_op_shapes_must_match():
    with pytest.raises(ValueError):
        tf._apply_op(nn_ops.ReluGrad, gradients=tf.zeros([2, 3]), features=tf.zeros([3, 2]))


def test_relu_gradient_and_second_derivative():
    x = tf.constant([-1.0, 2.0, 3.0])
    y = tf.nn.relu(x) * x
    (g,) = tf.gradients(y, x)
    (h,) = tf.gradients(g, x)
    np.testing.assert_allclose(evaluate(g), [0.0, 4.0, 6.0])
    np.testing.assert_allclose(evaluate(h), [0.0, 2.0, 2.0])


# ---------------------------------------------------------------------------------------------
# Softmax / LogSoftmax
# ---------------------------------------------------------------------------------------------
def np_log_softmax(x, axis=-1):
    shifted = x - x.max(axis=axis, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))


def test_softmax_is_stable_for_huge_logits():
    logits = np.array([[1000.0, 0.0, -1000.0], [1.0, 2.0, 3.0]], np.float32)
    y = tf.nn.softmax(logits)
    assert y.op.type == "Softmax"
    check_op(y, np.exp(np_log_softmax(logits.astype(np.float64))).astype(np.float32))
    check_op(tf.nn.log_softmax(logits), np_log_softmax(logits.astype(np.float64)).astype(np.float32), rtol=1e-6)


@pytest.mark.parametrize("kwargs,axis", [({"axis": 0}, 0), ({"dim": 1}, 1), ({"axis": -2}, 1), ({}, 2),
                                         ({"axis": 2}, 2)])
def test_softmax_and_log_softmax_along_axis(kwargs, axis):
    x = np.random.RandomState(1).randn(2, 3, 4)
    check_op(tf.nn.softmax(tf.constant(x), **kwargs), np.exp(np_log_softmax(x, axis)), rtol=1e-12)
    check_op(tf.nn.log_softmax(tf.constant(x), **kwargs), np_log_softmax(x, axis), rtol=1e-12)


def test_softmax_rejects_scalars_bad_axis_and_both_axis_and_dim():
    with pytest.raises(ValueError):
        tf.nn.softmax(tf.constant(1.0))
    with pytest.raises(ValueError):
        tf.nn.softmax(tf.zeros([2, 3]), axis=0, dim=0)
    with pytest.raises(tf.errors.InvalidArgumentError):
        tf.nn.softmax(tf.zeros([2, 3]), axis=2)
    with pytest.raises(TypeError):
        tf.nn.softmax(tf.constant([1, 2]))


def test_softmax_unknown_rank_scalar_fails_at_run_time():
    x = tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError):
        evaluate(tf.nn.softmax(x), {x: np.float32(1.0)})
    check_op(tf.nn.softmax(x), np.array([0.5, 0.5], np.float32), {x: np.zeros(2, np.float32)})


def test_softmax_of_empty_rows():
    x = tf.placeholder(tf.float32, [None, 3])
    check_op(tf.nn.softmax(x), np.zeros((0, 3), np.float32), {x: np.zeros((0, 3), np.float32)})


# ---------------------------------------------------------------------------------------------
# BiasAdd
# ---------------------------------------------------------------------------------------------
def test_bias_add_nhwc_and_nchw():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    y = tf.nn.bias_add(x, np.array([1, 2, 3, 4], np.float32))
    assert y.op.type == "BiasAdd" and y.op.name == "BiasAdd"
    check_op(y, x + np.array([1, 2, 3, 4]))
    # NCHW adds along dimension 1 for any rank >= 3 (checked with TensorFlow).
    check_op(tf.nn.bias_add(x, np.array([10, 20, 30], np.float32), data_format="NCHW"),
             x + np.array([10, 20, 30], np.float32)[:, None])
    x5 = np.zeros((1, 2, 3, 4, 5), np.float32)
    check_op(tf.nn.bias_add(x5, np.array([1, 2], np.float32), data_format="NCDHW"),
             x5 + np.array([1, 2], np.float32).reshape(2, 1, 1, 1))


def test_bias_add_shape_errors_at_build_time():
    with pytest.raises(ValueError, match="at least rank 2"):
        tf.nn.bias_add(np.zeros(3, np.float32), np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.nn.bias_add(np.zeros((2, 3), np.float32), np.zeros(4, np.float32))
    with pytest.raises(ValueError, match="at least rank 3"):
        tf.nn.bias_add(np.zeros((2, 3), np.float32), np.zeros(3, np.float32), data_format="NCHW")
    with pytest.raises(ValueError, match="data_format"):
        tf.nn.bias_add(np.zeros((2, 3), np.float32), np.zeros(3, np.float32), data_format="HWC")


def test_bias_add_shape_errors_at_run_time():
    x = tf.placeholder(tf.float32)
    b = tf.placeholder(tf.float32)
    y = tf.nn.bias_add(x, b)
    check_op(y, np.ones((2, 2), np.float32) * [1, 2], {x: np.ones((2, 2)), b: [0.0, 1.0]})
    with pytest.raises(tf.errors.InvalidArgumentError, match="as many biases"):
        evaluate(y, {x: np.ones((2, 2)), b: [0.0, 1.0, 2.0]})


def test_bias_add_grad():
    g = np.random.RandomState(2).randn(2, 3, 4)
    check_op(tf._apply_op(nn_ops.BiasAddGrad, out_backprop=g), g.sum(axis=(0, 1)), rtol=1e-12)
    check_op(tf._apply_op(nn_ops.BiasAddGrad, out_backprop=g, data_format="NCHW"), g.sum(axis=(0, 2)), rtol=1e-12)
    x, b = tf.constant(g), tf.constant([1.0, 2.0, 3.0, 4.0], tf.float64)
    gx, gb = tf.gradients(tf.nn.bias_add(x, b) * x, [x, b])
    check_op(gb, g.sum(axis=(0, 1)), rtol=1e-12)
    assert gb.op.type == "BiasAddGrad"


def test_bias_add_grad_channels_last_paths():
    """float/complex use a BLAS product with a ones vector; ints a sum; the row count may change."""
    rng = np.random.RandomState(5)
    g = tf.placeholder(tf.float32, [None, 7, 32])
    grad = tf._apply_op(nn_ops.BiasAddGrad, out_backprop=g)
    for rows in (50, 3, 0, 50):
        value = rng.randn(rows, 7, 32).astype(np.float32)
        result = evaluate(grad, {g: value})
        assert result.dtype == np.float32 and result.shape == (32,)
        np.testing.assert_allclose(result, value.astype(np.float64).sum(axis=(0, 1)), rtol=1e-4, atol=1e-4)
    ints = rng.randint(-5, 5, (4, 3, 6)).astype(np.int32)
    check_op(tf._apply_op(nn_ops.BiasAddGrad, out_backprop=ints), ints.sum(axis=(0, 1)))
    cplx = (rng.randn(5, 3) + 1j * rng.randn(5, 3)).astype(np.complex128)
    check_op(tf._apply_op(nn_ops.BiasAddGrad, out_backprop=cplx), cplx.sum(axis=0), rtol=1e-12)
    strided = rng.randn(6, 8).astype(np.float64)[:, ::2]  # not contiguous
    check_op(tf._apply_op(nn_ops.BiasAddGrad, out_backprop=tf.constant(strided)), strided.sum(axis=0), rtol=1e-12)


def test_xw_plus_b_and_relu_layer():
    rng = np.random.RandomState(6)
    x, w, b = rng.randn(2, 3), rng.randn(3, 4), rng.randn(4)
    y = tf.nn.xw_plus_b(x, w, b)
    assert y.op.type == "BiasAdd" and y.op.name == "xw_plus_b"
    check_op(y, x @ w + b, rtol=1e-12)
    check_op(tf.nn.relu_layer(x, w, b), np.maximum(x @ w + b, 0), rtol=1e-12)


# ---------------------------------------------------------------------------------------------
# L2Loss, TopKV2, InTopK
# ---------------------------------------------------------------------------------------------
def test_l2_loss():
    x = np.random.RandomState(3).randn(3, 4).astype(np.float32)
    y = tf.nn.l2_loss(x)
    assert y.op.type == "L2Loss"
    check_op(y, np.float32((x.astype(np.float64) ** 2).sum() / 2), rtol=1e-6)
    check_op(tf.nn.l2_loss(tf.constant(2.0, tf.float64)), 2.0)


def test_top_k_ties_keep_lower_index_first():
    values, indices = tf.nn.top_k([[1.0, 3.0, 3.0, 2.0, 3.0], [5.0, 4.0, 3.0, 2.0, 1.0]], 3)
    check_op(values, np.array([[3, 3, 3], [5, 4, 3]], np.float32))
    check_op(indices, np.array([[1, 2, 4], [0, 1, 2]], np.int32))


def test_top_k_named_fields_3d_int_and_k0():
    x = np.random.RandomState(4).permutation(24).reshape(2, 3, 4).astype(np.int32)
    result = tf.nn.top_k(x, k=2)
    order = np.argsort(-x, axis=-1)[..., :2]
    check_op(result.values, np.take_along_axis(x, order, -1))
    check_op(result.indices, order.astype(np.int32))
    check_op(tf.nn.top_k(x, 0).values, np.zeros((2, 3, 0), np.int32))


def test_top_k_k_too_large():
    with pytest.raises(ValueError, match="last dimension >= k"):
        tf.nn.top_k([[1.0, 2.0]], 3)
    x = tf.placeholder(tf.float32, [None, None])
    with pytest.raises(tf.errors.InvalidArgumentError, match="at least k columns. Had 2, needed 3"):
        evaluate(tf.nn.top_k(x, 3).values, {x: [[1.0, 2.0]]})
    k = tf.placeholder(tf.int32, [])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Need k >= 0"):
        evaluate(tf.nn.top_k(x, k).values, {x: [[1.0, 2.0]], k: -1})


def test_top_k_gradient_scatters_to_chosen_positions():
    x = tf.constant([[1.0, 5.0, 3.0], [9.0, 2.0, 4.0]])
    (g,) = tf.gradients(tf.nn.top_k(x, 2).values * [[1.0, 10.0], [100.0, 1000.0]], x)
    np.testing.assert_allclose(evaluate(g), [[0, 1, 10], [100, 0, 1000]])


# Rows: a tie, a NaN, an inf, a NaN elsewhere than the target, a plain row. Expected values
# were produced by TensorFlow: any non-finite prediction or an out-of-range target gives False.
PREDICTIONS = np.array([[0.1, 0.3, 0.3, 0.2], [np.nan, 0.3, 0.5, 0.1], [0.1, np.inf, 0.5, 0.4],
                        [0.9, 0.8, 0.7, np.nan], [1, 2, 3, 4]], np.float32)
IN_TOP_K = [([1, 1, 2, 0, 5], 1, [True, False, False, False, False]),
            ([2, 2, 2, 1, -1], 3, [True, False, False, False, False]),
            ([3, 2, 3, 0, 0], 2, [False, False, False, False, False]),
            ([3, 2, 3, 0, 0], 3, [True, False, False, False, False]),
            ([0, 0, 0, 0, 3], 1, [False, False, False, False, True])]


@pytest.mark.parametrize("targets,k,expected", IN_TOP_K)
def test_in_top_k_matches_tensorflow(targets, k, expected):
    y = tf.nn.in_top_k(PREDICTIONS, targets, k)
    assert y.op.type == "InTopKV2"
    check_op(y, np.array(expected))
    v1 = tf._apply_op(nn_ops.InTopK, predictions=PREDICTIONS, targets=np.array(targets, np.int64), k=k)
    check_op(v1, np.array(expected))


def test_in_top_k_shape_checks():
    with pytest.raises(ValueError):
        tf.nn.in_top_k(np.zeros((2, 3), np.float32), [0, 1, 2], 1)
    with pytest.raises(ValueError):
        tf.nn.in_top_k(np.zeros(3, np.float32), [0], 1)
    predictions = tf.constant(PREDICTIONS)
    hit = tf.cast(tf.nn.in_top_k(predictions, [0, 0, 0, 0, 0], 2), tf.float32)
    assert tf.gradients(hit * predictions[:, 0], predictions)[0] is not None  # through the product only
    assert tf.gradients(tf.reduce_sum(hit), predictions) == [None]


# ---------------------------------------------------------------------------------------------
# Dropout
# ---------------------------------------------------------------------------------------------
def test_dropout_keeps_scaled_values_at_the_right_rate():
    x = np.random.RandomState(5).uniform(1, 2, (200, 100)).astype(np.float32)
    y = evaluate(tf.nn.dropout(x, keep_prob=0.3, seed=1))
    kept = y != 0
    np.testing.assert_allclose(y[kept], x[kept] / np.float32(0.3), rtol=1e-6)
    # 20000 Bernoulli(0.3) draws: the kept fraction is within 4 standard deviations of 0.3.
    assert abs(kept.mean() - 0.3) < 4 * np.sqrt(0.3 * 0.7 / kept.size)
    assert np.array_equal(evaluate(tf.nn.dropout(x, rate=0.0)), x)


def test_dropout_is_reproducible_with_seeds_and_differs_between_runs():
    def masks():
        tf.reset_default_graph()
        tf.set_random_seed(3)
        y = tf.nn.dropout(tf.ones([50]), keep_prob=0.5)
        with tf.Session() as sess:
            return sess.run(y) != 0, sess.run(y) != 0

    first, second = masks()
    again, _ = masks()
    assert np.array_equal(first, again)
    assert not np.array_equal(first, second)


def test_dropout_noise_shape_drops_whole_rows_and_keep_prob_tensor():
    keep = tf.placeholder(tf.float32, [])
    y = tf.nn.dropout(tf.ones([40, 6]), keep_prob=keep, noise_shape=[40, 1], seed=2)
    value = evaluate(y, {keep: 0.5})
    assert y.shape.as_list() == [40, 6]
    assert set(np.unique(value).tolist()) <= {0.0, 2.0}
    assert all(len(set(row.tolist())) == 1 for row in value)
    assert np.array_equal(evaluate(y, {keep: 1.0}), np.ones((40, 6), np.float32))


def test_dropout_argument_errors():
    x = tf.ones([3])
    for kwargs in ({"keep_prob": 0.0}, {"rate": 1.0}, {"keep_prob": 0.5, "rate": 0.5}, {}):
        with pytest.raises(ValueError):
            tf.nn.dropout(x, **kwargs)
    with pytest.raises(ValueError, match="floating point"):
        tf.nn.dropout(tf.constant([1, 2]), keep_prob=0.5)


def test_dropout_gradient_is_the_scaled_mask():
    x = tf.ones([30])
    y = tf.nn.dropout(x, keep_prob=0.25, seed=4)
    (g,) = tf.gradients(y, x)
    with tf.Session() as sess:
        y_value, g_value = sess.run([y, g])
    np.testing.assert_allclose(g_value, y_value)  # x = 1: y is exactly mask / keep_prob
