"""`tf.distribute.cluster_resolver.SlurmClusterResolver`: the cluster of a Slurm job step, read
from the SLURM_* environment variables Slurm sets in every task of the step:

- SLURM_PROCID: this task's rank in the step;
- SLURM_STEP_NUM_TASKS: how many tasks (the default jobs are that many "worker"s);
- SLURM_STEP_NODELIST: the step's hosts, in Slurm's compressed form ("node[01-03],gpu5");
- SLURM_STEP_TASKS_PER_NODE: tasks on each of those hosts, compressed ("2(x3),1").

Hosts are taken in sorted order and their tasks get ports port_base, port_base+1, ...; ranks are
then cut into the jobs in sorted job-name order, which tells this task its type and index."""
from __future__ import annotations

import os
import re
from typing import Any, Iterator, Optional, Union

from tensorweave.distributed.cluster_resolver.cluster_resolver import ClusterResolver, format_master_url
from tensorweave.distributed.cluster_spec import ClusterSpec

_HOST_PART = re.compile(r"([^,[\]]*)(\[([^\]]+)\])?$")
_TASKS_PART = re.compile(r"(\d+)(\(x(\d+)\))?$")


def _split_hostlist(hostlist: str) -> Iterator[str]:
    """The comma-separated parts of a hostlist, leaving commas inside [...] alone."""
    part, in_brackets = "", False
    for char in hostlist:
        if in_brackets:
            if char == "[":
                raise ValueError("nested '['")
            in_brackets = char != "]"
        elif char == "[":
            in_brackets = True
        elif char == ",":
            if not part:
                raise ValueError("empty host name")
            yield part
            part = ""
            continue
        part += char
    if part:
        yield part


def _expand_ranges(ranges: str) -> Iterator[str]:
    """'3-5,7' -> '3', '4', '5', '7', zero-padded to the width of each range's first number."""
    for item in ranges.split(","):
        bounds = item.split("-")
        if len(bounds) == 1:
            bounds *= 2
        elif len(bounds) != 2:
            raise ValueError(f"bad range {item!r}")
        width = len(bounds[0])
        for number in range(int(bounds[0]), int(bounds[1]) + 1):
            yield str(number).zfill(width)


def expand_hostlist(hostlist: str) -> list[str]:
    """The hosts of a Slurm hostlist, in order and not deduplicated:
    'n[1-2],m5,o[3-4,6]' -> ['n1', 'n2', 'm5', 'o3', 'o4', 'o6']."""
    hosts: list[str] = []
    try:
        for part in _split_hostlist(hostlist):
            match = _HOST_PART.match(part)
            if match is None:
                raise ValueError(f"Invalid part: {part}")
            prefix = match.group(1) or ""
            if match.group(3) is None:
                hosts.append(prefix)
            else:
                hosts.extend(prefix + number for number in _expand_ranges(match.group(3)))
    except ValueError as e:
        raise ValueError(f'Invalid hostlist format "{hostlist}": {e}') from None
    return hosts


def expand_tasks_per_node(tasks_per_node: str) -> list[int]:
    """Slurm's tasks-per-node list, in host order: '3(x2),2,1' -> [3, 3, 2, 1]."""
    counts: list[int] = []
    for part in tasks_per_node.split(","):
        match = _TASKS_PART.match(part)
        if match is None:
            raise ValueError(f'Invalid tasks-per-node list format "{tasks_per_node}": bad part {part!r}')
        counts.extend([int(match.group(1))] * int(match.group(3) or 1))
    return counts


def _slurm_var(name: str) -> str:
    name = "SLURM_" + name
    try:
        return os.environ[name]
    except KeyError:
        raise RuntimeError(f"{name} not found in environment. Not running inside a SLURM step?") from None


