"""`tf.train.Server`: one task of a cluster, exporting a master and a worker service over gRPC
(white paper 3.3, Figure 4).

The server binds only the address its cluster spec gives its task (TF binds every interface).
`join()` returns once the server is stopped (`stop()`, SIGTERM in `tensorweave server`), where
TF's blocks forever. A session in this process on the server's target calls its master directly.
"""
from __future__ import annotations

import atexit
import threading
import weakref
from typing import Any, Optional

from tensorweave.distributed import rpc
from tensorweave.distributed.cluster_spec import ClusterSpec
from tensorweave.distributed.master import Master
from tensorweave.distributed.protos import ServerDef
from tensorweave.distributed.worker import Worker
from tensorweave.framework import errors
from tensorweave.runtime.config import ConfigProto

# Masters of this process by target ("grpc://host:port"): their sessions skip gRPC.
_local_masters: "weakref.WeakValueDictionary[str, Master]" = weakref.WeakValueDictionary()


# Servers of this process not yet stopped. gRPC's stop waits for its serving thread, a daemon
# thread that interpreter finalization freezes: a server still running when the interpreter
# finalizes (its program never called stop()) would hang the exit in __del__. They are stopped
# at exit instead, while that thread still runs, so the process ends as TF's does.
_running: "weakref.WeakSet[Server]" = weakref.WeakSet()


def local_master(target: str) -> Optional[Master]:
    return _local_masters.get(target)


@atexit.register
def _stop_running_servers() -> None:
    for server in list(_running):
        server.stop(grace=None)


def _make_server_def(server_or_cluster_def: Any, job_name: Optional[str], task_index: Optional[int],
                     protocol: Optional[str], config: Optional[Any]) -> Any:
    """TF's rules for what a Server is given: a ServerDef (arguments override its fields), or a
    cluster (ClusterSpec, dict, ClusterDef) plus the job and task."""
    if isinstance(server_or_cluster_def, ServerDef):
        server_def = ServerDef()
        server_def.CopyFrom(server_or_cluster_def)
        if job_name is not None:
            server_def.job_name = job_name
        if task_index is not None:
            server_def.task_index = task_index
        if protocol is not None:
            server_def.protocol = protocol
        if config is not None:
            server_def.default_session_config.MergeFrom(config)
        return server_def
    try:
        cluster_spec = ClusterSpec(server_or_cluster_def)
    except TypeError:
        raise TypeError("Could not convert `server_or_cluster_def` to a `tf.train.ServerDef` or "
                        "`tf.train.ClusterSpec`.") from None
    if job_name is None:
        if len(cluster_spec.jobs) == 1:
            job_name = cluster_spec.jobs[0]
        else:
            raise ValueError("Must specify an explicit `job_name`.")
    if task_index is None:
        indices = cluster_spec.task_indices(job_name)
        if len(indices) == 1:
            task_index = indices[0]
        else:
            raise ValueError("Must specify an explicit `task_index`.")
    server_def = ServerDef(cluster=cluster_spec.as_cluster_def(), job_name=job_name, task_index=task_index,
                           protocol=protocol or "grpc")
    if config is not None:
        server_def.default_session_config.MergeFrom(config)
    return server_def


class Server:
    """An in-process TensorFlow server, for use in distributed training."""

    def __init__(self, server_or_cluster_def: Any, job_name: Optional[str] = None,
                 task_index: Optional[int] = None, protocol: Optional[str] = None,
                 config: Optional[Any] = None, start: bool = True) -> None:
        self._server_def = _make_server_def(server_or_cluster_def, job_name, task_index, protocol, config)
        if self._server_def.protocol not in ("grpc", ""):
            raise errors.InvalidArgumentError(None, None, f"Unsupported protocol {self._server_def.protocol!r}: "
                                              "only grpc is supported")
        job, task = self._server_def.job_name, self._server_def.task_index
        cluster = ClusterSpec(self._server_def.cluster)
        try:
            address = cluster.task_address(job, task)
        except ValueError as err:
            raise errors.InvalidArgumentError(None, None, f"Task {job}:{task} is not in the cluster: {err}") from None
        session_config = ConfigProto()
        session_config.CopyFrom(self._server_def.default_session_config)
        self._worker = Worker(job, task, cluster, session_config)
        self._master = Master(self._worker.task, cluster, self._worker)
        handlers = dict(self._worker.handlers())
        handlers.update(self._master.handlers())
        self._grpc, port = rpc.make_server(address, handlers)
        host = address.rpartition(":")[0]
        if address.rpartition(":")[2] == "0":  # a port picked now: the cluster records it (TF's
            address = f"{host}:{port}"         # server_def keeps the 0 the user gave)
            cluster_def = type(self._server_def.cluster)()
            cluster_def.CopyFrom(self._server_def.cluster)
            for job_def in cluster_def.job:
                if job_def.name == job:
                    job_def.tasks[task] = address
            cluster = ClusterSpec(cluster_def)
            self._worker.cluster = cluster
            self._master.cluster = cluster
        self._address = address
        self._target = f"grpc://{address}"
        self._started = False
        self._stopped = threading.Event()
        self._lock = threading.Lock()
        _local_masters[self._target] = self._master
        _running.add(self)
        if start:
            self.start()

    def start(self) -> None:
        with self._lock:
            if self._stopped.is_set():
                raise errors.FailedPreconditionError(None, None, "Server has been stopped")
            if not self._started:
                self._grpc.start()
                self._started = True

    def join(self) -> None:
        """Blocks until the server has been stopped."""
        self._stopped.wait()

    def stop(self, grace: Optional[float] = 1.0, wait: bool = True) -> None:
        """Stops serving: running steps on this task fail, then the port closes."""
        with self._lock:
            if self._stopped.is_set():
                return
            self._stopped.set()
        _running.discard(self)
        _local_masters.pop(self._target, None)
        self._master.shutdown()
        self._worker.shutdown()
        stopped = self._grpc.stop(grace)
        if wait:
            stopped.wait(grace + 1 if grace else 5.0)

    @property
    def server_def(self) -> Any:
        return self._server_def

    @property
    def target(self) -> str:
        """The target for `tf.Session`: grpc://host:port."""
        return self._target

    @staticmethod
    def create_local_server(config: Optional[Any] = None, start: bool = True) -> "Server":
        """A single-task server on localhost, on a port picked now."""
        return Server({"localhost": ["localhost:0"]}, protocol="grpc", config=config, start=start)

    def __del__(self) -> None:
        try:
            if not self._stopped.is_set():
                self.stop(grace=None, wait=False)  # never block the interpreter's exit
        except Exception:  # noqa: BLE001  (interpreter shutdown)
            pass
