"""Op cases for tf.data: every dataset kind, read through an iterator made from its structure
(IteratorV2, MakeIterator, IteratorGetNext: the same ops in graph mode and eagerly), a one-shot
iterator, string handles, Dataset.reduce and get_single_element. Random datasets are seeded."""
import os
import tempfile

import numpy as np

import tensorweave as tf
from tensorweave.framework import nest
from tests.op_cases import SEEDED, OpCase

_ROOT = os.path.join(tempfile.gettempdir(), f"tw_op_cases_data_{os.getpid()}")


def _elements(dataset, count):
    """The first `count` elements, each a list of tensors (graph mode: one get_next after the
    other, after the initializer)."""
    iterator = tf.data.Iterator.from_structure(dataset.output_types, dataset.output_shapes)
    before = [iterator.make_initializer(dataset)]
    out = []
    for _ in range(count):
        with tf.control_dependencies(before):
            element = iterator.get_next()
        flat = nest.flatten(element)
        before = [t.op if hasattr(t, "op") else t for t in flat]
        out.append(flat)
    return out


def _files():
    os.makedirs(_ROOT, exist_ok=True)
    text = os.path.join(_ROOT, "lines.txt")
    with open(text, "w") as f:
        f.write("first\nsecond\nthird\n")
    csv = os.path.join(_ROOT, "rows.csv")
    with open(csv, "w") as f:
        f.write("1,2.5\n3,\n")
    fixed = os.path.join(_ROOT, "fixed.bin")
    with open(fixed, "wb") as f:
        f.write(bytes(range(12)))
    record = os.path.join(_ROOT, "records.tfrecord")
    with tf.python_io.TFRecordWriter(record) as writer:
        writer.write(b"alpha")
        writer.write(b"beta")
    return text, csv, fixed, record


def _sources():
    text, csv, fixed, record = _files()
    return (_elements(tf.data.TextLineDataset(text), 2)
            + _elements(tf.data.experimental.CsvDataset(csv, [[0], [-1.0]]), 2)
            + _elements(tf.data.FixedLengthRecordDataset(fixed, 4), 3) + _elements(tf.data.TFRecordDataset(record), 2)
            + _elements(tf.data.Dataset.from_tensors(tf.constant([1, 2])), 1)
            + _elements(tf.data.Dataset.from_tensor_slices({"a": tf.constant([1.0, 2.0]),
                                                            "b": tf.constant(["x", "y"])}), 2))


