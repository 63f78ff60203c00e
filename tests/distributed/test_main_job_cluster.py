"""The main job on a cluster: `--cluster local:1,2` (one PS and two worker processes, between-graph
replication under MonitoredTrainingSession, the chief checkpointing) reaches the local run's
accuracy range and every process exits; one task of a cluster from TF_CONFIG; a failing worker
stops the cluster."""
import json
import os
import re
import signal

import pytest

import tensorweave as tf
from tensorweave.examples import cluster_launcher, cluster_task, mnist

from tests.distributed.processes import Proc, free_address, pid_alive

STEPS = 150  # the local run reaches about 95% on the digits by then


@pytest.fixture
def procs():
    started: list[Proc] = []
    yield started
    for proc in started:
        proc.kill_group()


def _pids(output: str) -> dict[str, int]:
    line = re.search(r"^cluster: pids (.*)$", output, re.M)
    assert line, output
    return {name: int(pid) for name, pid in re.findall(r"(\w+:\d+) (\d+)", line[1])}


def test_local_cluster_trains_to_the_local_accuracy_and_every_process_exits(procs, tmp_path):
    procs.append(launcher := Proc("tensorweave.examples.mnist", "--cluster", "local:1,2", "--steps", str(STEPS),
                                  "--logdir", str(tmp_path)))
    assert launcher.wait(150) == 0, launcher.output
    out = launcher.output
    pids = _pids(out)
    assert sorted(pids) == ["ps:0", "worker:0", "worker:1"]
    assert not [name for name, pid in pids.items() if pid_alive(pid)]
    assert "cluster: all 3 processes exited" in out
    accuracy = float(re.search(r"test accuracy: ([0-9.]+)", out)[1])
    assert 0.9 <= accuracy <= 1.0, out
    # both workers trained, asynchronously, towards one global step count
    local = {int(k): int(n) for k, n in re.findall(rf"/job:worker/task:(\d): (\d+) of the {STEPS} steps", out)}
    assert sorted(local) == [0, 1] and sum(local.values()) >= STEPS, out
    assert f"{STEPS}/{STEPS}" in out and "training (2 workers)" in out  # the chief's progress bar
    # the chief checkpointed the final step into a fresh run directory under --logdir (the other
    # worker's step in flight when the target was reached may count too: asynchronous SGD)
    (run_dir,) = [p for p in tmp_path.iterdir() if p.name.startswith("cluster-")]
    checkpoint = tf.train.latest_checkpoint(str(run_dir))
    step = int(checkpoint.rsplit("-", 1)[1])
    assert STEPS <= step <= STEPS + 1
    # (the name comes from the step read before the save; the other worker may add one while
    # the variables are read, as in TF)
    assert step <= tf.train.NewCheckpointReader(checkpoint).get_tensor("global_step") <= STEPS + 1
    assert f"summaries: tensorboard --logdir {run_dir}" in out


def test_a_failing_worker_stops_the_cluster(procs, tmp_path):
    procs.append(launcher := Proc("tensorweave.examples.mnist", "--cluster", "local:1,2", "--steps", "10",
                                  "--logdir", "", "--data-dir", str(tmp_path / "missing")))
    assert launcher.wait(120) == 1
    out = launcher.output
    assert re.search(r"cluster: worker:\d \(pid \d+\) exited with status 1; stopping every task", out), out
    assert "FileNotFoundError" in out
    assert not [name for name, pid in _pids(out).items() if pid_alive(pid)]


def test_one_task_from_tf_config_with_a_ps_from_tensorweave_server(procs, monkeypatch, capsys):
    """The worker is this process (the chief of a 1-PS, 1-worker cluster); the PS is `tensorweave
    server` from the same TF_CONFIG but its own task."""
    cluster = {"ps": [free_address()], "worker": [free_address()]}
    ps_config = json.dumps({"cluster": cluster, "task": {"type": "ps", "index": 0}})
    procs.append(ps := Proc("tensorweave.tools.cli", "server", env={"TF_CONFIG": ps_config}))
    ps.wait_for("Started server", 45)
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": cluster, "task": {"type": "worker", "index": 0}}))
    accuracy = mnist.main(["--steps", "60", "--quiet", "--logdir", ""])
    assert 0.5 <= accuracy <= 1.0
    assert "/job:worker/task:0: 60 of the 60 steps" in capsys.readouterr().out
    ps.signal(signal.SIGTERM)
    assert ps.wait(10) == 0, ps.output


def test_launcher_pieces():
    assert cluster_launcher.parse_local("local:1,2") == (1, 2)
    for bad in ("local:0,2", "local:1,0", "local:1", "1,2", "local:a,b"):
        with pytest.raises(ValueError, match="local:P,W with at least one PS and one worker"):
            cluster_launcher.parse_local(bad)
    assert cluster_launcher.without_cluster_option(
        ["--steps", "5", "--cluster", "local:1,2", "--quiet", "--cluster=x"]) == ["--steps", "5", "--quiet"]
    addresses = cluster_launcher.free_addresses(5)
    assert len(set(addresses)) == 5 and all(a.startswith("127.0.0.1:") for a in addresses)
    assert cluster_launcher.run_dir("") == ""
    assert os.path.basename(cluster_launcher.run_dir("logs")).startswith("cluster-")


def test_resolve_task_for_the_main_job(monkeypatch):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    assert cluster_task.resolve(mnist.parse_args([])) is None  # the local job
    two = json.dumps({"ps": ["h:1"], "worker": ["h:2", "h:3"]})
    spec, job, task = cluster_task.resolve(mnist.parse_args(["--cluster", two, "--job", "worker", "--task", "1"]))
    assert (job, task) == ("worker", 1) and not cluster_task.is_chief(spec, job, task)
    assert cluster_task.is_chief(spec, "worker", 0)
    with_chief = tf.train.ClusterSpec({"chief": ["h:0"], "ps": ["h:1"], "worker": ["h:2"]})
    assert cluster_task.is_chief(with_chief, "chief", 0) and not cluster_task.is_chief(with_chief, "worker", 0)
    with pytest.raises(ValueError, match='keeps its variables on a "ps" job'):
        cluster_task.resolve(mnist.parse_args(["--cluster", '{"worker": ["h:2"]}']))
    with pytest.raises(ValueError, match='runs "ps", "worker" or "chief" tasks, not \'evaluator\''):
        cluster_task.resolve(mnist.parse_args(["--cluster", '{"ps": ["h:1"], "evaluator": ["h:2"]}',
                                               "--job", "evaluator"]))
    with pytest.raises(SystemExit, match="give --job"):
        mnist.main(["--cluster", two])
    monkeypatch.setenv("TF_CONFIG", json.dumps({"cluster": {"ps": ["h:1"], "worker": ["h:2"]},
                                                "task": {"type": "ps", "index": 0}}))
    assert cluster_task.resolve(mnist.parse_args([]))[1:] == ("ps", 0)


def test_sigterm_to_the_launcher_ends_every_process(procs):
    procs.append(launcher := Proc("tensorweave.examples.mnist", "--cluster", "local:1,2", "--steps", "1000000",
                                  "--logdir", ""))
    launcher.wait_for("training (2 workers)", 60)  # the chief's progress bar: the cluster is training
    launcher.signal(signal.SIGTERM)
    assert launcher.wait(15) == 128 + signal.SIGTERM
    assert "cluster: interrupted; stopping every task" in launcher.output
    assert not [name for name, pid in _pids(launcher.output).items() if pid_alive(pid)]
