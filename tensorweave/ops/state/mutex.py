"""Mutexes (white paper Table 1, "Synchronization") and `tf.CriticalSection`.

MutexV2 yields a handle to a mutex kept in its device's resource manager. MutexLock is an
asynchronous kernel (white paper 5.3): a step that finds the mutex held leaves its continuation
in the mutex's waiting list and holds no thread; waiters get the mutex in arrival order. The
lock is a `variant` value; the mutex is released when ConsumeMutexLock consumes that value, or
when the step is cancelled or fails before it does (or, failing all else, when the value is
dropped), so an aborted step never leaves the mutex held.

`CriticalSection.execute(fn)` builds fn's ops after a MutexLock, so they run with the mutex
held, and releases it once fn's outputs are computed: a read-modify-write inside it is atomic
across concurrent steps.
"""
from __future__ import annotations

import collections
import threading
import weakref
from typing import Any, Callable, Optional

from tensorweave.framework import errors
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util, array as array_ops
from tensorweave.ops.queues import queue_resource as qr
from tensorweave.framework import nest
from tensorweave.ops.control_flow import grouping

__all__ = ["CriticalSection"]

CRITICAL_SECTIONS = "critical_sections"
CRITICAL_SECTION_EXECUTIONS = "critical_section_executions"


class MutexResource:
    """A mutex: held or free, with the continuations of the steps waiting for it."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.dropped = False
        self._lock = threading.Lock()
        self._held = False
        self._waiters: "collections.deque[list]" = collections.deque()  # [done, step, alive]

    def acquire(self, step: Any, done: Callable[[Any], None]) -> None:
        """Calls `done(lock_value)` once the mutex is this step's (now, or later)."""
        with self._lock:
            granted = not self._held
            if granted:
                self._held = True
            else:
                waiter = [done, step, True]
                token = step.cancellation.register(lambda err: self._withdraw(waiter, err))
                if token is not None:
                    self._waiters.append(waiter)
        if granted:
            done(MutexLockValue(self, step))
        elif token is None:  # the step is already cancelled
            done(errors.CancelledError(None, None, "MutexLock was cancelled"))

    def _withdraw(self, waiter: list, error: BaseException) -> None:
        with self._lock:
            if not waiter[2]:
                return  # already granted
            waiter[2] = False
            self._waiters.remove(waiter)
        waiter[0](error)

    def release(self, value: "MutexLockValue") -> None:
        with self._lock:
            if value.released:
                return
            value.released = True
            nxt = None
            while self._waiters:
                candidate = self._waiters.popleft()
                if candidate[2]:
                    candidate[2] = False
                    nxt = candidate
                    break
            if nxt is None:
                self._held = False
        if nxt is not None:  # the mutex passes straight to the next waiter
            done, step = nxt[0], nxt[1]
            done(MutexLockValue(self, step))

    def close_resource(self) -> None:
        self.dropped = True


class MutexLockValue:
    """The value of a MutexLock: holding it means holding the mutex."""

    def __init__(self, mutex: MutexResource, step: Any) -> None:
        self.mutex = mutex
        self.released = False
        manager = step.cancellation
        # A step that fails or is cancelled before consuming the lock must still release it.
        # The callback holds the value weakly: a dropped value releases itself (__del__).
        ref = weakref.ref(self)
        self._token = manager.register(lambda err: _release_if_alive(ref))
        self._manager = manager
        if self._token is None:
            mutex.release(self)

    def consume(self) -> None:
        if self._token is not None:
            self._manager.deregister(self._token)
        self.mutex.release(self)

    def __del__(self) -> None:
        # TF releases the mutex when the lock tensor is destroyed; this covers a step that
        # computed the lock but was pruned of its ConsumeMutexLock, and a fetched lock.
        if not self.released:
            self.mutex.release(self)


def _release_if_alive(ref: "weakref.ref[MutexLockValue]") -> None:
    value = ref()
    if value is not None:
        value.mutex.release(value)


MutexV2 = define_op("MutexV2", outputs=["resource: resource"],
                    attrs=["container: string = ''", "shared_name: string = ''"],
                    shape_fn=_util.scalar, is_stateful=True)
MutexLock = define_op("MutexLock", inputs=["mutex: resource"], outputs=["mutex_lock: variant"],
                      shape_fn=_util.scalar, is_async=True, is_stateful=True)
ConsumeMutexLock = define_op("ConsumeMutexLock", inputs=["mutex_lock: variant"],
                             shape_fn=_util.no_outputs, is_stateful=True)
for _op in (MutexV2, MutexLock, ConsumeMutexLock):
    _op.not_differentiable()


def _verify_mutex(resource: Any) -> None:
    if not isinstance(resource, MutexResource):
        raise errors.InvalidArgumentError(
            None, None, f"Shared name refers to a {type(resource).__name__}, not a mutex")


@MutexV2.kernel()
def _mutex_kernel(ctx: Any) -> Callable[[], Any]:
    return qr.resource_handle_kernel(ctx, MutexResource, _verify_mutex, use_node_name=True)


@MutexLock.kernel()
def _mutex_lock_kernel(ctx: Any) -> Callable[..., None]:
    def lock(step: Any, done: Callable[[Any], None], handle: Any) -> None:
        qr.resource_of(handle).acquire(step, done)
    return lock


@ConsumeMutexLock.kernel()
def _consume_kernel(ctx: Any) -> Callable[[Any], None]:
    def consume(value: Any) -> None:
        if not isinstance(value, MutexLockValue):
            raise errors.InvalidArgumentError(None, None, "ConsumeMutexLock requires a MutexLock value, "
                                              f"got {type(value).__name__}")
        value.consume()
    return consume


def mutex_lock(mutex: Any, name: Optional[str] = None) -> Tensor:
    """Locks `mutex` for the step; the lock is held until the returned value is consumed."""
    return apply_op(MutexLock, name=name, mutex=mutex)


def consume_mutex_lock(lock: Any, name: Optional[str] = None) -> Operation:
    """Releases the mutex held through `lock` (the output of `mutex_lock`)."""
    return apply_op(ConsumeMutexLock, name=name, mutex_lock=lock)


# ---------------------------------------------------------------------------------------------
# CriticalSection
# ---------------------------------------------------------------------------------------------
def _identity(x: Any) -> Any:
    if isinstance(x, Operation):
        return grouping.group(x)
    if hasattr(x, "identity") and not isinstance(x, Tensor):  # a TensorArray
        return x.identity()
    return array_ops.identity(x)


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
        self._signature = (self._handle.op.get_attr("container"), shared_name, None)
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
                from tensorweave.ops import control_flow  # on use: the control_flow package imports state
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
