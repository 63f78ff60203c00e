"""`tensorweave server`: one cluster task until SIGTERM/SIGINT, from --cluster/--job/--task or
TF_CONFIG, also as `python -m tensorweave.tools.server`; a client runs steps on it; it exits 0."""
import io
import json
import os
import signal
import socket
import threading
import time

import pytest

import tensorweave as tf
from tensorweave.tools import cli
from tensorweave.tools import server as server_command

from tests.distributed.processes import Proc, free_address

START_SECS = 45  # a fresh interpreter importing tensorweave, on a loaded machine


@pytest.fixture
def procs():
    started: list[Proc] = []
    yield started
    for proc in started:
        proc.kill_group()


def _step_on_ps(target: str) -> float:
    """A client step whose variable lives on the server's ps task (the cluster's worker tasks
    are not running: the device filter leaves them out, as TF's PS clients do)."""
    config = tf.ConfigProto(device_filters=["/job:ps"], operation_timeout_in_ms=20000)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(3.0, name="v")
            doubled = v * 2.0
        with tf.Session(target, config=config) as sess:
            sess.run(v.initializer)
            return float(sess.run(doubled))


def _stops_cleanly(proc: Proc, signum: int) -> None:
    t = time.monotonic()
    proc.signal(signum)
    assert proc.wait(10) == 0, proc.output
    assert time.monotonic() - t < 5
    assert "Server /job:ps/replica:0/task:0 stopped" in proc.output


def test_server_subcommand_with_cluster_serves_and_exits_0_on_sigterm(procs):
    address = free_address()
    cluster = json.dumps({"ps": [address], "worker": [free_address()]})
    procs.append(proc := Proc("tensorweave.tools.cli", "server", "--cluster", cluster, "--job", "ps", "--task", "0"))
    proc.wait_for(f"Started server with target: grpc://{address}", START_SECS)
    assert _step_on_ps(f"grpc://{address}") == 6.0
    _stops_cleanly(proc, signal.SIGTERM)


def test_python_m_server_reads_tf_config_and_exits_0_on_sigint(procs):
    address = free_address()
    tf_config = {"cluster": {"ps": [address], "worker": [free_address()]}, "task": {"type": "ps", "index": 0}}
    procs.append(proc := Proc("tensorweave.tools.server", env={"TF_CONFIG": json.dumps(tf_config)}))
    proc.wait_for(f"grpc://{address} (/job:ps/replica:0/task:0, pid {proc.pid})", START_SECS)
    assert _step_on_ps(f"grpc://{address}") == 6.0
    _stops_cleanly(proc, signal.SIGINT)


def test_serve_in_process_stops_on_sigterm_and_restores_the_handlers():
    address = free_address()
    out = io.StringIO()
    before = signal.getsignal(signal.SIGTERM)

    def terminate_when_started():
        deadline = time.monotonic() + 20
        while "Started server" not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _step_on_ps(f"grpc://{address}") == 6.0
        os.kill(os.getpid(), signal.SIGTERM)

    sender = threading.Thread(target=terminate_when_started)
    sender.start()
    status = server_command.serve(tf.train.ClusterSpec({"ps": [address]}), "ps", 0, out=out)
    sender.join()
    assert status == 0 and out.getvalue().endswith("Server /job:ps/replica:0/task:0 stopped\n")
    assert signal.getsignal(signal.SIGTERM) is before
    with pytest.raises(tf.errors.UnavailableError):  # the port is closed
        with tf.Session(f"grpc://{address}", config=tf.ConfigProto(operation_timeout_in_ms=2000)) as sess:
            sess.run(tf.constant(1.0))


def test_resolve_task_takes_what_is_missing_from_tf_config(monkeypatch):
    tf_config = {"cluster": {"ps": ["h0:1"], "worker": ["h1:1", "h2:1"]}, "task": {"type": "worker", "index": 1}}
    monkeypatch.setenv("TF_CONFIG", json.dumps(tf_config))
    spec, job, task = server_command.resolve_task(None, None, None)
    assert spec.as_dict() == tf_config["cluster"] and (job, task) == ("worker", 1)
    assert server_command.resolve_task(None, "ps", 0)[1:] == ("ps", 0)
    # TF_CONFIG's whole value as --cluster
    assert server_command.resolve_task(json.dumps(tf_config), "worker", 0)[0].as_dict() == tf_config["cluster"]
    monkeypatch.delenv("TF_CONFIG")
    spec, job, task = server_command.resolve_task('{"chief": ["h9:1"]}', None, None)  # one task: no need to say
    assert spec.jobs == ["chief"] and (job, task) == ("chief", 0)


def test_server_command_errors_name_what_is_wrong(monkeypatch, capsys):
    monkeypatch.delenv("TF_CONFIG", raising=False)
    assert cli.main(["server"]) == 2
    assert "no cluster: give --cluster or set TF_CONFIG" in capsys.readouterr().err
    two_jobs = '{"ps": ["127.0.0.1:1"], "worker": ["127.0.0.1:2"]}'
    for argv, message in [
            (["--cluster", two_jobs], "give --job (one of ps, worker)"),
            (["--cluster", two_jobs, "--job", "chief"], "job 'chief' is not in the cluster (jobs: ps, worker)"),
            (["--cluster", two_jobs, "--job", "ps", "--task", "3"], "job 'ps' has no task 3 (tasks: 0)"),
            (["--cluster", "{not json"], "the cluster is not valid JSON"),
            (["--cluster", "[1, 2]"], "must be a JSON object of job names to task addresses")]:
        assert server_command.main(argv) == 2
        assert message in capsys.readouterr().err


def test_server_command_reports_an_address_it_cannot_bind(capsys):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        address = f"127.0.0.1:{taken.getsockname()[1]}"
        assert server_command.main(["--cluster", json.dumps({"ps": [address]})]) == 1
    assert f"tensorweave server: cannot serve /job:ps/replica:0/task:0: Failed to bind to address {address}" \
        in capsys.readouterr().err
