"""Writes tests/data/tf_gfile_expected.json: what TensorFlow 2.21's tf.gfile and tf.io.gfile do in
each case of gfile_cases.py (the value, or the error class and message), for
tests/platform/test_gfile.py.

Run with real TensorFlow, never imported by the tests:
`/opt/tfref/bin/python tests/data/make_tf_gfile_fixtures.py tests/data`.
"""
import json
import os
import sys
import tempfile

import gfile_cases  # beside this script

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402


def main(folder):
    with tempfile.TemporaryDirectory() as base:
        counter = iter(range(10**6))
        result = {"tensorflow": tf.__version__,
                  "cases": gfile_cases.run_all(tf, lambda: tempfile.mkdtemp(dir=base, prefix=f"{next(counter)}_"))}
    with open(os.path.join(folder, "tf_gfile_expected.json"), "w") as f:
        json.dump(result, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
