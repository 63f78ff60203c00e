"""Checkpoint bundles: TF's V2 layout byte for byte, every dtype, slices, checksums, and the
commit protocol (a save interrupted before or after its commit point)."""
import os
import shutil

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.lib import crc32c, sstable, tensor_bundle, tensor_slice
from tensorweave.lib.checkpoint_protos import BundleEntryProto

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
TF_PREFIX = os.path.join(DATA, "tf_checkpoint", "model.ckpt-7")


def _expected():
    return np.load(os.path.join(DATA, "tf_checkpoint_expected.npz"))


def _same(value, expected):
    if value.dtype == object:
        return value.shape == expected.shape and all(a == b for a, b in zip(value.reshape(-1), expected.reshape(-1)))
    return value.dtype == expected.dtype and np.array_equal(value, expected)


# -- crc32c and the table format -----------------------------------------------------------------
def test_crc32c_matches_reference_and_masking_inverts():
    import google_crc32c
    data = np.random.RandomState(0).bytes(100_003)
    assert crc32c.value(data) == google_crc32c.value(data)
    array = np.frombuffer(data[:100_000], dtype=np.float32)
    assert crc32c.value(array) == google_crc32c.value(data[:100_000])
    assert crc32c.extend(crc32c.value(data[:10]), data[10:]) == google_crc32c.value(data)
    for c in (0, 1, 0xFFFFFFFF, crc32c.value(data)):
        assert crc32c.unmask(crc32c.mask(c)) == c


def test_sstable_roundtrip_many_blocks_and_key_order():
    rng = np.random.RandomState(1)
    keys = sorted({("key/%06d/" % i).encode() + rng.bytes(3) for i in range(3000)})
    items = [(k, rng.bytes(int(rng.randint(0, 400)))) for k in keys]  # > 256 KB: several blocks
    table = sstable.build_table(items)
    assert sstable.parse_table(table) == items
    with pytest.raises(ValueError):
        sstable.build_table([(b"b", b""), (b"a", b"")])
    corrupted = bytearray(table)
    corrupted[100] ^= 0x40
    with pytest.raises(sstable.TableError):
        sstable.parse_table(bytes(corrupted))
    with pytest.raises(sstable.TableError):
        sstable.parse_table(table[:-3])


# -- compatibility with TensorFlow's files --------------------------------------------------------
def test_reads_every_dtype_and_slices_of_a_tf_checkpoint():
    reader = tensor_bundle.BundleReader(TF_PREFIX)
    expected = _expected()
    assert sorted(reader.keys()) == sorted(k.replace("__", "/") for k in expected.files)
    for key in reader.keys():
        want = expected[key.replace("/", "__")]
        got = reader.read(key)
        if got.dtype == object:
            got = got.astype(want.dtype)
        assert _same(got, want), key
        assert reader.shape(key) == list(want.shape)
    assert reader.dtype("global_step") == tf.int64 and reader.dtype("words") == tf.string
    part = expected["part"]
    region, = reader.read_many(["part"], specs=["6 4 1,3:2,2"])
    np.testing.assert_array_equal(region, part[1:4, 2:4])


def test_writer_reproduces_tf_bytes_exactly(tmp_path):
    """Re-writing the TF checkpoint's tensors in its order gives identical index and data files."""
    reader = tensor_bundle.BundleReader(TF_PREFIX)
    items = sstable.parse_table(open(TF_PREFIX + ".index", "rb").read())[1:]
    entries = [(k, BundleEntryProto.FromString(v)) for k, v in items]
    prefix = str(tmp_path / "model.ckpt-7")
    writer = tensor_bundle.BundleWriter(prefix)
    slice_of = {}
    for key, entry in entries:
        for stored in entry.slices:
            extents = [(e.start, e.length if e.HasField("length") else -1) for e in stored.extent]
            shape = [d.size for d in entry.shape.dim]
            slice_of[tensor_slice.slice_key(key.decode(), extents)] = (key.decode(), shape, extents)
    for key, entry in sorted(entries, key=lambda kv: kv[1].offset):
        if entry.slices:
            continue
        if key in slice_of:
            name, shape, extents = slice_of[key]
            value, = reader.read_many([name], specs=[tensor_slice.format_shape_and_slice(shape, extents)])
            writer.add_slice(name, shape, extents, value)
        else:
            writer.add(key.decode(), reader.read(key.decode()))
    writer.finish()
    for suffix in (".index", ".data-00000-of-00001"):
        assert open(prefix + suffix, "rb").read() == open(TF_PREFIX + suffix, "rb").read(), suffix


