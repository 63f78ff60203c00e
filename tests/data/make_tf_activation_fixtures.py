"""Writes tests/data/tf_activation_expected.npz: TensorFlow 2.21's CPU outputs of Tanh, Sigmoid,
TanhGrad and SigmoidGrad (float32 and float64) on the inputs of activation_cases.py, for
tests/ops/math/test_activation_rounding.py (bit-exact comparison).

Run with real TensorFlow, never imported by the tests:
`/opt/tfref/bin/python tests/data/make_tf_activation_fixtures.py tests/data`.
"""
import os
import sys

import numpy as np

import activation_cases  # beside this script

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()


def _run(fn, *arrays):
    with tf.Graph().as_default(), tf.Session() as sess:
        holders = [tf.placeholder(tf.as_dtype(a.dtype), a.shape) for a in arrays]
        return sess.run(fn(*holders), dict(zip(holders, arrays)))


def main(out_dir):
    out = {}
    cases = (("float32", activation_cases.float32_inputs()), ("float64", activation_cases.float64_inputs()))
    for name, inputs in cases:
        out[f"tanh_{name}"] = _run(tf.tanh, inputs)
        out[f"sigmoid_{name}"] = _run(tf.sigmoid, inputs)
        y, dy = activation_cases.grad_inputs(inputs.dtype)
        out[f"tanh_grad_{name}"] = _run(lambda a, b: tf.raw_ops.TanhGrad(y=a, dy=b), y, dy)
        out[f"sigmoid_grad_{name}"] = _run(lambda a, b: tf.raw_ops.SigmoidGrad(y=a, dy=b), y, dy)
        # a short array too: Eigen's scalar path handles what does not fill a packet
        out[f"tanh_short_{name}"] = _run(tf.tanh, inputs[-7:])
        out[f"sigmoid_short_{name}"] = _run(tf.sigmoid, inputs[-7:])
    np.savez_compressed(os.path.join(out_dir, "tf_activation_expected.npz"), **out)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__)))
