"""Writes tf_supervisor_expected.json: what TensorFlow 2.21 (tf.compat.v1) does with the
tf.train.Supervisor programs of supervisor_cases.py (a training loop under managed_session with
timed checkpoints and summaries, then a restart restoring from the logdir; a non-chief task
timing out while it waits for the chief; OutOfRangeError ending managed_session quietly, other
errors raised again; init_op, init_feed_dict, init_fn and the defaults). Run under /opt/tfref only:
    /opt/tfref/bin/python tests/data/make_tf_supervisor_fixtures.py"""
import json
import os
import tempfile

import tensorflow.compat.v1 as tf

import supervisor_cases

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    out = {}
    for case in supervisor_cases.CASES:
        with tempfile.TemporaryDirectory() as d:
            out[case.__name__] = case(tf, d)
    with open(os.path.join(HERE, "tf_supervisor_expected.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
