"""3-D convolution and pooling ops (Conv3D, Conv3DBackpropInputV2/FilterV2, MaxPool3D, AvgPool3D
and their gradient ops): forward values against direct NumPy loops, NCDHW against NDHWC,
inferred static shapes against real ones (unknown dimensions too), and bad arguments at build
and run time. Their gradients are in the gradient-check table (tests/gradient_cases/conv3d.py);
values against TensorFlow through tf.layers in tests/layers/test_tf215_fixtures.py."""
import itertools

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.nn import convolution3d, pooling3d


def _same_pads(size, k, s, d=1):
    eff = (k - 1) * d + 1
    out = -(-size // s)
    total = max(0, (out - 1) * s + eff - size)
    return out, total // 2


def _reference_conv3d(x, f, strides, padding, dilations=(1, 1, 1)):
    n, *spatial, c = x.shape
    k = f.shape[:3]
    outs, befores = [], []
    for size, kk, s, d in zip(spatial, k, strides, dilations):
        if padding == "SAME":
            out, before = _same_pads(size, kk, s, d)
        else:
            out, before = (size - ((kk - 1) * d + 1)) // s + 1, 0
        outs.append(out)
        befores.append(before)
    y = np.zeros([n] + outs + [f.shape[4]])
    for o in itertools.product(*(range(v) for v in outs)):
        for t in itertools.product(*(range(v) for v in k)):
            pos = [o[i] * strides[i] + t[i] * dilations[i] - befores[i] for i in range(3)]
            if all(0 <= p < spatial[i] for i, p in enumerate(pos)):
                y[(slice(None),) + o] += x[:, pos[0], pos[1], pos[2], :] @ f[t]
    return y


def _reference_pool3d(x, ksize, strides, padding, kind):
    n, *spatial, c = x.shape
    outs, befores = [], []
    for size, k, s in zip(spatial, ksize, strides):
        out, before = _same_pads(size, k, s) if padding == "SAME" else ((size - k) // s + 1, 0)
        outs.append(out)
        befores.append(before)
    y = np.zeros([n] + outs + [c])
    for o in itertools.product(*(range(v) for v in outs)):
        window = [slice(max(0, o[i] * strides[i] - befores[i]),
                        min(spatial[i], o[i] * strides[i] - befores[i] + ksize[i])) for i in range(3)]
        patch = x[(slice(None),) + tuple(window)]
        y[(slice(None),) + o] = patch.max(axis=(1, 2, 3)) if kind == "max" else patch.mean(axis=(1, 2, 3))
    return y


CONV_CASES = [((2, 5, 6, 4, 3), (3, 2, 3, 3, 4), (1, 2, 1), "SAME", (1, 1, 1)),
              ((1, 6, 5, 5, 2), (2, 3, 2, 2, 3), (2, 1, 2), "VALID", (1, 1, 1)),
              ((1, 7, 6, 5, 2), (2, 2, 2, 2, 2), (1, 1, 1), "SAME", (2, 1, 2))]


@pytest.mark.parametrize("x_shape, f_shape, strides, padding, dilations", CONV_CASES)
def test_conv3d_matches_numpy_and_static_shape(x_shape, f_shape, strides, padding, dilations):
    rng = np.random.RandomState(0)
    x, f = rng.randn(*x_shape), rng.randn(*f_shape)
    with tf.Graph().as_default():
        y = tf.nn.conv3d(tf.constant(x), tf.constant(f), [1, *strides, 1], padding, dilations=[1, *dilations, 1])
        y_nc = tf.nn.conv3d(tf.constant(x.transpose(0, 4, 1, 2, 3)), tf.constant(f), [1, 1, *strides], padding,
                            data_format="NCDHW", dilations=[1, 1, *dilations])
        unknown = tf.nn.conv3d(tf.placeholder(tf.float64, [None, None, x_shape[2], None, x_shape[4]]), f,
                               [1, *strides, 1], padding, dilations=[1, *dilations, 1])
        with tf.Session() as sess:
            got, got_nc = sess.run([y, y_nc])
    want = _reference_conv3d(x, f, strides, padding, dilations)
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(got_nc, want.transpose(0, 4, 1, 2, 3), rtol=1e-10, atol=1e-10)
    assert y.shape.as_list() == list(got.shape) and y_nc.shape.as_list() == list(got_nc.shape)
    expected_unknown = [None, None, got.shape[2], None, f_shape[4]]  # only the known height is inferred
    assert unknown.shape.as_list() == expected_unknown


def test_conv3d_transpose_is_the_input_gradient():
    rng = np.random.RandomState(1)
    x, f = rng.randn(2, 4, 5, 3, 2), rng.randn(2, 3, 2, 2, 3)
    with tf.Graph().as_default():
        xt = tf.constant(x)
        y = tf.nn.conv3d(xt, f, [1, 2, 2, 1, 1], "SAME")
        dy = rng.randn(*y.shape.as_list())
        (grad,) = tf.gradients(y, [xt], grad_ys=[tf.constant(dy)])
        transposed = tf.nn.conv3d_transpose(dy, f, [2, 4, 5, 3, 2], [1, 2, 2, 1, 1], "SAME")
        filt = tf.nn.conv3d_backprop_filter_v2(xt, [2, 3, 2, 2, 3], dy, [1, 2, 2, 1, 1], "SAME")
        assert transposed.shape.as_list() == [2, 4, 5, 3, 2] and filt.shape.as_list() == [2, 3, 2, 2, 3]
        with tf.Session() as sess:
            got_grad, got_t, got_f = sess.run([grad, transposed, filt])
    np.testing.assert_allclose(got_t, got_grad, rtol=1e-12)
    # <conv3d(x, f), dy> is linear in f: its gradient w.r.t. f is the filter backprop
    eps = 1e-6
    probe = np.zeros_like(f)
    probe[1, 2, 0, 1, 2] = eps
    plus = (_reference_conv3d(x, f + probe, (2, 2, 1), "SAME") * dy).sum()
    minus = (_reference_conv3d(x, f - probe, (2, 2, 1), "SAME") * dy).sum()
    assert got_f[1, 2, 0, 1, 2] == pytest.approx((plus - minus) / (2 * eps), rel=1e-6)


POOL_CASES = [((2, 5, 6, 4, 3), (2, 2, 2), (2, 2, 2), "VALID"),
              ((1, 5, 5, 3, 2), (3, 3, 2), (2, 1, 2), "SAME"),
              ((2, 4, 6, 5, 1), (1, 3, 3), (1, 2, 2), "SAME")]


@pytest.mark.parametrize("kind", ["max", "avg"])
@pytest.mark.parametrize("shape, ksize, strides, padding", POOL_CASES)
def test_pool3d_matches_numpy_and_static_shape(kind, shape, ksize, strides, padding):
    x = np.random.RandomState(2).randn(*shape).astype(np.float32)
    fn = tf.nn.max_pool3d if kind == "max" else tf.nn.avg_pool3d
    with tf.Graph().as_default():
        y = fn(x, [1, *ksize, 1], [1, *strides, 1], padding)
        y_nc = fn(x.transpose(0, 4, 1, 2, 3), [1, 1, *ksize], [1, 1, *strides], padding, data_format="NCDHW")
        unknown = fn(tf.placeholder(tf.float32, [None, shape[1], None, shape[3], shape[4]]), [1, *ksize, 1],
                     [1, *strides, 1], padding)
        with tf.Session() as sess:
            got, got_nc = sess.run([y, y_nc])
    want = _reference_pool3d(x.astype(np.float64), ksize, strides, padding, kind)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(got_nc, want.transpose(0, 4, 1, 2, 3), rtol=1e-6, atol=1e-6)
    assert y.shape.as_list() == list(got.shape) and y_nc.shape.as_list() == list(got_nc.shape)
    assert unknown.shape.as_list() == [None, got.shape[1], None, got.shape[3], shape[4]]


def test_max_pool3d_gradient_goes_to_first_maximum():
    x = np.zeros([1, 2, 2, 2, 1], np.float32)  # all tied: the first element of the window wins
    with tf.Graph().as_default():
        xt = tf.constant(x)
        (grad,) = tf.gradients(tf.nn.max_pool3d(xt, 2, 2, "VALID"), [xt])
        with tf.Session() as sess:
            got = sess.run(grad)
    want = np.zeros_like(x)
    want[0, 0, 0, 0, 0] = 1
    np.testing.assert_array_equal(got, want)


def test_gradient_op_static_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2, 5, 6, 4, 3])
        y = tf.nn.max_pool3d(x, 2, 2, "SAME")
        g = apply_op(pooling3d.MaxPool3DGrad, orig_input=x, orig_output=y, grad=y, ksize=[1, 2, 2, 2, 1],
                     strides=[1, 2, 2, 2, 1], padding="SAME")
        gg = apply_op(pooling3d.MaxPool3DGradGrad, orig_input=x, orig_output=y, grad=x, ksize=[1, 2, 2, 2, 1],
                      strides=[1, 2, 2, 2, 1], padding="SAME")
        a = apply_op(pooling3d.AvgPool3DGrad, orig_input_shape=[2, 5, 6, 4, 3], grad=y, ksize=[1, 2, 2, 2, 1],
                     strides=[1, 2, 2, 2, 1], padding="SAME")
        b = apply_op(convolution3d.Conv3DBackpropInputV2, input_sizes=tf.shape(x), filter=tf.ones([1, 1, 1, 3, 3]),
                     out_backprop=x, strides=[1, 1, 1, 1, 1], padding="SAME")
        assert [t.shape.as_list() for t in (g, gg, a)] == [[2, 5, 6, 4, 3], [2, 3, 3, 2, 3], [2, 5, 6, 4, 3]]
        assert b.shape.as_list() == [2, 5, 6, 4, 3]
        with tf.Session() as sess:
            values = sess.run([g, gg, a, b], {x: np.ones([2, 5, 6, 4, 3], np.float32)})
        assert [list(v.shape) for v in values] == [[2, 5, 6, 4, 3], [2, 3, 3, 2, 3], [2, 5, 6, 4, 3],
                                                   [2, 5, 6, 4, 3]]


