"""`tf.train.ClusterSpec`: the jobs of a cluster and the network address of each of their tasks.

A job's tasks are dense (a list: task i at position i) or sparse (a dict from task index to
address, so a server can be configured knowing only the tasks it talks to). The spec is kept as
{job: {index: address}} beside its `ClusterDef` proto (built once, jobs and tasks sorted as TF
sorts them, so the serialized bytes are TF's). Queries raise TF's errors: ValueError naming the
unknown job or task, TypeError for inputs that are not a cluster."""
from __future__ import annotations

from typing import Any, Union

from tensorweave.distributed.protos import ClusterDef

_Address = Union[str, bytes]


def _as_text(value: Any, what: str) -> str:
    """`value` as proto string text: TF accepts str and bytes-like (as_bytes) and nothing else."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray)):
        return bytes(value).decode("utf-8")
    raise TypeError(f"{what} {value!r} must be bytes or unicode")


def _tasks_of(cluster_def: Any) -> dict[str, dict[int, _Address]]:
    return {job.name: dict(job.tasks.items()) for job in cluster_def.job}


class ClusterSpec:
    """A cluster: job names mapped to their tasks' addresses (TF's tf.train.ClusterSpec)."""

    def __init__(self, cluster: Any) -> None:
        if isinstance(cluster, dict):
            self._cluster_spec: dict[Any, dict[int, _Address]] = {}
            for job_name, tasks in cluster.items():
                if isinstance(tasks, (list, tuple)):
                    self._cluster_spec[job_name] = dict(enumerate(tasks))
                elif isinstance(tasks, dict):
                    # TF_CONFIG JSON gives sparse task indices as strings: int() them as TF does.
                    self._cluster_spec[job_name] = {int(i): task for i, task in tasks.items()}
                else:
                    raise TypeError(f"The tasks for job {job_name!r} must be a list or a dictionary "
                                    f"from integers to strings.")
            self._cluster_def = self._make_cluster_def()
        elif isinstance(cluster, ClusterDef):
            # TF keeps the given proto itself (as_cluster_def returns it).
            self._cluster_def = cluster
            self._cluster_spec = dict(_tasks_of(cluster))
        elif isinstance(cluster, ClusterSpec):
            self._cluster_def = ClusterDef()
            self._cluster_def.MergeFrom(cluster.as_cluster_def())
            self._cluster_spec = dict(_tasks_of(self._cluster_def))
        else:
            raise TypeError("`cluster` must be a dictionary mapping one or more job names to lists of "
                            "network addresses, or a `ClusterDef` protocol buffer")

    def _make_cluster_def(self) -> Any:
        cluster_def = ClusterDef()
        for job_name, tasks in sorted(self._cluster_spec.items()):
            job_def = cluster_def.job.add(name=_as_text(job_name, "Job name"))
            for index, address in sorted(tasks.items()):
                job_def.tasks[index] = _as_text(address, "Task address")
        return cluster_def

    def __bool__(self) -> bool:
        return bool(self._cluster_spec)

    # As TF's: equal to another ClusterSpec with the same tasks, or to the {job: {index: address}}
    # dict itself (comparing with a ClusterSpec reflects back to its dict).
    def __eq__(self, other: object) -> bool:
        return self._cluster_spec == other

    def __ne__(self, other: object) -> bool:
        return self._cluster_spec != other

    __hash__ = None  # type: ignore[assignment]  # mutable-looking and compared by value, as TF's

    def __repr__(self) -> str:
        spec = self.as_dict()
        return "ClusterSpec({" + ", ".join(f"{k!r}: {spec[k]!r}" for k in sorted(spec)) + "})"

    def as_dict(self) -> dict[Any, Any]:
        """{job: addresses}: a list for a job whose indices are 0..n-1, else {index: address}."""
        result: dict[Any, Any] = {}
        for job in self.jobs:
            indices = self.task_indices(job)
            if not indices:
                result[job] = {}
            elif indices[-1] + 1 == len(indices):
                result[job] = self.job_tasks(job)
            else:
                result[job] = {i: self.task_address(job, i) for i in indices}
        return result

    def as_cluster_def(self) -> Any:
        """The `ClusterDef` protocol buffer of this cluster."""
        return self._cluster_def

    @property
    def jobs(self) -> list[Any]:
        """The job names, in the order they were given."""
        return list(self._cluster_spec)

    def _job(self, job_name: Any) -> dict[int, _Address]:
        try:
            return self._cluster_spec[job_name]
        except KeyError:
            raise ValueError(f"No such job in cluster: {job_name!r}") from None

    def num_tasks(self, job_name: Any) -> int:
        """How many tasks `job_name` has (ValueError for an unknown job)."""
        return len(self._job(job_name))

    def task_indices(self, job_name: Any) -> list[int]:
        """The sorted task indices of `job_name` (ValueError for an unknown job)."""
        return sorted(self._job(job_name))

    def task_address(self, job_name: Any, task_index: int) -> _Address:
        """The address of task `task_index` of `job_name` (ValueError for an unknown job or task)."""
        job = self._job(job_name)
        try:
            return job[task_index]
        except KeyError:
            raise ValueError(f"No task with index {task_index!r} in job {job_name!r}") from None

    def job_tasks(self, job_name: Any) -> list[Any]:
        """The addresses of `job_name`'s tasks as a list indexed by task index; for a sparse job
        the missing indices hold None (TF keeps this list form for compatibility)."""
        job = self._job(job_name)
        if not job:
            # TF's max() over no tasks raises ValueError too; say what it means.
            raise ValueError(f"Job {job_name!r} has no tasks")
        addresses: list[Any] = [None] * (max(job) + 1)
        for index, address in job.items():
            addresses[index] = address
        return addresses
