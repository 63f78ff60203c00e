"""Flattening and re-packing nested structures (lists, tuples, namedtuples, dicts) of tensors:
cond and while_loop outputs, loop variables, RNN states, print arguments (TF's util.nest)."""
from __future__ import annotations

from typing import Any, Iterator


def is_sequence(x: Any) -> bool:
    return isinstance(x, (list, tuple, dict))


def flatten(structure: Any) -> list[Any]:
    if isinstance(structure, dict):
        return [leaf for key in sorted(structure) for leaf in flatten(structure[key])]
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in flatten(item)]
    return [structure]


def pack_sequence_as(structure: Any, flat: list[Any]) -> Any:
    leaves = iter(flat)
    result = _pack(structure, leaves)
    if next(leaves, _END) is not _END:
        raise ValueError("Structure had fewer elements than the flat sequence")
    return result


_END = object()


def _pack(structure: Any, leaves: Iterator[Any]) -> Any:
    if isinstance(structure, dict):
        packed = {key: _pack(structure[key], leaves) for key in sorted(structure)}
        return type(structure)((key, packed[key]) for key in structure)
    if isinstance(structure, tuple) and hasattr(structure, "_fields"):
        return type(structure)(*[_pack(item, leaves) for item in structure])
    if isinstance(structure, (list, tuple)):
        return type(structure)(_pack(item, leaves) for item in structure)
    try:
        return next(leaves)
    except StopIteration:
        raise ValueError("Structure had more elements than the flat sequence") from None


def assert_same_structure(a: Any, b: Any) -> None:
    if is_sequence(a) != is_sequence(b):
        raise ValueError(f"The two structures don't have the same nested structure: {a!r} vs {b!r}")
    if isinstance(a, dict):
        if sorted(a) != sorted(b):
            raise ValueError(f"The two dictionaries don't have the same keys: {sorted(a)} vs {sorted(b)}")
        for key in a:
            assert_same_structure(a[key], b[key])
    elif is_sequence(a):
        if len(a) != len(b):
            raise ValueError(f"The two structures don't have the same number of elements: {len(a)} vs {len(b)}")
        for x, y in zip(a, b):
            assert_same_structure(x, y)
