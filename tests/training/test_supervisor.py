"""tf.train.Supervisor against TensorFlow 2.21 (tests/data/tf_supervisor_expected.json, written by
make_tf_supervisor_fixtures.py running the same programs of tests/data/supervisor_cases.py)."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.data import supervisor_cases

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
with open(os.path.join(DATA, "tf_supervisor_expected.json")) as _f:
    EXPECTED = json.load(_f)


@pytest.mark.parametrize("case", [c.__name__ for c in supervisor_cases.CASES])
def test_supervisor_programs_behave_as_tensorflows(tmp_path, case):
    got = getattr(supervisor_cases, case)(tf, str(tmp_path))
    want = EXPECTED[case]
    assert got.keys() == want.keys()
    for key in want:
        if key.endswith("_w"):
            np.testing.assert_allclose(got[key], want[key], rtol=1e-5)
        else:
            assert got[key] == want[key], key
