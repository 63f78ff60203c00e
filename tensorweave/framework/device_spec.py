"""Device names and partial device specifications (`tf.DeviceSpec`, white paper 3.2.1, 4.3).

A full name looks like `/job:worker/replica:0/task:1/device:CPU:0`; partial specs such as
`/device:CPU:*`, `/job:ps` or `/task:1` leave fields unset. Merging fills unset fields from
another spec (`make_merged_spec`: the argument's set fields win), which is how nested
`tf.device` scopes combine, and `is_compatible_with` is the placer's test of a concrete device
against a user's partial constraint.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional

# Device types spelled `/cpu:0` (legacy form) or `/device:cpu:0` are written upper case.
_KNOWN_DEVICE_TYPES = {"CPU", "GPU", "TPU"}


def register_known_device_type(device_type: str) -> None:
    """Lets the legacy `/<type>:<index>` form name a newly registered device type."""
    _KNOWN_DEVICE_TYPES.add(device_type.upper())


def _normalize_type(device_type: Optional[str]) -> Optional[str]:
    if device_type is None:
        return None
    upper = device_type.upper()
    return upper if upper in _KNOWN_DEVICE_TYPES else device_type


def _optional_int(value: Any, field: str, spec: Any) -> Optional[int]:
    if value is None or value == "*":
        return None
    try:
        return int(value)
    except (TypeError, ValueError):
        raise ValueError(f"Invalid {field} {value!r} while parsing the device spec: '{spec}'.") from None


@dataclasses.dataclass(frozen=True)
class DeviceSpec:
    """A (possibly partial) device specification. Frozen: methods that change a field return
    a new spec (TF2's DeviceSpec behaviour; TF1's in-place `merge_from` returns the result)."""

    job: Optional[str] = None
    replica: Optional[int] = None
    task: Optional[int] = None
    device_type: Optional[str] = None
    device_index: Optional[int] = None  # None: unset, written "*" after a device type

    def __post_init__(self) -> None:
        object.__setattr__(self, "replica", _optional_int(self.replica, "replica", self))
        object.__setattr__(self, "task", _optional_int(self.task, "task", self))
        object.__setattr__(self, "device_index", _optional_int(self.device_index, "device_index", self))
        object.__setattr__(self, "device_type", _normalize_type(self.device_type))

    @staticmethod
    def from_string(spec: str) -> "DeviceSpec":
        return parse_device(spec)

    def parse_from_string(self, spec: str) -> "DeviceSpec":
        """The fields of `spec` (a new object: specs are immutable)."""
        return parse_device(spec)

    def make_merged_spec(self, other: "DeviceSpec") -> "DeviceSpec":
        """A copy of this spec with the fields set in `other` overriding."""
        return DeviceSpec(*(b if b is not None else a for a, b in zip(self._fields(), other._fields())))

    def merge_from(self, other: "DeviceSpec") -> "DeviceSpec":
        return self.make_merged_spec(other)

    def replace(self, **kwargs: Any) -> "DeviceSpec":
        return dataclasses.replace(self, **kwargs)

    def _fields(self) -> tuple[Any, ...]:
        return (self.job, self.replica, self.task, self.device_type, self.device_index)

    def to_string(self) -> str:
        parts = []
        if self.job is not None:
            parts.append(f"/job:{self.job}")
        if self.replica is not None:
            parts.append(f"/replica:{self.replica}")
        if self.task is not None:
            parts.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else str(self.device_index)
            parts.append(f"/device:{self.device_type}:{index}")
        return "".join(parts)

    def is_compatible_with(self, other: "DeviceSpec") -> bool:
        """Whether no field set in both specs differs (a concrete device satisfies this
        partial constraint)."""
        for mine, theirs in zip(self._fields(), other._fields()):
            if mine is not None and theirs is not None and mine != theirs:
                return False
        return True

    @property
    def is_fully_specified(self) -> bool:
        return None not in self._fields()

    def __str__(self) -> str:
        return self.to_string()

    def __repr__(self) -> str:
        return (f"<DeviceSpec(job={self.job}, replica={self.replica}, task={self.task}, "
                f"device_type={self.device_type}, device_index={self.device_index})>")


def parse_device(spec: Any) -> DeviceSpec:
    """Parses TF device strings: `/job:j/replica:r/task:t/device:TYPE:i`, any subset of those
    fields, `*` for an unset index, and the legacy `/cpu:0`, `/gpu:1` forms."""
    if isinstance(spec, DeviceSpec):
        return spec
    if spec is None or spec == "":
        return DeviceSpec()
    if isinstance(spec, bytes):
        spec = spec.decode("utf-8")
    if not isinstance(spec, str):
        raise TypeError(f"Device specification must be a string or DeviceSpec, got {spec!r}")
    fields: dict[str, Any] = {}
    for part in spec.split("/"):
        if not part:
            continue
        pieces = part.split(":")
        key, n = pieces[0], len(pieces)
        if n == 2 and key in ("job", "replica", "task"):
            fields[key] = pieces[1] if key == "job" else _optional_int(pieces[1], key, spec)
        elif n == 3 and key == "device":
            _set_device(fields, pieces[1], pieces[2], spec)
        elif n in (1, 2) and key.upper() in _KNOWN_DEVICE_TYPES:
            _set_device(fields, key, pieces[1] if n == 2 else "*", spec)
        else:
            raise ValueError(f"Unknown attribute '{key}' is encountered while parsing the device "
                             f"spec: '{spec}'.")
    return DeviceSpec(**fields)


def _set_device(fields: dict[str, Any], device_type: str, index: str, spec: str) -> None:
    if "device_type" in fields:
        raise ValueError(f"Multiple device types are not allowed while parsing the device spec: {spec}.")
    fields["device_type"] = device_type
    fields["device_index"] = _optional_int(index, "device index", spec)


def canonical_name(spec: Any) -> str:
    return parse_device(spec).to_string()


def merge_device(outer: Any, inner: Any) -> str:
    """The device string for `inner` completed by `outer`: fields set in `inner` win."""
    return parse_device(outer).make_merged_spec(parse_device(inner)).to_string()
