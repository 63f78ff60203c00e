"""An MNIST-tutorial-style CNN with tf.layers (conv2d, max_pooling2d, flatten, dense, dropout with a
training placeholder) on the 8x8 digits, with tf.metrics accuracy, mean and auc."""
import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    tf.set_random_seed(3)
    images, labels = _data.digits(128)
    x = tf.placeholder(tf.float32, [None, 64], name="x")
    y = tf.placeholder(tf.int32, [None], name="y")
    is_training = tf.placeholder(tf.bool, [], name="is_training")
    net = tf.reshape(x, [-1, 8, 8, 1])
    net = tf.layers.conv2d(net, filters=8, kernel_size=[3, 3], padding="same", activation=tf.nn.relu)
    net = tf.layers.max_pooling2d(net, pool_size=[2, 2], strides=2)
    net = tf.layers.conv2d(net, 16, 3, padding="valid", activation=tf.nn.relu)
    net = tf.layers.flatten(net)
    net = tf.layers.dense(net, 32, activation=tf.nn.relu)
    net = tf.layers.dropout(net, rate=0.4, training=is_training)
    logits = tf.layers.dense(net, 10)
    onehot = tf.one_hot(y, 10)
    loss = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits_v2(labels=onehot, logits=logits))
    train_op = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
    probs = tf.nn.softmax(logits)
    pred = tf.argmax(logits, axis=1, output_type=tf.int32)
    acc, acc_up = tf.metrics.accuracy(y, pred)
    mean_loss, mean_up = tf.metrics.mean(loss)
    # AUC of "is this a zero" from the softmax probability of class 0.
    auc, auc_up = tf.metrics.auc(tf.equal(y, 0), probs[:, 0])
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(tf.local_variables_initializer())
        for _, idx in _data.batches(128, 32, 8):
            _, l = sess.run([train_op, loss], {x: images[idx], y: labels[idx], is_training: True})
            losses.append(l)
        for idx in np.split(np.arange(128), 4):
            sess.run([acc_up, mean_up, auc_up], {x: images[idx], y: labels[idx], is_training: False})
        a, m, u = sess.run([acc, mean_loss, auc])
        shapes = [list(v.shape.as_list()) for v in tf.trainable_variables()]
    return {"losses": np.array(losses, np.float32), "accuracy": np.float32(a), "mean_loss": np.float32(m),
            "auc": np.float32(u), "variable_names": np.array([v.name for v in tf.trainable_variables()]),
            "variable_sizes": np.array([int(np.prod(s)) for s in shapes], np.int64)}
