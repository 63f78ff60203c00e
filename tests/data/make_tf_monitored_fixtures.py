"""Writes tf_monitored_expected.json: what TensorFlow 2.21 (tf.compat.v1) does with the
monitored-training programs of monitored_cases.py (MonitoredTrainingSession with checkpoint and
summary hooks and a resumed run, hooks' call order, StopAtStepHook, FinalOpsHook, NanTensorHook,
FeedFnHook, SessionManager and ChiefSessionCreator restoring). Run under /opt/tfref only:
    /opt/tfref/bin/python tests/data/make_tf_monitored_fixtures.py"""
import json
import os
import tempfile

import tensorflow.compat.v1 as tf

import monitored_cases

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))


def main():
    out = {}
    for case in monitored_cases.CASES:
        with tempfile.TemporaryDirectory() as d:
            out[case.__name__] = case(tf, d)
    with open(os.path.join(HERE, "tf_monitored_expected.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
