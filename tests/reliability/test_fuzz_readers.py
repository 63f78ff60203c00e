"""The fuzz suite (issue 10): each reader gets a few hundred seeded damaged files (see fuzz.py);
every case must end in the error class TensorFlow raises there or in a correct result. Each
target runs in its own interpreter under a time limit, so a hang or a crash of the process
fails the test instead of the suite; each case also has its own watchdog inside it. The whole
file runs in about 10 s (bench/fuzz_readers.py runs 10x the cases)."""
import json
import os
import subprocess
import sys
import time

import pytest

from tests.reliability import fuzz

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = {"tfrecord": 300, "tfrecord_reader_op": 200, "checkpoint": 300, "graph_def": 300, "meta_graph": 200,
         "graph_def_fields": 300, "event_file": 300}
SEED = 10
CASE_TIMEOUT_S = 20
PROCESS_TIMEOUT_S = 100


def run_fuzz(target, seed, cases, case_timeout=CASE_TIMEOUT_S, process_timeout=PROCESS_TIMEOUT_S, start=0):
    """The figures of one target run in a fresh interpreter (rc, figures or None)."""
    proc = subprocess.run([sys.executable, "-m", "tests.reliability.fuzz", target, str(seed), str(cases),
                           str(case_timeout), str(start)], cwd=ROOT, capture_output=True, text=True,
                          timeout=process_timeout)
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    return proc, json.loads(lines[-1]) if lines else None


@pytest.mark.parametrize("target", sorted(CASES))
def test_damaged_files_give_tensorflow_errors(target):
    proc, figures = run_fuzz(target, SEED, CASES[target])
    assert proc.returncode == 0 and figures is not None, \
        f"the fuzz process died: {proc.returncode}\n{proc.stderr[-3000:]}"
    bad = figures["failures"]
    assert not bad, "\n\n".join(f"case {f['case']}: {f['outcome']}\n{f['detail']}" for f in bad)
    assert figures["cases"] == CASES[target]
    assert figures["other"] == figures["wrong"] == figures["hang"] == 0
    # The damage is real: most cases are errors, and some damaged files still read correctly
    # (a file cut at a record boundary, a flip in bytes no reader looks at).
    assert figures["error"] > CASES[target] // 2


def test_the_watchdog_reports_a_hang():
    """A case that never ends is reported as a hang, and the process still exits."""
    kind, detail = fuzz.run_one(lambda: time.sleep(5), (), 0.2)
    assert kind == "hang" and "0.2 s" in detail
    assert fuzz.run_one(lambda: {}["missing"], (ValueError,), 5)[0] == "other"
    assert fuzz.run_one(lambda: int("x"), (ValueError,), 5) == ("error", "ValueError")
