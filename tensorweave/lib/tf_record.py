"""TFRecord files (`tf.python_io`): TensorFlow's record framing, byte-compatible with its files.

Each record is

    uint64 length (little-endian)
    uint32 masked_crc32c(length bytes)
    bytes  data[length]
    uint32 masked_crc32c(data)

and a ZLIB or GZIP file is that same byte stream, compressed as one zlib / gzip stream. The
CRC is CRC-32C (Castagnoli), masked so that a CRC of data that itself holds CRCs is not
degenerate. Event files (summaries) use this framing too, through `encode_record` and
`RecordReader`, and the TFRecordReader op reads with `RecordReader`.
"""
from __future__ import annotations

import os
import struct
import threading
import zlib
from typing import IO, Any, Iterator, Optional, Union

import google_crc32c

from tensorweave.framework import errors
from tensorweave.lib.crc32c import mask as _mask
from tensorweave.lib.file_io import as_path, open_file, os_error_to_tf

__all__ = ["TFRecordCompressionType", "TFRecordOptions", "TFRecordWriter", "tf_record_iterator",
           "RecordReader", "encode_record", "masked_crc32c"]

_HEADER = struct.Struct("<QI")   # length, masked CRC of the length
_FOOTER = struct.Struct("<I")    # masked CRC of the data
_LENGTH = struct.Struct("<Q")
_crc32c = google_crc32c.value


def masked_crc32c(data: bytes) -> int:
    """TF's masked CRC-32C of `data`: the CRC rotated right by 15 bits plus a constant."""
    return _mask(_crc32c(data))


def encode_record(data: bytes) -> bytes:
    """One framed record: header, data, footer."""
    length = _LENGTH.pack(len(data))
    return b"".join((length, _FOOTER.pack(masked_crc32c(length)), data,
                     _FOOTER.pack(masked_crc32c(data))))


# ---------------------------------------------------------------------------------------------
# Options
# ---------------------------------------------------------------------------------------------
class TFRecordCompressionType:
    """The compression applied to a whole TFRecord file."""

    NONE = 0
    ZLIB = 1
    GZIP = 2


_TYPE_STRINGS = {TFRecordCompressionType.NONE: "", TFRecordCompressionType.ZLIB: "ZLIB",
                 TFRecordCompressionType.GZIP: "GZIP"}
# zlib's wbits: a positive window size means a zlib header, +16 a gzip header (zlib.h).
_HEADER_BITS = {"ZLIB": 0, "GZIP": 16}


class TFRecordOptions:
    """Options for TFRecordWriter and tf_record_iterator: the compression type and zlib's
    tuning knobs (None leaves zlib's defaults)."""

    compression_type_map = dict(_TYPE_STRINGS)

    def __init__(self, compression_type: Any = None, flush_mode: Optional[int] = None,
                 input_buffer_size: Optional[int] = None, output_buffer_size: Optional[int] = None,
                 window_bits: Optional[int] = None, compression_level: Optional[int] = None,
                 compression_method: Optional[int] = None, mem_level: Optional[int] = None,
                 compression_strategy: Optional[int] = None) -> None:
        self.compression_type = _compression_string(compression_type)
        self.flush_mode = flush_mode
        self.input_buffer_size = input_buffer_size
        self.output_buffer_size = output_buffer_size
        self.window_bits = window_bits
        self.compression_level = compression_level
        self.compression_method = compression_method
        self.mem_level = mem_level
        self.compression_strategy = compression_strategy

    @classmethod
    def get_compression_type_string(cls, options: Any) -> str:
        """"", "ZLIB" or "GZIP" for TFRecordOptions, a compression type, a string or None."""
        if isinstance(options, TFRecordOptions):
            return options.compression_type
        return _compression_string(options)

    def _wbits(self) -> int:
        return (self.window_bits or zlib.MAX_WBITS) + _HEADER_BITS[self.compression_type]

    def _compressor(self) -> Any:
        level = zlib.Z_DEFAULT_COMPRESSION if self.compression_level is None else self.compression_level
        return zlib.compressobj(level, self.compression_method or zlib.DEFLATED, self._wbits(),
                                self.mem_level or zlib.DEF_MEM_LEVEL,
                                zlib.Z_DEFAULT_STRATEGY if self.compression_strategy is None
                                else self.compression_strategy)

    def __repr__(self) -> str:
        return f"TFRecordOptions(compression_type={self.compression_type!r})"