class SlurmClusterResolver(ClusterResolver):
    """The cluster of the current Slurm job step. `jobs` maps job names to task counts (default:
    every task a "worker"); `tasks_per_node` is a count for every host or {host: count} (default:
    from Slurm). GPUs: TF asks nvidia-smi for `gpus_per_node`; tensorweave runs on CPUs, so the
    default is 0, and with no GPU per task no CUDA_VISIBLE_DEVICES is set."""

    def __init__(self, jobs: Optional[dict[str, int]] = None, port_base: int = 8888,
                 gpus_per_node: Optional[int] = None, gpus_per_task: Optional[int] = None,
                 tasks_per_node: Union[None, int, dict[str, int]] = None, auto_set_gpu: bool = True,
                 rpc_layer: Optional[str] = "grpc") -> None:
        self._rank = int(_slurm_var("PROCID"))
        self._jobs = {"worker": int(_slurm_var("STEP_NUM_TASKS"))} if jobs is None else jobs
        self._port_base = port_base
        if tasks_per_node is None:
            counts = expand_tasks_per_node(_slurm_var("STEP_TASKS_PER_NODE"))
            self._task_configuration = dict(zip(self._hostlist(), counts))
        elif isinstance(tasks_per_node, dict):
            self._task_configuration = tasks_per_node
        else:
            self._task_configuration = {host: int(tasks_per_node) for host in self._hostlist()}
        max_tasks_per_node = max(self._task_configuration.values())
        num_tasks = sum(self._task_configuration.values())
        self._gpus_per_node = 0 if gpus_per_node is None else gpus_per_node
        self._gpus_per_task = (self._gpus_per_node // max_tasks_per_node if gpus_per_task is None
                               else gpus_per_task)
        self._auto_set_gpu = auto_set_gpu
        self.task_type: Optional[str] = None
        self.task_id: Optional[int] = None
        self.rpc_layer = rpc_layer
        self._gpu_allocation: list[str] = []
        self._cluster_allocation: dict[str, list[str]] = {}
        if max_tasks_per_node * self._gpus_per_task > self._gpus_per_node:
            raise RuntimeError("Requested more GPUs per node than available.")
        if sum(self._jobs.values()) != num_tasks:
            raise RuntimeError(f"Requested {sum(self._jobs.values())} tasks but only {num_tasks} were assigned.")

    @staticmethod
    def _hostlist() -> list[str]:
        return expand_hostlist(_slurm_var("STEP_NODELIST"))

    def cluster_spec(self) -> ClusterSpec:
        """The cluster, rebuilt from the configuration at each call; sets this task's type and
        index, and (auto_set_gpu, with GPUs per task) CUDA_VISIBLE_DEVICES to its GPUs."""
        addresses: list[str] = []
        self._gpu_allocation = []
        per_task = self._gpus_per_task
        for host, num_tasks in sorted(self._task_configuration.items()):
            # A host holds at most as many tasks as its GPUs can serve (TF's pairing of ports with
            # GPU offsets); with no GPUs per task every task is placed, holding none.
            slots = min(num_tasks, len(range(0, self._gpus_per_node, per_task))) if per_task else num_tasks
            for offset in range(slots):
                addresses.append(f"{host}:{self._port_base + offset}")
                first = offset * per_task
                self._gpu_allocation.append(",".join(str(gpu) for gpu in range(first, first + per_task)))
        self._cluster_allocation = {}
        start = 0
        for task_type, num_tasks in sorted(self._jobs.items()):
            end = start + num_tasks
            self._cluster_allocation[task_type] = addresses[start:end]
            if start <= self._rank < end:
                self.task_type, self.task_id = task_type, self._rank - start
            start = end
        if self._auto_set_gpu and per_task:
            os.environ["CUDA_VISIBLE_DEVICES"] = self._gpu_allocation[self._rank]
        return ClusterSpec(self._cluster_allocation)

    def get_task_info(self) -> tuple[Optional[str], Optional[int]]:
        """(task type, task index) of this process, known once cluster_spec() has run."""
        return self.task_type, self.task_id

    def master(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
               rpc_layer: Optional[str] = None) -> str:
        """The address of the given (default: this) task with the RPC layer, or "" when unknown."""
        task_type = self.task_type if task_type is None else task_type
        task_id = self.task_id if task_id is None else task_id
        if task_type is None or task_id is None:
            return ""
        return format_master_url(self.cluster_spec().task_address(task_type, task_id),
                                 rpc_layer or self.rpc_layer)

    def num_accelerators(self, task_type: Optional[str] = None, task_id: Optional[int] = None,
                         config_proto: Any = None) -> dict[str, int]:
        """{"GPU": GPUs per task}, as TF's."""
        del task_type, task_id, config_proto
        return {"GPU": self._gpus_per_task}
