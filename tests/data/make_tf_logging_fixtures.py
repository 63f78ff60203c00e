"""Writes tests/data/tf_logging_expected.json: the stdout and stderr lines of logging_program.py
under TensorFlow 2.21, for tests/platform/test_logging.py.

Run with real TensorFlow, never imported by the tests:
`/opt/tfref/bin/python tests/data/make_tf_logging_fixtures.py tests/data`.
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


def main(folder):
    out = subprocess.run([sys.executable, os.path.join(HERE, "logging_program.py"), "tensorflow"],
                         capture_output=True, text=True, check=True)
    # TF's own start-up chatter (oneDNN, CPU feature notices) is not tf.logging output.
    stderr = [line for line in out.stderr.splitlines() if ":tensorflow:" in line]
    result = {"stdout": out.stdout.splitlines(), "stderr": stderr}
    with open(os.path.join(folder, "tf_logging_expected.json"), "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else HERE)
