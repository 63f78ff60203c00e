"""Writes tf215_layers_expected.npz / .json and the checkpoint in tf215_layers_checkpoint/ from
TensorFlow 2.15.1's tf.compat.v1.layers (the last release with tf.layers), for tests/layers/.

Run with real TensorFlow, never imported by the tests:
    /opt/tf215/bin/python tests/data/make_tf215_layers_fixtures.py
The models are in layers_models.py (beside this script), shared with the tests. With
`--check-ours DIR` it instead restores a checkpoint written by tensorweave (see
tests/layers/test_checkpoint.py) into the same model and compares the outputs it recorded.
"""
import json
import os
import sys
import warnings

import numpy as np

import layers_models  # beside this script

warnings.filterwarnings("ignore")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
import tensorflow.compat.v1 as tf  # noqa: E402

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))
CKPT_DIR = os.path.join(HERE, "tf215_layers_checkpoint")


def checkpoint_graph():
    x = tf.placeholder(tf.float32, [2, 6, 6, 2], name="x")
    is_training = tf.placeholder_with_default(False, [], name="is_training")
    y = layers_models.checkpoint_model(tf, x, is_training)
    return x, is_training, y


def write_checkpoint(expected):
    """Trains the checkpoint model two steps (so the moving statistics move), saves it, and
    records its inference outputs."""
    rng = np.random.RandomState(99)
    x_value = rng.randn(2, 6, 6, 2).astype(np.float32)
    with tf.Graph().as_default():
        tf.set_random_seed(layers_models.SEED)
        x, is_training, y = checkpoint_graph()
        loss = tf.reduce_sum(tf.square(y))
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train_op = tf.train.GradientDescentOptimizer(0.01).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(2):
                sess.run(train_op, {x: x_value, is_training: True})
            os.makedirs(CKPT_DIR, exist_ok=True)
            tf.train.Saver().save(sess, os.path.join(CKPT_DIR, "model.ckpt"), write_meta_graph=False)
            with open(os.path.join(CKPT_DIR, "checkpoint"), "w") as f:  # relative: the repo can move
                f.write('model_checkpoint_path: "model.ckpt"\nall_model_checkpoint_paths: "model.ckpt"\n')
            expected["ckpt/x"] = x_value
            expected["ckpt/y"] = sess.run(y, {x: x_value})
            for v in tf.global_variables():
                expected[f"ckpt/var/{v.op.name}"] = sess.run(v)


def check_ours(directory):
    data = np.load(os.path.join(directory, "ours.npz"))
    with tf.Graph().as_default():
        x, _, y = checkpoint_graph()
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, os.path.join(directory, "model.ckpt"))
            got = sess.run(y, {x: data["x"]})
    np.testing.assert_allclose(got, data["y"], rtol=1e-5, atol=1e-6)
    print("TensorFlow restored tensorweave's checkpoint and reproduced its outputs")


def main():
    if sys.argv[1:2] == ["--check-ours"]:
        check_ours(sys.argv[2])
        return
    arrays, meta = {}, {}
    for name in layers_models.CASES:
        result = layers_models.run_case(tf, name)
        meta[name] = {"variables": result.pop("__variables__"), "updates": result.pop("__updates__")}
        for key, value in result.items():
            arrays[f"{name}/{key}"] = np.asarray(value)
        print(name, len(result), "values")
    write_checkpoint(arrays)
    np.savez_compressed(os.path.join(HERE, "tf215_layers_expected.npz"), **arrays)
    with open(os.path.join(HERE, "tf215_layers_expected.json"), "w") as f:
        json.dump({"tensorflow": tf.__version__, "seed": layers_models.SEED, "cases": meta}, f, indent=1)


if __name__ == "__main__":
    main()
