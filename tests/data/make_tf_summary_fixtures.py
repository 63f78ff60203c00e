"""Writes tf_summary_expected.npz: TensorFlow 2.21's summary ops (TF1 API, graph mode) on fixed
inputs: the serialized Summary protos of scalar, histogram, image, audio, text, tensor_summary and
merge, the op names and types and the tags under name scopes and families, the SUMMARIES
collection, and merge's duplicate-tag error. Run under /opt/tfref only:
    /opt/tfref/bin/python tests/data/make_tf_summary_fixtures.py
tests/summary/test_summary_ops.py builds the same graph with tensorweave and compares."""
import json
import os

import numpy as np
import tensorflow.compat.v1 as tf

from summary_cases import build, inputs

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    d = inputs()
    with tf.Graph().as_default() as graph:
        out = build(tf, d)
        names = {k: [v.op.name, v.op.type] for k, v in out.items()}
        collection = [t.name for t in graph.get_collection(tf.GraphKeys.SUMMARIES)]
        with tf.Session() as sess:
            keys = [k for k in out if k != "dup"]
            values = sess.run([out[k] for k in keys])
            try:
                sess.run(out["dup"])
                dup_error = None
            except tf.errors.OpError as err:
                dup_error = [type(err).__name__, next(line for line in err.message.split("\n") if "Duplicate" in line)]
    record = {f"summary_{k}": np.frombuffer(v, dtype=np.uint8) for k, v in zip(keys, values)}
    record.update({f"input_{k}": v for k, v in d.items()})
    meta = {"names": names, "collection": collection, "dup_error": dup_error}
    record["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    np.savez_compressed(os.path.join(HERE, "tf_summary_expected.npz"), **record)


if __name__ == "__main__":
    main()
