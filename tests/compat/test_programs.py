"""Each TF1 program of tests/compat/programs runs under tensorweave and gives TensorFlow's numbers
(recorded by tests/data/make_tf_compat_fixtures.py under TF 2.15.1). One parametrized test, so the
list of passing and failing programs reads straight off pytest's report."""
import pytest

import tensorweave as tf
from tests.compat import harness
from tests.compat.programs import PROGRAMS

EXPECTED, META = harness.load_expected()


def test_every_program_has_tf_results():
    assert sorted(EXPECTED) == sorted(PROGRAMS) == sorted(META)
    assert all(META[name]["tensorflow"] == "2.15.1" for name in PROGRAMS)
    assert len(PROGRAMS) >= 28


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_matches_tensorflow(name, tmp_path):
    results = harness.run_program(tf, name, str(tmp_path))
    harness.compare(name, results, EXPECTED[name])
