"""MaxPool / AvgPool (and V2) and their gradient ops against direct NumPy loops: SAME / VALID,
strides, overlapping windows, odd sizes, NCHW; TF's tie rule (first maximum in row-major order,
values checked against tensorflow 2.21) and NaN rule; static shapes; bad arguments."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.nn import pooling as pooling_ops
from tensorweave.testing.op_test import check_op, evaluate
from tests.ops.nn.test_conv import window_geometry


# ---------------------------------------------------------------------------------------------
# NumPy references
# ---------------------------------------------------------------------------------------------
def windows(x_shape, ksize, strides, padding):
    """Yields (a, b, rows, cols) for each output position: the real input rows/cols it covers."""
    oh, ow, (top, _, left, _) = window_geometry(x_shape, ksize[0], ksize[1], strides, (1, 1), padding)
    for a in range(oh):
        for b in range(ow):
            r0, c0 = a * strides[0] - top, b * strides[1] - left
            rows = [r for r in range(r0, r0 + ksize[0]) if 0 <= r < x_shape[1]]
            cols = [c for c in range(c0, c0 + ksize[1]) if 0 <= c < x_shape[2]]
            yield a, b, rows, cols


def out_shape(x_shape, ksize, strides, padding):
    oh, ow, _ = window_geometry(x_shape, ksize[0], ksize[1], strides, (1, 1), padding)
    return (x_shape[0], oh, ow, x_shape[3])


def ref_pool(x, ksize, strides, padding, kind):
    out = np.zeros(out_shape(x.shape, ksize, strides, padding))
    for a, b, rows, cols in windows(x.shape, ksize, strides, padding):
        patch = x[:, rows][:, :, cols].astype(np.float64)
        out[:, a, b] = patch.max(axis=(1, 2)) if kind == "max" else patch.mean(axis=(1, 2))
    return out


def first_max(x, n, c, rows, cols):
    best = None
    for r in rows:            # row-major: the first maximum wins ties
        for q in cols:
            if best is None or x[n, r, q, c] > x[n, best[0], best[1], c]:
                best = (r, q)
    return best


def ref_max_pool_grad(x, dy, ksize, strides, padding):
    dx = np.zeros(x.shape)
    for a, b, rows, cols in windows(x.shape, ksize, strides, padding):
        for n in range(x.shape[0]):
            for c in range(x.shape[3]):
                r, q = first_max(x, n, c, rows, cols)
                dx[n, r, q, c] += dy[n, a, b, c]
    return dx


def ref_max_pool_grad_grad(x, g, ksize, strides, padding):
    out = np.zeros(out_shape(x.shape, ksize, strides, padding))
    for a, b, rows, cols in windows(x.shape, ksize, strides, padding):
        for n in range(x.shape[0]):
            for c in range(x.shape[3]):
                r, q = first_max(x, n, c, rows, cols)
                out[n, a, b, c] = g[n, r, q, c]
    return out


def ref_avg_pool_grad(x_shape, dy, ksize, strides, padding):
    dx = np.zeros(x_shape)
    for a, b, rows, cols in windows(x_shape, ksize, strides, padding):
        share = dy[:, a, b] / (len(rows) * len(cols))
        for r in rows:
            for q in cols:
                dx[:, r, q] += share
    return dx


def distinct(*shape, seed=0, dtype=np.float32):
    """Values without ties, so the maximum of every window is unique."""
    rng = np.random.RandomState(seed)
    return (rng.permutation(int(np.prod(shape))).reshape(shape) * 0.01 - 1).astype(dtype)


def four(pair):
    return [1, pair[0], pair[1], 1]


CASES = [  # input shape, ksize, strides, padding
    ((2, 8, 8, 3), (2, 2), (2, 2), "VALID"),     # tiling windows: the reshape path
    ((2, 8, 8, 3), (2, 2), (2, 2), "SAME"),
    ((2, 7, 9, 3), (2, 2), (2, 2), "SAME"),      # odd sizes: a padded last window
    ((2, 7, 9, 3), (2, 2), (2, 2), "VALID"),     # odd sizes: a row and a column never read
    ((1, 7, 7, 2), (3, 3), (1, 1), "SAME"),      # overlapping windows
    ((1, 7, 7, 2), (3, 3), (2, 2), "VALID"),
    ((2, 6, 5, 2), (3, 2), (2, 1), "SAME"),
    ((1, 5, 5, 1), (1, 1), (2, 2), "VALID"),
    ((1, 3, 3, 2), (4, 4), (1, 1), "SAME"),      # window larger than the input
    ((1, 9, 6, 2), (3, 3), (3, 3), "VALID"),     # tiling 3x3 windows: rows then columns
    ((2, 7, 8, 2), (3, 2), (3, 2), "VALID"),     # tiling windows, a row never read
    ((1, 6, 4, 2), (2, 1), (2, 1), "VALID"),     # tiling windows one column wide
]


# ---------------------------------------------------------------------------------------------
# Forward
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("xs,ksize,strides,padding", CASES)
def test_max_and_avg_pool_match_direct_loops(xs, ksize, strides, padding):
    x = distinct(*xs)
    check_op(tf.nn.max_pool(x, four(ksize), four(strides), padding), ref_pool(x, ksize, strides, padding, "max"))
    check_op(tf.nn.avg_pool(x, four(ksize), four(strides), padding), ref_pool(x, ksize, strides, padding, "avg"),
             rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int32, np.uint8])
def test_max_pool_dtypes(dtype):
    x = (np.random.RandomState(1).rand(2, 5, 5, 3) * 100).astype(dtype)
    y = tf.nn.max_pool(x, 2, 2, "SAME")
    assert y.dtype == tf.as_dtype(dtype)
    check_op(y, ref_pool(x, (2, 2), (2, 2), "SAME", "max").astype(dtype))


def test_avg_pool_float64_and_float16():
    x = np.random.RandomState(1).rand(2, 5, 5, 3)
    check_op(tf.nn.avg_pool(x, 3, 2, "SAME"), ref_pool(x, (3, 3), (2, 2), "SAME", "avg"), rtol=1e-12)
    h = x.astype(np.float16)
    check_op(tf.nn.avg_pool(h, 3, 2, "SAME"), ref_pool(h, (3, 3), (2, 2), "SAME", "avg"), rtol=2e-3, atol=2e-3)


def test_pool_nchw():
    x = distinct(2, 7, 6, 3)
    to_nchw = (0, 3, 1, 2)
    y = tf.nn.max_pool(np.transpose(x, to_nchw), [1, 1, 3, 3], [1, 1, 2, 2], "SAME", data_format="NCHW")
    assert y.shape.as_list() == [2, 3, 4, 3]
    check_op(y, np.transpose(ref_pool(x, (3, 3), (2, 2), "SAME", "max"), to_nchw))
    a = tf.nn.avg_pool(np.transpose(x, to_nchw), [1, 1, 2, 2], [1, 1, 2, 2], "VALID", data_format="NCHW")
    check_op(a, np.transpose(ref_pool(x, (2, 2), (2, 2), "VALID", "avg"), to_nchw), rtol=1e-5, atol=1e-6)


def test_max_pool_ignores_nan_as_tf_does():
    # tensorflow 2.21 returns 3.0 for both windows
    for values in ([[np.nan, 1], [2, 3]], [[1, np.nan], [2, 3]], [[1, 3], [np.nan, 2]], [[1, 2], [3, np.nan]]):
        x = np.array(values, np.float32).reshape(1, 2, 2, 1)
        np.testing.assert_array_equal(evaluate(tf.nn.max_pool(x, 2, 2, "VALID")), [[[[3.0]]]])
    x = np.full((1, 2, 2, 1), np.nan, np.float32)
    assert np.isnan(evaluate(tf.nn.max_pool(x, 2, 2, "VALID"))).all()  # nothing but NaN


def test_max_pool_explicit_padding():
    x = distinct(1, 5, 4, 2)
    y = tf.nn.max_pool(x, 3, 2, [[0, 0], [1, 2], [2, 0], [0, 0]])
    xp = np.pad(x, ((0, 0), (1, 2), (2, 0), (0, 0)), constant_values=-np.inf)
    check_op(y, ref_pool(xp, (3, 3), (2, 2), "VALID", "max"))


def test_max_pool_v2_reads_ksize_and_strides_tensors():
    x = distinct(2, 7, 7, 3)
    ksize = tf.placeholder(tf.int32, [4])
    y = pooling_ops.max_pool_v2(x, ksize, [1, 2, 2, 1], "SAME")
    assert y.shape.as_list() == [2, None, None, 3]
    for k in (2, 3):
        got = evaluate(y, {ksize: [1, k, k, 1]})
        np.testing.assert_array_equal(got, ref_pool(x, (k, k), (2, 2), "SAME", "max"))
    check_op(pooling_ops.max_pool_v2(x, [1, 3, 3, 1], [1, 2, 2, 1], "VALID"),
             ref_pool(x, (3, 3), (2, 2), "VALID", "max"))


# ---------------------------------------------------------------------------------------------
# Gradients
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("xs,ksize,strides,padding", CASES)
def test_pool_gradients_match_direct_loops(xs, ksize, strides, padding):
    x = distinct(*xs)
    xt = tf.constant(x)
    dy = np.random.RandomState(2).uniform(-1, 1, out_shape(xs, ksize, strides, padding)).astype(np.float32)
    mp = tf.nn.max_pool(xt, four(ksize), four(strides), padding)
    ap = tf.nn.avg_pool(xt, four(ksize), four(strides), padding)
    dmax = tf.gradients(mp, xt, grad_ys=tf.constant(dy))[0]
    davg = tf.gradients(ap, xt, grad_ys=tf.constant(dy))[0]
    assert dmax.op.type == "MaxPoolGrad" and davg.op.type == "AvgPoolGrad"
    check_op(dmax, ref_max_pool_grad(x, dy, ksize, strides, padding), rtol=1e-6)
    check_op(davg, ref_avg_pool_grad(xs, dy, ksize, strides, padding), rtol=1e-5, atol=1e-6)
    gg = apply_op(pooling_ops.MaxPoolGradGrad, orig_input=xt, orig_output=mp, grad=tf.constant(x * 2),
                  ksize=four(ksize), strides=four(strides), padding=padding)
    check_op(gg, ref_max_pool_grad_grad(x, x * 2, ksize, strides, padding), rtol=1e-6)


@pytest.mark.parametrize("ksize,strides,padding", [(2, 2, "VALID"), (3, 2, "SAME")])
def test_large_batches_split_over_threads(ksize, strides, padding):
    """Big enough to be split into chunks of images on the device's thread pool; one image has
    tied windows, so its chunk takes the exact path while the others take the tiled one."""
    rng = np.random.RandomState(5)
    xs = (8, 40, 40, 32)
    x = rng.uniform(-1, 1, xs).astype(np.float32)
    x[3, :4, :4] = 0.5  # ties
    k, s = (ksize, ksize), (strides, strides)
    dy = rng.uniform(-1, 1, out_shape(xs, k, s, padding)).astype(np.float32)
    xt = tf.constant(x)
    mp, ap = tf.nn.max_pool(xt, ksize, strides, padding), tf.nn.avg_pool(xt, ksize, strides, padding)
    dmax = tf.gradients([mp, ap], xt, grad_ys=[tf.constant(dy), tf.constant(dy)])[0]  # sum of both
    davg = tf.gradients(ap, xt, grad_ys=tf.constant(dy))[0]
    check_op(mp, ref_pool(x, k, s, padding, "max"))
    check_op(ap, ref_pool(x, k, s, padding, "avg"), rtol=1e-5, atol=1e-6)
    want = ref_max_pool_grad(x, dy, k, s, padding) + ref_avg_pool_grad(xs, dy, k, s, padding)
    check_op(dmax, want, rtol=1e-5, atol=1e-6)
    check_op(davg, ref_avg_pool_grad(xs, dy, k, s, padding), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("ksize,strides,padding,expected", [
    # gradients of max_pool(sum) for the tied input below, as tensorflow 2.21 computes them
    (2, 1, "VALID", [[1, 1, 0], [0, 0, 0], [1, 0, 1]]),
    (2, 2, "SAME", [[1, 0, 1], [0, 0, 0], [1, 0, 1]]),
    (3, 1, "SAME", [[2, 1, 0], [0, 0, 0], [4, 0, 2]]),
])
def test_ties_send_the_gradient_to_the_first_maximum(ksize, strides, padding, expected):
    x = tf.constant(np.array([[1, 1, 0], [1, 1, 0], [2, 0, 2]], np.float32).reshape(1, 3, 3, 1))
    y = tf.nn.max_pool(x, ksize, strides, padding)
    grad = tf.gradients(y, x, grad_ys=tf.ones_like(y))[0]
    np.testing.assert_array_equal(evaluate(grad)[0, :, :, 0], expected)


def test_tied_tiles_send_the_gradient_to_the_first_maximum():
    x = np.zeros((1, 4, 4, 2), np.float32)  # every window tied, as after a ReLU
    x[0, 2, 3, 1] = 1.0
    dy = np.arange(8, dtype=np.float32).reshape(1, 2, 2, 2)
    y = tf.nn.max_pool(x, 2, 2, "VALID")
    grad = apply_op(pooling_ops.MaxPoolGrad, orig_input=x, orig_output=y, grad=dy, ksize=[1, 2, 2, 1],
                    strides=[1, 2, 2, 1], padding="VALID")
    check_op(grad, ref_max_pool_grad(x, dy, (2, 2), (2, 2), "VALID"))


@pytest.mark.parametrize("ksize,strides", [(2, 2), (3, 1)])
def test_max_pool_grad_finds_the_maxima_in_orig_input(ksize, strides):
    """As TF's CPU kernel, the maxima come from orig_input, whatever orig_output holds."""
    x = distinct(2, 6, 6, 3)
    shape = out_shape(x.shape, (ksize, ksize), (strides, strides), "VALID")
    dy = np.random.RandomState(4).rand(*shape).astype(np.float32)
    for orig_output in (np.zeros(shape, np.float32), np.full(shape, np.nan, np.float32)):
        grad = apply_op(pooling_ops.MaxPoolGrad, orig_input=x, orig_output=orig_output, grad=dy,
                        ksize=four((ksize, ksize)), strides=four((strides, strides)), padding="VALID")
        check_op(grad, ref_max_pool_grad(x, dy, (ksize, ksize), (strides, strides), "VALID"))


