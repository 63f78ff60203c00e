"""tf.train.ExponentialMovingAverage maintained after each training step (control_dependencies on
the train op, num_updates = global_step), saved, then restored for evaluation through
ema.variables_to_restore() so the shadow values land in the model's own variables."""
import os

import numpy as np

from tests.compat.programs import _data


def _build(tf):
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    w = tf.get_variable("w", [64, 10], initializer=tf.truncated_normal_initializer(stddev=0.1, seed=1))
    b = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
    logits = tf.matmul(x, w) + b
    return x, y, w, b, logits


def run(tf, workdir):
    images, labels = _data.digits(100)
    ckpt = os.path.join(workdir, "ema", "model.ckpt")
    with tf.Graph().as_default():
        x, y, w, b, logits = _build(tf)
        loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
        global_step = tf.train.get_or_create_global_step()
        opt = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=global_step)
        ema = tf.train.ExponentialMovingAverage(0.9, num_updates=global_step)
        with tf.control_dependencies([opt]):
            train_op = ema.apply(tf.trainable_variables())
        saver = tf.train.Saver()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([train_op, loss], {x: images, y: labels})[1] for _ in range(8)]
            shadow_w, raw_w = sess.run([ema.average(w), w])
            saver.save(sess, ckpt)
        shadow_name = ema.average_name(w)
        names = sorted(v.name for v in tf.global_variables())
        n_mav = len(tf.moving_average_variables())
    with tf.Graph().as_default():
        x, y, w, b, logits = _build(tf)
        ema = tf.train.ExponentialMovingAverage(0.9)
        to_restore = ema.variables_to_restore()
        saver = tf.train.Saver(to_restore)
        with tf.Session() as sess:
            saver.restore(sess, ckpt)
            restored_w, eval_logits = sess.run([w, logits], {x: images[:5]})
    return {"losses": np.array(losses, np.float32), "shadow_w": shadow_w, "raw_w": raw_w,
            "restored_w": restored_w, "eval_logits": eval_logits, "shadow_name": np.array(shadow_name),
            "variable_names": np.array(names), "n_moving_average_variables": np.int64(n_mav),
            "restore_keys": np.array(sorted(to_restore.keys()))}
