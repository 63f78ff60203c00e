"""The wire format of the master and worker services (DESIGN.md "Distributed").

A message is a small header and the raw buffers of its tensors, never a protobuf TensorProto
wrapping a large buffer (wrapping 100 MB costs hundreds of milliseconds):

    b"TWM1" | u32 header length | header (JSON) | buffer 0 | buffer 1 | ...

The header is a JSON object of the call's arguments; its "tensors" entry lists each tensor as
[name, dtype, shape, nbytes, dead]. A numeric tensor's buffer is its C-order bytes; a string
tensor's is its element lengths (u64 each) followed by the elements' bytes; a dead value (an
untaken branch crossing tasks) has no buffer. Large messages travel as a stream of chunks
(`chunks`), which the receiver copies once into one buffer that its tensors then view.

Decoding trusts nothing: every length is checked against what arrived, so random bytes, a
huge declared size or a truncated stream give InvalidArgumentError, never a crash or a giant
allocation.
"""
from __future__ import annotations

import json
import math
import struct
from typing import Any, Iterable, Iterator, Optional, Sequence

import numpy as np

from tensorweave.framework import errors

MAGIC = b"TWM1"
_PREFIX = struct.Struct("<4sI")
# Messages up to this size go as one gRPC message; larger ones as a stream of CHUNK-byte pieces.
STREAM_THRESHOLD = 4 << 20
CHUNK = 1 << 20
# The largest header accepted (headers carry names, shapes and small arguments only; a GraphDef
# travels as a tensor).
MAX_HEADER = 16 << 20
# The largest single gRPC message a sender makes: a unary message, or a stream's first piece
# (prefix and header); servers refuse larger ones before reading them whole.
MAX_PIECE = _PREFIX.size + max(STREAM_THRESHOLD, MAX_HEADER, CHUNK)
# The largest tensor a shape may describe (numpy's limit on an array's bytes is 2**63).
_MAX_TENSOR_BYTES = 1 << 62

_NUMERIC = {np.dtype(t).str: np.dtype(t) for t in (
    np.float16, np.float32, np.float64, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16,
    np.uint32, np.uint64, np.bool_, np.complex64, np.complex128)}
_STRING = "string"

DEAD = object()  # a dead value in a decoded message


class Message:
    """A decoded message: `header` (a dict) and `tensors` (name -> ndarray, or DEAD)."""

    __slots__ = ("header", "tensors")

    def __init__(self, header: dict, tensors: dict[str, Any]) -> None:
        self.header = header
        self.tensors = tensors


def _bad(message: str) -> errors.InvalidArgumentError:
    return errors.InvalidArgumentError(None, None, f"Malformed message: {message}")


def _string_buffers(value: np.ndarray) -> tuple[list[Any], int]:
    items = [v if isinstance(v, bytes) else str(v).encode("utf-8") if not isinstance(v, (bytearray, memoryview))
             else bytes(v) for v in value.reshape(-1)]
    lengths = np.array([len(v) for v in items], dtype="<u8")
    body = b"".join(items)
    return [lengths.tobytes(), body], lengths.nbytes + len(body)


def encode(header: dict, tensors: Sequence[tuple[str, Any]] = ()) -> list[Any]:
    """The message as a list of buffers (bytes or memoryviews), to join or to stream."""
    entries: list[list[Any]] = []
    buffers: list[Any] = []
    for name, value in tensors:
        if value is DEAD:
            entries.append([name, "", [], 0, True])
            continue
        array = np.asarray(value)
        if array.dtype == object or array.dtype.kind in "SU":
            parts, nbytes = _string_buffers(array)
            entries.append([name, _STRING, list(array.shape), nbytes, False])
            buffers.extend(parts)
            continue
        if not array.flags.c_contiguous:  # (np.ascontiguousarray would make a scalar 1-d)
            array = array.copy(order="C")
        dtype = array.dtype.newbyteorder("<") if array.dtype.byteorder == ">" else array.dtype
        if dtype.str not in _NUMERIC:
            raise errors.InvalidArgumentError(None, None, f"Cannot send tensor {name} of dtype {array.dtype} "
                                              "to another task.")
        array = array.astype(dtype, copy=False)
        entries.append([name, dtype.str, list(array.shape), array.nbytes, False])
        if array.nbytes:
            buffers.append(memoryview(array).cast("B"))
    header = dict(header)
    header["tensors"] = entries
    text = json.dumps(header, separators=(",", ":")).encode("utf-8")
    if len(text) > MAX_HEADER:  # the receiver would refuse it: say so here, naming the limit
        raise errors.InvalidArgumentError(None, None, f"Message header of {len(text)} bytes (names and arguments) "
                                          f"exceeds the limit of {MAX_HEADER} bytes")
    return [_PREFIX.pack(MAGIC, len(text)) + text, *buffers]


