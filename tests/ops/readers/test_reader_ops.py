"""Readers (white paper 4.5): files written by the tests are read through a string queue of
file names. Keys, values, counters and serialized states follow TF1 (checked against
tensorflow.compat.v1); expected records are computed here from the bytes written."""
import gzip

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_static_shape_matches
from tests.ops.queues.test_queue_ops import Background, wait_for_waiters


def _write(path, data):
    path.write_bytes(data)
    return str(path)


def _file_queue(sess, names, close=True):
    q = tf.FIFOQueue(len(names) + 1, tf.string)
    sess.run(q.enqueue_many([names]))
    if close:
        sess.run(q.close())
    return q


def _read_all(sess, key_value):
    records = []
    while True:
        try:
            records.append(tuple(sess.run(key_value)))
        except tf.errors.OutOfRangeError:
            return records


# -- TextLineReader --------------------------------------------------------------------------------
def test_text_line_reader_lines_keys_and_headers(tmp_path):
    a = _write(tmp_path / "a.txt", b"header\nline a\r\n\nline c")
    b = _write(tmp_path / "b.txt", b"h\ny1\ny2\n")
    reader = tf.TextLineReader(skip_header_lines=1)
    assert reader.reader_ref.op.type == "TextLineReaderV2" and not reader.supports_serialize
    with tf.Session() as sess:
        q = _file_queue(sess, [a, b])
        key, value = reader.read(q)
        got = _read_all(sess, [key, value])
        assert sess.run(reader.num_records_produced()) == 5
        assert sess.run(reader.num_work_units_completed()) == 2
    expected = [(f"{a}:2", b"line a"), (f"{a}:3", b""), (f"{a}:4", b"line c"),
                (f"{b}:2", b"y1"), (f"{b}:3", b"y2")]
    assert got == [(k.encode(), v) for k, v in expected]


def test_text_line_reader_counters_and_missing_file(tmp_path):
    a = _write(tmp_path / "a.txt", b"1\n2\n")
    b = _write(tmp_path / "b.txt", b"3\n")
    reader = tf.TextLineReader()
    with tf.Session() as sess:
        q = _file_queue(sess, [a, str(tmp_path / "missing.txt"), b])
        read = reader.read(q)
        assert sess.run(read) == (f"{a}:1".encode(), b"1")
        assert sess.run([reader.num_records_produced(), reader.num_work_units_completed()]) == [1, 0]
        assert sess.run(read).value == b"2"
        with pytest.raises(tf.errors.NotFoundError, match="missing.txt"):
            sess.run(read)  # finishes a.txt, then cannot open the next file (which is skipped)
        assert sess.run(reader.num_work_units_completed()) == 1
        assert sess.run(read) == (f"{b}:1".encode(), b"3")
        with pytest.raises(tf.errors.OutOfRangeError, match="is closed and has insufficient elements"):
            sess.run(read)
        assert sess.run([reader.num_records_produced(), reader.num_work_units_completed()]) == [3, 2]
        sess.run(reader.reset())
        assert sess.run([reader.num_records_produced(), reader.num_work_units_completed()]) == [0, 0]
        with pytest.raises(tf.errors.UnimplementedError, match="SerializeState"):
            sess.run(reader.serialize_state())


def test_read_up_to_stays_within_one_file(tmp_path):
    a = _write(tmp_path / "a.txt", b"a1\na2\na3\na4\n")
    b = _write(tmp_path / "b.txt", b"b1\nb2\n")
    reader = tf.TextLineReader()
    with tf.Session() as sess:
        q = _file_queue(sess, [a, b])
        keys, values = reader.read_up_to(q, 3)
        batches = []
        for _ in range(3):
            k, v = sess.run([keys, values])
            assert_static_shape_matches(keys, k)
            assert_static_shape_matches(values, v)
            batches.append(v.tolist())
        assert k.tolist() == [f"{b}:1".encode(), f"{b}:2".encode()]
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(values)
        with pytest.raises(tf.errors.InvalidArgumentError, match="greater than 0"):
            sess.run(reader.read_up_to(q, 0))
    assert batches == [[b"a1", b"a2", b"a3"], [b"a4"], [b"b1", b"b2"]]


# -- FixedLengthRecordReader -------------------------------------------------------------------------
def _fixed_records(data, record, header, footer, hop):
    hop = hop or record
    limit = len(data) - footer
    out, start = [], header
    while start + record <= limit:
        out.append(data[start:start + record])
        start += hop
    return out


