"""The immutable sorted table TF uses for a checkpoint's `.index` file (LevelDB's table format,
uncompressed), so our index files and TensorFlow's read each other.

    [data block]* [meta-index block] [index block] [footer]

A block is a run of entries `varint32 shared | varint32 unshared | varint32 value_len |
key[shared:] | value` (keys prefix-compressed against the previous one, restarting every 16
entries), then the uint32 restart offsets and their count, then a 5-byte trailer: compression
type (0) and the masked CRC-32C of the block and that type byte. The index block maps a key at or
after each data block's last key to the block's (offset, size); the 48-byte footer holds the
meta-index and index block handles, zero padding and a magic number. Tables here are small (one
entry per tensor), so the reader parses the whole file at once.
"""
from __future__ import annotations

import struct
from typing import Iterable, Iterator

from tensorweave.lib import crc32c

_MAGIC = 0xDB4775248B80FB57
_FOOTER_SIZE = 48           # two block handles padded to 40 bytes, then the 8-byte magic
_TRAILER_SIZE = 5
_RESTART_INTERVAL = 16
_BLOCK_SIZE = 262144        # TF's table::Options::block_size
_U32 = struct.Struct("<I")


class TableError(ValueError):
    """The bytes are not a well-formed table (truncated, bad magic, checksum mismatch)."""


