"""Per-device resource manager with named containers (white paper 4.7).

Stateful kernels (variables, queues, readers) keep their state here, keyed by
(container, name). Each device of a session has its own manager, dropped when the session
closes: as TF's DirectSession owns its devices, a resource with a `shared_name` is shared by
the graphs and steps of one session, never by two local sessions (sharing across sessions is
what servers are for). `Session.reset` closes the local sessions, which drops their state.
"""
from __future__ import annotations

import itertools
import threading
from typing import Any, Callable, Optional, Sequence

DEFAULT_CONTAINER = "localhost"


class ResourceManager:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._containers: dict[str, dict[str, Any]] = {}
        self._ids = itertools.count()

    def generate_unique_id(self) -> int:
        """A number unique within this manager: an unshared queue is named `_<id>_<node>`
        (TF's naming, which its error messages show)."""
        return next(self._ids)

    def lookup_or_create(self, container: str, name: str, creator: Callable[[], Any]) -> Any:
        container = container or DEFAULT_CONTAINER
        with self._lock:
            entries = self._containers.setdefault(container, {})
            resource = entries.get(name)
            if resource is None:
                resource = entries[name] = creator()
            return resource

    def lookup(self, container: str, name: str) -> Optional[Any]:
        with self._lock:
            return self._containers.get(container or DEFAULT_CONTAINER, {}).get(name)

    def delete(self, container: str, name: str) -> bool:
        with self._lock:
            return self._containers.get(container or DEFAULT_CONTAINER, {}).pop(name, None) is not None

    def cleanup(self, containers: Optional[Sequence[str]] = None) -> None:
        """Drops the named containers (all of them when `containers` is None)."""
        with self._lock:
            doomed = list(self._containers) if containers is None else [c or DEFAULT_CONTAINER
                                                                        for c in containers]
            for name in doomed:
                entries = self._containers.pop(name, None)
                for resource in (entries or {}).values():
                    close = getattr(resource, "close_resource", None)
                    if close is not None:
                        close()

    def containers(self) -> list[str]:
        with self._lock:
            return list(self._containers)