@pytest.mark.parametrize("header,footer,hop", [(2, 3, 0), (2, 3, 4), (0, 0, 0), (5, 1, 2)])
def test_fixed_length_record_reader(tmp_path, header, footer, hop):
    data = bytes(range(23))
    path = _write(tmp_path / "f.bin", data)
    reader = tf.FixedLengthRecordReader(5, header_bytes=header, footer_bytes=footer, hop_bytes=hop)
    with tf.Session() as sess:
        q = _file_queue(sess, [path])
        got = _read_all(sess, reader.read(q))
    expected = _fixed_records(data, 5, header, footer, hop)
    assert got == [(f"{path}:{i}".encode(), rec) for i, rec in enumerate(expected)]


def test_fixed_length_record_reader_gzip(tmp_path):
    data = np.arange(40, dtype=np.int32).tobytes()
    path = _write(tmp_path / "f.bin.gz", gzip.compress(data))
    reader = tf.FixedLengthRecordReader(16, header_bytes=4, footer_bytes=4, encoding="GZIP")
    with tf.Session() as sess:
        q = _file_queue(sess, [path])
        got = [v for _, v in _read_all(sess, reader.read(q))]
    assert got == _fixed_records(data, 16, 4, 4, 0)
    with pytest.raises(ValueError):
        tf.FixedLengthRecordReader(0)


# -- WholeFileReader and IdentityReader (serializable) ----------------------------------------------
def test_whole_file_reader_and_state(tmp_path):
    a = _write(tmp_path / "a.bin", b"\x00\x01 first file\n")
    b = _write(tmp_path / "b.bin", b"")
    reader = tf.WholeFileReader()
    assert reader.supports_serialize
    with tf.Session() as sess:
        q = _file_queue(sess, [a, b, a])
        read = reader.read(q)
        assert sess.run(read) == (a.encode(), b"\x00\x01 first file\n")
        state = sess.run(reader.serialize_state())
        # TF's ReaderBaseState: work_started=1, work_finished=1, num_records_produced=1, current_work.
        assert state == b"\x08\x01\x10\x01\x18\x01\x22" + bytes([len(a)]) + a.encode()
        assert sess.run(read) == (b.encode(), b"")
        sess.run(reader.restore_state(state))
        assert sess.run(reader.num_records_produced()) == 1
        assert sess.run(read) == (a.encode(), b"\x00\x01 first file\n")


def test_identity_reader_serialize_restore_reset():
    reader = tf.IdentityReader()
    with tf.Session() as sess:
        q = _file_queue(sess, ["w1", "w2", "w3"], close=False)
        read = reader.read(q)
        assert sess.run(reader.serialize_state()) == b""  # a fresh reader: all fields default
        assert sess.run(read) == (b"w1", b"w1")
        state = sess.run(reader.serialize_state())
        assert state == b'\x08\x01\x10\x01\x18\x01"\x02w1'  # as TF serializes it
        assert sess.run(read) == (b"w2", b"w2")
        sess.run(reader.restore_state(state))
        assert sess.run([reader.num_records_produced(), reader.num_work_units_completed()]) == [1, 1]
        assert sess.run(read) == (b"w3", b"w3")
        with pytest.raises(tf.errors.InvalidArgumentError, match="Could not parse state for IdentityReader"):
            sess.run(reader.restore_state("garbage"))
        sess.run(reader.reset())
        assert sess.run(reader.serialize_state()) == b""
        with pytest.raises(tf.errors.InvalidArgumentError, match="Inconsistent work started"):
            sess.run(reader.restore_state(b"\x08\x01\x10\x02"))


# -- TFRecordReader ----------------------------------------------------------------------------------
def _tf_records(path, records, options=None):
    with tf.python_io.TFRecordWriter(str(path), options=options) as writer:
        for r in records:
            writer.write(r)
    return str(path)


def _offsets(records):
    offsets, pos = [], 0
    for r in records:
        offsets.append(pos)
        pos += 8 + 4 + len(r) + 4  # length, its CRC, data, data CRC
    return offsets


