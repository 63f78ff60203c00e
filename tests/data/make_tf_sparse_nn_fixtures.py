"""Writes tests/data/tf_sparse_nn_expected.json: what TensorFlow 2.21 (tf.compat.v1, graph mode)
computes for the programs of sparse_nn_cases.py (VALUES: every fetched array with its dtype; a
SparseTensorValue as its three arrays), and the error class and message of each ERRORS program.

Run with real TensorFlow, never imported by the tests:
`/opt/tfref/bin/python tests/data/make_tf_sparse_nn_fixtures.py tests/data`.
"""
import json
import os
import sys

import numpy as np

import sparse_nn_cases  # beside this script

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_eager_execution()


def encode(value):
    """Nested lists of {"dtype", "shape", "data"} leaves."""
    if isinstance(value, (list, tuple)):
        return [encode(v) for v in value]
    if hasattr(value, "dense_shape"):  # SparseTensorValue / IndexedSlicesValue
        return {"sparse": [encode(getattr(value, f)) for f in value._fields]}
    a = np.asarray(value)
    return {"dtype": a.dtype.name, "shape": list(a.shape), "data": a.reshape(-1).tolist()}


def _message(err):
    """The line saying what went wrong: a run error's text follows its "Node: 'name'" line."""
    lines = str(getattr(err, "message", err)).split("\n")
    for i, line in enumerate(lines[:-1]):
        if line.startswith("Node: '"):
            return lines[i + 1][:300]
    return lines[0][:300]


def run(build):
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        fetch = build(tf)
        init = tf.global_variables_initializer()
        with tf.Session() as sess:
            sess.run(init)
            return sess.run(fetch)


def main(out_dir, cases=sparse_nn_cases.VALUES, errors_cases=sparse_nn_cases.ERRORS,
         file_name="tf_sparse_nn_expected.json"):
    values = {name: encode(run(build)) for name, build in cases.items()}
    errors = {}
    for name, build in errors_cases.items():
        try:
            run(build)
            errors[name] = {"class": None}
        except Exception as e:  # noqa: BLE001  (recording what TF raised)
            errors[name] = {"class": type(e).__name__, "message": _message(e)}
    with open(os.path.join(out_dir, file_name), "w") as f:
        json.dump({"values": values, "errors": errors}, f, indent=0, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
