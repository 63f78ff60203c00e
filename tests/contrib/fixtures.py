"""The TF 2.15 / tf_slim fixture (tests/data/tf215_contrib_expected.json) and the inputs its
generator used, shared by the contrib tests."""
import json
import os

import numpy as np

_PATH = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data",
                     "tf215_contrib_expected.json")

with open(_PATH) as _f:
    EXPECTED = json.load(_f)

X_FC = (np.arange(20, dtype=np.float32).reshape(4, 5) - 7.0) / 6.0
X_IMG = np.sin(np.arange(2 * 6 * 6 * 3, dtype=np.float32)).reshape(2, 6, 6, 3)
X_SEQ = np.cos(np.arange(3 * 4 * 5, dtype=np.float32) * 0.7).reshape(3, 4, 5)


def close(actual, expected, rtol=1e-5, atol=1e-6):
    np.testing.assert_allclose(np.asarray(actual, np.float64), np.asarray(expected, np.float64), rtol=rtol, atol=atol)
