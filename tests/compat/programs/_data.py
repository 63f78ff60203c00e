"""Small data for the compatibility programs: NumPy only, so that the same program runs unchanged
under tensorweave and under real TensorFlow."""
import gzip
import os

import numpy as np

_DIGITS = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tensorweave", "examples", "data",
                       "digits.csv.gz")
DATA_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "data")


def digits(n=None):
    """The UCI digits as (images float32 in [0, 1], shape [N, 64]; labels int64, shape [N])."""
    with gzip.open(_DIGITS, "rt") as f:
        table = np.loadtxt(f, delimiter=",", dtype=np.float32)
    if n is not None:
        table = table[:n]
    return table[:, :64] / np.float32(16.0), table[:, 64].astype(np.int64)


def one_hot(labels, depth=10):
    out = np.zeros((len(labels), depth), np.float32)
    out[np.arange(len(labels)), labels] = 1.0
    return out


def batches(n, batch_size, steps):
    """Deterministic minibatch index ranges cycling over n examples."""
    for step in range(steps):
        start = (step * batch_size) % n
        idx = np.arange(start, start + batch_size) % n
        yield step, idx
