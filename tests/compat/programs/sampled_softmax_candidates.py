"""Candidate sampling as sampled-softmax language models use it: tf.nn.log_uniform_candidate_sampler
(unique and not, op seed and graph seed), tf.nn.compute_accidental_hits, and
tf.nn.sampled_softmax_loss (accidental hits removed, num_true=2) trained a few steps with Adam."""
import numpy as np


def run(tf, workdir):
    tf.set_random_seed(28)
    rng = np.random.RandomState(12)
    classes = 40
    true = tf.constant(rng.randint(0, classes, (6, 2)).astype(np.int64))
    unique = tf.nn.log_uniform_candidate_sampler(true, num_true=2, num_sampled=12, unique=True,
                                                 range_max=classes, seed=3)
    repeated = tf.nn.log_uniform_candidate_sampler(true, num_true=2, num_sampled=12, unique=False,
                                                   range_max=classes)
    hits = tf.nn.compute_accidental_hits(true, unique[0], num_true=2)
    x = tf.constant(rng.randn(6, 5).astype(np.float32))
    w = tf.get_variable("softmax_w", [classes, 5], initializer=tf.random_normal_initializer(stddev=0.3, seed=4))
    b = tf.get_variable("softmax_b", [classes], initializer=tf.zeros_initializer())
    loss = tf.reduce_mean(tf.nn.sampled_softmax_loss(w, b, true, x, num_sampled=8, num_classes=classes,
                                                     num_true=2, seed=5))
    train = tf.train.AdamOptimizer(0.05).minimize(loss)
    out = {}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for i in range(2):
            u, r, h = sess.run([unique, repeated, hits])
            for name, value in zip(("sampled", "true_expected", "sampled_expected"), u):
                out["unique_%s_%d" % (name, i)] = value
            for name, value in zip(("sampled", "true_expected", "sampled_expected"), r):
                out["repeated_%s_%d" % (name, i)] = value
            for name, value in zip(("indices", "ids", "weights"), h):
                out["hits_%s_%d" % (name, i)] = value
        out["losses"] = np.array([sess.run([train, loss])[1] for _ in range(5)], np.float32)
    return out
