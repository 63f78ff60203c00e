"""TensorFlow's element types (white paper section 2: typed tensors).

A `DType` is an immutable, interned description of one element type: its TF name, its
TF enum value (the `DataType` protobuf number, so GraphDefs line up with TensorFlow's), and
the NumPy dtype that kernels use. Reference types (`float32_ref`) are the types of the
outputs of TF1 reference variables.
"""
from __future__ import annotations

import builtins

from typing import Any

import numpy as np

_REF_OFFSET = 100


class DType:
    """An element type: `tf.float32`, `tf.int64`, `tf.string`, ..."""

    __slots__ = ("_enum", "_name", "_np")

    def __init__(self, enum: int, name: str, np_dtype: Any) -> None:
        self._enum = enum
        self._name = name
        self._np = np_dtype

    # -- identity ---------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self._name

    @property
    def as_datatype_enum(self) -> int:
        return self._enum

    @property
    def is_ref_dtype(self) -> builtins.bool:
        return self._enum > _REF_OFFSET

    @property
    def base_dtype(self) -> "DType":
        return _BY_ENUM[self._enum - _REF_OFFSET] if self.is_ref_dtype else self

    @property
    def _as_ref(self) -> "DType":
        return self if self.is_ref_dtype else _BY_ENUM[self._enum + _REF_OFFSET]

    @property
    def real_dtype(self) -> "DType":
        base = self.base_dtype
        if base is complex64:
            return float32
        if base is complex128:
            return float64
        return base

    @property
    def as_numpy_dtype(self) -> Any:
        return self._np

    # -- classification ---------------------------------------------------------------
    @property
    def is_floating(self) -> builtins.bool:
        return self.base_dtype in (float16, float32, float64)

    @property
    def is_complex(self) -> builtins.bool:
        return self.base_dtype in (complex64, complex128)

    @property
    def is_integer(self) -> builtins.bool:
        return self.base_dtype in _INTEGERS

    @property
    def is_unsigned(self) -> builtins.bool:
        return self.base_dtype in (uint8, uint16, uint32, uint64)

    @property
    def is_bool(self) -> builtins.bool:
        return self.base_dtype is bool

    @property
    def is_numpy_compatible(self) -> builtins.bool:
        return True

    @property
    def size(self) -> int:
        return 1 if self.base_dtype is string else np.dtype(self._np).itemsize

    @property
    def min(self) -> Any:
        return self._limits()[0]

    @property
    def max(self) -> Any:
        return self._limits()[1]

    def _limits(self) -> tuple[Any, Any]:
        base = self.base_dtype
        if base.is_floating:
            finfo = np.finfo(base._np)
            return finfo.min, finfo.max
        if base.is_integer:
            iinfo = np.iinfo(base._np)
            return iinfo.min, iinfo.max
        raise TypeError(f"Cannot find minimum/maximum value of {self._name}.")

    def is_compatible_with(self, other: Any) -> builtins.bool:
        other = as_dtype(other)
        return self._enum in (other._enum, other.base_dtype._enum)

    # -- python protocol ----------------------------------------------------------------
    def __eq__(self, other: object) -> builtins.bool:
        if other is None:
            return False
        if not isinstance(other, DType):
            try:
                other = as_dtype(other)
            except TypeError:
                return False
        return self._enum == other._enum

    def __ne__(self, other: object) -> builtins.bool:
        return not self.__eq__(other)

    def __hash__(self) -> int:
        return self._enum

    def __repr__(self) -> str:
        return f"tf.{self._name}"

    def __str__(self) -> str:
        return f"<dtype: '{self._name}'>"

    def __reduce__(self) -> Any:
        return as_dtype, (self._name,)


_SPECS = [
    # enum, name, numpy dtype
    (1, "float32", np.float32),
    (2, "float64", np.float64),
    (3, "int32", np.int32),
    (4, "uint8", np.uint8),
    (5, "int16", np.int16),
    (6, "int8", np.int8),
    (7, "string", object),  # TF's as_numpy_dtype for strings is the builtin `object`
    (8, "complex64", np.complex64),
    (9, "int64", np.int64),
    (10, "bool", np.bool_),
    (17, "uint16", np.uint16),
    (18, "complex128", np.complex128),
    (19, "float16", np.float16),
    (22, "uint32", np.uint32),
    (23, "uint64", np.uint64),
    (20, "resource", np.object_),  # handles to per-step or per-device state (TensorArray, ...)
    (21, "variant", np.object_),  # opaque values such as a held mutex lock
]

