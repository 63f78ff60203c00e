"""The FFT path of the convolution engine (ops/kernels/conv_fft.py, issue 17) against the im2col +
sgemm path: forward, stride-1 input gradient and filter gradient over SAME / VALID / explicit (asymmetric)
padding, odd and even periods, non-square windows, float32 and float64, one thread and two
(image chunks), and concurrent calls sharing one engine's buffers; the automatic choice takes it
for the CNN benchmark's second convolution and not where it does not pay (small batches among
them); the FFT path and the ops give TensorFlow 2.21's numbers (tf_conv_fft.npz) and a float64
reference's."""
import os
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.kernels.conv import ConvEngine
from tensorweave.ops.kernels.conv_fft import fft_worthwhile
from tensorweave.ops.kernels.conv_geometry import Geometry
from tensorweave.ops.kernels.intra_op import ChunkRunner

RNG = np.random.RandomState(1717)


class _Pool:
    """A device pool stand-in: help runs on a real second thread."""

    def __init__(self) -> None:
        self._executor = ThreadPoolExecutor(1)

    def schedule_help(self, fn):
        self._executor.submit(fn)


def _geometry(n, h, w, c, kh, kw, pad):
    top, bottom, left, right = pad
    return Geometry(n, h, w, c, kh, kw, 1, 1, 1, 1, top, bottom, left, right,
                    h + top + bottom - kh + 1, w + left + right - kw + 1)


# (n, h, w, c, kh, kw, padding (top, bottom, left, right), out_c)
CASES = {
    "same_5x5": (9, 14, 14, 32, 5, 5, (2, 2, 2, 2), 16),
    "valid_even_period": (3, 12, 10, 6, 5, 5, (0, 0, 0, 0), 5),
    "explicit_asymmetric": (4, 9, 11, 5, 3, 4, (1, 2, 0, 3), 7),
    "wide_window": (2, 7, 8, 3, 7, 6, (3, 3, 2, 3), 4),
    "one_row_out": (5, 5, 9, 4, 5, 5, (0, 0, 2, 2), 3),
}


def _rel_error(got, want):
    return np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30)