def test_max_pool_grad_grad_matches_tf_values():
    x = tf.constant(np.array([[1, 1, 0], [1, 1, 0], [2, 0, 2]], np.float32).reshape(1, 3, 3, 1))
    y = tf.nn.max_pool(x, 2, 1, "VALID")
    g = tf.constant(np.arange(9, dtype=np.float32).reshape(1, 3, 3, 1))
    gg = apply_op(pooling_ops.MaxPoolGradGrad, orig_input=x, orig_output=y, grad=g, ksize=[1, 2, 2, 1],
                  strides=[1, 1, 1, 1], padding="VALID")
    np.testing.assert_array_equal(evaluate(gg)[0, :, :, 0], [[0, 1], [6, 8]])  # tensorflow 2.21's values


def test_v2_gradients():
    x = distinct(1, 6, 6, 2)
    xt = tf.constant(x)
    y = pooling_ops.max_pool_v2(xt, [1, 3, 3, 1], [1, 2, 2, 1], "SAME")
    dy = np.random.RandomState(3).rand(1, 3, 3, 2).astype(np.float32)
    grad = tf.gradients(y, xt, grad_ys=tf.constant(dy))[0]
    assert grad.op.type == "MaxPoolGradV2"
    check_op(grad, ref_max_pool_grad(x, dy, (3, 3), (2, 2), "SAME"))


