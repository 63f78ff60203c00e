"""Writes function_tape_fixtures.json with TensorFlow 2.21 (run with /opt/tfref/bin/python):
the values and gradients of the scenarios in function_tape_cases.py (GradientTape.stop_recording
inside a tf.function, gradients of tf.functions that assign variables)."""
import json
import os
import sys

import tensorflow as tf

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import function_tape_cases  # noqa: E402


def main():
    fixtures = {scenario.__name__: scenario(tf) for scenario in function_tape_cases.SCENARIOS}
    with open(os.path.join(HERE, "function_tape_fixtures.json"), "w") as f:
        json.dump({"tensorflow": tf.__version__, "scenarios": fixtures}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
