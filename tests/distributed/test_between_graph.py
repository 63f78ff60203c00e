"""Between-graph replication with real processes: one PS task and two worker processes, each
with its own graph and MonitoredTrainingSession, training asynchronously on the PS's variables."""
from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.distributed.cluster_util import HERE, ROOT, cluster_dict, start_task, stop, wait_serving


def test_two_workers_train_asynchronously_through_a_ps(tmp_path):
    cluster = cluster_dict(ps=1, worker=2)
    ps = start_task(cluster, "ps", 0)
    workers: list[subprocess.Popen] = []
    try:
        wait_serving(ps)
        env = dict(os.environ, PYTHONPATH=ROOT)
        for task in range(2):
            workers.append(subprocess.Popen(
                [sys.executable, os.path.join(HERE, "between_graph_worker.py"), json.dumps(cluster), str(task),
                 str(tmp_path / "ckpt"), "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=ROOT))
        reports = []
        for process in workers:
            out, err = process.communicate(timeout=120)
            assert process.returncode == 0, err.decode()[-3000:]
            reports.append(json.loads(out.decode().strip().splitlines()[-1]))
        assert sum(r["steps"] for r in reports) >= 60  # both contributed to one global step
        assert all(r["steps"] > 0 for r in reports)
        assert max(r["global_step"] for r in reports) >= 60
        # whoever stepped first saw the zero weights (loss about 14); the other may have started
        # on weights already trained: asynchronous SGD on one shared model
        assert max(r["first"] for r in reports) > 1.0, reports
        for r in reports:  # every worker ends on the shared, trained weights
            assert r["last"] < 0.1, r
        assert any(name.startswith("model.ckpt") for name in os.listdir(tmp_path / "ckpt"))  # the chief saved
    finally:
        for process in workers:
            stop(process)
        stop(ps)
