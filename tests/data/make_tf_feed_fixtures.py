"""Writes tests/data/tf_feed_expected.json: what TensorFlow 2.21 does with the feeds and fetches
of feed_cases.py (the value it computes, or the class and message of its error), for
tests/runtime/test_feeds.py.

Run with real TensorFlow, never imported by the tests:
`/opt/tfref/bin/python tests/data/make_tf_feed_fixtures.py tests/data`.
TF1 graph mode with v1 control flow (Enter/Exit/Switch/Merge), as tensorweave builds it.
"""
import json
import os
import sys
import warnings

import feed_cases  # beside this script

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_eager_execution()
tf.disable_control_flow_v2()


def feeds():
    out = {}
    for name, dtype, shape, value in feed_cases.FEEDS:
        with tf.Graph().as_default():
            p = tf.placeholder(tf.as_dtype(dtype), shape, name="p")
            q = tf.identity(p, name="q")
            with tf.Session() as sess:
                out[name] = feed_cases.outcome(lambda: sess.run(q, {p: value}))
    return out


def scenarios():
    out = {}
    with tf.Graph().as_default() as g:
        t = feed_cases.build_graph(tf)
        with tf.Session() as sess:
            for name, (fetches, feeds_fn) in feed_cases.SCENARIOS.items():
                out[name] = feed_cases.outcome(
                    lambda: sess.run(fetches(g, t), dict(feeds_fn(g, t))))
        out["flags"] = feed_cases.feedable_flags(g, t)
    return out


def main(folder):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NumPy's cast warnings (nan to int, complex to real)
        result = {"tensorflow": tf.__version__, "feeds": feeds(), "scenarios": scenarios()}
    with open(os.path.join(folder, "tf_feed_expected.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