def test_avg_pool_grad_static_shape_and_check():
    g = apply_op(pooling_ops.AvgPoolGrad, orig_input_shape=[2, 6, 6, 3], grad=np.ones((2, 3, 3, 3), np.float32),
                 ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    assert g.shape.as_list() == [2, 6, 6, 3]
    check_op(g, np.full((2, 6, 6, 3), 0.25, np.float32))
    bad = apply_op(pooling_ops.AvgPoolGrad, orig_input_shape=[2, 6, 6, 3], grad=np.ones((2, 2, 3, 3), np.float32),
                   ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="grad must have shape"):
        evaluate(bad)


# ---------------------------------------------------------------------------------------------
# Shapes and errors
# ---------------------------------------------------------------------------------------------
def test_static_shapes_with_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 28, None, 32])
    assert tf.nn.max_pool(x, 2, 2, "SAME").shape.as_list() == [None, 14, None, 32]
    assert tf.nn.avg_pool(x, 3, 2, "VALID").shape.as_list() == [None, 13, None, 32]
    assert tf.nn.max_pool(tf.placeholder(tf.float32), 2, 2, "SAME").shape.as_list() == [None] * 4
    assert tf.nn.max_pool2d(x, 2, 2, "SAME").shape.as_list() == [None, 14, None, 32]
    assert tf.nn.avg_pool2d(x, 2, 2, "SAME").shape.as_list() == [None, 14, None, 32]


