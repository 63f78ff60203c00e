"""TFRecord framing: round trips through our writer and reader, files written by real TensorFlow
(fixtures in tests/data), the masked CRC, compression, and DataLossError on damaged files."""
import gzip
import os
import struct
import zlib

import google_crc32c
import pytest

import tensorweave as tf
from tensorweave.lib import tf_record

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
# The records in the fixtures written by TensorFlow (tests/data/README.md).
TF_RECORDS = [b"", b"record 1", bytes(range(256)), b"tensorweave " * 50, "\u00e9t\u00e9".encode("utf-8")]
RECORDS = [b"", b"a", b"hello world", bytes(range(256)) * 40, b"\x00" * 7]


def _masked_reference(data):
    crc = google_crc32c.value(data)
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + 0xA282EAD8) % (1 << 32)


def test_masked_crc32c_matches_definition():
    for data in RECORDS:
        assert tf_record.masked_crc32c(data) == _masked_reference(data)
    # CRC-32C check value from RFC 3720 (iSCSI): crc32c(b"123456789") == 0xE3069283
    assert google_crc32c.value(b"123456789") == 0xE3069283


def test_record_layout(tmp_path):
    path = str(tmp_path / "one.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        writer.write(b"hello")
    raw = open(path, "rb").read()
    length, length_crc = struct.unpack("<QI", raw[:12])
    assert length == 5 and length_crc == _masked_reference(raw[:8])
    assert raw[12:17] == b"hello"
    assert struct.unpack("<I", raw[17:])[0] == _masked_reference(b"hello")


@pytest.mark.parametrize("name,compression", [("tf_written.tfrecord", None),
                                              ("tf_written.tfrecord.gz", "GZIP"),
                                              ("tf_written.tfrecord.zlib",
                                               tf.python_io.TFRecordCompressionType.ZLIB)])
def test_reads_files_written_by_tensorflow(name, compression):
    options = tf.python_io.TFRecordOptions(compression)
    assert list(tf.python_io.tf_record_iterator(os.path.join(DATA, name), options)) == TF_RECORDS


def test_writes_the_same_bytes_as_tensorflow(tmp_path):
    path = str(tmp_path / "ours.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for record in TF_RECORDS:
            writer.write(record)
    assert open(path, "rb").read() == open(os.path.join(DATA, "tf_written.tfrecord"), "rb").read()


@pytest.mark.parametrize("compression", ["", "ZLIB", "GZIP"])
def test_round_trip(tmp_path, compression):
    path = str(tmp_path / f"rt_{compression}.tfrecord")
    options = tf.python_io.TFRecordOptions(compression_type=compression)
    writer = tf.python_io.TFRecordWriter(path, options)
    for record in RECORDS:
        writer.write(record)
    writer.write("text is utf-8")
    writer.close()
    writer.close()  # closing twice is harmless
    assert list(tf.python_io.tf_record_iterator(path, options)) == RECORDS + [b"text is utf-8"]


def test_compressed_files_are_standard_streams(tmp_path):
    records = [b"abc", b"def" * 100]
    for compression, decompress in (("GZIP", gzip.decompress), ("ZLIB", zlib.decompress)):
        path = str(tmp_path / compression)
        with tf.python_io.TFRecordWriter(path, compression) as writer:
            for r in records:
                writer.write(r)
        plain = decompress(open(path, "rb").read())
        assert plain == b"".join(tf_record.encode_record(r) for r in records)


def test_flush_makes_records_visible(tmp_path):
    for compression in ("", "GZIP"):
        path = str(tmp_path / f"flush{compression}")
        writer = tf.python_io.TFRecordWriter(path, tf.python_io.TFRecordOptions(compression))
        writer.write(b"first")
        writer.flush()
        reader = tf_record.RecordReader(path, compression)
        assert reader.read_record() == b"first"
        reader.close()
        writer.close()


def test_write_after_close_and_bad_record_type(tmp_path):
    writer = tf.python_io.TFRecordWriter(str(tmp_path / "w"))
    with pytest.raises(TypeError):
        writer.write(123)
    writer.close()
    with pytest.raises(tf.errors.FailedPreconditionError):
        writer.write(b"x")


def _write_plain(path, records):
    with tf.python_io.TFRecordWriter(path) as writer:
        for r in records:
            writer.write(r)
    return bytearray(open(path, "rb").read())


def _expect_loss(path, text):
    with pytest.raises(tf.errors.DataLossError) as info:
        list(tf.python_io.tf_record_iterator(path))
    assert text in str(info.value) and path in str(info.value)


def test_corrupted_length_crc_names_file_and_offset(tmp_path):
    path = str(tmp_path / "bad_len")
    raw = _write_plain(path, [b"", b"hello"])
    raw[16 + 9] ^= 0xFF  # inside the length CRC of the second record (which starts at 16)
    open(path, "wb").write(bytes(raw))
    _expect_loss(path, "corrupted record at 16")


def test_corrupted_data_crc(tmp_path):
    path = str(tmp_path / "bad_data")
    raw = _write_plain(path, [b"hello", b"world"])
    raw[13] ^= 0x01  # a data byte of the first record
    open(path, "wb").write(bytes(raw))
    _expect_loss(path, "corrupted record at 12")  # TF reports the data's offset


def test_records_before_the_damage_are_delivered(tmp_path):
    path = str(tmp_path / "partial")
    raw = _write_plain(path, [b"good", b"bad!"])
    raw[-6] ^= 0x01
    open(path, "wb").write(bytes(raw))
    iterator = tf.python_io.tf_record_iterator(path)
    assert next(iterator) == b"good"
    with pytest.raises(tf.errors.DataLossError):
        next(iterator)


@pytest.mark.parametrize("cut", [3, 5, 12 + 4])
def test_truncated_file(tmp_path, cut):
    path = str(tmp_path / "trunc")
    raw = _write_plain(path, [b"abcdefgh", b"zz"])
    first = 12 + 8 + 4
    open(path, "wb").write(bytes(raw[:first + cut]))
    _expect_loss(path, f"truncated record at {first}")


def test_corrupted_compressed_stream(tmp_path):
    path = str(tmp_path / "bad.gz")
    with tf.python_io.TFRecordWriter(path, "GZIP") as writer:
        writer.write(b"x" * 1000)
    raw = bytearray(open(path, "rb").read())
    raw[12] ^= 0xFF
    open(path, "wb").write(bytes(raw))
    with pytest.raises(tf.errors.DataLossError):
        list(tf.python_io.tf_record_iterator(path, "GZIP"))


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(tf.errors.NotFoundError):
        tf.python_io.tf_record_iterator(str(tmp_path / "nope"))
    with pytest.raises(tf.errors.NotFoundError):
        tf.python_io.TFRecordWriter(str(tmp_path / "no_dir" / "f"))
    with pytest.raises(tf.errors.FailedPreconditionError):
        tf.python_io.TFRecordWriter(str(tmp_path))


def test_options():
    opts = tf.python_io.TFRecordOptions
    kinds = tf.python_io.TFRecordCompressionType
    assert (kinds.NONE, kinds.ZLIB, kinds.GZIP) == (0, 1, 2)
    assert opts.get_compression_type_string(None) == ""
    assert opts.get_compression_type_string(opts(kinds.GZIP)) == "GZIP"
    assert opts.get_compression_type_string(kinds.ZLIB) == "ZLIB"
    assert opts.get_compression_type_string("GZIP") == "GZIP"
    with pytest.raises(ValueError):
        opts("LZ4")
    with pytest.raises(ValueError):
        opts(7)


def test_io_namespace_aliases():
    assert tf.io.TFRecordWriter is tf.python_io.TFRecordWriter
    assert tf.io.tf_record_iterator is tf.python_io.tf_record_iterator
    assert tf.io.TFRecordOptions is tf.python_io.TFRecordOptions


@pytest.mark.parametrize("length", [(1 << 64) - 1, 1 << 63, 1 << 40, 1 << 21])
@pytest.mark.parametrize("compression", [None, "ZLIB", "GZIP"])
def test_huge_length_with_valid_crc_is_data_loss(tmp_path, length, compression):
    """A length field whose CRC is valid but that claims more bytes than the file holds is
    DataLossError (not MemoryError/OverflowError), after the records before it."""
    header = struct.pack("<Q", length)
    damaged = header + struct.pack("<I", tf_record.masked_crc32c(header)) + b"abc"
    data = tf_record.encode_record(b"first") + damaged
    if compression:
        compressor = tf_record.TFRecordOptions(compression)._compressor()
        data = compressor.compress(data) + compressor.flush()
    path = str(tmp_path / "huge.tfrecord")
    with open(path, "wb") as f:
        f.write(data)
    records = tf.python_io.tf_record_iterator(path, compression)
    assert next(records) == b"first"
    with pytest.raises(tf.errors.DataLossError, match="truncated record at 21 in file"):
        next(records)


def test_huge_length_in_tf_record_reader_op(tmp_path):
    header = struct.pack("<Q", (1 << 64) - 1)
    path = str(tmp_path / "huge.tfrecord")
    with open(path, "wb") as f:
        f.write(tf_record.encode_record(b"first") + header + struct.pack("<I", tf_record.masked_crc32c(header)))
    queue = tf.FIFOQueue(2, tf.string)
    reader = tf.TFRecordReader()
    _, value = reader.read(queue)
    with tf.Session() as sess:
        sess.run(queue.enqueue_many([[path]]))
        assert sess.run(value) == b"first"
        with pytest.raises(tf.errors.DataLossError, match="truncated record"):
            sess.run(value)
