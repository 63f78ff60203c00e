"""The TF reference numbers of tests/data/tf_image.npz (made by make_tf_image_fixtures.py)."""
import os

import numpy as np

import tensorweave as tf

PATH = os.path.join(os.path.dirname(__file__), "..", "..", "data", "tf_image.npz")
REF = np.load(PATH)
DATA = os.path.dirname(PATH)


def run(fetch, feed=None, runs=1):
    with tf.Session() as sess:
        values = [sess.run(fetch, feed) for _ in range(runs)]
    return values[0] if runs == 1 else values


def close(got, want, rtol=1e-5, atol=1e-6):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if want.dtype.kind in "iub":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
