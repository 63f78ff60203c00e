"""tf.compat's text helpers: bytes and str conversions in TF's UTF-8 convention."""
from __future__ import annotations

from typing import Any


def as_bytes(bytes_or_text: Any, encoding: str = "utf-8") -> bytes:
    """`bytes_or_text` as bytes (str is encoded; bytes-like pass through as bytes)."""
    if isinstance(bytes_or_text, bytearray):
        return bytes(bytes_or_text)
    if isinstance(bytes_or_text, str):
        return bytes_or_text.encode(encoding)
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


def as_text(bytes_or_text: Any, encoding: str = "utf-8") -> str:
    """`bytes_or_text` as str (bytes are decoded)."""
    if isinstance(bytes_or_text, str):
        return bytes_or_text
    if isinstance(bytes_or_text, bytes):
        return bytes_or_text.decode(encoding)
    raise TypeError(f"Expected binary or unicode string, got {bytes_or_text!r}")


as_str = as_text


def as_str_any(value: Any) -> str:
    """str(value), decoding bytes rather than showing their repr."""
    return as_str(value) if isinstance(value, bytes) else str(value)
