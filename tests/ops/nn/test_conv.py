"""Conv2D, its backprop ops and depthwise convolution against direct NumPy loops (float64
references), for SAME / VALID / EXPLICIT padding, strides, dilations, NCHW, filter groups, odd
sizes and batches; inferred static shapes against real outputs; bad arguments rejected."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.nn import conv as conv_ops, depthwise_conv as depthwise_conv_ops
from tensorweave.testing.op_test import check_op, evaluate


# ---------------------------------------------------------------------------------------------
# NumPy references (direct loops over output positions)
# ---------------------------------------------------------------------------------------------
def pads_for(size, k, stride, dilation, padding):
    """(out, before, after) with TF's SAME / VALID rule, or padding=(before, after)."""
    eff = (k - 1) * dilation + 1
    if padding == "SAME":
        out = -(-size // stride)
        total = max(0, (out - 1) * stride + eff - size)
        return out, total // 2, total - total // 2
    before, after = (0, 0) if padding == "VALID" else padding
    return (size + before + after - eff) // stride + 1, before, after


def window_geometry(x_shape, kh, kw, strides, dilations, padding):
    (oh, top, bottom) = pads_for(x_shape[1], kh, strides[0], dilations[0],
                                 padding if isinstance(padding, str) else padding[0])
    (ow, left, right) = pads_for(x_shape[2], kw, strides[1], dilations[1],
                                 padding if isinstance(padding, str) else padding[1])
    return oh, ow, (top, bottom, left, right)


def taps(kh, kw, strides, dilations, oh, ow):
    for a in range(oh):
        for b in range(ow):
            for i in range(kh):
                for j in range(kw):
                    yield a, b, i, j, a * strides[0] + i * dilations[0], b * strides[1] + j * dilations[1]


def ref_conv2d(x, w, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    kh, kw, f_in, f_out = w.shape
    groups = x.shape[3] // f_in
    oh, ow, (t, b, l, r) = window_geometry(x.shape, kh, kw, strides, dilations, padding)
    xp = np.pad(x, ((0, 0), (t, b), (l, r), (0, 0)))
    out = np.zeros((x.shape[0], oh, ow, f_out))
    per = f_out // groups
    for a, c, i, j, y, z in taps(kh, kw, strides, dilations, oh, ow):
        for g in range(groups):
            window = xp[:, y, z, g * f_in:(g + 1) * f_in]
            out[:, a, c, g * per:(g + 1) * per] += window @ w[i, j, :, g * per:(g + 1) * per]
    return out


def ref_backprop_input(x_shape, w, dy, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    kh, kw = w.shape[:2]
    oh, ow, (t, b, l, r) = window_geometry(x_shape, kh, kw, strides, dilations, padding)
    dxp = np.zeros((x_shape[0], x_shape[1] + t + b, x_shape[2] + l + r, x_shape[3]))
    for a, c, i, j, y, z in taps(kh, kw, strides, dilations, oh, ow):
        dxp[:, y, z, :] += dy[:, a, c, :] @ np.asarray(w, np.float64)[i, j].T
    return dxp[:, t:t + x_shape[1], l:l + x_shape[2]]


def ref_backprop_filter(x, w_shape, dy, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    kh, kw = w_shape[:2]
    oh, ow, (t, b, l, r) = window_geometry(x.shape, kh, kw, strides, dilations, padding)
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (t, b), (l, r), (0, 0)))
    dw = np.zeros(w_shape)
    for a, c, i, j, y, z in taps(kh, kw, strides, dilations, oh, ow):
        dw[i, j] += xp[:, y, z, :].T @ dy[:, a, c, :]
    return dw


def ref_depthwise(x, w, strides=(1, 1), padding="SAME", dilations=(1, 1)):
    kh, kw, c, m = w.shape
    oh, ow, (t, b, l, r) = window_geometry(x.shape, kh, kw, strides, dilations, padding)
    xp = np.pad(np.asarray(x, np.float64), ((0, 0), (t, b), (l, r), (0, 0)))
    out = np.zeros((x.shape[0], oh, ow, c, m))
    for a, cc, i, j, y, z in taps(kh, kw, strides, dilations, oh, ow):
        out[:, a, cc] += xp[:, y, z, :, None] * w[i, j]
    return out.reshape(x.shape[0], oh, ow, c * m)


def rand(*shape, seed=0, dtype=np.float32):
    return np.random.RandomState(seed + sum(shape)).uniform(-1, 1, shape).astype(dtype)


def four(pair):
    return [1, pair[0], pair[1], 1]


# ---------------------------------------------------------------------------------------------
# Conv2D forward
# ---------------------------------------------------------------------------------------------
FORWARD_CASES = [  # x shape, filter shape, strides, padding, dilations
    ((2, 7, 6, 3), (3, 2, 3, 4), (1, 1), "SAME", (1, 1)),
    ((2, 7, 6, 3), (3, 2, 3, 4), (1, 1), "VALID", (1, 1)),
    ((2, 7, 6, 3), (3, 3, 3, 4), (2, 2), "SAME", (1, 1)),
    ((2, 7, 6, 3), (3, 3, 3, 4), (2, 2), "VALID", (1, 1)),
    ((3, 9, 8, 2), (3, 3, 2, 5), (2, 1), "SAME", (1, 1)),
    ((2, 9, 9, 3), (3, 3, 3, 2), (1, 1), "SAME", (2, 2)),
    ((2, 9, 9, 3), (2, 3, 3, 2), (1, 1), "VALID", (2, 1)),
    ((2, 11, 10, 2), (2, 2, 2, 3), (2, 2), "VALID", (2, 2)),
    ((1, 5, 5, 1), (5, 5, 1, 2), (1, 1), "SAME", (1, 1)),        # one input channel (K-major im2col)
    ((4, 8, 8, 6), (1, 1, 6, 5), (1, 1), "VALID", (1, 1)),       # pointwise: a single matmul
    ((2, 8, 8, 6), (1, 1, 6, 5), (2, 2), "SAME", (1, 1)),
    ((2, 4, 4, 3), (4, 4, 3, 2), (1, 1), "VALID", (1, 1)),       # window as big as the input
]


@pytest.mark.parametrize("xs,fs,strides,padding,dilations", FORWARD_CASES)
def test_conv2d_matches_direct_loops(xs, fs, strides, padding, dilations):
    x, w = rand(*xs), rand(*fs, seed=1)
    y = tf.nn.conv2d(x, w, four(strides), padding, dilations=four(dilations))
    check_op(y, ref_conv2d(x, w, strides, padding, dilations), rtol=1e-5, atol=1e-5)


def test_conv2d_explicit_padding():
    x, w = rand(2, 6, 5, 3), rand(3, 2, 3, 4, seed=1)
    y = tf.nn.conv2d(x, w, [1, 2, 1, 1], [[0, 0], [2, 1], [0, 3], [0, 0]])
    assert y.op.get_attr("padding") == b"EXPLICIT"
    assert y.op.get_attr("explicit_paddings") == [0, 0, 2, 1, 0, 3, 0, 0]
    check_op(y, ref_conv2d(x, w, (2, 1), ((2, 1), (0, 3))), rtol=1e-5, atol=1e-5)


def test_explicit_padding_wider_than_the_window():
    """Some windows read nothing but padding (TF allows explicit padding of any size)."""
    x, w = rand(2, 3, 3, 2), rand(2, 2, 2, 3, seed=1)
    pads = ((4, 1), (3, 3))
    padding = [[0, 0], [4, 1], [3, 3], [0, 0]]
    y = tf.nn.conv2d(x, w, [1, 2, 1, 1], padding)
    check_op(y, ref_conv2d(x, w, (2, 1), pads), rtol=1e-5, atol=1e-5)
    dy = rand(*y.shape.as_list(), seed=2)
    check_op(tf.nn.conv2d_backprop_input([2, 3, 3, 2], w, dy, [1, 2, 1, 1], padding),
             ref_backprop_input((2, 3, 3, 2), w, dy, (2, 1), pads), rtol=1e-5, atol=1e-5)
    check_op(tf.nn.conv2d_backprop_filter(x, [2, 2, 2, 3], dy, [1, 2, 1, 1], padding),
             ref_backprop_filter(x, (2, 2, 2, 3), dy, (2, 1), pads), rtol=1e-5, atol=1e-5)


def test_conv2d_nchw_matches_nhwc():
    x, w = rand(2, 7, 6, 3), rand(3, 3, 3, 4, seed=1)
    y = tf.nn.conv2d(np.transpose(x, (0, 3, 1, 2)), w, [1, 1, 2, 2], "SAME", data_format="NCHW")
    assert y.shape.as_list() == [2, 4, 4, 3]
    check_op(y, np.transpose(ref_conv2d(x, w, (2, 2), "SAME"), (0, 3, 1, 2)), rtol=1e-5, atol=1e-5)


def test_conv2d_filter_groups():
    x, w = rand(2, 5, 5, 6), rand(3, 3, 2, 9, seed=1)   # 3 groups of 2 input and 3 output channels
    check_op(tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME"), ref_conv2d(x, w), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("dtype,tol", [(np.float64, 1e-12), (np.float16, 2e-2)])
def test_conv2d_dtypes(dtype, tol):
    x, w = rand(2, 6, 6, 3, dtype=dtype), rand(3, 3, 3, 2, seed=1, dtype=dtype)
    y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    assert y.dtype == tf.as_dtype(dtype)
    check_op(y, ref_conv2d(x, w), rtol=tol, atol=tol)


def test_conv2d_int32():
    rng = np.random.RandomState(3)
    x, w = rng.randint(-5, 6, (2, 5, 5, 2)).astype(np.int32), rng.randint(-3, 4, (2, 2, 2, 3)).astype(np.int32)
    y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "VALID")
    check_op(y, ref_conv2d(x, w, padding="VALID").astype(np.int32))


@pytest.mark.parametrize("xs,fs", [((8, 16, 16, 16), (3, 3, 16, 32)),   # batch chunks on 2 threads
                                   ((1, 40, 36, 8), (5, 5, 8, 16))])     # row blocks of one image
def test_conv2d_large_enough_to_split_work(xs, fs):
    x, w = rand(*xs), rand(*fs, seed=1)
    y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    check_op(y, ref_conv2d(x, w), rtol=1e-4, atol=1e-4)
    dy = rand(*y.shape.as_list(), seed=2)
    dx = tf.nn.conv2d_backprop_input(list(xs), w, dy, [1, 1, 1, 1], "SAME")
    dw = tf.nn.conv2d_backprop_filter(x, list(fs), dy, [1, 1, 1, 1], "SAME")
    check_op(dx, ref_backprop_input(xs, w, dy), rtol=1e-4, atol=1e-4)
    check_op(dw, ref_backprop_filter(x, fs, dy), rtol=1e-4, atol=1e-3)


def test_conv2d_concurrent_steps_share_one_kernel():
    """Two threads run the same node at once: per-thread buffers keep their results apart."""
    x = tf.placeholder(tf.float32, [4, 12, 12, 8])
    w = rand(3, 3, 8, 16, seed=1)
    y = tf.nn.conv2d(x, w, [1, 1, 1, 1], "SAME")
    inputs = [rand(4, 12, 12, 8, seed=s) for s in range(4)]
    results = {}
    with tf.Session() as sess:
        def run(k):
            for _ in range(5):
                results[k] = sess.run(y, {x: inputs[k]})
        threads = [threading.Thread(target=run, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    for k in range(4):
        np.testing.assert_allclose(results[k], ref_conv2d(inputs[k], w), rtol=1e-4, atol=1e-4)


def test_conv2d_empty_batch():
    x = tf.placeholder(tf.float32, [None, 5, 5, 2])
    y = tf.nn.conv2d(x, rand(3, 3, 2, 4), [1, 1, 1, 1], "SAME")
    assert evaluate(y, {x: np.zeros((0, 5, 5, 2), np.float32)}).shape == (0, 5, 5, 4)


# ---------------------------------------------------------------------------------------------
# Static shapes
# ---------------------------------------------------------------------------------------------
def test_static_shapes_with_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 28, None, 3])
    y = tf.nn.conv2d(x, rand(5, 5, 3, 8), [1, 2, 2, 1], "SAME")
    assert y.shape.as_list() == [None, 14, None, 8]
    v = tf.nn.conv2d(x, tf.placeholder(tf.float32, [5, 5, 3, 8]), [1, 2, 2, 1], "VALID")
    assert v.shape.as_list() == [None, 12, None, 8]
    d = tf.nn.conv2d(x, tf.placeholder(tf.float32, [3, 3, 3, 8]), [1, 1, 1, 1], "VALID", dilations=[1, 3, 3, 1])
    assert d.shape.as_list() == [None, 22, None, 8]
    u = tf.nn.conv2d(tf.placeholder(tf.float32), tf.placeholder(tf.float32, [3, 3, 3, 8]), 1, "SAME")
    assert u.shape.as_list() == [None, None, None, 8]
    value = evaluate(y, {x: np.zeros((2, 28, 9, 3), np.float32)})
    assert value.shape == (2, 14, 5, 8)


def test_backprop_static_shapes_come_from_the_size_inputs():
    dx = tf.nn.conv2d_backprop_input([2, 9, 8, 3], rand(3, 3, 3, 4), rand(2, 5, 4, 4), [1, 2, 2, 1], "SAME")
    assert dx.shape.as_list() == [2, 9, 8, 3]
    dw = tf.nn.conv2d_backprop_filter(rand(2, 9, 8, 3), [3, 3, 3, 4], rand(2, 5, 4, 4), [1, 2, 2, 1], "SAME")
    assert dw.shape.as_list() == [3, 3, 3, 4]
    x = tf.placeholder(tf.float32, [None, 9, 8, 3])
    from_shape = tf.nn.conv2d_backprop_input(tf.shape(x), rand(3, 3, 3, 4), rand(2, 5, 4, 4), [1, 2, 2, 1], "SAME")
    assert from_shape.shape.as_list() == [None, 9, 8, 3]


# ---------------------------------------------------------------------------------------------
# Backprop ops
# ---------------------------------------------------------------------------------------------
BACKPROP_CASES = [  # x shape, filter shape, strides, padding, dilations
    ((2, 7, 6, 3), (3, 3, 3, 4), (1, 1), "SAME", (1, 1)),         # col2im (few channels)
    ((2, 7, 6, 9), (3, 3, 9, 4), (1, 1), "SAME", (1, 1)),         # flipped-filter correlation
    ((2, 7, 6, 9), (3, 2, 9, 4), (1, 1), "VALID", (1, 1)),
    ((2, 9, 9, 10), (3, 3, 10, 3), (1, 1), "SAME", (2, 2)),
    ((2, 7, 6, 3), (3, 3, 3, 4), (2, 2), "SAME", (1, 1)),
    ((2, 8, 7, 9), (3, 3, 9, 4), (2, 2), "VALID", (1, 1)),        # rows the windows never read
    ((2, 9, 9, 3), (2, 2, 3, 2), (2, 1), "VALID", (2, 2)),
    ((2, 6, 6, 12), (1, 1, 12, 5), (1, 1), "VALID", (1, 1)),
]


@pytest.mark.parametrize("xs,fs,strides,padding,dilations", BACKPROP_CASES)
def test_conv2d_backprop_ops_match_direct_loops(xs, fs, strides, padding, dilations):
    x, w = rand(*xs), rand(*fs, seed=1)
    oh, ow, _ = window_geometry(xs, fs[0], fs[1], strides, dilations, padding)
    dy = rand(xs[0], oh, ow, fs[3], seed=2)
    kw = {"strides": four(strides), "padding": padding, "dilations": four(dilations)}
    dx = tf.nn.conv2d_backprop_input(list(xs), w, dy, **kw)
    dw = tf.nn.conv2d_backprop_filter(x, list(fs), dy, **kw)
    check_op(dx, ref_backprop_input(xs, w, dy, strides, padding, dilations), rtol=1e-5, atol=1e-5)
    check_op(dw, ref_backprop_filter(x, fs, dy, strides, padding, dilations), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize("channels", [3, 9])
def test_backprop_with_explicit_padding(channels):
    xs, fs, pads = (2, 6, 5, channels), (3, 2, channels, 4), ((2, 1), (0, 3))
    x, w = rand(*xs), rand(*fs, seed=1)
    oh, ow, _ = window_geometry(xs, 3, 2, (1, 1), (1, 1), pads)
    dy = rand(2, oh, ow, 4, seed=2)
    padding = [[0, 0], list(pads[0]), list(pads[1]), [0, 0]]
    check_op(tf.nn.conv2d_backprop_input(list(xs), w, dy, 1, padding), ref_backprop_input(xs, w, dy, padding=pads),
             rtol=1e-5, atol=1e-5)
    check_op(tf.nn.conv2d_backprop_filter(x, list(fs), dy, 1, padding),
             ref_backprop_filter(x, fs, dy, padding=pads), rtol=1e-5, atol=1e-4)


def test_backprop_nchw_and_groups():
    xs, fs = (2, 6, 6, 4), (3, 3, 2, 6)   # 2 groups
    x, w, dy = rand(*xs), rand(*fs, seed=1), rand(2, 3, 3, 6, seed=2)
    to_nchw = (0, 3, 1, 2)
    dx = tf.nn.conv2d_backprop_input([2, 4, 6, 6], w, np.transpose(dy, to_nchw), [1, 1, 2, 2], "SAME",
                                     data_format="NCHW")
    dw = tf.nn.conv2d_backprop_filter(np.transpose(x, to_nchw), list(fs), np.transpose(dy, to_nchw),
                                      [1, 1, 2, 2], "SAME", data_format="NCHW")
    want_dx, want_dw = np.zeros(xs), np.zeros(fs)
    for g in range(2):  # each group is an ordinary convolution
        sl_in, sl_out = slice(2 * g, 2 * g + 2), slice(3 * g, 3 * g + 3)
        want_dx[..., sl_in] = ref_backprop_input((2, 6, 6, 2), w[..., sl_out], dy[..., sl_out], (2, 2))
        want_dw[..., sl_out] = ref_backprop_filter(x[..., sl_in], (3, 3, 2, 3), dy[..., sl_out], (2, 2))
    check_op(dx, np.transpose(want_dx, to_nchw), rtol=1e-5, atol=1e-5)
    check_op(dw, want_dw, rtol=1e-5, atol=1e-4)


def test_gradients_of_conv2d_use_the_backprop_ops():
    x, w = tf.constant(rand(2, 6, 5, 3)), tf.constant(rand(3, 3, 3, 4, seed=1))
    y = tf.nn.conv2d(x, w, [1, 2, 2, 1], "SAME")
    dy = rand(2, 3, 3, 4, seed=2)
    dx, dw = tf.gradients(y, [x, w], grad_ys=tf.constant(dy))
    assert dx.op.type == "Conv2DBackpropInput" and dw.op.type == "Conv2DBackpropFilter"
    check_op(dx, ref_backprop_input((2, 6, 5, 3), rand(3, 3, 3, 4, seed=1), dy, (2, 2)), rtol=1e-5, atol=1e-5)
    check_op(dw, ref_backprop_filter(rand(2, 6, 5, 3), (3, 3, 3, 4), dy, (2, 2)), rtol=1e-5, atol=1e-4)


def test_backprop_input_with_spatial_sizes_only():
    w, dy = rand(3, 3, 3, 4), rand(2, 4, 4, 4, seed=2)
    dx = apply_op(conv_ops.Conv2DBackpropInput, input_sizes=[7, 8], filter=w, out_backprop=dy,
                  strides=[1, 2, 2, 1], padding="SAME")
    assert dx.shape.as_list() == [2, 7, 8, 3]
    check_op(dx, ref_backprop_input((2, 7, 8, 3), w, dy, (2, 2)), rtol=1e-5, atol=1e-5)


def test_backprop_input_rejects_mismatched_out_backprop():
    dx = tf.nn.conv2d_backprop_input([2, 9, 9, 3], rand(2, 2, 3, 4), rand(2, 7, 8, 4), [1, 1, 1, 1], "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="out_backprop"):
        evaluate(dx)
    dw = tf.nn.conv2d_backprop_filter(rand(2, 9, 9, 3), [2, 2, 3, 4], rand(2, 8, 8, 5), [1, 1, 1, 1], "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="out_backprop"):
        evaluate(dw)


# ---------------------------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------------------------
def test_conv2d_argument_forms():
    x, w = rand(2, 9, 9, 3), rand(2, 2, 3, 4, seed=1)
    want = ref_conv2d(x, w, (2, 2), "SAME")
    check_op(tf.nn.conv2d(x, w, 2, "SAME"), want, rtol=1e-5, atol=1e-5)
    check_op(tf.nn.conv2d(x, filters=w, strides=[2, 2], padding="SAME"), want, rtol=1e-5, atol=1e-5)
    check_op(tf.nn.conv2d(x, w, [2], "SAME", use_cudnn_on_gpu=False), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.nn.conv2d(x, w, 1, "SAME", filters=w)
    with pytest.raises(ValueError, match="strides should be of length 1, 2 or 4"):
        tf.nn.conv2d(x, w, [1, 1, 1], "SAME")


def test_conv2d_transpose_is_backprop_input():
    value, w = rand(2, 4, 4, 5), rand(3, 3, 2, 5, seed=1)
    y = tf.nn.conv2d_transpose(value, w, [2, 8, 8, 2], [1, 2, 2, 1], "SAME")
    assert y.shape.as_list() == [2, 8, 8, 2]
    check_op(y, ref_backprop_input((2, 8, 8, 2), w, value, (2, 2)), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="input channels does not match"):
        tf.nn.conv2d_transpose(value, rand(3, 3, 2, 4), [2, 8, 8, 2], [1, 2, 2, 1], "SAME")


def test_atrous_conv1d_and_convolution():
    x, w = rand(2, 9, 9, 3), rand(3, 3, 3, 2, seed=1)
    check_op(tf.nn.atrous_conv2d(x, w, 2, "SAME"), ref_conv2d(x, w, dilations=(2, 2)), rtol=1e-5, atol=1e-5)
    check_op(tf.nn.convolution(x, w, "VALID", dilation_rate=[2, 1]), ref_conv2d(x, w, padding="VALID",
                                                                                 dilations=(2, 1)),
             rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="rate 0 cannot be less than one"):
        tf.nn.atrous_conv2d(x, w, 0, "SAME")
    x1, w1 = rand(2, 11, 3), rand(3, 3, 4, seed=1)
    want = ref_conv2d(x1[:, None], w1[None], (1, 2), "SAME")[:, 0]
    check_op(tf.nn.conv1d(x1, w1, 2, "SAME"), want, rtol=1e-5, atol=1e-5)
    check_op(tf.nn.convolution(x1, w1, "SAME", strides=[2]), want, rtol=1e-5, atol=1e-5)
    ncw = tf.nn.conv1d(np.transpose(x1, (0, 2, 1)), w1, 2, "SAME", data_format="NCW")
    check_op(ncw, np.transpose(want, (0, 2, 1)), rtol=1e-5, atol=1e-5)


# ---------------------------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("build,message", [
    (lambda: tf.nn.conv2d(rand(1, 2, 3), rand(1, 1, 3, 4), 1, "SAME"), "must be rank 4 but is rank 3"),
    (lambda: tf.nn.conv2d(rand(2, 4, 4, 3), rand(1, 1, 2, 4), 1, "SAME"),
     r"Depth of input \(3\) is not a multiple of input depth of filter \(2\)"),
    (lambda: tf.nn.conv2d(rand(2, 4, 4, 3), rand(5, 5, 3, 4), 1, "VALID"),
     "Negative dimension size caused by subtracting 5 from 4"),
    (lambda: tf.nn.conv2d(rand(2, 9, 9, 3), rand(2, 2, 3, 4), [1, 0, 1, 1], "SAME"), "Stride must be > 0"),
    (lambda: tf.nn.conv2d(rand(2, 9, 9, 3), rand(2, 2, 3, 4), 1, [[1, 0], [1, 2], [3, 0], [0, 0]]),
     "Nonzero explicit padding in the batch or depth dimensions"),
    (lambda: tf.nn.conv2d(rand(2, 9, 9, 3), rand(2, 2, 3, 4), 1, "FOO"), "not in"),
    (lambda: apply_op(conv_ops.Conv2D, input=rand(1, 4, 4, 3), filter=rand(1, 1, 3, 4), strides=[1, 1, 1],
                      padding="SAME"), "requires the stride attribute to contain 4 values, but got: 3"),
    (lambda: depthwise_conv_ops.depthwise_conv2d_native(rand(2, 9, 9, 3), rand(2, 2, 2, 4), 1, "VALID"),
     "Dimensions must be equal, but are 3 and 2"),
])
def test_bad_arguments_are_rejected_at_graph_construction(build, message):
    with pytest.raises(ValueError, match=message):
        build()


def test_errors_name_the_node():
    with pytest.raises(ValueError, match="for 'my_conv' \\(op: 'Conv2D'\\) with input shapes: \\[2,4,4,3\\], "
                                         "\\[5,5,3,4\\]"):
        tf.nn.conv2d(rand(2, 4, 4, 3), rand(5, 5, 3, 4), 1, "VALID", name="my_conv")


def test_batch_strides_are_unimplemented_as_in_tf():
    y = tf.nn.conv2d(rand(2, 4, 4, 3), rand(1, 1, 3, 4), [2, 1, 1, 1], "SAME")
    with pytest.raises(tf.errors.UnimplementedError, match="strides in the batch and depth"):
        evaluate(y)


def test_runtime_shape_errors_are_invalid_argument():
    x = tf.placeholder(tf.float32, [None, None, None, None])
    y = tf.nn.conv2d(x, rand(5, 5, 3, 4), 1, "VALID")
    with pytest.raises(tf.errors.InvalidArgumentError, match="Negative dimension size"):
        evaluate(y, {x: np.zeros((1, 4, 4, 3), np.float32)})
    with pytest.raises(tf.errors.InvalidArgumentError, match="evenly divisible"):
        evaluate(y, {x: np.zeros((1, 8, 8, 2), np.float32)})


# ---------------------------------------------------------------------------------------------
# Depthwise convolution
# ---------------------------------------------------------------------------------------------
DEPTHWISE_CASES = [
    ((2, 7, 6, 3), (3, 3, 3, 2), (1, 1), "SAME", (1, 1)),
    ((2, 7, 6, 3), (3, 2, 3, 1), (2, 2), "VALID", (1, 1)),
    ((2, 9, 9, 2), (3, 3, 2, 3), (1, 1), "SAME", (2, 2)),
    ((1, 8, 7, 4), (2, 3, 4, 2), (2, 1), "SAME", (1, 1)),
]


@pytest.mark.parametrize("xs,fs,strides,padding,dilations", DEPTHWISE_CASES)
def test_depthwise_conv2d_native_and_backprops(xs, fs, strides, padding, dilations):
    x, w = rand(*xs), rand(*fs, seed=1)
    kw = {"strides": four(strides), "padding": padding, "dilations": four(dilations)}
    y = tf.nn.depthwise_conv2d_native(x, w, **kw)
    check_op(y, ref_depthwise(x, w, strides, padding, dilations), rtol=1e-5, atol=1e-5)
    dy = rand(*y.shape.as_list(), seed=2)
    xt, wt = tf.constant(x), tf.constant(w)
    y2 = tf.nn.depthwise_conv2d_native(xt, wt, **kw)
    dx, dw = tf.gradients(y2, [xt, wt], grad_ys=tf.constant(dy))
    assert dx.op.type == "DepthwiseConv2dNativeBackpropInput"
    # the depthwise gradients are the conv2d ones of the equivalent block-diagonal filter
    c, m = fs[2], fs[3]
    block = np.zeros((fs[0], fs[1], c, c * m))
    for ch in range(c):
        block[:, :, ch, ch * m:(ch + 1) * m] = w[:, :, ch, :]
    want_dx = ref_backprop_input(xs, block, dy, strides, padding, dilations)
    want_block = ref_backprop_filter(x, block.shape, dy, strides, padding, dilations)
    want_dw = np.stack([want_block[:, :, ch, ch * m:(ch + 1) * m] for ch in range(c)], axis=2)
    check_op(dx, want_dx, rtol=1e-5, atol=1e-5)
    check_op(dw, want_dw, rtol=1e-5, atol=1e-4)


def test_depthwise_wrappers():
    x, w = rand(2, 9, 9, 3), rand(3, 3, 3, 2, seed=1)
    check_op(tf.nn.depthwise_conv2d(x, w, [1, 1, 1, 1], "SAME", rate=[2, 2]),
             ref_depthwise(x, w, dilations=(2, 2)), rtol=1e-5, atol=1e-5)
    nchw = tf.nn.depthwise_conv2d(np.transpose(x, (0, 3, 1, 2)), w, [1, 1, 2, 2], "VALID", data_format="NCHW")
    check_op(nchw, np.transpose(ref_depthwise(x, w, (2, 2), "VALID"), (0, 3, 1, 2)), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="strides must be 1"):
        tf.nn.depthwise_conv2d(x, w, [1, 2, 2, 1], "SAME", rate=[2, 2])
    pw = rand(1, 1, 6, 4, seed=3)
    sep = tf.nn.separable_conv2d(x, w, pw, [1, 1, 1, 1], "SAME")
    check_op(sep, ref_conv2d(ref_depthwise(x, w), pw, padding="VALID"), rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="pointwise_filter"):
        tf.nn.separable_conv2d(x, w, rand(2, 1, 6, 4), [1, 1, 1, 1], "SAME")


def test_depthwise_static_shape_with_unknown_dims():
    x = tf.placeholder(tf.float32, [None, 10, None, 3])
    y = tf.nn.depthwise_conv2d_native(x, rand(3, 3, 3, 4), [1, 2, 2, 1], "VALID")
    assert y.shape.as_list() == [None, 4, None, 12]
    assert evaluate(y, {x: np.zeros((2, 10, 7, 3), np.float32)}).shape == (2, 4, 3, 12)
