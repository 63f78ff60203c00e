"""Shared benchmark plumbing: timing loops and running the same workload in real TensorFlow.

TensorFlow is never a dependency: it is looked for in this interpreter, then in the Python named
by $TENSORWEAVE_TF_PYTHON, then in /opt/tfref/bin/python (a separate virtual environment with
tensorflow-cpu). Each benchmark runs its TF twin in a subprocess in the same run and prints the
ratio tensorweave/TensorFlow of the per-step times (below 1 means tensorweave is faster)."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from typing import Any, Callable, Optional

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
if ROOT not in sys.path:
    sys.path.insert(0, ROOT)


def time_per_step(fn: Callable[[], Any], min_time: float = 1.0, warmup: int = 20, repeats: int = 5) -> float:
    """Best-of-`repeats` mean seconds per call, each repeat running for about `min_time`/repeats."""
    for _ in range(warmup):
        fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt > 0.05:
            break
        n *= 2
    per_repeat = max(1, int(n * (min_time / repeats) / dt))
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(per_repeat):
            fn()
        best = min(best, (time.perf_counter() - t0) / per_repeat)
    return best


def tf_python() -> Optional[str]:
    candidates = [sys.executable, os.environ.get("TENSORWEAVE_TF_PYTHON"), "/opt/tfref/bin/python"]
    for py in candidates:
        if py and os.path.exists(py):
            ok = subprocess.run([py, "-c", "import tensorflow"], capture_output=True,
                                env=_quiet_env()).returncode == 0
            if ok:
                return py
    return None


def _quiet_env() -> dict:
    env = dict(os.environ)
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    env.pop("PYTHONPATH", None)
    return env


def torch_python() -> Optional[str]:
    """An interpreter that imports torch: this one, $TENSORWEAVE_TORCH_PYTHON, or a reference venv."""
    for py in (sys.executable, os.environ.get("TENSORWEAVE_TORCH_PYTHON"), "/opt/tfref/bin/python",
               "/opt/tf215/bin/python"):
        if py and os.path.exists(py) and subprocess.run(
                [py, "-c", "import torch"], capture_output=True, env=_quiet_env()).returncode == 0:
            return py
    return None


def run_in(python: Optional[str], body: str, prelude: tuple = (), timeout: float = 900) -> Optional[dict]:
    """Runs `body` (which must set a dict `result`) in the interpreter `python` (a reference
    environment), after the `prelude` lines and bench/common_timing's time_per_step; returns
    `result`, or None when there is no such interpreter or the run fails."""
    if python is None:
        return None
    script = "\n".join(["import json, sys, time", f"sys.path.insert(0, {HERE!r})",
                        "from common_timing import time_per_step", *prelude, textwrap.dedent(body),
                        "print('RESULT' + json.dumps(result))"])
    proc = subprocess.run([python, "-c", script], capture_output=True, text=True, env=_quiet_env(),
                          timeout=timeout)
    for line in proc.stdout.splitlines():
        if line.startswith("RESULT"):
            return json.loads(line[len("RESULT"):])
    sys.stderr.write(f"reference run failed:\n{proc.stderr[-3000:]}\n")
    return None


def run_tf(body: str, timeout: float = 900) -> Optional[dict]:
    """Runs `body` (which must set a dict `result`) under TensorFlow (TF1 graph mode)."""
    return run_in(tf_python(), body, ("import tensorflow.compat.v1 as tf", "tf.disable_v2_behavior()"), timeout)


def report(name: str, ours: float, theirs: Optional[float], unit: str = "us/step") -> None:
    scale = 1e6 if unit.startswith("us") else 1e3
    line = f"{name:<44s} tensorweave {ours * scale:10.2f} {unit}"
    if theirs is not None:
        line += f"   tensorflow {theirs * scale:10.2f} {unit}   ratio {ours / theirs:6.3f}"
    else:
        line += "   (tensorflow not importable: no ratio)"
    print(line, flush=True)