def size(parts: Sequence[Any]) -> int:
    return sum(len(p) if isinstance(p, bytes) else p.nbytes for p in parts)


def join(parts: Sequence[Any]) -> bytes:
    return b"".join(parts)


def chunks(parts: Sequence[Any], chunk: int = CHUNK) -> Iterator[bytes]:
    """The message as a stream: the prefix and header first, then pieces of at most `chunk`."""
    yield bytes(parts[0])
    for part in parts[1:]:
        view = memoryview(part).cast("B")
        for start in range(0, len(view), chunk):
            yield bytes(view[start:start + chunk])


def _parse_header(data: Any) -> tuple[dict, int]:
    if len(data) < _PREFIX.size:
        raise _bad(f"{len(data)} bytes is shorter than a message prefix")
    magic, header_len = _PREFIX.unpack_from(data, 0)
    if magic != MAGIC:
        raise _bad("bad magic number")
    if header_len > MAX_HEADER or _PREFIX.size + header_len > len(data):
        raise _bad(f"declared header size {header_len} exceeds the message")
    try:
        header = json.loads(bytes(data[_PREFIX.size:_PREFIX.size + header_len]).decode("utf-8"))
    except (UnicodeDecodeError, ValueError, RecursionError) as err:  # (deep nesting: RecursionError)
        raise _bad(f"header is not JSON ({str(err)[:200]})") from None
    if not isinstance(header, dict):
        raise _bad("header is not an object")
    return header, _PREFIX.size + header_len


def _check_entries(header: dict) -> list[tuple[str, str, tuple[int, ...], int, bool]]:
    raw = header.get("tensors", [])
    if not isinstance(raw, list):
        raise _bad("'tensors' is not a list")
    entries = []
    for entry in raw:
        if not (isinstance(entry, list) and len(entry) == 5):
            raise _bad("a tensor entry is not [name, dtype, shape, nbytes, dead]")
        name, dtype, shape, nbytes, dead = entry
        if not (isinstance(name, str) and isinstance(dtype, str) and isinstance(shape, list)
                and isinstance(nbytes, int) and isinstance(dead, bool) and nbytes >= 0
                and all(isinstance(d, int) and 0 <= d < 1 << 48 for d in shape) and len(shape) <= 64):
            raise _bad(f"bad tensor entry {str(entry)[:200]}")
        if not dead:
            elements = math.prod(shape)
            # Zero-size shapes with huge other dimensions are too big for numpy as well.
            if math.prod(max(d, 1) for d in shape) * 8 > _MAX_TENSOR_BYTES:
                raise _bad(f"tensor {name} has a shape too large for memory: {shape}")
            if dtype == _STRING:
                if nbytes < 8 * elements:
                    raise _bad(f"string tensor {name} declares {nbytes} bytes for {elements} elements")
            elif dtype in _NUMERIC:
                if elements * _NUMERIC[dtype].itemsize != nbytes:
                    raise _bad(f"tensor {name} declares {nbytes} bytes for shape {shape} of {dtype}")
            else:
                raise _bad(f"unknown dtype {dtype!r}")
        entries.append((name, dtype, tuple(shape), nbytes, dead))
    return entries