def _compression_string(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        raise ValueError(f"Not a valid compression_type: {value!r}")
    if isinstance(value, int):
        if value in _TYPE_STRINGS:
            return _TYPE_STRINGS[value]
    elif isinstance(value, (str, bytes)):
        text = value.decode() if isinstance(value, bytes) else value
        if text in ("", "ZLIB", "GZIP"):
            return text
    raise ValueError(f"Not a valid compression_type: {value!r}; expected a TFRecordCompressionType "
                     f"or one of '', 'ZLIB', 'GZIP'")


def _as_options(options: Any) -> TFRecordOptions:
    if isinstance(options, TFRecordOptions):
        return options
    return TFRecordOptions(options)


# ---------------------------------------------------------------------------------------------
# Writing
# ---------------------------------------------------------------------------------------------
class TFRecordWriter:
    """Writes records to a TFRecord file; usable as a context manager.

    The file is created (truncated) on construction. Records are bytes (str is UTF-8 encoded).
    """

    def __init__(self, path: Any, options: Any = None) -> None:
        self._path = as_path(path)
        self._options = _as_options(options)
        self._file: Optional[IO[bytes]] = open_file(self._path, "wb")
        self._compressor = self._options._compressor() if self._options.compression_type else None
        self._lock = threading.Lock()  # a summary writer thread and the caller may share one

    def write(self, record: Union[bytes, str]) -> None:
        """Appends one record."""
        if isinstance(record, str):
            record = record.encode("utf-8")
        elif not isinstance(record, (bytes, bytearray, memoryview)):
            raise TypeError(f"TFRecordWriter.write expects bytes, got {type(record).__name__}")
        framed = encode_record(bytes(record))
        with self._lock:
            self._out(framed if self._compressor is None else self._compressor.compress(framed))

    def flush(self) -> None:
        """Pushes buffered records to the file system (a compressed stream is sync-flushed, so a
        reader sees every record written so far)."""
        with self._lock:
            if self._compressor is not None:
                self._out(self._compressor.flush(zlib.Z_SYNC_FLUSH))
            self._checked_file().flush()

    def close(self) -> None:
        """Finishes the file. Closing twice is allowed."""
        with self._lock:
            if self._file is None:
                return
            try:
                if self._compressor is not None:
                    self._file.write(self._compressor.flush(zlib.Z_FINISH))
                self._file.close()
            except OSError as err:
                raise os_error_to_tf(err, self._path) from None
            finally:
                self._file = None

    def _checked_file(self) -> IO[bytes]:
        if self._file is None:
            raise errors.FailedPreconditionError(None, None, f"Writer for {self._path} is closed.")
        return self._file

    def _out(self, data: bytes) -> None:
        if data:
            self._checked_file().write(data)

    def __enter__(self) -> "TFRecordWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # noqa: BLE001  (interpreter shutdown, failing disk: nothing to report to)
            pass


# ---------------------------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------------------------
class _ZlibStream:
    """`read(n)` over the decompressed bytes of a zlib or gzip file."""

    _CHUNK = 1 << 16

    def __init__(self, file: IO[bytes], wbits: int, path: str) -> None:
        self._file = file
        self._inflater = zlib.decompressobj(wbits)
        self._buffer = bytearray()
        self._path = path

    def read(self, n: int) -> bytes:
        while len(self._buffer) < n and not self._inflater.eof:
            chunk = self._file.read(self._CHUNK)
            try:
                if not chunk:
                    self._buffer += self._inflater.flush()
                    break
                self._buffer += self._inflater.decompress(chunk)
            except zlib.error as err:
                raise errors.DataLossError(None, None, f"{self._path}: corrupted compressed "
                                           f"stream: {err}") from None
        out = bytes(self._buffer[:n])
        del self._buffer[:n]
        return out

    def remaining(self) -> Optional[int]:
        """Unknown for a compressed stream: reads stop at its end instead."""
        return None

    def close(self) -> None:
        self._file.close()


class _PlainStream:
    """An uncompressed file, which knows how many bytes are left in it: a record length is
    checked against that before anything is allocated (a damaged length field with a valid CRC
    may claim 2^64-1 bytes)."""

    def __init__(self, file: IO[bytes]) -> None:
        self._file = file
        self.read = file.read

    def remaining(self) -> Optional[int]:
        # Asked again per large record, not once at open: a file still being written grows.
        return os.fstat(self._file.fileno()).st_size - self._file.tell()

    def close(self) -> None:
        self._file.close()


# Records up to this length are read without asking the file its size first: reading past the
# end just returns fewer bytes, and the size query would cost a system call per record.
_SIZE_CHECK_MIN = 1 << 20


class RecordReader:
    """Reads the records of one TFRecord file in order. `read_record()` returns the next
    record's bytes, or None at the end of the file; a bad CRC or a truncated record raises
    `tf.errors.DataLossError` naming the file and the (uncompressed) offset."""

    def __init__(self, path: Any, options: Any = None) -> None:
        self.path = as_path(path)
        opts = _as_options(options)
        file = open_file(self.path, "rb")
        self._stream: Any = (_PlainStream(file) if not opts.compression_type
                             else _ZlibStream(file, opts._wbits(), self.path))
        self.offset = 0  # where the next record starts

    def read_record(self) -> Optional[bytes]:
        if self._stream is None:
            raise errors.FailedPreconditionError(None, None, f"Reader for {self.path} is closed.")
        header = self._stream.read(_HEADER.size)
        if not header:
            return None
        if len(header) < _HEADER.size:
            # TF stops quietly on a partial header; a cut-off file should not look complete.
            raise self._loss("truncated record")
        length, length_crc = _HEADER.unpack(header)
        if masked_crc32c(header[:8]) != length_crc:
            raise self._loss("corrupted record")
        if length >= _SIZE_CHECK_MIN:
            left = self._stream.remaining()
            if left is not None and length + _FOOTER.size > left:
                raise self._loss("truncated record", detail=f": its length field says {length} bytes, "
                                 f"only {left} are left in the file")
        body = self._stream.read(length + _FOOTER.size)
        if len(body) < length + _FOOTER.size:
            raise self._loss("truncated record")
        data = body[:length]
        if masked_crc32c(data) != _FOOTER.unpack_from(body, length)[0]:
            raise self._loss("corrupted record", self.offset + _HEADER.size)
        self.offset += _HEADER.size + len(body)
        return data

    def _loss(self, what: str, offset: Optional[int] = None, detail: str = "") -> errors.DataLossError:
        at = self.offset if offset is None else offset
        return errors.DataLossError(None, None, f"{what} at {at} in file {self.path}{detail}")

    def close(self) -> None:
        if self._stream is not None:
            self._stream.close()
            self._stream = None

    def __enter__(self) -> "RecordReader":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __iter__(self) -> Iterator[bytes]:
        while True:
            record = self.read_record()
            if record is None:
                return
            yield record


def tf_record_iterator(path: Any, options: Any = None) -> Iterator[bytes]:
    """Yields the records of the TFRecord file `path` as bytes. The file is opened at once
    (a missing file raises `tf.errors.NotFoundError` here, not on the first `next`)."""
    reader = RecordReader(path, options)
    return _iterate(reader)


def _iterate(reader: RecordReader) -> Iterator[bytes]:
    with reader:
        yield from reader
