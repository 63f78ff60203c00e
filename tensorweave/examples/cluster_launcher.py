"""`--cluster local:P,W`: runs an example on a cluster of processes on this machine: P parameter
server tasks (`python -m tensorweave.tools.server`) and W worker tasks (the example itself, one
process per task, told its task with --cluster JSON --job worker --task K), on 127.0.0.1 ports
picked now.

The launcher waits for every worker, then stops the PS tasks with SIGTERM (their servers exit 0)
and waits for them: every process it started has ended when it returns. A worker or PS that fails
stops the whole cluster; so does SIGTERM or Ctrl-C to the launcher."""
from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from typing import Any, Optional, Sequence

_LOCAL = re.compile(r"local:(\d+),(\d+)")
_PS_STOP_SECS = 15.0


def parse_local(spec: str) -> tuple[int, int]:
    """'local:P,W' -> (P, W)."""
    match = _LOCAL.fullmatch(spec.strip())
    if not match or int(match[1]) < 1 or int(match[2]) < 1:
        raise ValueError(f"--cluster {spec!r}: a local cluster is local:P,W with at least one PS and one "
                         "worker, e.g. local:1,2")
    return int(match[1]), int(match[2])


def free_addresses(count: int) -> list[str]:
    """`count` distinct 127.0.0.1 addresses whose ports were free just now (the sockets are held
    together so that no port is picked twice)."""
    sockets = []
    try:
        for _ in range(count):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            sockets.append(s)
        return [f"127.0.0.1:{s.getsockname()[1]}" for s in sockets]
    finally:
        for s in sockets:
            s.close()


def without_cluster_option(argv: Sequence[str]) -> list[str]:
    """The command line less its --cluster option (the workers get their own)."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
        elif arg == "--cluster":
            skip = True
        elif not arg.startswith("--cluster="):
            out.append(arg)
    return out


def run_dir(logdir: str) -> str:
    """A fresh directory under --logdir for this run's checkpoints and summaries: the chief of a
    monitored session resumes from the checkpoint it finds, and a new run should start afresh."""
    return os.path.join(logdir, time.strftime("cluster-%Y%m%d-%H%M%S")) if logdir else ""


class _Cluster:
    """The processes of one local cluster, by task name ("ps:0", "worker:1", ...)."""

    def __init__(self) -> None:
        self.procs: dict[str, subprocess.Popen] = {}

    def start(self, name: str, command: list[str], env: dict[str, str], quiet: bool = False) -> None:
        self.procs[name] = subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL if quiet else None)

    def of_job(self, job: str) -> dict[str, subprocess.Popen]:
        return {name: p for name, p in self.procs.items() if name.startswith(job + ":")}

    def wait_for_workers(self) -> Optional[str]:
        """Waits until every worker has exited; the first failure (a worker with a nonzero status,
        a PS that ended early) as a message, else None."""
        workers, ps = self.of_job("worker"), self.of_job("ps")
        while True:
            for name, proc in workers.items():
                if proc.poll() not in (None, 0):
                    return f"{name} (pid {proc.pid}) exited with status {proc.returncode}"
            for name, proc in ps.items():
                if proc.poll() is not None:
                    return f"{name} (pid {proc.pid}) ended during training with status {proc.returncode}"
            if all(proc.poll() == 0 for proc in workers.values()):
                return None
            time.sleep(0.05)

    def stop_ps(self) -> Optional[str]:
        """SIGTERM to each PS task, then waits for it; a message if one did not exit 0."""
        ps = self.of_job("ps")
        for proc in ps.values():
            proc.send_signal(signal.SIGTERM)
        failures = []
        for name, proc in ps.items():
            try:
                if proc.wait(_PS_STOP_SECS) != 0:
                    failures.append(f"{name} (pid {proc.pid}) exited with status {proc.returncode}")
            except subprocess.TimeoutExpired:
                failures.append(f"{name} (pid {proc.pid}) did not stop within {_PS_STOP_SECS:g} s")
        return "; ".join(failures) or None

    def kill_all(self) -> None:
        """Kills every process still running, by its pid, and reaps it."""
        for proc in self.procs.values():
            if proc.poll() is None:
                proc.kill()
        for proc in self.procs.values():
            proc.wait()


class _Terminated(Exception):
    pass


def _raise_terminated(signum: int, frame: Any) -> None:
    raise _Terminated(signum)


def launch_local(spec: str, program: str, argv: Sequence[str], logdir: str) -> int:
    """Runs `python -m program` as every worker of a local cluster `spec` ('local:P,W') with the
    command line `argv` (its --cluster replaced); the exit status (0 when every process did)."""
    num_ps, num_workers = parse_local(spec)
    addresses = free_addresses(num_ps + num_workers)
    cluster = json.dumps({"ps": addresses[:num_ps], "worker": addresses[num_ps:]})
    env = dict(os.environ)
    env.pop("TF_CONFIG", None)  # each task is told its place on its command line
    env.setdefault("GRPC_VERBOSITY", "ERROR")  # gRPC's INFO lines (connection GOAWAYs) are not for users
    common = without_cluster_option(argv) + ["--logdir", run_dir(logdir)]
    print(f"cluster: {num_ps} ps and {num_workers} worker processes: {cluster}", flush=True)
    procs = _Cluster()
    previous = None
    if threading.current_thread() is threading.main_thread():
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    try:
        for k in range(num_ps):
            procs.start(f"ps:{k}", [sys.executable, "-m", "tensorweave.tools.server", "--cluster", cluster,
                                    "--job", "ps", "--task", str(k)], env, quiet=True)
        for k in range(num_workers):
            quiet = [] if k == 0 else ["--quiet"]  # one progress bar: the chief's
            procs.start(f"worker:{k}", [sys.executable, "-m", program, *common, *quiet, "--cluster", cluster,
                                        "--job", "worker", "--task", str(k)], env)
        print("cluster: pids " + ", ".join(f"{name} {proc.pid}" for name, proc in procs.procs.items()), flush=True)
        failure = procs.wait_for_workers()
        if failure is None:
            failure = procs.stop_ps()
        if failure is not None:
            print(f"cluster: {failure}; stopping every task", file=sys.stderr, flush=True)
            return 1
        print(f"cluster: all {num_ps + num_workers} processes exited", flush=True)
        return 0
    except (KeyboardInterrupt, _Terminated) as err:
        print("cluster: interrupted; stopping every task", file=sys.stderr, flush=True)
        return 128 + (err.args[0] if isinstance(err, _Terminated) else signal.SIGINT)
    finally:
        procs.kill_all()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
