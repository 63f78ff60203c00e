"""tf.layers with kernel_regularizer / bias_regularizer (tf.contrib-free l2 via a lambda and
tf.nn.l2_loss), collected with tf.losses.get_regularization_loss and added to the data loss;
tf.losses.get_total_loss over the losses collection."""
import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    tf.set_random_seed(20)
    images, labels = _data.digits(120)
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])

    def l2(scale):
        return lambda t: scale * tf.nn.l2_loss(t)

    h = tf.layers.dense(x, 24, activation=tf.nn.elu, kernel_regularizer=l2(0.01), name="h")
    logits = tf.layers.dense(h, 10, kernel_regularizer=l2(0.02), bias_regularizer=l2(0.05), name="out")
    data_loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    reg_loss = tf.losses.get_regularization_loss()
    total = tf.losses.get_total_loss()
    train_op = tf.train.GradientDescentOptimizer(0.3).minimize(data_loss + reg_loss)
    out = {"data": [], "reg": [], "total": []}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _, idx in _data.batches(120, 40, 9):
            _, d, r, t = sess.run([train_op, data_loss, reg_loss, total], {x: images[idx], y: labels[idx]})
            out["data"].append(d)
            out["reg"].append(r)
            out["total"].append(t)
    reg_names = [t.op.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)]
    return {"data_losses": np.array(out["data"], np.float32), "reg_losses": np.array(out["reg"], np.float32),
            "total_losses": np.array(out["total"], np.float32),
            "n_regularization_losses": np.int64(len(reg_names)), "n_losses": np.int64(len(tf.losses.get_losses()))}
