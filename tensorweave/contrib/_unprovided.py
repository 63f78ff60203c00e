"""The AttributeError for the parts of `tf.contrib` tensorweave does not provide."""
from __future__ import annotations

from typing import Callable


def unprovided_getattr(namespace: str) -> Callable[[str], object]:
    """A module-level __getattr__ that names the missing attribute and says tensorweave does
    not provide it (rather than Python's bare "has no attribute")."""
    def __getattr__(name: str) -> object:
        if name.startswith("__"):
            raise AttributeError(name)  # introspection (copy, pickle, pytest) asks for dunders
        raise AttributeError(f"{namespace}.{name} is not provided by tensorweave (only a subset of tf.contrib "
                             f"is: tf.contrib.layers, tf.contrib.framework, tf.contrib.rnn and parts of "
                             f"tf.contrib.training)")
    return __getattr__
