"""The graph's scope stacks, each a small class of its own so `Graph` stays small:
name scopes and unique names, control dependencies, device functions and colocation."""
from __future__ import annotations

import contextlib
import re
from typing import Any, Iterator, Optional

from tensorweave.framework import device_spec

_VALID_OP_NAME = re.compile(r"^[A-Za-z0-9.][A-Za-z0-9_.\-/>]*$")
_VALID_SCOPE_NAME = re.compile(r"^[A-Za-z0-9_.\-/>]*$")


class NameScopeStack:
    """Current name scope plus TF's name uniquification (`add`, `add_1`, `add_2`, ...)."""

    def __init__(self) -> None:
        self.current = ""
        self._names_in_use: dict[str, int] = {}

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        if self.current:
            name = f"{self.current}/{name}"
        key = name.lower()
        i = self._names_in_use.get(key, 0)
        if mark_as_used:
            self._names_in_use[key] = i + 1
        if i > 0:
            base = key
            while key in self._names_in_use:
                key = f"{base}_{i}"
                i += 1
            if mark_as_used:
                self._names_in_use[key] = 1
            name = f"{name}_{i - 1}"
        return name

    def mark_used(self, name: str) -> None:
        self._names_in_use.setdefault(name.lower(), 1)

    @contextlib.contextmanager
    def scope(self, name: Optional[str]) -> Iterator[str]:
        old = self.current
        if not name:
            new = ""
        elif name.endswith("/"):
            new = name[:-1]
            if new and not _VALID_SCOPE_NAME.match(new):
                raise ValueError(f"'{name}' is not a valid scope name")
        else:
            if not _VALID_SCOPE_NAME.match(name):
                raise ValueError(f"'{name}' is not a valid scope name")
            new = self.unique_name(name)
        self.current = new
        try:
            yield f"{new}/" if new else ""
        finally:
            self.current = old


_VALID_INTERNAL_NAME = re.compile(r"^[A-Za-z0-9._][A-Za-z0-9_.\-/>]*$")


def check_op_name(name: str, internal: bool = False) -> None:
    if not (_VALID_INTERNAL_NAME if internal else _VALID_OP_NAME).match(name):
        raise ValueError(f"'{name}' is not a valid node name")


class ControlDependencyStack:
    """`with g.control_dependencies([...])`: ops created inside run after the given ops.
    `None` clears the outer dependencies for its block, as in TF. As in TF, a block's controls
    are not added to an op that already consumes an op created inside the same block: that
    input already runs after them, so the extra edges would be redundant."""

    def __init__(self) -> None:
        # (control ops, clears outer blocks, ops created inside this block)
        self._stack: list[tuple[list[Any], bool, set[Any]]] = []

    @contextlib.contextmanager
    def push(self, control_ops: Optional[list[Any]]) -> Iterator[None]:
        self._stack.append(([], True, set()) if control_ops is None else (control_ops, False, set()))
        try:
            yield
        finally:
            self._stack.pop()

    def current(self, input_ops: Any = ()) -> list[Any]:
        """The control inputs for a new op whose data inputs come from `input_ops`."""
        result: list[Any] = []
        for ops, clears, seen in self._stack:
            if clears:
                result = []
            elif not any(op in seen for op in input_ops):
                result.extend(o for o in ops if o not in result)
        return result

    def __bool__(self) -> bool:
        return bool(self._stack)

    def record(self, op: Any) -> None:
        """Notes that `op` was created inside every open block."""
        for _, _, seen in self._stack:
            seen.add(op)


class DeviceStack:
    """`tf.device(...)` scopes, applied as TensorFlow does: innermost first. A string or
    DeviceSpec fills in only the fields the op's device does not set yet (so inner fields win);
    a device function receives the op (with the device chosen so far) and its result replaces
    that device; `tf.device(None)` stops the outer scopes from applying."""

    def __init__(self) -> None:
        self._stack: list[Any] = []

    @contextlib.contextmanager
    def push(self, device_or_fn: Any) -> Iterator[None]:
        if device_or_fn is not None and not callable(device_or_fn):
            device_or_fn = device_spec.parse_device(device_or_fn)  # validates early, as TF does
        self._stack.append(device_or_fn)
        try:
            yield
        finally:
            self._stack.pop()

    @contextlib.contextmanager
    def suspended(self) -> Iterator[None]:
        """No device scope applies inside (`colocate_with` places ops by their colocation)."""
        saved, self._stack = self._stack, []
        try:
            yield
        finally:
            self._stack = saved

    def __bool__(self) -> bool:
        return bool(self._stack)

    def device_for(self, op: Any) -> str:
        current = op._device or ""
        for entry in reversed(self._stack):
            if entry is None:
                break
            if isinstance(entry, device_spec.DeviceSpec):
                if entry.to_string():
                    current = device_spec.merge_device(entry, current)
                continue
            op._device = current
            chosen = entry(op)
            if isinstance(chosen, device_spec.DeviceSpec):
                current = chosen.to_string()
            else:
                current = device_spec.canonical_name(chosen) if chosen else ""
        return current


class ColocationStack:
    """`tf.colocate_with(op)`: ops created inside get the `_class` attr listing the
    colocation groups of every op on the stack, and the device of the innermost one that
    has a device."""

    def __init__(self) -> None:
        self._stack: list[Any] = []

    @contextlib.contextmanager
    def push(self, op: Any, ignore_existing: bool = False) -> Iterator[None]:
        saved = self._stack
        if ignore_existing:
            self._stack = []
        if op is not None:
            self._stack = self._stack + [op]
        try:
            yield
        finally:
            self._stack = saved

    def current(self) -> Optional[Any]:
        return self._stack[-1] if self._stack else None

    def __bool__(self) -> bool:
        return bool(self._stack)

    def groups(self) -> list[str]:
        found: set[str] = set()
        for op in self._stack:
            found.update(op._colocation_groups())
        return sorted(found)

    def device(self) -> str:
        for op in reversed(self._stack):
            if op.device:
                return op.device
        return ""
