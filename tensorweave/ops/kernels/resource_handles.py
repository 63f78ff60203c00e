"""The kernel of a resource-creating op (queues, readers, mutexes): a handle to state kept in
the device's resource manager, created on first use under the op's `container`/`shared_name`
attrs, and `resource_of` to get the state back from a handle value."""
from __future__ import annotations

import threading
from typing import Any, Callable

import numpy as np

from tensorweave.framework.kernel_contract import KernelContext


def resource_of(handle: Any) -> Any:
    """The resource behind a handle value: handles travel as 0-d object arrays (so Pack and
    Gather can select among them, as `QueueBase.from_list` does), or bare after a Gather."""
    return handle[()] if type(handle) is np.ndarray else handle


def _as_handle(resource: Any) -> np.ndarray:
    handle = np.empty((), dtype=object)
    handle[()] = resource
    return handle


def resource_handle_kernel(ctx: KernelContext, create: Callable[[str], Any], verify: Callable[[Any], None],
                           use_node_name: bool = False) -> Callable[[], Any]:
    """The compute function of an op like FIFOQueueV2: returns a handle to the resource named
    by its `container`/`shared_name` attrs in the device's resource manager, creating it on
    first use (and again after its container is reset). Without a shared name the resource is
    private to the node: named after it (readers, mutexes) or `_<id>_<node>` (queues), as TF
    names them. `verify(existing)` rejects a shared resource of a different definition."""
    container, shared, node, rm = ctx.attr("container"), ctx.attr("shared_name"), ctx.node_name, \
        ctx.resource_mgr
    held: list = [None, shared, None]  # the resource, its name, its handle value
    lock = threading.Lock()

    def lookup() -> np.ndarray:
        with lock:  # two first steps at once must agree on one resource
            resource = held[0]
            if resource is None or resource.dropped:
                if not held[1]:
                    held[1] = node if use_node_name else f"_{rm.generate_unique_id()}_{node}"
                name = held[1]
                created: list = []

                def creator() -> Any:
                    created.append(create(name))
                    return created[0]

                resource = rm.lookup_or_create(container, name, creator)
                if not created:
                    verify(resource)
                held[0], held[2] = resource, _as_handle(resource)
            return held[2]

    def handle() -> np.ndarray:
        resource = held[0]
        if resource is None or resource.dropped:
            return lookup()
        return held[2]

    return handle
