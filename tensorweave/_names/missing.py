"""The module `__getattr__` of the public namespaces: asking for a name TensorFlow 1.x has but
tensorweave does not provide raises an AttributeError that says so, instead of looking like a typo.
The names come from tf1_names.py (TF 2.15.1's tf.compat.v1, written by
tests/data/make_tf215_names.py); they are split into sets on the first miss only."""
from __future__ import annotations

from typing import Any, Callable

from tensorweave._names import tf1_names

_sets: dict[str, frozenset[str]] = {}


def tf_names(namespace: str) -> frozenset[str]:
    """TF 1.x's public names in `namespace` ("" for the top level, "nn", "io.gfile" ...)."""
    names = _sets.get(namespace)
    if names is None:
        names = _sets[namespace] = frozenset(tf1_names.NAMES.get(namespace, "").split())
    return names


def module_getattr(namespace: str, module_name: str) -> Callable[[str], Any]:
    """The `__getattr__` for the module `module_name` that stands for TF's `namespace`."""
    shown = "tf." + namespace if namespace else "tf"

    def __getattr__(name: str) -> Any:
        if not name.startswith("_") and name in tf_names(namespace):
            raise AttributeError(f"{shown}.{name} is not provided by tensorweave (it is a TensorFlow 1.x "
                                 f"name that tensorweave does not implement)", name=name)
        raise AttributeError(f"module '{module_name}' has no attribute '{name}'", name=name)

    return __getattr__