_BY_ENUM: dict[int, DType] = {}
_BY_NAME: dict[str, DType] = {}
for _enum, _name, _np_type in _SPECS:
    for _e, _n in ((_enum, _name), (_enum + _REF_OFFSET, _name + "_ref")):
        _dt = DType(_e, _n, _np_type)
        _BY_ENUM[_e] = _dt
        _BY_NAME[_n] = _dt

float32 = _BY_NAME["float32"]
float64 = _BY_NAME["float64"]
float16 = _BY_NAME["float16"]
half = float16
double = float64
int8 = _BY_NAME["int8"]
int16 = _BY_NAME["int16"]
int32 = _BY_NAME["int32"]
int64 = _BY_NAME["int64"]
uint8 = _BY_NAME["uint8"]
uint16 = _BY_NAME["uint16"]
uint32 = _BY_NAME["uint32"]
uint64 = _BY_NAME["uint64"]
bool = _BY_NAME["bool"]  # noqa: A001  (TF's public name)
complex64 = _BY_NAME["complex64"]
complex128 = _BY_NAME["complex128"]
string = _BY_NAME["string"]
resource = _BY_NAME["resource"]
variant = _BY_NAME["variant"]

_INTEGERS = (int8, int16, int32, int64, uint8, uint16, uint32, uint64)

# Groups that op definitions use in their allowed-type lists.
FLOATS = (float16, float32, float64)
COMPLEX = (complex64, complex128)
INTEGERS = _INTEGERS
NUMBERS = FLOATS + COMPLEX + _INTEGERS
REALS = FLOATS + _INTEGERS
ALL_TYPES = NUMBERS + (bool, string)

_NP_TO_DTYPE: dict[Any, DType] = {
    np.dtype(np.float32): float32,
    np.dtype(np.float64): float64,
    np.dtype(np.float16): float16,
    np.dtype(np.int8): int8,
    np.dtype(np.int16): int16,
    np.dtype(np.int32): int32,
    np.dtype(np.int64): int64,
    np.dtype(np.uint8): uint8,
    np.dtype(np.uint16): uint16,
    np.dtype(np.uint32): uint32,
    np.dtype(np.uint64): uint64,
    np.dtype(np.bool_): bool,
    np.dtype(np.complex64): complex64,
    np.dtype(np.complex128): complex128,
    np.dtype(np.object_): string,
}

# The C++ spellings TF also accepts by name (`tf.as_dtype("float")` is float32).
_NAME_ALIASES = {"float": "float32", "double": "float64", "half": "float16",
                 "float_ref": "float32_ref", "double_ref": "float64_ref", "half_ref": "float16_ref"}

_PY_TO_DTYPE: dict[Any, DType] = {float: float32, int: int32, complex: complex128, bytes: string, str: string}
_PY_TO_DTYPE[type(True)] = bool


def as_dtype(type_value: Any) -> DType:
    """Converts `type_value` (a DType, its name, its enum, a NumPy dtype or type) to a DType."""
    if isinstance(type_value, DType):
        return type_value
    if isinstance(type_value, str):
        found = _BY_NAME.get(_NAME_ALIASES.get(type_value, type_value))
        if found is not None:
            return found
    elif isinstance(type_value, int) and not isinstance(type_value, type(True)):
        found = _BY_ENUM.get(type_value)
        if found is not None:
            return found
    elif type_value in _PY_TO_DTYPE:
        return _PY_TO_DTYPE[type_value]
    else:
        try:
            np_dtype = np.dtype(type_value)
        except TypeError:
            np_dtype = None
        if np_dtype is not None:
            if np_dtype.kind in ("U", "S"):
                return string
            found = _NP_TO_DTYPE.get(np_dtype)
            if found is not None:
                return found
    raise TypeError(f"Cannot convert value {type_value!r} to a TensorFlow DType.")


def from_numpy(np_dtype: Any) -> DType:
    """DType of a NumPy array's dtype (strings become tf.string)."""
    found = _NP_TO_DTYPE.get(np_dtype)
    if found is not None:
        return found
    return as_dtype(np_dtype)
