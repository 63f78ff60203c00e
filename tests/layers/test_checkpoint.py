"""Checkpoints of a tf.layers model (conv2d + batch_normalization + dense) cross between
TensorFlow and tensorweave: the TF-2.15-written checkpoint in tests/data/tf215_layers_checkpoint/
restores into the same model built here and reproduces TF's recorded outputs; ours restores
into a fresh graph. (TF restoring ours: run `make_tf215_layers_fixtures.py --check-ours DIR` on
the directory `test_our_checkpoint_round_trip` leaves when TW_KEEP_CHECKPOINT is set.)"""
import os

import numpy as np

import tensorweave as tf
from tests.data import layers_models

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")
EXPECTED = np.load(os.path.join(DATA, "tf215_layers_expected.npz"))
CKPT = os.path.join(DATA, "tf215_layers_checkpoint", "model.ckpt")


def _model():
    x = tf.placeholder(tf.float32, [2, 6, 6, 2], name="x")
    is_training = tf.placeholder_with_default(False, [], name="is_training")
    return x, layers_models.checkpoint_model(tf, x, is_training)


def test_tf_checkpoint_restores_into_our_model():
    with tf.Graph().as_default():
        x, y = _model()
        names = sorted(v.op.name for v in tf.global_variables())
        assert names == sorted(k[len("ckpt/var/"):] for k in EXPECTED.files if k.startswith("ckpt/var/"))
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, CKPT)
            for v in tf.global_variables():
                np.testing.assert_array_equal(sess.run(v), EXPECTED[f"ckpt/var/{v.op.name}"])
            np.testing.assert_allclose(sess.run(y, {x: EXPECTED["ckpt/x"]}), EXPECTED["ckpt/y"], rtol=1e-5,
                                       atol=1e-6)


def test_latest_checkpoint_finds_tf_checkpoint():
    assert tf.train.latest_checkpoint(os.path.dirname(CKPT)).endswith("model.ckpt")


def test_our_checkpoint_round_trip(tmp_path):
    directory = os.environ.get("TW_KEEP_CHECKPOINT") or str(tmp_path)
    x_value = EXPECTED["ckpt/x"]
    with tf.Graph().as_default():
        tf.set_random_seed(3)
        x, y = _model()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run([tf.assign(v, v + 0.25) for v in tf.global_variables()])  # not the initial values
            written = sess.run(y, {x: x_value})
            tf.train.Saver().save(sess, os.path.join(directory, "model.ckpt"), write_meta_graph=False)
    np.savez(os.path.join(directory, "ours.npz"), x=x_value, y=written)
    with tf.Graph().as_default():
        x, y = _model()
        with tf.Session() as sess:
            tf.train.Saver().restore(sess, os.path.join(directory, "model.ckpt"))
            np.testing.assert_allclose(sess.run(y, {x: x_value}), written, rtol=1e-6)
