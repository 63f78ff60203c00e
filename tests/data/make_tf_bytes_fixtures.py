"""Writes tests/data/tf_bytes_expected.json: the Python type TensorFlow 2.21 (compat.v1 graph mode)
returns from each public API probed in bytes_cases.py (bytes vs str for names, attrs and NodeDef
fields), for tests/framework/test_api_return_types.py.

Run with real TensorFlow, never imported by the tests:
`/opt/tfref/bin/python tests/data/make_tf_bytes_fixtures.py tests/data`.
"""
import json
import os
import sys

import bytes_cases  # beside this script

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
tf.disable_control_flow_v2()


def main(out_dir):
    result = bytes_cases.probe(tf)
    with open(os.path.join(out_dir, "tf_bytes_expected.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
