"""An MLP on the digits with tf.layers.dense, tf.layers.dropout behind a training placeholder and
tf.nn.dropout, trained with Adam; tf.metrics.accuracy streamed over two evaluation batches."""
import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    tf.set_random_seed(2)
    images, labels = _data.digits(300)
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    training = tf.placeholder_with_default(False, [], name="training")
    keep_prob = tf.placeholder(tf.float32, [])
    h = tf.layers.dense(x, 32, activation=tf.nn.relu, name="hidden1")
    h = tf.layers.dropout(h, rate=0.25, training=training)
    h = tf.layers.dense(h, 32, activation=tf.nn.relu, name="hidden2")
    h = tf.nn.dropout(h, keep_prob=keep_prob)
    logits = tf.layers.dense(h, 10, name="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(labels=y, logits=logits)
    train_op = tf.train.AdamOptimizer(0.01).minimize(loss)
    pred = tf.argmax(logits, 1)
    acc, acc_update = tf.metrics.accuracy(labels=y, predictions=pred)
    losses = []
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        for _, idx in _data.batches(300, 50, 12):
            _, l = sess.run([train_op, loss], {x: images[idx], y: labels[idx], training: True, keep_prob: 0.8})
            losses.append(l)
        for idx in (np.arange(0, 150), np.arange(150, 300)):
            sess.run(acc_update, {x: images[idx], y: labels[idx], keep_prob: 1.0})
        final_acc = sess.run(acc)
        kernel = sess.run(tf.get_default_graph().get_tensor_by_name("hidden1/kernel:0"))
    names = sorted(v.name for v in tf.global_variables())
    local_names = sorted(v.name for v in tf.local_variables())
    return {"losses": np.array(losses, np.float32), "accuracy": np.float32(final_acc),
            "hidden1_kernel": kernel, "variable_names": np.array(names),
            "local_variable_names": np.array(local_names)}