@pytest.mark.parametrize("build,message", [
    (lambda: tf.nn.max_pool(np.ones((9, 9, 3), np.float32), 2, 2, "VALID"), "must be rank 4 but is rank 3"),
    (lambda: tf.nn.max_pool(np.ones((2, 3, 3, 3), np.float32), 4, 1, "VALID"),
     "Negative dimension size caused by subtracting 4 from 3"),
    (lambda: tf.nn.max_pool(np.ones((2, 9, 9, 3), np.float32), [1, 0, 2, 1], 2, "VALID"), "ksize` cannot be zero"),
    (lambda: tf.nn.max_pool(np.ones((2, 9, 9, 3), np.float32), [2, 2, 2], 2, "VALID"), "ksize should be of length"),
    (lambda: tf.nn.avg_pool(np.ones((2, 9, 9, 3), np.float32), 2, 2, [[0, 0], [1, 1], [1, 1], [0, 0]]),
     "explicit padding"),
    (lambda: tf.nn.max_pool(np.ones((2, 9, 9, 3), np.float32), 2, 1, [[0, 0], [2, 0], [0, 0], [0, 0]]),
     "explicit paddings cannot be greater than or equal to the sliding window size"),
    (lambda: tf.nn.avg_pool(np.ones((2, 9, 9, 3), np.int32), 2, 2, "VALID"), "int32 not in list of allowed"),
])
def test_bad_arguments_are_rejected_at_graph_construction(build, message):
    with pytest.raises((ValueError, TypeError), match=message):
        build()


@pytest.mark.parametrize("ksize,strides", [([2, 2, 2, 1], [1, 2, 2, 1]), ([1, 2, 2, 3], [1, 2, 2, 1])])
def test_pooling_over_batch_or_depth_is_unimplemented(ksize, strides):
    y = tf.nn.max_pool(np.ones((2, 8, 8, 3), np.float32), ksize, strides, "VALID")
    with pytest.raises(tf.errors.UnimplementedError):
        evaluate(y)


def test_runtime_window_too_big_is_invalid_argument():
    x = tf.placeholder(tf.float32, [None, None, None, 2])
    y = tf.nn.max_pool(x, 3, 1, "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Negative dimension size"):
        evaluate(y, {x: np.zeros((1, 2, 5, 2), np.float32)})
