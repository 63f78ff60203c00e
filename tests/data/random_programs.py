"""Random-op programs written once for both libraries: make_tf_random_fixtures.py runs them under
TensorFlow to record its numbers, tests/ops/test_random_ops.py under tensorweave to compare.
`tf` is either module; the op order matters (derived op seeds follow it)."""
import numpy as np


def graph_seeded_ops(tf):
    """A graph seed with and without op seeds, every dtype (in the current default graph)."""
    tf.set_random_seed(42)
    return {
        "uniform_f32": tf.random_uniform([7], seed=7),
        "uniform_f64": tf.random_uniform([2, 3], dtype=tf.float64),
        "uniform_f16": tf.random_uniform([6], dtype=tf.float16, seed=3),
        "uniform_scaled": tf.random_uniform([5], minval=-2.0, maxval=3.0),
        "normal_f32": tf.random_normal([7], seed=11),
        "normal_f64": tf.random_normal([5], dtype=tf.float64, seed=11),
        "normal_f16": tf.random_normal([6], dtype=tf.float16, seed=11),
        "normal_scaled": tf.random_normal([3], mean=1.0, stddev=2.0),
        "truncated_f32": tf.truncated_normal([7], seed=12),
        "truncated_f64": tf.truncated_normal([5], dtype=tf.float64, seed=12),
        "truncated_f16": tf.truncated_normal([6], dtype=tf.float16, seed=12),
        "int32": tf.random_uniform([7], minval=-5, maxval=100, dtype=tf.int32, seed=13),
        "int64": tf.random_uniform([5], minval=-2**40, maxval=2**50, dtype=tf.int64, seed=13),
        "shuffle": tf.random_shuffle(tf.range(10), seed=21),
        "shuffle_rows": tf.random_shuffle(tf.reshape(tf.range(12), [6, 2]), seed=22),
        "multinomial": tf.multinomial([[0.1, 1.0, -0.5, 2.0], [1.0, 1.0, 1.0, -np.inf]], 10, seed=5),
    }
