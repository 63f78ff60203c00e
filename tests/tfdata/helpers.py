"""What the tf.data tests share: running a dataset to its end, and TF's fixture."""
import json
import os

import numpy as np

import tensorweave as tf

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
FILES = os.path.join(DATA, "tf_data_files")


def load_expected():
    with open(os.path.join(DATA, "tf_data_expected.json")) as f:
        return json.load(f)


def plain(value):
    """An element as the fixture stores it (make_tf_data_fixtures.plain)."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in sorted(value.items())}
    if isinstance(value, (tuple, list)):
        return [plain(v) for v in value]
    value = np.asarray(value)
    if value.dtype.kind in "OS":
        return {"bytes": [v.decode("latin-1") for v in value.ravel()], "shape": list(value.shape)}
    return {"values": value.ravel().tolist(), "shape": list(value.shape), "dtype": value.dtype.name}


def run_all(dataset, limit=10000):
    """Every element of `dataset` through a one-shot iterator, in order."""
    with tf.Graph().as_default():
        nxt = dataset().make_one_shot_iterator().get_next()
        out = []
        with tf.Session() as sess:
            try:
                while len(out) < limit:
                    out.append(sess.run(nxt))
            except tf.errors.OutOfRangeError:
                pass
    return out


def ints(elements):
    return [int(np.asarray(e)) for e in elements]
