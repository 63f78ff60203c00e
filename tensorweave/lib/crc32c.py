"""CRC-32C (Castagnoli) over any buffer, without copying, and TF's masked form.

`google_crc32c.value` accepts only `bytes`, which would force a copy of every array a checkpoint
writes or reads. The same package ships the C library it wraps (`libcrc32c`), so its
`crc32c_extend` is called through ctypes on the buffer's address: no copy, and ctypes releases
the GIL for the call, so checksums overlap with file I/O in other threads. Where that library
cannot be loaded, the package's own function is used on a `bytes` copy.
"""
from __future__ import annotations

import ctypes
import glob
import os
from typing import Any, Callable, Optional

import google_crc32c
import numpy as np

_MASK_DELTA = 0xA282EAD8


def _load_native() -> Optional[Callable[[int, int, int], int]]:
    package_dir = os.path.dirname(os.path.abspath(google_crc32c.__file__))
    for path in sorted(glob.glob(os.path.join(package_dir, os.pardir, "google_crc32c.libs", "libcrc32c*"))):
        try:
            lib = ctypes.CDLL(path)
            fn = lib.crc32c_extend
        except (OSError, AttributeError):
            continue
        fn.restype = ctypes.c_uint32
        fn.argtypes = [ctypes.c_uint32, ctypes.c_void_p, ctypes.c_size_t]
        if fn(0, ctypes.c_char_p(b"123456789"), 9) == 0xE3069283:  # the CRC-32C check value
            return fn
    return None


_native = _load_native()


def _address(data: Any) -> tuple[int, int, Any]:
    """(address, length, keep-alive) of a C-contiguous buffer."""
    if isinstance(data, np.ndarray):
        if not data.flags.c_contiguous:
            data = np.require(data, requirements="C")
        return data.ctypes.data, data.nbytes, data
    if isinstance(data, bytes):
        return ctypes.cast(ctypes.c_char_p(data), ctypes.c_void_p).value or 0, len(data), data
    array = np.frombuffer(data, dtype=np.uint8)
    return array.ctypes.data if array.size else 0, array.size, array


# Below this size `bytes` go through the package's C extension: cheaper than a ctypes call.
_SMALL_BYTES = 1 << 14


def extend(crc: int, data: Any) -> int:
    """The CRC-32C of (the bytes that gave `crc`) followed by `data` (bytes, a NumPy array or
    any object exporting a buffer)."""
    if type(data) is bytes and len(data) < _SMALL_BYTES:
        return google_crc32c.extend(crc, data)
    if _native is not None:
        address, length, keep = _address(data)
        if length == 0:
            return crc
        result = _native(crc, address, length)
        del keep
        return int(result)
    if isinstance(data, np.ndarray):
        data = data.tobytes()
    return google_crc32c.extend(crc, bytes(data))


def value(data: Any) -> int:
    """The CRC-32C of `data`."""
    return extend(0, data)


def mask(crc: int) -> int:
    """TF's masked CRC: rotate right by 15 bits and add a constant, so a CRC stored next to the
    data it covers does not make later CRCs over both degenerate."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + _MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    rot = (masked - _MASK_DELTA) & 0xFFFFFFFF
    return ((rot >> 17) | (rot << 15)) & 0xFFFFFFFF


def masked_value(data: Any) -> int:
    return mask(value(data))
