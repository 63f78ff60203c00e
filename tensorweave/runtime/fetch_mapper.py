"""Fetch structures for `Session.run`: nested lists, tuples, dicts and namedtuples of Tensors,
Operations, 'name:port' strings and graph-element-like objects, flattened to unique tensors
and target ops, and rebuilt around the fetched values."""
from __future__ import annotations

from typing import Any, Callable

from tensorweave.framework import errors
from tensorweave.framework.graph import Graph, Operation, Tensor
from tensorweave.framework.indexed_slices import IndexedSlices, _fetch_indexed_slices
from tensorweave.framework.sparse_tensor import SparseTensor, feed_sparse_tensor, fetch_sparse_tensor


class FetchHandler:
    def __init__(self, graph: Graph, fetches: Any) -> None:
        self.tensors: list[Tensor] = []
        self.targets: list[Operation] = []
        self._tensor_index: dict[Tensor, int] = {}
        self._build: Callable[[list[Any]], Any] = self._compile(graph, fetches)

    def _element(self, graph: Graph, fetch: Any) -> Callable[[list[Any]], Any]:
        try:
            element = graph.as_graph_element(fetch, allow_tensor=True, allow_operation=True)
        except TypeError as err:
            raise TypeError(f"Fetch argument {fetch!r} has invalid type {type(fetch)}, must be a string "
                            f"or Tensor. ({err})") from None
        except (ValueError, KeyError) as err:
            raise ValueError(f"Fetch argument {fetch!r} cannot be interpreted as a Tensor. ({err})") from None
        if not graph.is_fetchable(element):
            op = element if isinstance(element, Operation) else element.op
            raise errors.InaccessibleTensorError(
                f"Operation {op.name} has been marked as not fetchable. Typically this happens when it is "
                "defined in another function or code block. Use return values, explicit Python locals or "
                "TensorFlow collections to access it.")
        if isinstance(element, Operation):
            if element not in self.targets:
                self.targets.append(element)
            return lambda values: None
        index = self._tensor_index.get(element)
        if index is None:
            index = self._tensor_index[element] = len(self.tensors)
            self.tensors.append(element)
        return lambda values: values[index]

    def _compile(self, graph: Graph, fetch: Any) -> Callable[[list[Any]], Any]:
        if fetch is None:
            raise TypeError('Argument `fetch` = None has invalid type "NoneType". Cannot be None')
        if isinstance(fetch, (list, tuple)) and not isinstance(fetch, str):
            parts = [self._compile(graph, f) for f in fetch]
            if isinstance(fetch, tuple) and hasattr(fetch, "_fields"):  # namedtuple
                cls = type(fetch)
                return lambda values: cls(*[p(values) for p in parts])
            if isinstance(fetch, tuple):
                return lambda values: tuple(p(values) for p in parts)
            return lambda values: [p(values) for p in parts]
        if isinstance(fetch, dict):
            keys = list(fetch)
            parts = [self._compile(graph, fetch[k]) for k in keys]
            mapping = type(fetch)
            return lambda values: mapping((k, p(values)) for k, p in zip(keys, parts))
        fetch_fn = _FETCH_FUNCTIONS.get(type(fetch))
        if fetch_fn is not None:
            components, rebuild = fetch_fn(fetch)
            parts = [self._element(graph, c) for c in components]
            return lambda values: rebuild([p(values) for p in parts])
        return self._element(graph, fetch)

    def build_results(self, values: list[Any]) -> Any:
        return self._build(values)


# type -> fn(fetch) -> (component tensors, rebuild(values)): how composite fetches such as
# SparseTensor or IndexedSlices come back as their value types.
_FETCH_FUNCTIONS: dict[type, Callable[[Any], tuple[list[Any], Callable[[list[Any]], Any]]]] = {}


def register_fetch_function(cls: type, fn: Callable[[Any], tuple[list[Any], Callable[[list[Any]], Any]]]) -> None:
    _FETCH_FUNCTIONS[cls] = fn


def structure_key(fetches: Any) -> Any:
    """A hashable key for a fetch structure (same structure of the same elements -> same key)."""
    t = type(fetches)
    if t is list or t is tuple or (isinstance(fetches, tuple) and hasattr(fetches, "_fields")):
        return (t,) + tuple(structure_key(f) for f in fetches)
    if isinstance(fetches, dict):
        return (t,) + tuple((k, structure_key(v)) for k, v in fetches.items())
    return fetches


# type -> fn(key) -> (component tensors, split(value) -> their values): feeds for composite
# keys such as a SparseTensor fed with a SparseTensorValue.
_FEED_FUNCTIONS: dict[type, Callable[[Any], tuple[list[Any], Callable[[Any], Any]]]] = {}


def register_feed_function(cls: type, fn: Callable[[Any], tuple[list[Any], Callable[[Any], Any]]]) -> None:
    _FEED_FUNCTIONS[cls] = fn


def feed_expander(feed_keys: Any) -> Any:
    """None when no key is composite (the common case costs nothing per step); else
    (flat keys, fn(values) -> flat values) splitting each composite feed into its parts."""
    if not any(type(k) in _FEED_FUNCTIONS for k in feed_keys):
        return None
    flat_keys: list[Any] = []
    splitters: list[Any] = []
    for key in feed_keys:
        fn = _FEED_FUNCTIONS.get(type(key))
        components, split = ([key], None) if fn is None else fn(key)
        flat_keys.extend(components)
        splitters.append(split)

    def expand(values: Any) -> list[Any]:
        flat: list[Any] = []
        for split, value in zip(splitters, values):
            if split is None:
                flat.append(value)
            else:
                flat.extend(split(value))
        return flat

    return flat_keys, expand


def _register_builtin_fetches() -> None:
    register_fetch_function(IndexedSlices, _fetch_indexed_slices)
    register_fetch_function(SparseTensor, fetch_sparse_tensor)
    register_feed_function(SparseTensor, feed_sparse_tensor)


_register_builtin_fetches()