@pytest.mark.parametrize("helpers", [0, 1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", list(CASES))
def test_fft_path_equals_direct_path(name, dtype, helpers):
    n, h, w, c, kh, kw, pad, out_c = CASES[name]
    g = _geometry(n, h, w, c, kh, kw, pad)
    pool = _Pool()
    fft = ConvEngine(g, out_c, dtype, ChunkRunner(lambda: pool, helpers), fft=True)
    direct = ConvEngine(g, out_c, dtype, ChunkRunner(lambda: pool, helpers), fft=False)
    x = RNG.randn(n, h, w, c).astype(dtype)
    f = RNG.randn(kh, kw, c, out_c).astype(dtype)
    dy = RNG.randn(n, g.out_h, g.out_w, out_c).astype(dtype)
    tol = 2e-6 if dtype == np.float32 else 1e-13
    y = fft.forward(x, f)
    assert fft._fft is not None and y.shape == (n, g.out_h, g.out_w, out_c) and y.dtype == dtype
    assert _rel_error(y, direct.forward(x, f)) < tol
    dx = fft.input_grad(dy, f)
    assert dx.shape == x.shape and dx.dtype == dtype
    assert _rel_error(dx, direct.input_grad(dy, f)) < tol
    dw = fft.filter_grad(x, dy)
    assert dw.shape == f.shape and dw.dtype == dtype
    assert _rel_error(dw, direct.filter_grad(x, dy)) < tol
    # a second call reuses the buffers, with other values
    x2 = RNG.randn(n, h, w, c).astype(dtype)
    assert _rel_error(fft.forward(x2, f), direct.forward(x2, f)) < tol


def test_fft_chunks_and_concurrent_calls():
    g = _geometry(37, 14, 14, 16, 5, 5, (2, 2, 2, 2))  # 37 images: uneven chunks over two threads
    pool = _Pool()
    engine = ConvEngine(g, 16, np.float32, ChunkRunner(lambda: pool, 1), fft=True)
    direct = ConvEngine(g, 16, np.float32, ChunkRunner(lambda: pool, 0), fft=False)
    inputs = [RNG.randn(37, 14, 14, 16).astype(np.float32) for _ in range(4)]
    f = RNG.randn(5, 5, 16, 16).astype(np.float32)
    want = [direct.forward(x, f) for x in inputs]
    got = [None] * 4

    def run(i):
        for _ in range(3):
            got[i] = engine.forward(inputs[i], f)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for g_, w_ in zip(got, want):
        assert _rel_error(g_, w_) < 2e-6


def test_automatic_choice():
    bench = _geometry(64, 14, 14, 32, 5, 5, (2, 2, 2, 2))  # bench/cnn_step.py's second convolution
    assert fft_worthwhile(bench, 64, np.dtype(np.float32))
    assert fft_worthwhile(bench, 64, np.dtype(np.float64))
    assert not fft_worthwhile(_geometry(64, 28, 28, 1, 5, 5, (2, 2, 2, 2)), 32, np.dtype(np.float32))  # 1 channel
    assert not fft_worthwhile(_geometry(8, 14, 14, 32, 3, 3, (1, 1, 1, 1)), 64, np.dtype(np.float32))  # 3x3
    assert not fft_worthwhile(_geometry(16, 100, 100, 32, 5, 5, (2, 2, 2, 2)), 64, np.dtype(np.float32))  # period
    assert not fft_worthwhile(_geometry(8, 14, 14, 32, 5, 5, (2, 2, 2, 2)), 64, np.dtype(np.float32))  # 8 images
    strided = Geometry(8, 14, 14, 32, 5, 5, 2, 2, 1, 1, 1, 2, 1, 2, 7, 7)
    assert not fft_worthwhile(strided, 64, np.dtype(np.float32))
    dilated = Geometry(8, 14, 14, 32, 5, 5, 1, 1, 2, 2, 4, 4, 4, 4, 14, 14)
    assert not fft_worthwhile(dilated, 64, np.dtype(np.float32))
    assert not fft_worthwhile(bench, 64, np.dtype(np.float16))


def _reference(x, f, pad):
    xp = np.pad(x.astype(np.float64), ((0, 0), (pad, pad), (pad, pad), (0, 0)))
    k = f.shape[0]
    out = np.zeros(x.shape[:3] + (f.shape[3],))
    for a in range(k):
        for b in range(k):
            out += np.tensordot(xp[:, a:a + x.shape[1], b:b + x.shape[2]], f[a, b].astype(np.float64), axes=([3], [0]))
    return out


def test_ops_take_the_fft_path_with_float32_accuracy():
    x = RNG.rand(16, 14, 14, 32).astype(np.float32)
    f = (RNG.rand(5, 5, 32, 24).astype(np.float32) - 0.5)
    dy = RNG.randn(16, 14, 14, 24).astype(np.float32)
    assert fft_worthwhile(_geometry(16, 14, 14, 32, 5, 5, (2, 2, 2, 2)), 24, np.dtype(np.float32))
    with tf.Graph().as_default():
        xt, ft, dyt = tf.constant(x), tf.constant(f), tf.constant(dy)
        y = tf.nn.conv2d(xt, ft, [1, 1, 1, 1], "SAME")
        dx = tf.nn.conv2d_backprop_input([16, 14, 14, 32], ft, dyt, [1, 1, 1, 1], "SAME")
        with tf.Session() as sess:
            y_val, dx_val = sess.run([y, dx])
    want = _reference(x, f, 2)
    np.testing.assert_allclose(y_val, want, rtol=1e-5, atol=1e-5 * np.max(np.abs(want)))
    # the input gradient: a correlation of dy with the filter rotated 180 degrees, channels swapped
    want_dx = _reference(dy, f[::-1, ::-1].transpose(0, 1, 3, 2), 2)
    np.testing.assert_allclose(dx_val, want_dx, rtol=1e-5, atol=1e-5 * np.max(np.abs(want_dx)))


FIXTURES = np.load(os.path.join(os.path.dirname(__file__), "..", "..", "data", "tf_conv_fft.npz"))
FIXTURE_CASES = sorted({key.split("/")[0] for key in FIXTURES.files})
_PADDINGS = {"same": "SAME", "valid": "VALID",
             "explicit": [[0, 0], [1, 4], [3, 2], [0, 0]]}  # as make_tf_conv_fft_fixtures.py


def _fixture_geometry(x, f, padding):
    n, h, w, c = x.shape
    kh, kw = f.shape[:2]
    if padding == "VALID":
        pad = (0, 0, 0, 0)
    elif padding == "SAME":
        pad = ((kh - 1) // 2, kh // 2, (kw - 1) // 2, kw // 2)
    else:
        pad = (padding[1][0], padding[1][1], padding[2][0], padding[2][1])
    return _geometry(n, h, w, c, kh, kw, pad)


@pytest.mark.parametrize("data_format", ["NHWC", "NCHW"])
@pytest.mark.parametrize("name", FIXTURE_CASES)
def test_against_tensorflow(name, data_format):
    x, f, dy, want_y, want_dx, want_dw = (FIXTURES[f"{name}/{part}"] for part in ("x", "f", "dy", "y", "dx", "dw"))
    padding = _PADDINGS[name.split("_")[0]]
    g = _fixture_geometry(x, f, padding)
    tol = 1e-5 if x.dtype == np.float32 else 1e-12
    # the FFT path itself (these batches are below the automatic choice's minimum)
    engine = ConvEngine(g, f.shape[3], x.dtype, ChunkRunner(lambda: _Pool(), 1), fft=True)
    for got, want in ((engine.forward(x, f), want_y), (engine.input_grad(dy, f), want_dx),
                      (engine.filter_grad(x, dy), want_dw)):
        assert engine._fft is not None and engine._flip is not None and engine._flip._fft is not None
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.max(np.abs(want)) / 10)
    to_layout = (lambda a: a.transpose(0, 3, 1, 2)) if data_format == "NCHW" else (lambda a: a)
    from_layout = (lambda a: a.transpose(0, 2, 3, 1)) if data_format == "NCHW" else (lambda a: a)
    pad = padding if isinstance(padding, str) or data_format == "NHWC" else \
        [padding[0], padding[3], padding[1], padding[2]]
    with tf.Graph().as_default():
        y = tf.nn.conv2d(tf.constant(to_layout(x)), tf.constant(f), [1, 1, 1, 1], pad, data_format=data_format)
        dx = tf.nn.conv2d_backprop_input(list(to_layout(x).shape), tf.constant(f), tf.constant(to_layout(dy)),
                                         [1, 1, 1, 1], pad, data_format=data_format)
        dw = tf.nn.conv2d_backprop_filter(tf.constant(to_layout(x)), list(f.shape), tf.constant(to_layout(dy)),
                                          [1, 1, 1, 1], pad, data_format=data_format)
        with tf.Session() as sess:
            y_val, dx_val, dw_val = sess.run([y, dx, dw])
            y_val, dx_val = from_layout(y_val), from_layout(dx_val)
    for got, want in ((y_val, want_y), (dx_val, want_dx), (dw_val, want_dw)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol * np.max(np.abs(want)) / 10)
