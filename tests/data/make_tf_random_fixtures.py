"""Writes tests/data/tf_random_expected.npz: TensorFlow's random numbers for tests/ops/test_random_ops.py.

Run with real TensorFlow, never imported by the tests:
`/opt/tfref/bin/python tests/data/make_tf_random_fixtures.py tests/data`.

Small outputs are stored whole; outputs of a million values as the SHA-256 of their bytes, a
few sampled values and their mean. Multinomial's samples depend on TF's intra-op thread count,
and TF fixes its thread pool with the first session of a process: each count runs in a child
process.
"""
import hashlib
import os
import subprocess
import sys

import numpy as np
from random_programs import graph_seeded_ops  # beside this script

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402
from tensorflow.python.ops import gen_random_ops  # noqa: E402

tf.disable_eager_execution()
BIG = 1_000_000
SAMPLED = np.array([0, 1, 2, 3, 4, 999, 123_457, BIG - 1])


def digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def graph_seeded(out):
    """A graph seed with and without op seeds, every dtype, two runs of each op."""
    with tf.Graph().as_default():
        ops = graph_seeded_ops(tf)
        with tf.Session() as sess:
            for run in (1, 2):
                for name, value in sess.run(ops).items():
                    out[f"{name}_run{run}"] = value


def stateless(out):
    """tf.random.stateless_*: key/counter ops and the V2 samplers (the same values every run)."""
    with tf.Graph().as_default():
        ops = {
            "stateless_uniform": tf.random.stateless_uniform([7], seed=[7, -3]),
            "stateless_uniform_f64": tf.random.stateless_uniform([3], seed=[2**40 + 5, 123],
                                                                 dtype=tf.float64),
            "stateless_normal": tf.random.stateless_normal([5], seed=[7, -3], dtype=tf.float64),
            "stateless_normal_f16": tf.random.stateless_normal([6], seed=[4, 4], dtype=tf.float16),
            "stateless_truncated": tf.random.stateless_truncated_normal([6], seed=[1, 2], stddev=3.0),
            "stateless_int32": tf.random.stateless_uniform([5], seed=[1, 2], minval=-4, maxval=9,
                                                           dtype=tf.int32),
            "stateless_full_int64": tf.random.stateless_uniform([3], seed=[1, 2], minval=None, maxval=None,
                                                                dtype=tf.int64),
            "stateless_categorical": tf.random.stateless_categorical(
                [[0.5, 1.0, -2.0], [0.0, 0.0, 3.0]], 9, seed=[6, 9]),
        }
        with tf.Session() as sess:
            out.update(sess.run(ops))


def large(out):
    """A million values per float32 sampler (op seeds only), fewer for the slower float64 ones."""
    with tf.Graph().as_default():
        specs = {
            "big_uniform_f32": (gen_random_ops.random_uniform, [1000, 1000], tf.float32),
            "big_normal_f32": (gen_random_ops.random_standard_normal, [1000, 1000], tf.float32),
            "big_truncated_f32": (gen_random_ops.truncated_normal, [1000, 1000], tf.float32),
            "big_uniform_f64": (gen_random_ops.random_uniform, [BIG], tf.float64),
            "big_normal_f64": (gen_random_ops.random_standard_normal, [BIG // 10], tf.float64),
            "big_truncated_f64": (gen_random_ops.truncated_normal, [BIG // 20], tf.float64),
            "big_truncated_f16": (gen_random_ops.truncated_normal, [BIG // 10], tf.float16),
        }
        ops = {name: fn(shape, dtype, seed=17, seed2=i + 1) for i, (name, (fn, shape, dtype))
               in enumerate(specs.items())}
        ops["big_int32"] = gen_random_ops.random_uniform_int([BIG], -3, 1000, seed=17, seed2=99)
        with tf.Session() as sess:
            for run in (1, 2):
                for name, value in sess.run(ops).items():
                    flat = value.reshape(-1)
                    out[f"{name}_run{run}_sha256"] = digest(value)
                    out[f"{name}_run{run}_sampled"] = flat[SAMPLED[SAMPLED < flat.size]]
                    out[f"{name}_run{run}_mean"] = flat.astype(np.float64).mean()
                    out[f"{name}_run{run}_shape"] = np.array(value.shape)


def multinomial_child(threads):
    """Prints the digests of a sharded Multinomial under `threads` intra-op threads."""
    logits = (np.sin(np.arange(640, dtype=np.float64)).reshape(64, 10) * 3).astype(np.float32)
    with tf.Graph().as_default():
        op = tf.multinomial(logits, 100, seed=31)
        config = tf.ConfigProto(intra_op_parallelism_threads=threads)
        with tf.Session(config=config) as sess:
            first, second = sess.run(op), sess.run(op)
    print(digest(first), digest(second), " ".join(map(str, first[:, 0])))


def multinomial(out):
    for threads in (1, 2, 4):
        line = subprocess.run([sys.executable, __file__, "--multinomial", str(threads)],
                              capture_output=True, text=True, check=True).stdout.split()
        out[f"multinomial_t{threads}_sha256"] = np.array(line[:2])
        out[f"multinomial_t{threads}_column0"] = np.array(line[2:], np.int64)


def shuffle_and_mnist(out):
    with tf.Graph().as_default():
        op = tf.random_shuffle(np.arange(100_003), seed=24)
        with tf.Session() as sess:
            out["big_shuffle_sha256"] = np.array([digest(sess.run(op)), digest(sess.run(op))])
    # tensorweave/examples/mnist.py's model up to its weights (8x8 digits: 64 pixels, 100 hidden)
    with tf.Graph().as_default():
        tf.set_random_seed(1)
        tf.placeholder(tf.float32, [None, 64])
        tf.placeholder(tf.float32, [None, 10])
        s1, s2 = np.sqrt(6.0 / (64 + 100)), np.sqrt(6.0 / (100 + 10))
        w1 = tf.Variable(tf.random_uniform([64, 100], -s1, s1))
        tf.Variable(tf.zeros([100]))
        w2 = tf.Variable(tf.random_uniform([100, 10], -s2, s2))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out["mnist_weights_sha256"] = np.array([digest(v) for v in sess.run([w1, w2])])


if __name__ == "__main__":
    if sys.argv[1] == "--multinomial":
        multinomial_child(int(sys.argv[2]))
        sys.exit()
    results = {}
    for make in (graph_seeded, stateless, large, multinomial, shuffle_and_mnist):
        make(results)
    np.savez(os.path.join(sys.argv[1], "tf_random_expected.npz"), **results)
