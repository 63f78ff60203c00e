"""Two towers sharing their weights through `tf.variable_scope('ConvNet', reuse=i > 0)`, the
multi-GPU idiom of TF1 example repositories: gradients of both towers averaged, then applied."""
import numpy as np

from tests.compat.programs import _data


def conv_net(tf, x, reuse, is_training):
    with tf.variable_scope("ConvNet", reuse=reuse):
        net = tf.reshape(x, [-1, 8, 8, 1])
        net = tf.layers.conv2d(net, 6, 3, activation=tf.nn.relu)
        net = tf.layers.max_pooling2d(net, 2, 2)
        net = tf.layers.flatten(net)
        net = tf.layers.dense(net, 24, activation=tf.nn.tanh)
        net = tf.layers.dropout(net, rate=0.2, training=is_training)
        return tf.layers.dense(net, 10)


def run(tf, workdir):
    tf.set_random_seed(5)
    images, labels = _data.digits(128)
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    opt = tf.train.AdamOptimizer(0.005)
    tower_grads, tower_losses = [], []
    for i in range(2):
        xs = x[i * 16:(i + 1) * 16]
        ys = y[i * 16:(i + 1) * 16]
        logits = conv_net(tf, xs, reuse=i > 0, is_training=True)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=ys, logits=logits))
        tower_losses.append(loss)
        tower_grads.append(opt.compute_gradients(loss))
    averaged = []
    for grads_and_vars in zip(*tower_grads):
        g = tf.reduce_mean(tf.stack([g for g, _ in grads_and_vars]), 0)
        averaged.append((g, grads_and_vars[0][1]))
    train_op = opt.apply_gradients(averaged)
    eval_logits = conv_net(tf, x, reuse=True, is_training=False)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _, idx in _data.batches(128, 32, 8):
            _, l = sess.run([train_op, tower_losses], {x: images[idx], y: labels[idx]})
            losses.append(l)
        out = sess.run(eval_logits, {x: images[:16]})
    return {"losses": np.array(losses, np.float32), "eval_logits": out,
            "trainable_names": np.array([v.name for v in tf.trainable_variables()]),
            "n_global_variables": np.int64(len(tf.global_variables()))}
