"""Writes the TensorFlow-made fixtures of tests/data (GraphDef, V2 checkpoint, expected values).

Run with real TensorFlow, never imported by the tests: `/opt/tfref/bin/python make_tf_fixtures.py tests/data`."""
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
out = sys.argv[1]

# 1. A GraphDef: placeholders, constants of several encodings, math, a cond and a while loop.
g = tf.Graph()
with g.as_default():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    k = tf.placeholder(tf.int32, [], name="k")
    w = tf.constant(np.arange(6, dtype=np.float32).reshape(3, 2) / 4.0, name="w")
    bias = tf.constant(0.5, name="bias")
    y = tf.nn.sigmoid(tf.matmul(x, w) + bias, name="y")
    words = tf.constant([b"graph", b"def", b""], name="words")
    words_out = tf.identity(words, name="words_out")
    s = tf.reduce_sum(y, axis=1, name="s")
    c = tf.cond(k > 2, lambda: s * 2.0, lambda: s - 1.0, name="c")
    i0 = tf.constant(0, name="i0")
    acc0 = tf.constant(1.0, name="acc0")
    _, loop = tf.while_loop(lambda i, a: i < k, lambda i, a: (i + 1, a * 1.5), [i0, acc0], name="loop")
    out_shape = tf.shape(tf.concat([x, x], axis=1), name="cat_shape")
with open(os.path.join(out, "tf_written_graph.pb"), "wb") as f:
    f.write(g.as_graph_def().SerializeToString())
feed_x = np.array([[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]], np.float32)
with tf.Session(graph=g) as sess:
    results = {}
    for kv in (1, 4):
        r = sess.run({"y": y, "c": c, "loop": loop, "cat_shape": out_shape, "words": words_out},
                     {x: feed_x, k: kv})
        for name, value in r.items():
            results[f"{name}_k{kv}"] = value.astype("S") if value.dtype == object else value
np.savez(os.path.join(out, "tf_written_graph_expected.npz"), feed_x=feed_x, **results)

# 2. A V2 checkpoint: several dtypes, strings, a scalar and a partitioned variable (saved as
#    slices), plus the values and the TF index/data bytes the reader and writer are checked with.
g = tf.Graph()
with g.as_default():
    values = {
        "dense/kernel": np.arange(6, dtype=np.float32).reshape(2, 3) / 3.0,
        "words": np.array([b"hello", b"", "\u00e9t\u00e9".encode("utf-8"), b"x" * 300], dtype=object),
        "global_step": np.int64(1234),
        "flags": np.array([True, False, True]),
        "half": np.array([1.5, -2.25], dtype=np.float16),
        "cplx": np.array([1 + 2j, -3.5j], dtype=np.complex64),
        "scalar64": np.float64(2.718281828459045),
        "ints": np.arange(-3, 3, dtype=np.int32).reshape(3, 2),
    }
    created = [tf.Variable(v, name=k) for k, v in values.items()]
    part = tf.get_variable("part", shape=[6, 4], initializer=tf.random_uniform_initializer(seed=3),
                           partitioner=tf.fixed_size_partitioner(3))
    saver = tf.train.Saver()
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        part_value = sess.run(part.as_tensor())
        saver.save(sess, os.path.join(out, "tf_checkpoint", "model.ckpt"), global_step=7, write_meta_graph=False)
expected = {k.replace("/", "__"): (v.astype("S") if v.dtype == object else v) for k, v in values.items()}
np.savez(os.path.join(out, "tf_checkpoint_expected.npz"), part=part_value, **expected)