@pytest.mark.parametrize("compression", [None, "GZIP", "ZLIB"])
def test_tf_record_reader(tmp_path, compression):
    records = [b"abc", b"", b"hello world", bytes(range(256))]
    options = tf.python_io.TFRecordOptions(compression) if compression else None
    path = _tf_records(tmp_path / "r.tfrecord", records, options)
    reader = tf.TFRecordReader(options=options)
    assert reader.reader_ref.op.get_attr("compression_type") == (compression or "").encode()
    with tf.Session() as sess:
        q = _file_queue(sess, [path, path])
        got = _read_all(sess, reader.read(q))
    keys = [f"{path}:{o}".encode() for o in _offsets(records)]
    assert got == list(zip(keys, records)) * 2


def test_tf_record_reader_corrupted_file(tmp_path):
    path = _tf_records(tmp_path / "bad.tfrecord", [b"good record", b"second"])
    data = bytearray(open(path, "rb").read())
    data[-6] ^= 0xFF  # inside the second record's data
    open(path, "wb").write(bytes(data))
    reader = tf.TFRecordReader()
    with tf.Session() as sess:
        q = _file_queue(sess, [path])
        read = reader.read(q)
        assert sess.run(read).value == b"good record"
        with pytest.raises(tf.errors.DataLossError):
            sess.run(read)


# -- waiting for work ------------------------------------------------------------------------------
def test_reads_wait_for_work_without_holding_threads(tmp_path):
    names = [_write(tmp_path / f"f{i}.txt", b"record %d\n" % i) for i in range(20)]
    reader = tf.TextLineReader()
    q = tf.FIFOQueue(100, tf.string)
    name = tf.placeholder(tf.string, [])
    enq = q.enqueue(name)
    read = reader.read(q)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        readers = [Background(sess.run, read) for _ in range(20)]
        wait_for_waiters(sess, reader.reader_ref, 20, "_pending")
        assert all(r.thread.is_alive() for r in readers)
        for n in names:
            sess.run(enq, {name: n})  # runs while 20 reads wait on the queue
        got = sorted(r.join().result.value for r in readers)
        assert all(r.error is None for r in readers)
        assert sess.run(reader.num_work_units_completed()) == 19  # the last file is still open
    assert got == sorted(b"record %d" % i for i in range(20))


def test_read_timeout_and_session_close(tmp_path):
    path = _write(tmp_path / "a.txt", b"only\n")
    reader = tf.TextLineReader()
    q = tf.FIFOQueue(10, tf.string)
    read = reader.read(q)
    sess = tf.Session()
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(read, options=tf.RunOptions(timeout_in_ms=100))
    sess.run(q.enqueue(path))
    assert sess.run(read) == (f"{path}:1".encode(), b"only")  # the timed-out read took nothing
    blocked = Background(sess.run, read)
    wait_for_waiters(sess, q.queue_ref, 1)  # the read waits for a new file name
    sess.close()
    assert isinstance(blocked.join().error, tf.errors.CancelledError)


def test_reader_needs_a_string_queue():
    reader = tf.IdentityReader()
    q = tf.FIFOQueue(3, tf.int32)
    with tf.Session() as sess:
        sess.run(q.enqueue(1))
        with pytest.raises(tf.errors.InvalidArgumentError, match="single string component"):
            sess.run(reader.read(q))


def test_reader_op_shapes_and_handles(tmp_path):
    path = _write(tmp_path / "a.txt", b"x\n")
    reader = tf.TextLineReader(name="lines")
    assert reader.reader_ref.op.name == "lines"
    with tf.Session() as sess:
        q = _file_queue(sess, [path])
        key, value = reader.read(q.queue_ref)  # a queue handle works as well as a queue
        tensors = [reader.reader_ref, key, value]
        values = sess.run(tensors)
        counters = [reader.num_records_produced(), reader.num_work_units_completed()]
        tensors += counters
        values += sess.run(counters)  # a later step: these ops don't wait for the read
        for t, v in zip(tensors, values):
            assert_static_shape_matches(t, v)
        assert values[1:] == [f"{path}:1".encode(), b"x", 1, 0]
        state = tf.IdentityReader().serialize_state()
        assert_static_shape_matches(state, sess.run(state))
        handles = [cls().reader_ref for cls in (tf.WholeFileReader, tf.TFRecordReader, tf.IdentityReader)]
        handles.append(tf.FixedLengthRecordReader(4).reader_ref)
        for t, v in zip(handles, sess.run(handles)):
            assert_static_shape_matches(t, v)
