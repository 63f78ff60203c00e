"""`tf.train.replica_device_setter`: the device function of between-graph replicated training.

Inside `with tf.device(replica_device_setter(...))` every op whose type is a parameter-server op
(variables and mutable tables by default) goes to a `ps` task chosen by a strategy (round robin
unless told otherwise), and every other op to the worker device. Devices already set on the op
by inner `tf.device` scopes win field by field (`merge_devices`), as in TensorFlow 1.x.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework.device_spec import parse_device

# The op types TensorFlow places on parameter servers by default (TF's STANDARD_PS_OPS, the list
# tf.estimator relies on): state that every worker shares.
STANDARD_PS_OPS = (
    "Variable", "VariableV2", "AutoReloadVariable", "MutableHashTable", "MutableHashTableV2",
    "MutableHashTableOfTensors", "MutableHashTableOfTensorsV2", "MutableDenseHashTable",
    "MutableDenseHashTableV2", "VarHandleOp", "BoostedTreesEnsembleResourceHandleOp",
    "BoostedTreesQuantileStreamResourceHandleOp", "ResourceConditionalAccumulator",
    "DecisionTreeResource")

_log = logging.getLogger("tensorflow")


class _RoundRobinStrategy:
    """Cycles through the ps task indices 0..num_tasks-1, one per placed op."""

    def __init__(self, num_tasks: int) -> None:
        self._num_tasks = num_tasks
        self._next_task = 0

    def __call__(self, unused_op: Any) -> int:
        task = self._next_task
        self._next_task = (task + 1) % self._num_tasks
        return task


class _ReplicaDeviceChooser:
    """Holds the setter's options; `device_function` is what `tf.device` calls for each op."""

    def __init__(self, ps_tasks: int, ps_device: Optional[str], worker_device: Optional[str],
                 merge_devices: bool, ps_ops: Sequence[str], ps_strategy: Callable[[Any], int]) -> None:
        self._ps_tasks = ps_tasks
        self._ps_device = ps_device
        self._worker_device = worker_device
        self._merge_devices = merge_devices
        self._ps_ops = frozenset(ps_ops)
        self._ps_strategy = ps_strategy
        # Parsed once: the setter runs for every op of the model.
        self._ps_spec = parse_device(ps_device or "")
        self._worker_spec = parse_device(worker_device or "")

    def device_function(self, op: Any) -> str:
        device = op.device
        if not self._merge_devices and device:
            return device  # an explicit device is kept as it is, unmerged
        current = parse_device(device or "")
        if self._ps_tasks and self._ps_device and _op_type(op) in self._ps_ops:
            ps = self._ps_spec
            # The strategy picks the task only when the op's own job (if any) is the ps job:
            # an op pinned to another job keeps that job and gets no ps task number.
            if ps.job and (not current.job or current.job == ps.job):
                ps = ps.replace(task=self._ps_strategy(op))
            return ps.make_merged_spec(current).to_string()
        return self._worker_spec.make_merged_spec(current).to_string()


def _op_type(op: Any) -> str:
    # An Operation, or a NodeDef-like object (TF's chooser accepts both).
    op_type = getattr(op, "type", None)
    return op_type if isinstance(op_type, str) else op.op


def _ps_task_count(cluster: Any, ps_job: Optional[str]) -> Optional[int]:
    """The number of tasks of the ps job in `cluster` (a dict of job name to task list or
    {index: address} dict, or a ClusterSpec), or None when the cluster has no such job."""
    if isinstance(cluster, Mapping):
        jobs: Any = cluster
    elif hasattr(cluster, "as_dict"):
        jobs = cluster.as_dict()
    else:
        raise TypeError(f"cluster must be a dictionary mapping one or more job names to lists of network "
                        f"addresses, or a ClusterSpec; got {cluster!r}")
    if ps_job is None or ps_job not in jobs or jobs[ps_job] is None:
        return None
    tasks = jobs[ps_job]
    if isinstance(tasks, (str, bytes)):
        raise TypeError(f"The tasks of job {ps_job!r} must be a list or a dict of addresses, got {tasks!r}")
    return len(tasks)


def replica_device_setter(ps_tasks: int = 0, ps_device: Optional[str] = "/job:ps",
                          worker_device: Optional[str] = "/job:worker", merge_devices: bool = True,
                          cluster: Any = None, ps_ops: Optional[Sequence[str]] = None,
                          ps_strategy: Optional[Callable[[Any], int]] = None) -> Optional[Callable[[Any], str]]:
    """A device function for `tf.device` placing the ops in `ps_ops` on the `ps_device` tasks
    (task chosen by `ps_strategy`, round robin by default) and the rest on `worker_device`.

    `cluster` (a ClusterSpec or a dict of job name to addresses) overrides `ps_tasks` with the
    size of the ps job; without a ps job, or with no ps tasks, the result is None (no-op in
    `tf.device`). With `merge_devices` (the default) fields an inner `tf.device` set on the op
    win over the setter's; without it, an op that already has a device keeps it unchanged.
    """
    if cluster is not None:
        count = _ps_task_count(cluster, parse_device(ps_device or "").job)
        if count is None:
            return None
        ps_tasks = count
    if ps_tasks == 0:
        return None
    if ps_ops is None:
        ps_ops = STANDARD_PS_OPS
    if not merge_devices:
        _log.warning("DEPRECATION: It is recommended to set merge_devices=true in replica_device_setter")
    if ps_strategy is None:
        ps_strategy = _RoundRobinStrategy(ps_tasks)
    if not callable(ps_strategy):
        raise TypeError("ps_strategy must be callable")
    return _ReplicaDeviceChooser(ps_tasks, ps_device, worker_device, merge_devices, ps_ops,
                                 ps_strategy).device_function

