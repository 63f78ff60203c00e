"""`tf.CriticalSection`: `execute(fn)` builds fn's ops after a MutexLock, so they run with the
mutex held, and releases it once fn's outputs are computed: a read-modify-write inside it is
atomic across concurrent steps."""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.array.shaping import identity
from tensorweave.framework import nest
from tensorweave.ops import control_flow
from tensorweave.ops.control_flow import grouping
from tensorweave.ops.state.mutex import MutexV2, consume_mutex_lock, mutex_lock

__all__ = ["CriticalSection"]

CRITICAL_SECTIONS = "critical_sections"
CRITICAL_SECTION_EXECUTIONS = "critical_section_executions"


def _identity(x: Any) -> Any:
    if isinstance(x, Operation):
        return grouping.group(x)
    if hasattr(x, "identity") and not isinstance(x, Tensor):  # a TensorArray
        return x.identity()
    return identity(x)


class CriticalSection:
    """Critical section: `execute(fn)` runs the ops fn builds with exclusive access to a
    mutex, so concurrent steps executing in the same critical section never overlap."""

    def __init__(self, name: Optional[str] = None, shared_name: Optional[str] = None,
                 critical_section_def: Any = None, import_scope: Optional[str] = None) -> None:
        if critical_section_def is not None:
            raise ValueError("Restoring a CriticalSection from a CriticalSectionDef is not supported; "
                             "build it with name/shared_name")
        with _graph.name_scope(name, "CriticalSection", []) as scope:
            shared_name = scope if shared_name is None else shared_name  # TF's default
            self._handle = apply_op(MutexV2, name=scope, shared_name=shared_name)
        self._signature = (self._handle.op._get_attr("container"), shared_name, None)
        _graph.add_to_collections(CRITICAL_SECTIONS, self)

    @property
    def name(self) -> str:
        return self._handle.op.name

    def execute(self, fn: Callable[[], Any], exclusive_resource_access: bool = True,
                name: Optional[str] = None) -> Any:
        """Builds `fn()` so that it runs while holding this critical section's mutex; returns
        fn's outputs (same structure), available once the mutex is released again.

        Raises ValueError if fn itself executes in this critical section (a deadlock), or if
        another execution with exclusive access touches the same resources."""
        graph = _graph.get_default_graph()
        with _graph.name_scope(name, "critical_section_execute", []):
            lock = mutex_lock(self._handle)
            with graph._lock:  # no ops from other threads among fn's
                before = len(graph.get_operations())
                with _graph.control_dependencies([lock]):
                    result = fn()
                created = graph.get_operations()[before:]
            self._order_after_arguments(created, lock.op)
            resources = self._captured_resources(created)
            if any(r.op is self._handle.op for r in resources):
                raise ValueError(f"Attempting to lock a CriticalSection (signature={self._signature}) in "
                                 "which we are already running. This is illegal and may cause deadlocks.")
            self._check_exclusive_access(graph, resources, exclusive_resource_access)
            flat = [_identity(x) for x in nest.flatten(result)]
            with _graph.control_dependencies(flat):
                with _graph.colocate_with(self._handle):
                    released = consume_mutex_lock(lock)
                tensors = [x for x in flat if isinstance(x, Tensor)]
                grouped = iter(control_flow.tuple(tensors)) if tensors else iter(())
                flat = [next(grouped) if isinstance(x, Tensor) else x for x in flat]
            with _graph.control_dependencies([released]):
                outputs = [_identity(x) for x in flat]
            graph.add_to_collection(CRITICAL_SECTION_EXECUTIONS, _Execution(
                lock.op, self._handle, resources, exclusive_resource_access))
            return nest.pack_sequence_as(result, outputs)

    @staticmethod
    def _order_after_arguments(created: list, lock_op: Operation) -> None:
        """The mutex is taken only once fn's outside inputs are ready: waiting for them while
        holding it could deadlock against a step that produces them."""
        inside = {id(op) for op in created} | {id(lock_op)}
        inside |= {id(t.op) for t in lock_op.inputs} | {id(op) for op in lock_op.control_inputs}
        args: dict[int, Operation] = {}
        for op in created:
            for t in op.inputs:
                if id(t.op) not in inside:
                    args[id(t.op)] = t.op
            for c in op.control_inputs:
                if id(c) not in inside:
                    args[id(c)] = c
        if args:
            lock_op._add_control_input(grouping.group(*args.values()))

    @staticmethod
    def _captured_resources(created: list) -> list:
        seen: dict[int, Tensor] = {}
        for op in created:
            for t in op.inputs:
                if t.dtype.base_dtype == _dtypes.resource:
                    seen.setdefault(id(t), t)
        return list(seen.values())

    def _check_exclusive_access(self, graph: Any, resources: list, exclusive: bool) -> None:
        ours = {id(r) for r in resources}
        for other in graph.get_collection(CRITICAL_SECTION_EXECUTIONS):
            if other.handle is self._handle or not (exclusive or other.exclusive_resource_access):
                continue
            shared = [r for r in other.resources if id(r) in ours]
            if shared:
                raise ValueError(
                    f"This execution would access resources: {[r.name for r in shared]}. Either this "
                    f"lock (CriticalSection: {self._handle.name}) or lock (CriticalSection: "
                    f"{other.handle.name}) requested exclusive resource access of this resource. Did you "
                    "mean to call execute with keyword argument exclusive_resource_access=False?")


class _Execution:
    """One `execute` call, recorded in the graph to check exclusive resource access."""

    def __init__(self, op: Operation, handle: Tensor, resources: list, exclusive: bool) -> None:
        self.op = op
        self.handle = handle
        self.resources = resources
        self.exclusive_resource_access = exclusive
