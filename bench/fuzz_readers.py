"""The long fuzz run (issue 10): 10x the cases of tests/reliability/test_fuzz_readers.py, on other
seeds, through the same harness (tests/reliability/fuzz.py), each target in its own process.
The target "services" (issue 13) is 10x the cases of tests/distributed/test_fuzz_services.py:
hostile calls to every method of a server process (tests/distributed/service_fuzz.py); there
"error" counts TF error replies and clean gRPC statuses, "correct" well-formed replies, "other"
INTERNAL errors and broken replies, "hang" calls past their deadline, "crashed" a server that died.

Prints per target: cases, clean errors (the error classes TensorFlow raises there), correct
results, accepted results (a damaged file that is still well-formed, e.g. a GraphDef whose
constant changed), wrong results, other exceptions, hangs, process crashes, and the error
classes seen. Exits 1 if any case was wrong, another exception, a hang or a crash.

    python bench/fuzz_readers.py [--scale 10] [--seed 1000]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
import types
from typing import Any

from common import ROOT  # noqa: F401  (puts the project root on sys.path)

from tests.distributed import service_fuzz, test_fuzz_services
from tests.distributed.task_process import TaskProcess
from tests.reliability.test_fuzz_readers import CASES, run_fuzz

COLUMNS = ["cases", "error", "correct", "accepted", "wrong", "other", "hang"]


def _run_all(target: str, seed: int, cases: int) -> tuple[dict, int, Any]:
    """All `cases` cases of `target`, going on in a new process after a hang or a crash."""
    total: dict[str, Any] = dict.fromkeys(COLUMNS, 0) | {"error_classes": {}, "failures": []}
    crashed, start, proc = 0, 0, None
    while start < cases:
        proc, figures = run_fuzz(target, seed, cases, process_timeout=600, start=start)
        if proc.returncode != 0 or figures is None:
            crashed += 1
            break  # which case crashed is unknown: the figures of this part are lost
        for column in COLUMNS:
            total[column] += figures[column]
        for kind, count in figures["error_classes"].items():
            total["error_classes"][kind] = total["error_classes"].get(kind, 0) + count
        total["failures"] += figures["failures"]
        start = figures["next"]
    return total, crashed, proc


def _run_services(seed: int, cases: int) -> tuple[dict, int, Any]:
    """The services target: `cases` hostile calls to a fresh server process."""
    total: dict[str, Any] = dict.fromkeys(COLUMNS, 0) | {"error_classes": {}, "failures": []}
    with tempfile.TemporaryDirectory() as tmp:
        task = TaskProcess({"worker": ["127.0.0.1:0"]}, "worker", 0, f"{tmp}/task.err")
        try:
            figures = service_fuzz.run(task.address, seed, cases, service_fuzz.service_methods())
            crashed = 0 if task.alive() else 1
        finally:
            task.stop()
            # What the report shows for a crashed target (as a finished subprocess.run would).
            process = types.SimpleNamespace(returncode=task.proc.returncode, stderr=task.stderr())
    for outcome, count in figures["counts"].items():
        total["cases"] += count
        if outcome == "ok":
            total["correct"] += count
        elif outcome == "status:DEADLINE_EXCEEDED":
            total["hang"] += count
        elif service_fuzz.is_failure(outcome):
            total["other"] += count
        else:
            total["error"] += count
            total["error_classes"][outcome.split(":")[1]] = count
    total["failures"] = [{"case": f.split(" ")[1], "outcome": f, "detail": ""} for f in figures["failures"]]
    return total, crashed, process


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=int, default=10, help="cases per target: this many times the suite's")
    parser.add_argument("--seed", type=int, default=1000)
    args = parser.parse_args()
    header = " ".join(f"{c:>8s}" for c in COLUMNS + ["crashed", "seconds"])
    print(f"{'target':20s} {header}  error classes")
    totals = dict.fromkeys(COLUMNS + ["crashed"], 0)
    failures = []
    targets = sorted(CASES.items()) + [("services", test_fuzz_services.CASES)]
    for target, base in targets:
        cases = base * args.scale
        start = time.perf_counter()
        if target == "services":
            figures, crashed, proc = _run_services(args.seed, cases)
        else:
            figures, crashed, proc = _run_all(target, args.seed, cases)
        seconds = time.perf_counter() - start
        for column in COLUMNS:
            totals[column] += figures[column]
        totals["crashed"] += crashed
        classes = ", ".join(f"{k} {v}" for k, v in sorted(figures["error_classes"].items(), key=lambda kv: -kv[1]))
        counts = " ".join(f"{figures[c]:8d}" for c in COLUMNS)
        print(f"{target:20s} {counts} {crashed:8d} {seconds:8.1f}  {classes}", flush=True)
        failures += [(target, f) for f in figures["failures"]]
        if crashed:
            failures.append((target, {"case": "?", "outcome": f"process rc {proc.returncode}",
                                      "detail": proc.stderr[-2000:]}))
    print(f"{'total':20s} " + " ".join(f"{totals[c]:8d}" for c in COLUMNS) + f" {totals['crashed']:8d}")
    for target, failure in failures:
        print(f"\n{target} case {failure['case']}: {failure['outcome']}\n{failure['detail']}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
