"""Batch normalisation written by hand: tf.nn.moments over the batch (and over N, H, W for a conv
feature map), tf.nn.batch_normalization with learned scale and offset, moving statistics updated
with tf.assign inside tf.cond on a training flag, and the gradients through it all."""
import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    tf.set_random_seed(23)
    images, labels = _data.digits(96)
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    is_training = tf.placeholder(tf.bool, [])
    feat = tf.reshape(x, [-1, 8, 8, 1])
    kernel = tf.Variable(tf.truncated_normal([3, 3, 1, 4], stddev=0.3, seed=2))
    conv = tf.nn.conv2d(feat, kernel, [1, 1, 1, 1], "SAME")
    c_mean, c_var = tf.nn.moments(conv, axes=[0, 1, 2])
    gamma = tf.Variable(tf.ones([4]))
    beta = tf.Variable(tf.zeros([4]))
    pop_mean = tf.Variable(tf.zeros([4]), trainable=False)
    pop_var = tf.Variable(tf.ones([4]), trainable=False)

    def train_stats():
        up_m = tf.assign(pop_mean, pop_mean * 0.9 + c_mean * 0.1)
        up_v = tf.assign(pop_var, pop_var * 0.9 + c_var * 0.1)
        with tf.control_dependencies([up_m, up_v]):
            return tf.identity(c_mean), tf.identity(c_var)

    mean, var = tf.cond(is_training, train_stats, lambda: (pop_mean, pop_var))
    normed = tf.nn.relu(tf.nn.batch_normalization(conv, mean, var, beta, gamma, 1e-3))
    flat = tf.reshape(normed, [-1, 256])
    d_mean, d_var = tf.nn.moments(flat, axes=[0], keep_dims=True)
    w = tf.Variable(tf.truncated_normal([256, 10], stddev=0.05, seed=3))
    logits = tf.matmul((flat - d_mean) * tf.rsqrt(d_var + 1e-3), w)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _, idx in _data.batches(96, 32, 6):
            losses.append(sess.run([train_op, loss], {x: images[idx], y: labels[idx], is_training: True})[1])
        pm, pv = sess.run([pop_mean, pop_var])
        infer = sess.run(logits, {x: images[:6], is_training: False})
        cm, cv = sess.run([c_mean, c_var], {x: images[:32]})
    return {"losses": np.array(losses, np.float32), "pop_mean": pm, "pop_var": pv, "inference_logits": infer,
            "conv_mean": cm, "conv_var": cv}
