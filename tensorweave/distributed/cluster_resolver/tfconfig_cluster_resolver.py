"""`tf.distribute.cluster_resolver.TFConfigClusterResolver`: the cluster described by the TF_CONFIG
environment variable, the JSON that launchers and Kubernetes operators set on every task:

    {"cluster": {"ps": ["h0:2222"], "worker": ["h1:2222", "h2:2222"]},
     "task": {"type": "worker", "index": 1}, "rpc_layer": "grpc", "session_master": "..."}

The variable is read again at every query, so a change of TF_CONFIG is seen (as TF's)."""
from __future__ import annotations

import json
import os
from typing import Any, Optional

from tensorweave.distributed.cluster_resolver.cluster_resolver import ClusterResolver, format_master_url
from tensorweave.distributed.cluster_spec import ClusterSpec

_TF_CONFIG_ENV = "TF_CONFIG"


def _tf_config() -> dict[str, Any]:
    return json.loads(os.environ.get(_TF_CONFIG_ENV, "{}"))


def _tf_config_value(key: str, default: Any = None) -> Any:
    return _tf_config().get(key, default)


class TFConfigClusterResolver(ClusterResolver):
    """Reads TF_CONFIG; the arguments given here override its task type, index and RPC layer."""

    def __init__(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                 rpc_layer: Optional[str] = None, environment: Optional[str] = None) -> None:
        self._task_type = task_type
        self._task_id = task_id
        self._rpc_layer = rpc_layer
        self._environment = environment

    @property
    def task_type(self) -> Optional[str]:
        if self._task_type is not None:
            return str(self._task_type)
        task = _tf_config_value("task", {})
        return str(task["type"]) if "type" in task else None

    @task_type.setter
    def task_type(self, task_type: Optional[str]) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> Optional[int]:
        if self._task_id is not None:
            return int(self._task_id)
        task = _tf_config_value("task", {})
        return int(task["index"]) if "index" in task else None

    @task_id.setter
    def task_id(self, task_id: Optional[int]) -> None:
        self._task_id = task_id

    @property
    def environment(self) -> Any:
        return self._environment

    @property
    def rpc_layer(self) -> Optional[str]:
        return _tf_config_value("rpc_layer") if self._rpc_layer is None else self._rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: Optional[str]) -> None:
        self._rpc_layer = rpc_layer

    def cluster_spec(self) -> ClusterSpec:
        """TF_CONFIG's "cluster" (an empty ClusterSpec when it has none)."""
        return ClusterSpec(_tf_config().get("cluster", {}))

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """TF_CONFIG's "session_master" when set; "" (in-process) for a cluster of at most one task;
        else the address of the given (default: this) task, prefixed with the RPC layer."""
        session_master = _tf_config_value("session_master")
        if session_master is not None:
            return session_master
        spec = self.cluster_spec()
        jobs = spec.jobs
        if not jobs or (len(jobs) == 1 and len(spec.job_tasks(jobs[0])) == 1):
            return ""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        rpc_layer = self.rpc_layer if rpc_layer is None else rpc_layer
        return format_master_url(spec.task_address(task_type, task_id), rpc_layer)