def test_slice_keys_are_tf_ordered_code():
    items = dict(sstable.parse_table(open(TF_PREFIX + ".index", "rb").read()))
    for start in (0, 2, 4):
        assert tensor_slice.slice_key("part", [(start, 2), (0, 4)]) in items
    assert tensor_slice.slice_key("x", [(0, -1)]) == b"\x00x\x00\x01\x01\x01\x80\x7f"
    big = tensor_slice.slice_key("x", [(123456789, 1 << 40)])
    assert big.startswith(b"\x00x\x00\x01\x01\x01")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tensor_slice.parse_shape_and_slice("4 5 0,2")
    with pytest.raises(tf.errors.InvalidArgumentError):
        tensor_slice.parse_shape_and_slice("4 0,5")
    assert tensor_slice.parse_shape_and_slice("4 5 1,2:-") == ([4, 5], [(1, 2), (0, -1)])


# -- our own round trips ----------------------------------------------------------------------------
VALUES = {
    "f32": np.arange(12, dtype=np.float32).reshape(3, 4),
    "f64": np.float64(-1.25),
    "f16": np.array([0.5, 65504.0], np.float16),
    "i8": np.array([-128, 127], np.int8), "u8": np.array([0, 255], np.uint8),
    "i16": np.array([[-3]], np.int16), "u16": np.array([65535], np.uint16),
    "i32": np.array([1, -2], np.int32), "i64": np.array([2 ** 40], np.int64),
    "u32": np.array([2 ** 32 - 1], np.uint32), "u64": np.array([2 ** 64 - 1], np.uint64),
    "b": np.array([[True, False]]), "c64": np.array([1 - 1j], np.complex64),
    "c128": np.array([[2 + 3j]], np.complex128), "empty": np.zeros((0, 5), np.float32),
    "s": np.array([[b"a", b""], [b"\x00\xff", "ü".encode()]], dtype=object),
    "big": np.random.RandomState(3).rand(300_000).astype(np.float32),  # checksummed off-thread
    "noncontig": np.arange(20, dtype=np.float64).reshape(4, 5)[:, ::2],
}


def test_roundtrip_all_dtypes(tmp_path):
    prefix = str(tmp_path / "sub" / "ckpt")
    writer = tensor_bundle.BundleWriter(prefix)
    for name, value in VALUES.items():
        writer.add(name, value)
    writer.finish()
    assert sorted(os.listdir(tmp_path / "sub")) == ["ckpt.data-00000-of-00001", "ckpt.index"]
    reader = tensor_bundle.BundleReader(prefix)
    names = list(VALUES)
    values = reader.read_many(names)
    for name, got in zip(names, values):
        assert _same(got, np.asarray(VALUES[name])), name


