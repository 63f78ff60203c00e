"""A two-layer sigmoid autoencoder on the digits (the TensorFlow-Examples idiom: weights and biases
in dicts of tf.Variable(tf.random_normal(...)), RMSProp, mean squared reconstruction error)."""
import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    tf.set_random_seed(17)
    images, _ = _data.digits(128)
    n_in, n_h1, n_h2 = 64, 32, 16
    X = tf.placeholder("float", [None, n_in])
    weights = {"encoder_h1": tf.Variable(tf.random_normal([n_in, n_h1])),
               "encoder_h2": tf.Variable(tf.random_normal([n_h1, n_h2])),
               "decoder_h1": tf.Variable(tf.random_normal([n_h2, n_h1])),
               "decoder_h2": tf.Variable(tf.random_normal([n_h1, n_in]))}
    biases = {"encoder_b1": tf.Variable(tf.random_normal([n_h1])),
              "encoder_b2": tf.Variable(tf.random_normal([n_h2])),
              "decoder_b1": tf.Variable(tf.random_normal([n_h1])),
              "decoder_b2": tf.Variable(tf.random_normal([n_in]))}

    def encoder(x):
        l1 = tf.nn.sigmoid(tf.add(tf.matmul(x, weights["encoder_h1"]), biases["encoder_b1"]))
        return tf.nn.sigmoid(tf.add(tf.matmul(l1, weights["encoder_h2"]), biases["encoder_b2"]))

    def decoder(x):
        l1 = tf.nn.sigmoid(tf.add(tf.matmul(x, weights["decoder_h1"]), biases["decoder_b1"]))
        return tf.nn.sigmoid(tf.add(tf.matmul(l1, weights["decoder_h2"]), biases["decoder_b2"]))

    code = encoder(X)
    y_pred = decoder(code)
    loss = tf.reduce_mean(tf.pow(X - y_pred, 2))
    optimizer = tf.train.RMSPropOptimizer(0.01).minimize(loss)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _, idx in _data.batches(128, 32, 12):
            losses.append(sess.run([optimizer, loss], {X: images[idx]})[1])
        recon, codes = sess.run([y_pred, code], {X: images[:4]})
    return {"losses": np.array(losses, np.float32), "reconstruction": recon, "codes": codes}
