"""tf.train.SyncReplicasOptimizer over a real cluster on 127.0.0.1: one PS process and worker
processes (tests/distributed/sync_replicas_worker.py), each with its own graph and
MonitoredTrainingSession and the optimizer's hook. Two workers train exactly as the
averaged-gradient computation (NumPy reference); with a backup worker, a SIGSTOPped worker does
not stop the others' training."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np

from tests.distributed.cluster_util import HERE, ROOT, cluster_dict, start_task, stop, wait_serving
from tests.distributed.sync_replicas_worker import LR, data


def _worker(cluster: dict, task: int, m: int, last_step: int, num_tokens: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=ROOT)
    return subprocess.Popen([sys.executable, os.path.join(HERE, "sync_replicas_worker.py"), json.dumps(cluster),
                             str(task), str(m), str(last_step), str(num_tokens)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT)


def _wait_line(process: subprocess.Popen, text: bytes, timeout: float = 90.0) -> None:
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if text in line:
            return
        if not line and process.poll() is not None:
            raise RuntimeError(process.stderr.read().decode()[-3000:])
    raise TimeoutError(f"no {text!r}")


def _report(process: subprocess.Popen, timeout: float) -> dict:
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, err.decode()[-3000:]
    return json.loads(out.decode().strip().splitlines()[-1])


def _reference(last_step: int) -> tuple:
    """Plain SGD on the average of the two workers' gradients, in float64."""
    w, b = np.zeros((3, 1)), np.zeros(1)
    for step in range(last_step):
        gw, gb = np.zeros_like(w), np.zeros_like(b)
        for task in (0, 1):
            xs, ys = (a.astype(np.float64) for a in data(task, step))
            r = xs @ w + b - ys
            gw += 2 * xs.T @ r / len(xs) / 2
            gb += 2 * r.sum(0) / len(xs) / 2
        w, b = w - LR * gw, b - LR * gb
    return w.ravel(), b


def test_two_workers_train_as_the_averaged_gradient():
    cluster = cluster_dict(ps=1, worker=2)
    ps = start_task(cluster, "ps", 0)
    workers: list[subprocess.Popen] = []
    try:
        wait_serving(ps)
        last_step = 12
        # No initial tokens (2 - 2 are needed): every step then takes one gradient from each
        # worker, computed on that step's weights.
        workers.append(_worker(cluster, 0, 2, last_step, 0))
        _wait_line(workers[0], b"ready")  # the chief initialized the model: no waiting for it
        workers.append(_worker(cluster, 1, 2, last_step, 0))
        reports = [_report(p, 120) for p in workers]
        w, b = _reference(last_step)
        for r in reports:
            assert r["steps"] == last_step and r["global_step"] == last_step, r
            np.testing.assert_allclose(r["w"], w, rtol=1e-5, atol=1e-6)
            np.testing.assert_allclose(r["b"], b, rtol=1e-5, atol=1e-6)
    finally:
        for process in workers:
            stop(process)
        stop(ps)


def test_a_stopped_backup_worker_does_not_stop_training():
    cluster = cluster_dict(ps=1, worker=3)
    ps = start_task(cluster, "ps", 0)
    workers: list[subprocess.Popen] = []
    try:
        wait_serving(ps)
        last_step = 300
        workers.append(_worker(cluster, 0, 2, last_step, -1))
        _wait_line(workers[0], b"ready")
        workers += [_worker(cluster, task, 2, last_step, -1) for task in (1, 2)]
        _wait_line(workers[2], b"ready")
        time.sleep(0.2)  # it trains a little with the others
        os.kill(workers[2].pid, signal.SIGSTOP)
        stopped_at = time.time()
        reports = [_report(p, 120) for p in workers[:2]]
        for r in reports:
            assert r["global_step"] >= last_step, r
            after = sum(end > stopped_at for end in r["ends"])
            assert after >= 100, (after, r["steps"])  # most of training went on after the SIGSTOP
        assert np.isfinite(reports[0]["w"]).all()
        os.kill(workers[2].pid, signal.SIGCONT)
    finally:
        for process in workers:
            stop(process)
        stop(ps)