def test_bad_inputs(tmp_path):
    writer = tensor_bundle.BundleWriter(str(tmp_path / "c"))
    writer.add("a", np.zeros(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="duplicate"):
        writer.add("a", np.zeros(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        writer.add_slice("p", [4, 2], [(0, 2), (0, -1)], np.zeros((3, 2)))
    writer.finish()
    reader = tensor_bundle.BundleReader(str(tmp_path / "c"))
    with pytest.raises(tf.errors.NotFoundError, match="Key b not found in checkpoint"):
        reader.read("b")
    with pytest.raises(tf.errors.InvalidArgumentError, match="tensor_name = a; expected dtype float32"):
        reader.read_many(["a"], dtypes=[tf.float32])
    with pytest.raises(tf.errors.NotFoundError, match="Failed to find any matching files"):
        tensor_bundle.BundleReader(str(tmp_path / "missing"))


def _save(prefix, value):
    writer = tensor_bundle.BundleWriter(prefix)
    writer.add("w", value)
    writer.add("s", np.array([b"gen%d" % int(value.reshape(-1)[0])], dtype=object))
    writer.finish()


def test_corrupted_data_and_index_are_detected(tmp_path):
    prefix = str(tmp_path / "c")
    _save(prefix, np.arange(1000, dtype=np.float32))
    data = prefix + ".data-00000-of-00001"
    raw = bytearray(open(data, "rb").read())
    raw[1234] ^= 0x01
    open(data, "wb").write(bytes(raw))
    with pytest.raises(tf.errors.DataLossError, match=r"Checksum does not match.*tensor w in .*data-00000"):
        tensor_bundle.BundleReader(prefix).read("w")
    open(data, "wb").write(bytes(raw[:2000]))
    with pytest.raises(tf.errors.DataLossError, match="truncated"):
        tensor_bundle.BundleReader(prefix).read("w")
    index = bytearray(open(prefix + ".index", "rb").read())
    index[5] ^= 0x10
    open(prefix + ".index", "wb").write(bytes(index))
    with pytest.raises(tf.errors.DataLossError, match="Corrupted checkpoint index"):
        tensor_bundle.BundleReader(prefix)


def test_interrupted_before_commit_keeps_previous_checkpoint(tmp_path, monkeypatch):
    prefix = str(tmp_path / "same")
    _save(prefix, np.full(10, 1.0))

    def crash(*args):
        raise KeyboardInterrupt("killed before the index was written")

    monkeypatch.setattr(tensor_bundle, "atomic_write", crash)
    with pytest.raises(KeyboardInterrupt):
        _save(prefix, np.full(10, 2.0))
    monkeypatch.undo()
    assert os.path.exists(prefix + ".data-00000-of-00001.pending")  # staged, never committed
    np.testing.assert_array_equal(tensor_bundle.BundleReader(prefix).read("w"), np.full(10, 1.0))
    _save(prefix, np.full(10, 3.0))  # the next save replaces the stale staged file
    np.testing.assert_array_equal(tensor_bundle.BundleReader(prefix).read("w"), np.full(10, 3.0))


def test_interrupted_after_commit_point_is_rolled_forward(tmp_path, monkeypatch):
    prefix = str(tmp_path / "same")
    _save(prefix, np.full(10, 1.0))
    real_replace = os.replace
    calls = []

    def replace(src, dst):
        if src.endswith(".pending"):
            calls.append(dst)
            if len(calls) == 1:
                raise KeyboardInterrupt("killed right after the commit point")
        return real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(KeyboardInterrupt):
        _save(prefix, np.full(10, 2.0))
    monkeypatch.undo()
    assert os.path.exists(prefix + ".index.pending")
    reader = tensor_bundle.BundleReader(prefix)  # finishes the commit, then reads the new save
    np.testing.assert_array_equal(reader.read("w"), np.full(10, 2.0))
    assert reader.read("s")[0] == b"gen2"
    assert not os.path.exists(prefix + ".index.pending")


def test_merge_sharded_parts(tmp_path):
    parts = []
    for i in range(3):
        part = str(tmp_path / "model_temp" / f"part-{i:05d}-of-00003")
        writer = tensor_bundle.BundleWriter(part)
        writer.add(f"v{i}", np.full(4, i, np.int32))
        writer.add_slice("p", [3, 2], [(i, 1), (0, 2)], np.full((1, 2), 10.0 * i))
        writer.finish()
        parts.append(part)
    prefix = str(tmp_path / "model")
    tensor_bundle.merge_bundles(parts, prefix)
    assert not os.path.exists(tmp_path / "model_temp")
    assert sorted(os.listdir(tmp_path)) == ["model.data-00000-of-00003", "model.data-00001-of-00003",
                                          "model.data-00002-of-00003", "model.index"]
    reader = tensor_bundle.BundleReader(prefix)
    assert reader.num_shards == 3 and sorted(reader.keys()) == ["p", "v0", "v1", "v2"]
    for i in range(3):
        np.testing.assert_array_equal(reader.read(f"v{i}"), np.full(4, i, np.int32))
    np.testing.assert_array_equal(reader.read("p"), np.array([[0.0, 0.0], [10.0, 10.0], [20.0, 20.0]]))
    tensor_bundle.delete_bundle(prefix)
    assert os.listdir(tmp_path) == []
    shutil.rmtree(tmp_path, ignore_errors=True)


# -- hostile index entries (valid block CRCs, impossible fields) -----------------------------------
def _tampered_copy(tmp_path, key, change):
    """A copy of TF's fixture checkpoint whose index entry `key` is changed by `change(entry)`
    and re-encoded, so the table's checksums are valid."""
    prefix = str(tmp_path / "model.ckpt-7")
    shutil.copy(TF_PREFIX + ".data-00000-of-00001", prefix + ".data-00000-of-00001")
    items = sstable.parse_table(open(TF_PREFIX + ".index", "rb").read())
    for i, (k, value) in enumerate(items):
        if k == key.encode():
            entry = BundleEntryProto.FromString(value)
            change(entry)
            items[i] = (k, entry.SerializeToString())
    with open(prefix + ".index", "wb") as f:
        f.write(sstable.build_table(items))
    return prefix


def _set_dim(index, size):
    def change(entry):
        entry.shape.dim[index].size = size
    return change


def _set(field, value):
    return lambda entry: setattr(entry, field, value)


_STRING = _set("dtype", 7)


def _add_slice_extent(entry):
    extent = entry.slices[0].extent[0]
    extent.start, extent.length = 4, 5  # rows 4..8 of a 6-row tensor


@pytest.mark.parametrize("key, change, message", [
    ("dense/kernel", _set("dtype", 99), "invalid dtype 99"),
    ("dense/kernel", _set("dtype", 0), "invalid dtype 0"),
    ("dense/kernel", _set("dtype", 101), "float32_ref"),
    ("dense/kernel", _STRING, "Truncated string tensor|string lengths"),  # floats read as strings
    ("dense/kernel", _set_dim(1, -1), "negative dimension"),
    ("dense/kernel", _set_dim(1, (1 << 32) - 1), "need"),
    ("dense/kernel", _set_dim(0, 1 << 40), "need"),
    ("dense/kernel", _set("size", -5), "negative"),
    ("dense/kernel", _set("size", 1 << 40), "need"),
    ("dense/kernel", _set("offset", -(1 << 62)), "negative"),
    ("dense/kernel", _set("offset", 1 << 40), "truncated or the index corrupted"),
    ("dense/kernel", _set("shard_id", 3), "shard 3 of 1"),
    ("dense/kernel", _set("shard_id", -1), "shard -1 of 1"),
    ("words", _set("size", 1 << 62), "truncated or the index corrupted"),
    ("part", _add_slice_extent, "slice outside its shape"),
])
def test_hostile_index_entries_are_data_loss(tmp_path, key, change, message):
    """Fields no writer produces give DataLossError before anything is read or allocated (were
    TypeError, ValueError, UnknownError or MemoryError), through every public reader."""
    prefix = _tampered_copy(tmp_path, key, change)

    def read_all():
        reader = tf.train.NewCheckpointReader(prefix)
        reader.get_variable_to_dtype_map()
        return [reader.get_tensor(name) for name in reader.get_variable_to_shape_map()]

    with pytest.raises(tf.errors.DataLossError, match=message):
        read_all()
    expected = np.load(os.path.join(DATA, "tf_checkpoint_expected.npz"))
    with tf.Graph().as_default():
        variables = [tf.Variable(np.zeros_like(expected[name]), name=name.replace("__", "/"))
                     for name in expected.files if expected[name].dtype.kind != "U"]
        # (a restore checks the dtype first: a float saved as string is InvalidArgumentError)
        with tf.Session() as sess, pytest.raises(tf.errors.InvalidArgumentError if change is _STRING
                                                 else tf.errors.DataLossError):
            tf.train.Saver(variables).restore(sess, prefix)


def test_slices_that_cannot_cover_a_huge_shape_are_not_allocated(tmp_path):
    """A partitioned tensor whose index claims a [6, 2^40] shape: NotFoundError (its slices do
    not cover it), found before allocating 24 TB (was MemoryError)."""
    prefix = _tampered_copy(tmp_path, "part", _set_dim(1, 1 << 40))
    with pytest.raises(tf.errors.NotFoundError, match="do not cover the requested region"):
        tf.train.NewCheckpointReader(prefix).get_tensor("part")


def test_a_pending_index_that_does_not_parse_is_left_alone(tmp_path):
    """A `.index.pending` whose table is valid but whose header is not a BundleHeaderProto is
    not ours to roll forward: the committed checkpoint still reads (was DecodeError)."""
    prefix = str(tmp_path / "c")
    _save(prefix, np.arange(4, dtype=np.float32))
    with open(prefix + ".index.pending", "wb") as f:
        f.write(sstable.build_table([(b"", b"\xff\xff\xff")]))
    np.testing.assert_array_equal(tensor_bundle.BundleReader(prefix).read("w"), np.arange(4, dtype=np.float32))
    assert os.path.exists(prefix + ".index.pending")
