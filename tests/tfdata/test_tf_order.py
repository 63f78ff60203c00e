"""Each pipeline of make_tf_data_fixtures.py, rebuilt here: the same elements, in TensorFlow's
order (tests/data/tf_data_expected.json), and TFRecord, text and fixed-length files TF wrote."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.tfdata.helpers import FILES, load_expected, plain, run_all

EXPECTED = load_expected()

PIPELINES = {
    "map_filter_batch": lambda: tf.data.Dataset.range(10).map(lambda x: x * 2)
    .filter(lambda x: tf.equal(x % 3, 0)).batch(3),
    "dict_slices_batch_drop": lambda: tf.data.Dataset.from_tensor_slices(
        {"a": np.arange(7, dtype=np.int32), "b": np.arange(14, dtype=np.float32).reshape(7, 2)}).batch(
        2, drop_remainder=True),
    "zip_skip_take_repeat": lambda: tf.data.Dataset.zip(
        (tf.data.Dataset.range(5), tf.data.Dataset.range(5, 10))).skip(1).take(3).repeat(2),
    "padded_batch": lambda: tf.data.Dataset.range(5).map(lambda x: tf.fill([x], x)).padded_batch(2, [None]),
    "padded_batch_fixed": lambda: tf.data.Dataset.range(4).map(lambda x: tf.fill([x], x)).padded_batch(
        3, [5], padding_values=tf.constant(-1, tf.int64)),
    "concatenate_unbatch": lambda: tf.data.Dataset.from_tensors([1, 2, 3]).concatenate(
        tf.data.Dataset.from_tensor_slices([[4, 5, 6]])).unbatch(),
    "shard": lambda: tf.data.Dataset.range(11).shard(3, 1),
    "tuple_map_strings": lambda: tf.data.Dataset.from_tensor_slices(
        (np.array([b"a", b"bb", b"ccc"]), np.array([1, 2, 3], np.int32))).map(
        lambda s, n: (tf.strings.length(s) + n, s)),
    "parallel_map_prefetch": lambda: tf.data.Dataset.range(20).map(
        lambda x: x * x, num_parallel_calls=4).prefetch(3),
    "flat_map": lambda: tf.data.Dataset.range(1, 4).flat_map(lambda x: tf.data.Dataset.from_tensors(x).repeat(x)),
    "interleave": lambda: tf.data.Dataset.range(1, 6).interleave(
        lambda x: tf.data.Dataset.from_tensors(x).repeat(6), cycle_length=2, block_length=4),
    "interleave_uneven": lambda: tf.data.Dataset.range(1, 5).interleave(
        lambda x: tf.data.Dataset.range(x * 10, x * 10 + x), cycle_length=3, block_length=2),
    "from_generator": lambda: tf.data.Dataset.from_generator(
        lambda: ((i, [1.5] * i) for i in range(4)), (tf.int64, tf.float32),
        (tf.TensorShape([]), tf.TensorShape([None]))).repeat(2),
    "cache_repeat": lambda: tf.data.Dataset.range(3).map(lambda x: x + 1).cache().repeat(2),
}


@pytest.mark.parametrize("name", sorted(PIPELINES))
def test_same_elements_in_tf_order(name):
    assert [plain(e) for e in run_all(PIPELINES[name])] == EXPECTED[name]


def _file(name):
    return os.path.join(FILES, name)


READERS = {
    "tfrecord": lambda: tf.data.TFRecordDataset([_file("plain.tfrecord")]),
    "tfrecord_gzip": lambda: tf.data.TFRecordDataset(_file("gzip.tfrecord"), compression_type="GZIP"),
    "tfrecord_zlib": lambda: tf.data.TFRecordDataset(_file("zlib.tfrecord"), compression_type="ZLIB"),
    "text": lambda: tf.data.TextLineDataset(_file("lines.txt")),
    "fixed": lambda: tf.data.FixedLengthRecordDataset(_file("fixed.bin"), 4, header_bytes=3, footer_bytes=2),
}


@pytest.mark.parametrize("name", sorted(READERS))
def test_readers_read_tf_written_files(name):
    assert [plain(e) for e in run_all(READERS[name])] == EXPECTED[name]


def test_shuffle_with_a_seed_is_a_deterministic_permutation_but_not_tfs_order():
    # TF's ShuffleDataset draws from its Philox stream in an order not reproduced here; what
    # holds is that a seeded shuffle is one fixed permutation, and its buffer bounds how far an
    # element moves (element i comes out no earlier than position i - buffer_size + 1).
    make = lambda: tf.data.Dataset.range(20).shuffle(5, seed=42)  # noqa: E731
    first, second = run_all(make), run_all(make)
    order = [int(v) for v in first]
    assert order == [int(v) for v in second]
    assert sorted(order) == list(range(20))
    tf_order = [e["values"][0] for e in EXPECTED["shuffle_seed"]]
    assert sorted(tf_order) == list(range(20))
    for position, value in enumerate(order):
        assert position >= value - 4
