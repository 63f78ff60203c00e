"""Writes tests/data/tf_conv_fft.npz: what TensorFlow 2.21 (tf.compat.v1, graph mode) computes for
convolutions of the kind tensorweave's FFT path serves (ops/kernels/conv_fft.py, issue 17; the
batches are small, so the test runs that path on them directly): Conv2D,
Conv2DBackpropInput and Conv2DBackpropFilter with 5x5 and 7x7 windows and 16-64 channels, SAME, VALID and explicit
padding, float32 and float64 (NHWC: TF's CPU kernels have no NCHW; the test runs the NCHW layout
on the transposed arrays). For each case NAME the file holds NAME/x, NAME/f,
NAME/dy (the inputs, seeded), NAME/y (the forward result), NAME/dx and NAME/dw (the gradients
w.r.t. the input and the filter).

Run with real TensorFlow, never imported by the tests:
`/opt/tfref/bin/python tests/data/make_tf_conv_fft_fixtures.py tests/data`.
"""
import os
import sys

import numpy as np

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_eager_execution()

# name: (x NHWC shape, filter shape, padding, dtype)
CASES = {
    "same_5x5_f32": ((3, 14, 14, 32), (5, 5, 32, 24), "SAME", "float32"),
    "valid_5x5_f32": ((2, 16, 12, 16), (5, 5, 16, 32), "VALID", "float32"),
    "explicit_7x7_f32": ((2, 11, 13, 20), (7, 7, 20, 16), [[0, 0], [1, 4], [3, 2], [0, 0]], "float32"),
    "same_5x5_wide_f32": ((3, 10, 10, 16), (5, 5, 16, 40), "SAME", "float32"),
    "same_5x5_f64": ((2, 12, 12, 24), (5, 5, 24, 16), "SAME", "float64"),
}


def case_arrays(name, x_shape, f_shape, dtype):
    rng = np.random.RandomState(sum(map(ord, name)))
    x = rng.randn(*x_shape).astype(dtype)
    f = (rng.randn(*f_shape) / np.sqrt(np.prod(f_shape[:3]))).astype(dtype)
    return x, f, rng


def main(out_dir):
    arrays = {}
    for name, (x_shape, f_shape, padding, dtype) in CASES.items():
        x, f, rng = case_arrays(name, x_shape, f_shape, dtype)
        with tf.Graph().as_default():
            xt, ft = tf.constant(x), tf.constant(f)
            y = tf.nn.conv2d(xt, ft, [1, 1, 1, 1], padding)
            with tf.Session() as sess:
                y_val = sess.run(y)
                dy = rng.randn(*y_val.shape).astype(dtype)
                dx = sess.run(tf.nn.conv2d_backprop_input(x.shape, ft, tf.constant(dy), [1, 1, 1, 1], padding))
                dw = sess.run(tf.nn.conv2d_backprop_filter(xt, f.shape, tf.constant(dy), [1, 1, 1, 1], padding))
        arrays.update({f"{name}/x": x, f"{name}/f": f, f"{name}/dy": dy, f"{name}/y": y_val, f"{name}/dx": dx,
                       f"{name}/dw": dw})
    np.savez_compressed(os.path.join(out_dir, "tf_conv_fft.npz"), **arrays)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
