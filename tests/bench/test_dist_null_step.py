"""bench/dist_null_step.py's quick mode on tensorweave alone: a PS process and a worker process
on 127.0.0.1, the scalar null step run 2 + 5 times. The driver exits non-zero when a task fails
or when the PS's variable does not hold the value the steps must leave there."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_quick_scalar_one_ps():
    cmd = [sys.executable, os.path.join(ROOT, "bench", "dist_null_step.py"), "--quick", "--systems",
           "tensorweave", "--variants", "scalar", "--ps", "1", "--steps", "5", "--timeout", "60"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=90, cwd=ROOT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    rows = [line.split() for line in proc.stdout.splitlines() if line.startswith("scalar")]
    assert len(rows) == 1, proc.stdout
    assert rows[0][1] == "1"
    assert float(rows[0][2]) > 0.0  # ms/step
