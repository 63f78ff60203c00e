"""tf.layers.batch_normalization trained with the UPDATE_OPS control dependency, evaluated in
inference mode, saved, then restored into a fresh graph for inference."""
import os

import numpy as np

from tests.compat.programs import _data


def _model(tf, x, training):
    h = tf.layers.dense(x, 16, use_bias=False, name="fc1")
    h = tf.layers.batch_normalization(h, training=training, momentum=0.9, name="bn1")
    h = tf.nn.relu(h)
    return tf.layers.dense(h, 10, name="out")


def run(tf, workdir):
    images, labels = _data.digits(160)
    ckpt = os.path.join(workdir, "bn", "model.ckpt")
    with tf.Graph().as_default():
        tf.set_random_seed(4)
        x = tf.placeholder(tf.float32, [None, 64])
        y = tf.placeholder(tf.int64, [None])
        training = tf.placeholder(tf.bool, [])
        logits = _model(tf, x, training)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        update_ops = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        with tf.control_dependencies(update_ops):
            train_op = tf.train.GradientDescentOptimizer(0.2).minimize(loss)
        saver = tf.train.Saver()
        losses = []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _, idx in _data.batches(160, 40, 10):
                _, l = sess.run([train_op, loss], {x: images[idx], y: labels[idx], training: True})
                losses.append(l)
            infer = sess.run(logits, {x: images[:20], training: False})
            moving = sess.run(tf.get_default_graph().get_tensor_by_name("bn1/moving_variance:0"))
            saver.save(sess, ckpt, global_step=10)
        names = sorted(v.name for v in tf.global_variables())
        n_update = len(update_ops)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 64])
        logits = _model(tf, x, False)
        saver = tf.train.Saver()
        with tf.Session() as sess:
            saver.restore(sess, tf.train.latest_checkpoint(os.path.dirname(ckpt)))
            restored = sess.run(logits, {x: images[:20]})
    return {"losses": np.array(losses, np.float32), "inference_logits": infer, "moving_variance": moving,
            "restored_logits": restored, "variable_names": np.array(names), "n_update_ops": np.int64(n_update)}
