"""Mutexes (white paper Table 1, "Synchronization"): MutexV2, MutexLock, ConsumeMutexLock.

MutexV2 yields a handle to a mutex kept in its device's resource manager. MutexLock is an
asynchronous kernel (white paper 5.3): a step that finds the mutex held leaves its continuation
in the mutex's waiting list and holds no thread; waiters get the mutex in arrival order. The
lock is a `variant` value; the mutex is released when ConsumeMutexLock consumes that value, or
when the step is cancelled or fails before it does (or, failing all else, when the value is
dropped), so an aborted step never leaves the mutex held.

`tf.CriticalSection` (state/critical_section.py) is built on these ops.
"""
from __future__ import annotations

import collections
import threading
import weakref
from typing import Any, Callable, Optional

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util
from tensorweave.ops.kernels.resource_handles import resource_handle_kernel, resource_of


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
def _mutex_kernel(ctx: KernelContext) -> Callable[[], Any]:
    return resource_handle_kernel(ctx, MutexResource, _verify_mutex, use_node_name=True)


@MutexLock.kernel()
def _mutex_lock_kernel(ctx: KernelContext) -> Callable[..., None]:
    def lock(step: Any, done: Callable[[Any], None], handle: Any) -> None:
        resource_of(handle).acquire(step, done)
    return lock


@ConsumeMutexLock.kernel()
def _consume_kernel(ctx: KernelContext) -> Callable[[Any], None]:
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
