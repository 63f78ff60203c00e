"""`tf.distribute.cluster_resolver.ClusterResolver`, the interface a cluster manager is read
through (the cluster's spec, the master to connect to, this task's type and index, the RPC
layer), with `SimpleClusterResolver` (values given directly) and `UnionResolver` (several merged)."""
from __future__ import annotations

import abc
import collections
from typing import Any, Optional

from tensorweave.distributed.cluster_spec import ClusterSpec


def format_master_url(master: Any, rpc_layer: Optional[str] = None) -> Any:
    """`rpc_layer://master`, or `master` itself when there is no RPC layer."""
    return f"{rpc_layer}://{master}" if rpc_layer else master


class ClusterResolver(abc.ABC):
    """The base of the cluster resolvers. Subclasses give `cluster_spec()` and `master()`, read
    afresh at each call, and set `_task_type`, `_task_id`, `_rpc_layer` where they apply."""

    @abc.abstractmethod
    def cluster_spec(self) -> ClusterSpec:
        """The cluster as it is now, a `tf.train.ClusterSpec`."""

    @abc.abstractmethod
    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """The session target of the master (a TF 1.x notion)."""

    def num_accelerators(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                         config_proto: Any = None) -> dict[str, int]:
        """{accelerator type: cores per task}. TF counts the master's non-CPU devices; tensorweave's
        devices are all CPUs, so the count is empty (TF's answer on a CPU-only machine)."""
        del task_type, task_id, config_proto
        return collections.defaultdict(int)

    @property
    def environment(self) -> Any:
        """"google" inside Google's environment, else "" (always "" here)."""
        return ""

    @property
    def task_type(self) -> Optional[str]:
        """This task's job name ("worker", "ps", "chief", ...), or None when not known."""
        return getattr(self, "_task_type", None)

    @task_type.setter
    def task_type(self, task_type: Optional[str]) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> Optional[int]:
        """This task's index in its job, or None when not known."""
        return getattr(self, "_task_id", None)

    @task_id.setter
    def task_id(self, task_id: Optional[int]) -> None:
        self._task_id = task_id


class SimpleClusterResolver(ClusterResolver):
    """A resolver holding the values it is given."""

    def __init__(self, cluster_spec: ClusterSpec, master: str = "", task_type: Optional[str] = None,
                 task_id: Optional[int] = None, environment: str = "",
                 num_accelerators: Optional[dict[str, int]] = None, rpc_layer: Optional[str] = None) -> None:
        self._task_type = task_type
        self._task_id = task_id
        self._environment = environment
        self._num_accelerators = num_accelerators
        self._rpc_layer = rpc_layer
        if not isinstance(cluster_spec, ClusterSpec):
            raise TypeError("cluster_spec must be a `tf.train.ClusterSpec`.")
        self._cluster_spec = cluster_spec
        if not isinstance(master, str):
            raise TypeError("master must be a string.")
        self._master = master

    def cluster_spec(self) -> ClusterSpec:
        return self._cluster_spec

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """The given master, or the address of task `task_id` of job `task_type` when both are given."""
        if task_type is not None and task_id is not None:
            master = self._cluster_spec.task_address(task_type, task_id)
        else:
            master = self._master
        return format_master_url(master, rpc_layer or self._rpc_layer)

    @property
    def task_type(self) -> Optional[str]:
        return self._task_type

    @task_type.setter
    def task_type(self, task_type: Optional[str]) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> Optional[int]:
        return self._task_id

    @task_id.setter
    def task_id(self, task_id: Optional[int]) -> None:
        self._task_id = task_id

    @property
    def environment(self) -> Any:
        return self._environment

    def num_accelerators(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                         config_proto: Any = None) -> dict[str, int]:
        """The count given to the constructor ({} when none): nothing is detected."""
        del task_type, task_id, config_proto
        return {} if self._num_accelerators is None else self._num_accelerators

    @property
    def rpc_layer(self) -> Optional[str]:
        return self._rpc_layer

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: Optional[str]) -> None:
        self._rpc_layer = rpc_layer


class UnionResolver(ClusterResolver):
    """The union of several resolvers: their cluster specs merged; the master, task, environment,
    accelerators and RPC layer are the first resolver's unless overridden here."""

    def __init__(self, *args: ClusterResolver, **kwargs: Any) -> None:
        self._rpc_layer = kwargs.pop("rpc_layer", None)
        self._task_type = kwargs.pop("task_type", None)
        self._task_id = kwargs.pop("task_id", None)
        if kwargs:
            raise ValueError(f"Unexpected kwargs provided {kwargs!r}")
        if not args:
            raise ValueError("At least one ClusterResolver is required.")
        if not all(isinstance(resolver, ClusterResolver) for resolver in args):
            raise TypeError("All arguments must be a sub-class of `ClusterResolver.`")
        self._cluster_resolvers = args

    def cluster_spec(self) -> ClusterSpec:
        """The jobs of every resolver. A job in several: when every one lists its tasks (dense),
        the lists are concatenated in resolver order; when any is sparse, all are merged as
        {index: address} dicts and a shared index raises KeyError."""
        specs = [resolver.cluster_spec().as_dict() for resolver in self._cluster_resolvers]
        sparse = {job for spec in specs for job, tasks in spec.items() if isinstance(tasks, dict)}
        merged: dict[Any, Any] = {}
        for spec in specs:
            for job, tasks in spec.items():
                if job not in sparse:
                    merged.setdefault(job, []).extend(tasks)
                    continue
                task_dict = dict(enumerate(tasks)) if isinstance(tasks, list) else dict(tasks)
                into = merged.setdefault(job, {})
                shared = set(task_dict) & set(into)
                if shared:
                    raise KeyError(f"Duplicate keys detected when merging two ClusterSpecs: {shared!r}")
                into.update(task_dict)
        return ClusterSpec(merged)

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        if task_type is not None and task_id is not None:
            master = self.cluster_spec().task_address(task_type, task_id)
            return format_master_url(master, rpc_layer or self._rpc_layer)
        return self._cluster_resolvers[0].master(rpc_layer=rpc_layer)

    @property
    def task_type(self) -> Optional[str]:
        return self._task_type or self._cluster_resolvers[0].task_type

    @task_type.setter
    def task_type(self, task_type: Optional[str]) -> None:
        self._task_type = task_type

    @property
    def task_id(self) -> Optional[int]:
        return self._task_id or self._cluster_resolvers[0].task_id

    @task_id.setter
    def task_id(self, task_id: Optional[int]) -> None:
        self._task_id = task_id

    @property
    def environment(self) -> Any:
        return self._cluster_resolvers[0].environment

    def num_accelerators(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                         config_proto: Any = None) -> dict[str, int]:
        return self._cluster_resolvers[0].num_accelerators(task_type, task_id, config_proto)

    @property
    def rpc_layer(self) -> Optional[str]:
        return self._rpc_layer or getattr(self._cluster_resolvers[0], "rpc_layer", None)

    @rpc_layer.setter
    def rpc_layer(self, rpc_layer: Optional[str]) -> None:
        self._rpc_layer = rpc_layer