def _tensors(entries: Sequence[tuple[str, str, tuple[int, ...], int, bool]], payload: Any) -> dict[str, Any]:
    if sum(e[3] for e in entries) != len(payload):
        raise _bad(f"tensors declare {sum(e[3] for e in entries)} bytes, {len(payload)} arrived")
    tensors: dict[str, Any] = {}
    offset = 0
    for name, dtype, shape, nbytes, dead in entries:
        if dead:
            tensors[name] = DEAD
            continue
        piece = payload[offset:offset + nbytes]
        offset += nbytes
        if dtype == _STRING:
            count = math.prod(shape)
            lengths = np.frombuffer(piece, dtype="<u8", count=count)
            # Summed as Python ints: hostile u64 lengths must not wrap around to the right total.
            if sum(lengths.tolist()) != nbytes - 8 * count:
                raise _bad(f"string tensor {name}'s element lengths do not add up")
            items = np.empty(count, dtype=object)
            start = 8 * count
            for i, n in enumerate(lengths.tolist()):
                items[i] = bytes(piece[start:start + n])
                start += n
            tensors[name] = items.reshape(shape)
        else:
            tensors[name] = np.frombuffer(piece, dtype=_NUMERIC[dtype]).reshape(shape)
    return tensors


def decode(data: Any) -> Message:
    """A message that arrived whole (a unary call)."""
    header, start = _parse_header(data)
    entries = _check_entries(header)
    # A writable copy of the (small) payload: kernels may update received arrays in place.
    payload = memoryview(bytearray(memoryview(data)[start:]))
    return Message(header, _tensors(entries, payload))


def decode_stream(pieces: Iterable[bytes], limit: Optional[int] = None) -> Message:
    """A message that arrived as chunks: the first holds the prefix and header; the rest are
    appended to one buffer, which the tensors view. The buffer grows with the bytes that
    actually arrive, never to a declared size up front (a hostile header could declare
    terabytes); `limit` (bytes) refuses larger messages with ResourceExhaustedError."""
    iterator = iter(pieces)
    try:
        first = next(iterator)
    except StopIteration:
        raise _bad("empty stream") from None
    header, start = _parse_header(first)
    entries = _check_entries(header)
    total = sum(e[3] for e in entries)
    if limit is not None and total > limit:
        raise errors.ResourceExhaustedError(None, None, f"Message of {total} bytes exceeds the limit {limit}")
    buffer = bytearray(memoryview(first)[start:])
    if len(buffer) > total:
        raise _bad("more bytes than the tensors declare")
    for piece in iterator:
        if len(buffer) + len(piece) > total:
            raise _bad("more bytes than the tensors declare")
        buffer += piece  # (realloc: large buffers grow in place, no quadratic copying)
    if len(buffer) != total:
        raise _bad(f"stream ended after {len(buffer)} of {total} bytes")
    return Message(header, _tensors(entries, memoryview(buffer)))


def error_header(err: BaseException) -> dict:
    """An error reply: the TF error code and message (other exceptions become INTERNAL)."""
    if isinstance(err, errors.OpError):
        return {"error": [err.error_code, err.message]}
    return {"error": [errors.INTERNAL, f"{type(err).__name__}: {err}"]}


def error_of(header: dict) -> Optional[errors.OpError]:
    """The TF error a header carries (None when it carries none); a malformed "error" entry,
    or one whose code is no error (OK) or unknown, is InvalidArgumentError."""
    error = header.get("error")
    if error is None:
        return None
    try:
        if not (isinstance(error, list) and len(error) == 2 and type(error[0]) is int and isinstance(error[1], str)):
            raise KeyError(error)
        cls = errors.exception_type_from_error_code(error[0])
    except KeyError:
        raise _bad(f"bad error entry {str(error)[:200]}") from None
    return cls(None, None, error[1])


def raise_if_error(header: dict, where: str = "") -> None:
    """Raises the error of a reply; a malformed one is InternalError (the peer broke)."""
    try:
        error = error_of(header)
    except errors.InvalidArgumentError:
        text = str(header.get("error"))[:200]
        raise errors.InternalError(None, None, f"Malformed error reply{where}: {text}") from None
    if error is not None:
        raise error
