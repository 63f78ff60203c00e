"""Text and bytes conversions of `tf.compat` (TF's util/compat.py): programs use them to turn file
names, string tensors' values and protobuf fields into the str or bytes they need."""
from __future__ import annotations

import codecs
import numbers
import os
from typing import Any, Union

import numpy as np


def as_bytes(bytes_or_text: Union[bytes, bytearray, str], encoding: str = "utf-8") -> bytes:
    """`bytes_or_text` as bytes: str encoded with `encoding`, bytes-like returned as bytes."""
    encoding = _codec_name(encoding)
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: Union[bytes, str], encoding: str = "utf-8") -> str:
    """`bytes_or_text` as str: bytes decoded with `encoding`, str returned unchanged."""
    encoding = _codec_name(encoding)
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_str(bytes_or_text: Union[bytes, str], encoding: str = "utf-8") -> str:
    """Python 3's `str` form: the same as `as_text`."""
    return as_text(bytes_or_text, encoding)


def as_str_any(value: Any, encoding: str = "utf-8") -> str:
    """`value` as str: bytes decoded, anything else through `str()`."""
    if isinstance(value, bytes):
        return as_str(value, encoding=encoding)
    return str(value)


def path_to_str(path: Any) -> Any:
    """An os.PathLike as its str path; anything else unchanged (as TF, which leaves bytes alone)."""
    if isinstance(path, os.PathLike):
        return as_str_any(os.fspath(path))
    return path


def _codec_name(encoding: str) -> str:
    # TF looks the codec up first, so an unknown encoding is a LookupError before any conversion.
    return codecs.lookup(encoding).name


# The Python types that count as each kind of value (TF's compat constants).
integral_types = (numbers.Integral, np.integer)
real_types = (numbers.Real, np.integer, np.floating)
complex_types = (numbers.Complex, np.number)
bytes_or_text_types = (bytes, str)
