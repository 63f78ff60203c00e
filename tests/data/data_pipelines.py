"""The tf.data pipelines whose elements TensorFlow recorded (make_tf_data_fixtures.py, under
TF 2.21) and tensorweave replays (tests/tfdata/test_tf_order.py): one definition for both, built
from the `tf` module each passes in."""
import numpy as np

# Order-checked against TF, except these (TF's shuffle order for a seed is not reproduced here).
NOT_REPLAYED = {"shuffle_seed"}


def pipelines(tf):
    return {
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
