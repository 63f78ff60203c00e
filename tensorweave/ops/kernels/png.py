"""PNG without a codec library: the encoder behind EncodePng (every bit depth and colour type
TF writes) and the decoder for what Pillow cannot give exactly (16-bit colour images, which
Pillow narrows to 8 bits). Imports only NumPy and zlib, so the fixture generator can load it
under the reference TensorFlow environment and have TF decode what it writes.
"""
from __future__ import annotations

import struct
import zlib
from typing import Optional

import numpy as np

SIGNATURE = b"\x89PNG\r\n\x1a\n"
# channels -> PNG colour type: gray, gray+alpha, RGB, RGBA.
_COLOR_TYPE = {1: 0, 2: 4, 3: 2, 4: 6}
_CHANNELS = {v: k for k, v in _COLOR_TYPE.items()}


def _chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


def encode(image: np.ndarray, compression: int = -1) -> bytes:
    """`image` [height, width, channels] uint8 or uint16 as PNG bytes. Rows are stored
    unfiltered (filter type 0) and deflated at `compression` (-1: zlib's default)."""
    height, width, channels = image.shape
    depth = 16 if image.dtype == np.uint16 else 8
    header = struct.pack(">IIBBBBB", width, height, depth, _COLOR_TYPE[channels], 0, 0, 0)
    rows = image.astype(">u2" if depth == 16 else np.uint8).reshape(height, -1).view(np.uint8)
    raw = np.concatenate([np.zeros((height, 1), np.uint8), rows], axis=1).tobytes()
    level = zlib.Z_DEFAULT_COMPRESSION if compression < 0 else min(int(compression), 9)
    return SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", zlib.compress(raw, level)) + _chunk(b"IEND", b"")


class PngHeader:
    __slots__ = ("width", "height", "depth", "color_type", "interlace")

    def __init__(self, data: bytes) -> None:
        if len(data) < 33 or not data.startswith(SIGNATURE) or data[12:16] != b"IHDR":
            raise ValueError("Invalid PNG header")
        self.width, self.height, self.depth, self.color_type, _, _, self.interlace = struct.unpack(
            ">IIBBBBB", data[16:29])


def _chunks(data: bytes) -> list[tuple[bytes, bytes]]:
    found, pos = [], len(SIGNATURE)
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + length]
        if len(body) != length:
            raise ValueError("Invalid PNG data: truncated chunk")
        found.append((kind, body))
        pos += 12 + length
        if kind == b"IEND":
            break
    return found


def _unfilter(raw: np.ndarray, height: int, stride: int, bpp: int) -> np.ndarray:
    """Undoes the per-row filters (None, Sub, Up, Average, Paeth). A byte depends on the one
    `bpp` to its left, the one above and the one above-left, so every pixel on an
    anti-diagonal (y + x constant) can be reconstructed at once from the diagonals before it:
    height + width - 1 vectorised steps, whatever filters the rows use."""
    width = stride // bpp
    rows = raw.reshape(height, stride + 1)
    kinds = rows[:, 0].astype(np.int64)
    if np.any(kinds > 4):
        raise ValueError(f"Invalid PNG data: unknown filter type {int(kinds.max())}")
    filtered = rows[:, 1:].reshape(height, width, bpp).astype(np.int32)
    if not kinds.any():
        return filtered.astype(np.uint8).reshape(height, stride)
    out = np.zeros((height + 1, width + 1, bpp), np.int32)   # a zero row above, a zero column left
    for d in range(height + width - 1):
        ys = np.arange(max(0, d - width + 1), min(height - 1, d) + 1)
        xs = d - ys
        left, up, upleft = out[ys + 1, xs], out[ys, xs + 1], out[ys, xs]
        p = left + up - upleft
        pa, pb, pc = np.abs(p - left), np.abs(p - up), np.abs(p - upleft)
        paeth = np.where((pa <= pb) & (pa <= pc), left, np.where(pb <= pc, up, upleft))
        kind = kinds[ys][:, None]
        prediction = np.select([kind == 1, kind == 2, kind == 3, kind == 4],
                               [left, up, (left + up) >> 1, paeth], 0)
        out[ys + 1, xs + 1] = (filtered[ys, xs] + prediction) & 0xFF
    return out[1:, 1:].astype(np.uint8).reshape(height, stride)


def decode(data: bytes) -> Optional[np.ndarray]:
    """[height, width, channels] of a non-interlaced 8- or 16-bit gray/RGB(A) PNG (uint16 for 16
    bits); None for other kinds (palette, low bit depth, interlaced), which Pillow decodes."""
    header = PngHeader(data)
    if header.interlace or header.depth not in (8, 16) or header.color_type not in _CHANNELS:
        return None
    channels = _CHANNELS[header.color_type]
    bpp = channels * header.depth // 8
    stride = header.width * bpp
    try:
        raw = zlib.decompress(b"".join(body for kind, body in _chunks(data) if kind == b"IDAT"))
    except zlib.error as e:
        raise ValueError(f"Invalid PNG data: {e}") from None
    needed = header.height * (stride + 1)
    if len(raw) < needed:
        raise ValueError("Invalid PNG data: image data is truncated")
    pixels = _unfilter(np.frombuffer(raw[:needed], np.uint8), header.height, stride, bpp)
    if header.depth == 16:
        pixels = pixels.view(">u2").astype(np.uint16)
    return pixels.reshape(header.height, header.width, channels)
