"""Device names and partial device specifications (`tf.DeviceSpec`).

A full name looks like `/job:worker/replica:0/task:1/device:CPU:0`; partial specs such as
`/device:CPU:*`, `/job:ps` or `/task:1` leave fields unset, and merging fills them in (inner
`tf.device` scopes override outer ones field by field).
"""
from __future__ import annotations

import dataclasses
from typing import Any, Optional


@dataclasses.dataclass(frozen=True)
class DeviceSpec:
    job: Optional[str] = None
    replica: Optional[int] = None
    task: Optional[int] = None
    device_type: Optional[str] = None
    device_index: Optional[int] = None  # None means unset; "*" is written as None too

    @staticmethod
    def from_string(spec: str) -> "DeviceSpec":
        return parse_device(spec)

    def parse_from_string(self, spec: str) -> "DeviceSpec":
        return parse_device(spec)

    def make_merged_spec(self, other: "DeviceSpec") -> "DeviceSpec":
        """Fields set in `other` override those in self."""
        return DeviceSpec(*(b if b is not None else a for a, b in zip(dataclasses.astuple(self),
                                                                        dataclasses.astuple(other))))

    def merge_from(self, other: "DeviceSpec") -> "DeviceSpec":
        return self.make_merged_spec(other)

    def replace(self, **kwargs: Any) -> "DeviceSpec":
        return dataclasses.replace(self, **kwargs)

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

    def is_compatible_with(self, full: "DeviceSpec") -> bool:
        """Whether a concrete device satisfies this (possibly partial) constraint."""
        for mine, theirs in zip(dataclasses.astuple(self), dataclasses.astuple(full)):
            if mine is not None and theirs is not None and mine != theirs:
                return False
        return True

    def __str__(self) -> str:
        return self.to_string()


_DEVICE_TYPES_UPPER = {"cpu": "CPU", "gpu": "GPU", "tpu": "TPU"}


def parse_device(spec: Any) -> DeviceSpec:
    """Parses TF device strings, including the legacy `/cpu:0` and `/gpu:1` forms."""
    if isinstance(spec, DeviceSpec):
        return spec
    if spec is None or spec == "":
        return DeviceSpec()
    if not isinstance(spec, str):
        raise TypeError(f"Device specification must be a string or DeviceSpec, got {spec!r}")
    fields: dict[str, Any] = {}
    for part in spec.split("/"):
        if not part:
            continue
        pieces = part.split(":")
        key = pieces[0].lower()
        if key == "job" and len(pieces) == 2:
            fields["job"] = pieces[1]
        elif key == "replica" and len(pieces) == 2:
            fields["replica"] = int(pieces[1])
        elif key == "task" and len(pieces) == 2:
            fields["task"] = int(pieces[1])
        elif key == "device" and len(pieces) in (2, 3):
            fields["device_type"] = _DEVICE_TYPES_UPPER.get(pieces[1].lower(), pieces[1])
            if len(pieces) == 3 and pieces[2] != "*":
                fields["device_index"] = int(pieces[2])
        elif len(pieces) == 2 and key in _DEVICE_TYPES_UPPER or (len(pieces) == 2 and pieces[0].isupper()):
            fields["device_type"] = _DEVICE_TYPES_UPPER.get(key, pieces[0])
            if pieces[1] != "*":
                fields["device_index"] = int(pieces[1])
        else:
            raise ValueError(f"Unknown attribute: '{part}' in '{spec}'")
    return DeviceSpec(**fields)


def canonical_name(spec: Any) -> str:
    return parse_device(spec).to_string()


def merge_device(outer: str, inner: Any) -> str:
    """The device string for an op created inside `tf.device(inner)` within `outer`."""
    return parse_device(outer).make_merged_spec(parse_device(inner)).to_string()