def test_bad_arguments():
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="rank 5"):
            tf.nn.conv3d(tf.ones([2, 3, 3, 3]), tf.ones([1, 1, 1, 3, 1]), [1, 1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="does not match the filter's input depth"):
            tf.nn.conv3d(tf.ones([1, 3, 3, 3, 2]), tf.ones([1, 1, 1, 3, 1]), [1, 1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="batch and depth"):
            tf.nn.conv3d(tf.ones([1, 3, 3, 3, 2]), tf.ones([1, 1, 1, 2, 1]), [2, 1, 1, 1, 1], "SAME")
        with pytest.raises(ValueError, match="Negative dimension size"):
            tf.nn.max_pool3d(tf.ones([1, 2, 2, 2, 1]), 3, 1, "VALID")
        with pytest.raises(ValueError, match="ksize should be of length 1, 3 or 5"):
            tf.nn.avg_pool3d(tf.ones([1, 2, 2, 2, 1]), [1, 2, 2, 1], 1, "VALID")
        x = tf.placeholder(tf.float32, [None, None, None, None, 2])
        y = tf.nn.conv3d(x, tf.ones([3, 3, 3, 2, 1]), [1, 1, 1, 1, 1], "VALID")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Negative dimension size"):
                sess.run(y, {x: np.ones([1, 2, 4, 4, 2], np.float32)})