def _transformations(x):
    numbers = tf.data.Dataset.range(10)
    values = tf.data.Dataset.from_tensor_slices(x)
    out = []
    out += _elements(numbers.map(lambda n: n * 2).filter(lambda n: n % 3 > 0).skip(1).take(3), 3)
    out += _elements(numbers.map(lambda n: n + 1, num_parallel_calls=2).batch(4, drop_remainder=True), 2)
    out += _elements(numbers.flat_map(lambda n: tf.data.Dataset.from_tensors(n).repeat(2)), 3)
    out += _elements(numbers.interleave(lambda n: tf.data.Dataset.range(n).take(2), cycle_length=2, block_length=1), 4)
    out += _elements(numbers.apply(tf.data.experimental.parallel_interleave(
        lambda n: tf.data.Dataset.from_tensors(n), cycle_length=2)), 3)
    out += _elements(numbers.interleave(lambda n: tf.data.Dataset.from_tensors(n), cycle_length=2,
                                        num_parallel_calls=2), 3)
    out += _elements(tf.data.Dataset.zip((numbers, values)).concatenate(tf.data.Dataset.zip((numbers, values))), 4)
    out += _elements(values.padded_batch(2, padded_shapes=[3]).unbatch(), 2)
    out += _elements(values.batch(2).apply(tf.data.experimental.unbatch()), 2)
    out += _elements(values.window(2).flat_map(lambda w: w.batch(2)), 2)
    out += _elements(numbers.shard(3, 1).repeat(2).cache().prefetch(2), 5)
    out += _elements(numbers.map(lambda n: tf.check_numerics(tf.cast(10 // (n - 2), tf.float32), "boom"))
                     .apply(tf.data.experimental.ignore_errors()), 2)
    out += _elements(numbers.apply(tf.data.experimental.group_by_window(
        lambda n: n % 2, lambda key, window: window.batch(5), window_size=5)), 2)
    reducer = tf.data.experimental.Reducer(lambda key: tf.constant(0, tf.int64), lambda s, n: s + n, lambda s: s)
    out += _elements(numbers.apply(tf.data.experimental.group_by_reducer(lambda n: n % 3, reducer)), 3)
    options = tf.data.Options()
    options.experimental_optimization.map_parallelization = True
    options.experimental_threading.max_intra_op_parallelism = 1
    options.experimental_threading.private_threadpool_size = 2
    out += _elements(numbers.map(lambda n: n + 1).map(lambda n: n * 3).with_options(options), 2)
    return out


def _iterators(x):
    values = tf.data.Dataset.from_tensor_slices(x)
    # a one-shot iterator's dataset is built inside its factory: constants only
    one_shot = tf.data.make_one_shot_iterator(tf.data.Dataset.range(3).map(lambda v: v * 2)).get_next()
    iterator = tf.data.Iterator.from_structure(values.output_types, values.output_shapes)
    start = iterator.make_initializer(values)
    handle = iterator.string_handle()
    again = tf.data.Iterator.from_string_handle(handle, values.output_types, values.output_shapes)
    with tf.control_dependencies([start]):
        first = again.get_next()
    total = values.reduce(tf.constant(0.0), lambda s, v: s + tf.reduce_sum(v))
    single = tf.data.experimental.get_single_element(values.batch(10))
    return [one_shot, first, total, single]


def _random_datasets():
    numbers = tf.data.Dataset.range(6)
    out = _elements(numbers.shuffle(6, seed=1), 3)
    out += _elements(numbers.apply(tf.data.experimental.shuffle_and_repeat(6, count=2, seed=2)), 3)
    out += _elements(tf.data.experimental.sample_from_datasets([numbers, numbers.map(lambda n: n + 100)], seed=4), 4)
    out += _elements(tf.data.experimental.choose_from_datasets(
        [numbers, numbers.map(lambda n: -n)],
        tf.data.Dataset.from_tensor_slices(tf.constant([0, 1, 1, 0], tf.int64))), 4)
    return out


CASES = [
    OpCase("data:sources", _sources,
           ops=("TextLineDataset", "CSVDataset", "FixedLengthRecordDatasetV2", "TFRecordDataset", "TensorDataset",
                "TensorSliceDataset", "IteratorV2", "MakeIterator", "IteratorGetNext")),
    OpCase("data:transformations", _transformations, lambda rng: [rng.randn(4, 3).astype(np.float32)],
           ("RangeDataset", "MapDataset", "FilterDataset", "SkipDataset", "TakeDataset", "ParallelMapDataset",
            "BatchDatasetV2", "FlatMapDataset", "RepeatDataset", "InterleaveDataset", "ParallelInterleaveDataset",
            "ParallelInterleaveDatasetV2", "ZipDataset", "ConcatenateDataset", "PaddedBatchDatasetV2",
            "UnbatchDataset", "WindowDataset", "ShardDataset", "CacheDataset", "PrefetchDataset", "IgnoreErrorsDataset",
            "GroupByWindowDataset", "GroupByReducerDataset", "OptimizeDataset", "MaxIntraOpParallelismDataset",
            "PrivateThreadPoolDataset")),
    OpCase("data:iterators", _iterators, lambda rng: [rng.randn(4, 3).astype(np.float32)],
           ("OneShotIterator", "IteratorToStringHandle", "IteratorFromStringHandleV2", "ReduceDataset",
            "DatasetToSingleElement")),
    OpCase("data:random", _random_datasets, compare=SEEDED,
           ops=("ShuffleDataset", "ShuffleAndRepeatDataset", "DirectedInterleaveDataset")),
]
