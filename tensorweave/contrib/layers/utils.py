"""Helpers the contrib layers share: output aliases and collections, per-variable collections,
and choosing a branch statically when the predicate is known at graph construction."""
from __future__ import annotations

import weakref
from typing import Any, Callable, Optional

from tensorweave.framework import graph as _graph
from tensorweave.framework.tensor_util import get_static_value
from tensorweave.ops.control_flow.cond import cond

__all__ = ["collect_named_outputs", "append_tensor_alias", "get_tensor_aliases", "gather_tensors_aliases",
           "get_variable_collections", "smart_cond", "constant_value"]

# TF sets `tensor.aliases`; our Tensor has __slots__, so the aliases live beside it, keyed weakly.
_ALIASES: "weakref.WeakKeyDictionary[Any, list[str]]" = weakref.WeakKeyDictionary()


def append_tensor_alias(tensor: Any, alias: str) -> Any:
    """Adds `alias` (without a trailing '/') to the aliases of `tensor`."""
    alias = alias[:-1] if alias.endswith("/") else alias
    _ALIASES.setdefault(tensor, []).append(alias)
    return tensor


def get_tensor_aliases(tensor: Any) -> list[str]:
    """The aliases given to `tensor` by collect_named_outputs, else its name without ':0'."""
    if tensor in _ALIASES:
        return list(_ALIASES[tensor])
    return [tensor.name[:-2]] if tensor.name.endswith(":0") else [tensor.name]


def gather_tensors_aliases(tensors: Any) -> list[str]:
    return [alias for t in tensors for alias in get_tensor_aliases(t)]


def collect_named_outputs(collections: Any, alias: str, outputs: Any) -> Any:
    """Tags `outputs` with `alias` and adds it to `collections` (a name or a list; None skips)."""
    if collections:
        append_tensor_alias(outputs, alias)
        _graph.add_to_collections(collections, outputs)
    return outputs


def get_variable_collections(variables_collections: Any, name: str) -> Optional[list[str]]:
    """The collections for the variable `name`: a list for every variable, or a dict by name."""
    if isinstance(variables_collections, dict):
        return variables_collections.get(name)
    return variables_collections


def constant_value(pred: Any) -> Optional[bool]:
    """A Python bool for a bool or a constant predicate tensor, else None."""
    if isinstance(pred, bool):
        return pred
    if pred is None:
        return None
    value = get_static_value(pred)
    return None if value is None else bool(value)


def smart_cond(pred: Any, true_fn: Callable, false_fn: Callable) -> Any:
    """true_fn() or false_fn() when `pred` is known now, else tf.cond."""
    value = constant_value(pred)
    if value is None:
        return cond(pred, true_fn, false_fn)
    return true_fn() if value else false_fn()
