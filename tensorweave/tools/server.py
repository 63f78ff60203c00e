"""`tensorweave server [--cluster JSON] [--job NAME] [--task K]`: runs one task of a cluster (a
`tf.train.Server`) until it is stopped.

    tensorweave server --cluster '{"ps": ["h0:2222"], "worker": ["h1:2222", "h2:2222"]}' --job ps --task 0
    TF_CONFIG='{"cluster": {...}, "task": {"type": "ps", "index": 0}}' python -m tensorweave.tools.server

What the options leave out comes from the TF_CONFIG environment variable (the JSON that launchers
and Kubernetes operators set on every task). SIGTERM or SIGINT stops the server: running steps on
this task fail, the port closes and the process exits with status 0. So does anything else that
stops the server (`Server.stop()` from another thread, e.g. a done-queue watcher)."""
from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import threading
from typing import Any, Optional, Sequence

from tensorweave.distributed.cluster_resolver import TFConfigClusterResolver
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.server import Server
from tensorweave.framework import errors

_STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tensorweave server",
        description="Run one task of a TensorFlow cluster (tf.train.Server) until SIGTERM or SIGINT.")
    parser.add_argument("--cluster", metavar="JSON", default=None,
                        help='the cluster, e.g. \'{"ps": ["host:port"], "worker": ["host:port", ...]}\' '
                             "(default: TF_CONFIG's \"cluster\")")
    parser.add_argument("--job", metavar="NAME", default=None, help="this task's job (default: TF_CONFIG's task type)")
    parser.add_argument("--task", metavar="K", type=int, default=None,
                        help="this task's index in its job (default: TF_CONFIG's task index)")
    return parser


def parse_cluster(text: str) -> ClusterSpec:
    """A ClusterSpec from its JSON form (a job -> addresses dict, or TF_CONFIG's whole object)."""
    try:
        value = json.loads(text)
    except json.JSONDecodeError as err:
        raise ValueError(f"the cluster is not valid JSON ({err}): {text!r}") from None
    if isinstance(value, dict) and isinstance(value.get("cluster"), dict):
        value = value["cluster"]  # a TF_CONFIG value pasted whole
    if not isinstance(value, dict) or not value:
        raise ValueError(f"the cluster must be a JSON object of job names to task addresses, got {text!r}")
    return ClusterSpec(value)


def resolve_task(cluster: Optional[str], job: Optional[str], task: Optional[int]) -> tuple[ClusterSpec, str, int]:
    """(cluster, job, task index): the given values, the rest from TF_CONFIG; ValueError naming
    what is missing."""
    resolver = TFConfigClusterResolver()
    spec = parse_cluster(cluster) if cluster is not None else resolver.cluster_spec()
    if not spec.jobs:
        raise ValueError("no cluster: give --cluster or set TF_CONFIG")
    job = job if job is not None else resolver.task_type
    if job is None and len(spec.jobs) == 1:
        job = spec.jobs[0]
    if job is None:
        raise ValueError(f"which job is this task in? give --job (one of {', '.join(spec.jobs)}) "
                         "or set TF_CONFIG's task type")
    if job not in spec.jobs:
        raise ValueError(f"job {job!r} is not in the cluster (jobs: {', '.join(spec.jobs)})")
    task = task if task is not None else resolver.task_id
    indices = spec.task_indices(job)
    if task is None and len(indices) == 1:
        task = indices[0]
    if task is None:
        raise ValueError(f"which task of job {job!r} is this? give --task or set TF_CONFIG's task index")
    if task not in indices:
        raise ValueError(f"job {job!r} has no task {task} (tasks: {', '.join(map(str, indices))})")
    return spec, job, task


class _SignalStop:
    """SIGTERM/SIGINT stop the server from a thread of their own: a handler runs on the main
    thread, which is inside `join()`, and stopping waits for gRPC to close its port."""

    def __init__(self) -> None:
        self.server: Optional[Server] = None
        self.requested = threading.Event()
        self.stopper: Optional[threading.Thread] = None
        self._previous: dict[int, Any] = {}

    def install(self) -> None:
        if threading.current_thread() is threading.main_thread():  # signals reach only the main thread
            self._previous = {sig: signal.signal(sig, self._handle) for sig in _STOP_SIGNALS}

    def uninstall(self) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous = {}

    def _handle(self, signum: int, frame: Any) -> None:
        self.requested.set()
        self.stop_server()

    def stop_server(self) -> None:
        if self.server is not None and self.stopper is None:
            self.stopper = threading.Thread(target=self.server.stop, name="tensorweave-server-stop")
            self.stopper.start()


def serve(cluster: ClusterSpec, job: str, task: int, config: Any = None, out: Any = None) -> int:
    """Starts the task's server, prints its target, blocks until it is stopped; 0."""
    out = out or sys.stdout
    stop = _SignalStop()
    stop.install()  # before the server starts: a signal from then on is never lost
    try:
        stop.server = Server(cluster, job_name=job, task_index=task, config=config)
        if stop.requested.is_set():  # a signal came while the server was starting
            stop.stop_server()
        print(f"Started server with target: {stop.server.target} (/job:{job}/replica:0/task:{task}, "
              f"pid {os.getpid()})", file=out, flush=True)
        stop.server.join()
        if stop.stopper is not None:
            stop.stopper.join()  # the port is closed before the process goes
    finally:
        stop.uninstall()
    print(f"Server /job:{job}/replica:0/task:{task} stopped", file=out, flush=True)
    return 0


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = _parser().parse_args(argv)
    try:
        cluster, job, task = resolve_task(args.cluster, args.job, args.task)
    except (ValueError, TypeError) as err:
        print(f"tensorweave server: {err}", file=sys.stderr)
        return 2
    try:
        return serve(cluster, job, task)
    except (RuntimeError, errors.OpError) as err:  # the address is taken, or not this host's
        print(f"tensorweave server: cannot serve /job:{job}/replica:0/task:{task}: {err}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
