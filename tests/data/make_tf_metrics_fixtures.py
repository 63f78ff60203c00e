"""Writes tf_metrics_expected.json: what TensorFlow 2.21's tf.compat.v1.metrics compute for the
cases of metrics_cases.py (value and update_op after each batch, the metric's local variables and
the collections they sit in). Run under /opt/tfref only:

    /opt/tfref/bin/python tests/data/make_tf_metrics_fixtures.py
"""
import json
import os
import sys

import numpy as np
import tensorflow.compat.v1 as tf

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metrics_cases  # noqa: E402

tf.disable_v2_behavior()
tf.get_logger().setLevel("ERROR")


def _placeholder(case, name, first):
    shape = metrics_cases.placeholder_shape(case, first)
    if isinstance(first, dict):
        return tf.sparse_placeholder(tf.int64, shape=shape, name=name)
    return tf.placeholder(tf.as_dtype(first.dtype), shape=shape, name=name)


def _feed_value(value):
    if isinstance(value, dict):
        return tf.SparseTensorValue(value["indices"], value["values"], value["dense_shape"])
    return value


def _plain(x):
    x = np.asarray(x)
    return {"dtype": str(x.dtype), "shape": list(x.shape),
            "value": [None if np.isnan(v) else float(v) for v in x.ravel().astype(np.float64)]}


def run_case(case):
    with tf.Graph().as_default() as g:
        inputs = {k: _placeholder(case, k, v) for k, v in case["batches"][0].items()}
        value, update = getattr(tf.metrics, case["metric"])(**inputs, **case["kwargs"])
        init = tf.local_variables_initializer()
        out = {"id": case["id"], "updates": [], "values": [],
               "value_name": value.name, "update_name": update.name,
               "local_variables": [v.op.name for v in tf.local_variables()],
               "metric_variables": [v.op.name for v in g.get_collection(tf.GraphKeys.METRIC_VARIABLES)],
               "global_variables": [v.op.name for v in tf.global_variables()],
               "variable_dtypes": [v.dtype.base_dtype.name for v in tf.local_variables()],
               "variable_shapes": [v.shape.as_list() for v in tf.local_variables()]}
        with tf.Session(graph=g) as sess:
            sess.run(init)
            for batch in case["batches"]:
                feed = {inputs[k]: _feed_value(v) for k, v in batch.items()}
                out["updates"].append(_plain(sess.run(update, feed)))
                out["values"].append(_plain(sess.run(value)))
        return out


def main():
    results = []
    for case in metrics_cases.cases():
        results.append({**run_case(case), "metric": case["metric"], "kwargs": case["kwargs"],
                        "dynamic": case.get("dynamic", False),
                        "batches": [{k: metrics_cases.encode(v) for k, v in b.items()}
                                    for b in case["batches"]]})
    matrices = []
    for case in metrics_cases.confusion_matrix_cases():
        with tf.Graph().as_default():
            kwargs = {k: v for k, v in case.items() if k in ("num_classes", "weights", "dtype")}
            cm = tf.math.confusion_matrix(case["labels"], case["predictions"], **kwargs)
            with tf.Session() as sess:
                got = sess.run(cm)
        matrices.append({"id": case["id"], "dtype": cm.dtype.name, "static_shape": cm.shape.as_list(),
                         "value": got.tolist()})
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tf_metrics_expected.json")
    with open(path, "w") as f:
        json.dump({"tensorflow": tf.__version__, "cases": results, "confusion_matrix": matrices}, f,
                  separators=(",", ":"))
    print(f"wrote {len(results)} cases to {path}")


if __name__ == "__main__":
    main()
