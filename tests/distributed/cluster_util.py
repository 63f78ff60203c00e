"""Helpers for distributed tests: free ports on 127.0.0.1, in-process clusters, and task
processes started as real subprocesses and always stopped by pid."""
from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
from typing import Any, Iterator, Optional

import tensorweave as tf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cluster_dict(**jobs: int) -> dict[str, list[str]]:
    return {job: [f"127.0.0.1:{free_port()}" for _ in range(n)] for job, n in jobs.items()}


@contextlib.contextmanager
def in_process_cluster(**jobs: int) -> Iterator[dict[str, list[Any]]]:
    """Every task as a tf.train.Server in this process (the master reaches the other tasks
    over real gRPC); stopped at the end."""
    cluster = cluster_dict(**jobs)
    servers = {job: [tf.train.Server(cluster, job_name=job, task_index=i) for i in range(len(addresses))]
               for job, addresses in cluster.items()}
    try:
        yield servers
    finally:
        for group in servers.values():
            for server in group:
                server.stop(grace=None)


def start_task(cluster: dict, job: str, task: int, env: Optional[dict] = None) -> subprocess.Popen:
    """A task as a real process running `tensorweave server`'s code (tests/distributed/task_main.py)."""
    process_env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""))
    process_env.update(env or {})
    return subprocess.Popen([sys.executable, os.path.join(HERE, "task_main.py"), json.dumps(cluster), job, str(task)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=process_env, cwd=ROOT)


def wait_serving(process: subprocess.Popen, timeout: float = 60.0) -> None:
    """Until the task prints that it serves (or fails)."""
    deadline = time.monotonic() + timeout
    assert process.stdout is not None
    os.set_blocking(process.stdout.fileno(), False)
    buffered = b""
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"task exited with {process.returncode}: {process.stderr.read().decode()[-2000:]}")
        chunk = process.stdout.read() or b""
        buffered += chunk
        if b"serving" in buffered:
            return
        time.sleep(0.05)
    raise TimeoutError("task did not start serving")


@contextlib.contextmanager
def task_processes(**jobs: int) -> Iterator[dict[str, list[str]]]:
    """Every task of `jobs` (job name -> task count, in that order) as a real server process on a
    free port, serving before the body runs, stopped by pid at the end; yields the cluster."""
    spec = cluster_dict(**jobs)
    tasks: list[subprocess.Popen] = []
    try:
        for job, addresses in spec.items():
            tasks.extend(start_task(spec, job, i) for i in range(len(addresses)))
        for task in tasks:
            wait_serving(task)
        yield spec
    finally:
        for task in tasks:
            stop(task)


def stop(process: subprocess.Popen, sig: int = signal.SIGKILL) -> None:
    if process.poll() is None:
        try:
            os.kill(process.pid, sig)
        except ProcessLookupError:
            pass
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            stream.close()
