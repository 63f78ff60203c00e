"""Writes tests/data/tf_data_expected.json and the files under tests/data/tf_data_files/: the
elements TensorFlow's tf.data pipelines produce, in TF's order, and TFRecord/text/fixed-length
files TF wrote. Run with TF's venv only: /opt/tfref/bin/python tests/data/make_tf_data_fixtures.py"""
import json
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()

HERE = os.path.dirname(os.path.abspath(__file__))
FILES = os.path.join(HERE, "tf_data_files")


def plain(value):
    if isinstance(value, dict):
        return {k: plain(v) for k, v in sorted(value.items())}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    value = np.asarray(value)
    if value.dtype.kind in "OS":
        return {"bytes": [v.decode("latin-1") for v in value.ravel()], "shape": list(value.shape)}
    return {"values": value.ravel().tolist(), "shape": list(value.shape), "dtype": value.dtype.name}


def elements(make):
    with tf.Graph().as_default():
        nxt = make().make_one_shot_iterator().get_next()
        out = []
        with tf.Session() as sess:
            try:
                while True:
                    out.append(plain(sess.run(nxt)))
            except tf.errors.OutOfRangeError:
                pass
    return out


# The same pipelines are rebuilt by tests/tfdata/test_tf_order.py (keep them in step).
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
    "shuffle_seed": lambda: tf.data.Dataset.range(20).shuffle(5, seed=42),
}


def write_files():
    os.makedirs(FILES, exist_ok=True)
    records = [b"record-%d" % i * (i + 1) for i in range(5)]
    for kind, name in (("", "plain.tfrecord"), ("GZIP", "gzip.tfrecord"), ("ZLIB", "zlib.tfrecord")):
        with tf.io.TFRecordWriter(os.path.join(FILES, name), options=kind or None) as w:
            for r in records:
                w.write(r)
    with open(os.path.join(FILES, "lines.txt"), "wb") as f:
        f.write(b"first line\nsecond\r\n\nlast without newline")
    with open(os.path.join(FILES, "table.csv"), "wb") as f:
        f.write(b'id,score,name,count\n1,2.5,"a, quoted",3\n2,,plain,\n3,NA,,-4\n')
    with open(os.path.join(FILES, "fixed.bin"), "wb") as f:
        f.write(b"HDR" + bytes(range(20)) + b"FT")


def reader_elements():
    join = lambda n: os.path.join(FILES, n)  # noqa: E731
    return {
        "tfrecord": elements(lambda: tf.data.TFRecordDataset([join("plain.tfrecord")])),
        "tfrecord_gzip": elements(lambda: tf.data.TFRecordDataset(join("gzip.tfrecord"), compression_type="GZIP")),
        "tfrecord_zlib": elements(lambda: tf.data.TFRecordDataset(join("zlib.tfrecord"), compression_type="ZLIB")),
        "text": elements(lambda: tf.data.TextLineDataset(join("lines.txt"))),
        "csv": elements(lambda: tf.data.experimental.CsvDataset(
            join("table.csv"), [tf.int32, [0.5], ["none"], [7]], header=True, na_value="NA")),
        "fixed": elements(lambda: tf.data.FixedLengthRecordDataset(join("fixed.bin"), 4, header_bytes=3,
                                                                   footer_bytes=2)),
    }


def main():
    write_files()
    out = {name: elements(make) for name, make in PIPELINES.items()}
    out.update(reader_elements())
    with open(os.path.join(HERE, "tf_data_expected.json"), "w") as f:
        json.dump(out, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main()
