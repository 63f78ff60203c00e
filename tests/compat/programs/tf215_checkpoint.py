"""Restores a checkpoint that real TensorFlow 2.15 wrote for a tf.layers model (conv2d, batch
normalization, dense; trained a few Adam steps, so slots and beta powers are in it too) from
tests/data/tf_compat_layers_ckpt, then runs inference and reads it with tf.train.list_variables and
NewCheckpointReader. `write_checkpoint` is called only by tests/data/make_tf_compat_fixtures.py."""
import os

import numpy as np

from tests.compat.programs import _data

CHECKPOINT_DIR = os.path.join(_data.DATA_DIR, "tf_compat_layers_ckpt")


def _model(tf, x, training):
    net = tf.reshape(x, [-1, 8, 8, 1])
    net = tf.layers.conv2d(net, 4, 3, padding="same", name="conv")
    net = tf.layers.batch_normalization(net, training=training, name="bn")
    net = tf.nn.relu(net)
    net = tf.layers.flatten(net)
    return tf.layers.dense(net, 10, name="logits")


def write_checkpoint(tf, directory):
    images, labels = _data.digits(64)
    with tf.Graph().as_default():
        tf.set_random_seed(24)
        x = tf.placeholder(tf.float32, [None, 64])
        y = tf.placeholder(tf.int64, [None])
        logits = _model(tf, x, True)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        global_step = tf.train.get_or_create_global_step()
        with tf.control_dependencies(tf.get_collection(tf.GraphKeys.UPDATE_OPS)):
            train_op = tf.train.AdamOptimizer(0.01).minimize(loss, global_step=global_step)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(train_op, {x: images, y: labels})
            saver.save(sess, os.path.join(directory, "model.ckpt"), global_step=global_step)


def run(tf, workdir):
    images, _ = _data.digits(10)
    latest = tf.train.latest_checkpoint(CHECKPOINT_DIR)
    x = tf.placeholder(tf.float32, [None, 64])
    logits = _model(tf, x, False)
    model_vars = tf.global_variables()
    saver = tf.train.Saver(model_vars)
    with tf.Session() as sess:
        saver.restore(sess, latest)
        out = sess.run(logits, {x: images})
        mv = sess.run(tf.get_default_graph().get_tensor_by_name("bn/moving_mean:0"))
    listed = tf.train.list_variables(latest)
    reader = tf.train.NewCheckpointReader(latest)
    return {"logits": out, "moving_mean": mv, "checkpoint_name": np.array(os.path.basename(latest)),
            "listed_names": np.array([name for name, _ in listed]),
            "listed_sizes": np.array([int(np.prod(shape)) for _, shape in listed], np.int64),
            "global_step": np.int64(reader.get_tensor("global_step")),
            "adam_slot": reader.get_tensor("logits/kernel/Adam")}
