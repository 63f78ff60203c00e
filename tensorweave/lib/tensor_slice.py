"""Tensor slices in checkpoints: TF's `shape_and_slice` strings and slice keys.

A `shape_and_slice` string names the full shape of a (partitioned) tensor and the part of it a
saved or restored value covers: `"10 4 0,5:-"` is rows 0..4 (all columns) of a [10, 4] tensor;
`-` is a whole dimension, `start,length` a range; the empty string is the whole tensor.

In a bundle, a tensor saved as slices has one entry under its own name (dtype, full shape and
the list of slices, no data) and one entry per slice under a key that TF builds with its
OrderedCode encoding of (0, name, rank, start_0, length_0, ...), which sorts the slices of a
tensor together, right after the tensor's own entry.
"""
from __future__ import annotations

from typing import Optional, Sequence

from tensorweave.framework import errors

FULL = -1  # the length TF records for a whole ("-") extent

Extent = tuple[int, int]  # (start, length); length FULL for the whole dimension


def parse_shape_and_slice(spec: str) -> tuple[Optional[list[int]], Optional[list[Extent]]]:
    """(full shape, extents) of `spec`; (None, None) for the empty spec (the whole tensor)."""
    spec = spec.strip()
    if not spec:
        return None, None
    parts = spec.split(" ")
    try:
        shape = [int(p) for p in parts[:-1]]
        extents: list[Extent] = []
        for item in parts[-1].split(":"):
            if item == "-":
                extents.append((0, FULL))
            else:
                start, length = item.split(",")
                extents.append((int(start), int(length)))
    except ValueError:
        raise errors.InvalidArgumentError(None, None, f"Expected \"shape slice\" specification, got "
                                          f"{spec!r}") from None
    if len(extents) != len(shape) or any(d < 0 for d in shape):
        raise errors.InvalidArgumentError(None, None, f"Shape and slice rank differ in {spec!r}")
    for (start, length), dim in zip(extents, shape):
        if length != FULL and (start < 0 or length < 0 or start + length > dim):
            raise errors.InvalidArgumentError(None, None, f"Slice {spec!r} is out of the bounds of "
                                              f"shape {shape}")
    return shape, extents


def resolve(extents: Sequence[Extent], shape: Sequence[int]) -> list[tuple[int, int]]:
    """Extents with whole dimensions made explicit: [(start, stop)] per dimension."""
    return [(0, dim) if length == FULL else (start, start + length)
            for (start, length), dim in zip(extents, shape)]


def format_shape_and_slice(shape: Sequence[int], extents: Sequence[Extent]) -> str:
    parts = ["-" if length == FULL else f"{start},{length}" for start, length in extents]
    return " ".join([str(d) for d in shape] + [":".join(parts)])


# -- TF's OrderedCode, for slice keys ---------------------------------------------------------------
def _num_increasing(value: int) -> bytes:
    body = value.to_bytes((value.bit_length() + 7) // 8, "big") if value else b""
    return bytes([len(body)]) + body


def _string(value: bytes) -> bytes:
    """The bytes with 0x00 and 0xff escaped, then the terminator 0x00 0x01."""
    out = bytearray()
    for byte in value:
        if byte == 0x00:
            out += b"\x00\xff"
        elif byte == 0xFF:
            out += b"\xff\x00"
        else:
            out.append(byte)
    return bytes(out) + b"\x00\x01"


_HEADER_BITS = [(0, 0), (0x80, 0), (0xC0, 0), (0xE0, 0), (0xF0, 0), (0xF8, 0), (0xFC, 0), (0xFE, 0),
                (0xFF, 0), (0xFF, 0x80), (0xFF, 0xC0)]


def _signed_num_increasing(value: int) -> bytes:
    magnitude = ~value if value < 0 else value
    if magnitude < 64:
        return bytes([(_HEADER_BITS[1][0] ^ value) & 0xFF])
    length = magnitude.bit_length() // 7 + 1
    raw = bytearray((value & ((1 << 80) - 1)).to_bytes(10, "big"))  # sign-extended to 10 bytes
    begin = raw[10 - length:]
    begin[0] ^= _HEADER_BITS[length][0]
    begin[1] ^= _HEADER_BITS[length][1]
    return bytes(begin)


def slice_key(name: str, extents: Sequence[Extent]) -> bytes:
    """The bundle key of slice `extents` of tensor `name` (TF's EncodeTensorNameSlice)."""
    key = _num_increasing(0) + _string(name.encode("utf-8")) + _num_increasing(len(extents))
    for start, length in extents:
        key += _signed_num_increasing(start) + _signed_num_increasing(length)
    return key