def encode_varint(value: int) -> bytes:
    """Protobuf/LevelDB base-128 varint of a non-negative int."""
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def read_varint(data: bytes, pos: int) -> tuple[int, int]:
    """(value, next position) of the varint at `pos`; TableError if truncated."""
    result, shift = 0, 0
    while True:
        if pos >= len(data) or shift > 63:
            raise TableError("truncated or malformed varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, pos
        shift += 7


class _BlockBuilder:
    def __init__(self, restart_interval: int) -> None:
        self._interval = restart_interval
        self._parts: list[bytes] = []
        self._size = 0
        self._restarts = [0]
        self._count = 0
        self._last = b""

    def add(self, key: bytes, value: bytes) -> None:
        shared = 0
        if self._count < self._interval:
            limit = min(len(key), len(self._last))
            while shared < limit and key[shared] == self._last[shared]:
                shared += 1
        else:
            self._restarts.append(self._size)
            self._count = 0
        entry = b"".join((encode_varint(shared), encode_varint(len(key) - shared), encode_varint(len(value)),
                          key[shared:], value))
        self._parts.append(entry)
        self._size += len(entry)
        self._count += 1
        self._last = key

    @property
    def estimated_size(self) -> int:
        return self._size + 4 * (len(self._restarts) + 1)

    @property
    def empty(self) -> bool:
        return not self._parts

    def finish(self) -> bytes:
        tail = b"".join(_U32.pack(r) for r in self._restarts) + _U32.pack(len(self._restarts))
        return b"".join(self._parts) + tail


def _with_trailer(block: bytes) -> bytes:
    trailer_type = b"\x00"  # no compression
    return block + trailer_type + _U32.pack(crc32c.mask(crc32c.extend(crc32c.value(block), trailer_type)))


def _shortest_separator(start: bytes, limit: bytes) -> bytes:
    """A short key k with start <= k < limit (LevelDB's bytewise comparator rule)."""
    n = min(len(start), len(limit))
    diff = 0
    while diff < n and start[diff] == limit[diff]:
        diff += 1
    if diff < n and start[diff] < 0xFF and start[diff] + 1 < limit[diff]:
        return start[:diff] + bytes([start[diff] + 1])
    return start


def _short_successor(key: bytes) -> bytes:
    """A short key k >= key."""
    for i, byte in enumerate(key):
        if byte != 0xFF:
            return key[:i] + bytes([byte + 1])
    return key


def build_table(items: Iterable[tuple[bytes, bytes]]) -> bytes:
    """The table holding `items` (key, value) pairs, whose keys must be strictly increasing.
    Byte-identical to what TF's table builder writes for the same pairs."""
    out: list[bytes] = []
    offset = 0
    index = _BlockBuilder(1)
    block = _BlockBuilder(_RESTART_INTERVAL)
    pending_handle = b""  # the last flushed block's handle, indexed once the next key is known
    last_key = b""

    def flush() -> None:
        nonlocal offset, block, pending_handle
        contents = block.finish()
        out.append(_with_trailer(contents))
        pending_handle = encode_varint(offset) + encode_varint(len(contents))
        offset += len(contents) + _TRAILER_SIZE
        block = _BlockBuilder(_RESTART_INTERVAL)

    for count, (key, value) in enumerate(items):
        if count and key <= last_key:
            raise ValueError(f"table keys must be strictly increasing: {key!r} after {last_key!r}")
        if pending_handle:
            index.add(_shortest_separator(last_key, key), pending_handle)
            pending_handle = b""
        block.add(key, value)
        last_key = key
        if block.estimated_size >= _BLOCK_SIZE:
            flush()
    if not block.empty:
        flush()
    if pending_handle:
        index.add(_short_successor(last_key), pending_handle)
    meta = _BlockBuilder(_RESTART_INTERVAL).finish()
    meta_handle = encode_varint(offset) + encode_varint(len(meta))
    out.append(_with_trailer(meta))
    offset += len(meta) + _TRAILER_SIZE
    index_contents = index.finish()
    index_handle = encode_varint(offset) + encode_varint(len(index_contents))
    out.append(_with_trailer(index_contents))
    handles = meta_handle + index_handle
    out.append(handles + b"\x00" * (_FOOTER_SIZE - 8 - len(handles)) + struct.pack("<Q", _MAGIC))
    return b"".join(out)


def _read_block(data: bytes, offset: int, size: int) -> bytes:
    end = offset + size
    if offset < 0 or end + _TRAILER_SIZE > len(data):
        raise TableError(f"block at {offset} (+{size}) runs past the end of the table")
    contents = data[offset:end]
    kind = data[end:end + 1]
    stored = _U32.unpack_from(data, end + 1)[0]
    if crc32c.mask(crc32c.extend(crc32c.value(contents), kind)) != stored:
        raise TableError(f"block checksum mismatch at offset {offset}")
    if kind != b"\x00":
        raise TableError(f"unsupported block compression type {kind[0]}")
    return contents


def _block_entries(block: bytes) -> Iterator[tuple[bytes, bytes]]:
    if len(block) < 4:
        raise TableError("block too short")
    num_restarts = _U32.unpack_from(block, len(block) - 4)[0]
    limit = len(block) - 4 - 4 * num_restarts
    if limit < 0:
        raise TableError("bad restart array")
    pos, key = 0, b""
    while pos < limit:
        shared, pos = read_varint(block, pos)
        unshared, pos = read_varint(block, pos)
        value_len, pos = read_varint(block, pos)
        if shared > len(key) or pos + unshared + value_len > limit:
            raise TableError("corrupted block entry")
        key = key[:shared] + block[pos:pos + unshared]
        pos += unshared
        yield key, block[pos:pos + value_len]
        pos += value_len


def parse_table(data: bytes) -> list[tuple[bytes, bytes]]:
    """All (key, value) pairs of a table, in key order; TableError if it is malformed."""
    if len(data) < _FOOTER_SIZE:
        raise TableError("file too short to be a table")
    footer = data[-_FOOTER_SIZE:]
    if struct.unpack_from("<Q", footer, _FOOTER_SIZE - 8)[0] != _MAGIC:
        raise TableError("not a table (bad magic number)")
    pos = 0
    for _ in range(2):  # skip the meta-index handle
        _, pos = read_varint(footer, pos)
    index_offset, pos = read_varint(footer, pos)
    index_size, pos = read_varint(footer, pos)
    body = data[:-_FOOTER_SIZE]
    items: list[tuple[bytes, bytes]] = []
    for _, handle in _block_entries(_read_block(body, index_offset, index_size)):
        offset, hpos = read_varint(handle, 0)
        size, _ = read_varint(handle, hpos)
        items.extend(_block_entries(_read_block(body, offset, size)))
    return items
