"""A convolutional network written with tf.nn only (TensorFlow-Examples' 'raw' idiom): conv2d with
bias_add, max_pool, local_response_normalization, dropout with a keep_prob placeholder, weights in
dicts of random_normal variables, Adam, accuracy by tf.equal/tf.argmax."""
import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    tf.set_random_seed(25)
    images, labels = _data.digits(96)
    X = tf.placeholder(tf.float32, [None, 64])
    Y = tf.placeholder(tf.float32, [None, 10])
    keep_prob = tf.placeholder(tf.float32)
    weights = {"wc1": tf.Variable(tf.random_normal([3, 3, 1, 8], stddev=0.3)),
               "wc2": tf.Variable(tf.random_normal([3, 3, 8, 16], stddev=0.1)),
               "wd1": tf.Variable(tf.random_normal([2 * 2 * 16, 32], stddev=0.1)),
               "out": tf.Variable(tf.random_normal([32, 10], stddev=0.1))}
    biases = {"bc1": tf.Variable(tf.zeros([8])), "bc2": tf.Variable(tf.zeros([16])),
              "bd1": tf.Variable(tf.zeros([32])), "out": tf.Variable(tf.zeros([10]))}

    def conv2d(x, W, b, strides=1):
        x = tf.nn.conv2d(x, W, strides=[1, strides, strides, 1], padding="SAME")
        return tf.nn.relu(tf.nn.bias_add(x, b))

    def maxpool2d(x, k=2):
        return tf.nn.max_pool(x, ksize=[1, k, k, 1], strides=[1, k, k, 1], padding="SAME")

    x = tf.reshape(X, shape=[-1, 8, 8, 1])
    conv1 = maxpool2d(conv2d(x, weights["wc1"], biases["bc1"]))
    conv1 = tf.nn.lrn(conv1, depth_radius=2, bias=1.0, alpha=0.001, beta=0.75)
    conv2 = maxpool2d(conv2d(conv1, weights["wc2"], biases["bc2"]))
    fc1 = tf.reshape(conv2, [-1, weights["wd1"].get_shape().as_list()[0]])
    fc1 = tf.nn.relu(tf.add(tf.matmul(fc1, weights["wd1"]), biases["bd1"]))
    fc1 = tf.nn.dropout(fc1, keep_prob)
    logits = tf.add(tf.matmul(fc1, weights["out"]), biases["out"])
    prediction = tf.nn.softmax(logits)
    loss_op = tf.reduce_mean(tf.nn.softmax_cross_entropy_with_logits(logits=logits, labels=Y))
    train_op = tf.train.AdamOptimizer(learning_rate=0.01).minimize(loss_op)
    correct_pred = tf.equal(tf.argmax(prediction, 1), tf.argmax(Y, 1))
    accuracy = tf.reduce_mean(tf.cast(correct_pred, tf.float32))
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _, idx in _data.batches(96, 32, 9):
            losses.append(sess.run([train_op, loss_op],
                                   {X: images[idx], Y: _data.one_hot(labels[idx]), keep_prob: 0.75})[1])
        acc, pred = sess.run([accuracy, prediction], {X: images, Y: _data.one_hot(labels), keep_prob: 1.0})
    return {"losses": np.array(losses, np.float32), "accuracy": np.float32(acc), "prediction_head": pred[:5]}
