"""The same softmax model trained a few steps with each TF1 optimizer (SGD, Momentum with Nesterov,
Adam, Adagrad, Adadelta, RMSProp with momentum, Ftrl), each in its own variable scope, and their
slot variable names."""
import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    images, labels = _data.digits(80)
    x = tf.constant(images)
    y = tf.constant(labels)
    optimizers = {
        "sgd": tf.train.GradientDescentOptimizer(0.5),
        "momentum": tf.train.MomentumOptimizer(0.1, 0.9, use_nesterov=True),
        "adam": tf.train.AdamOptimizer(0.01),
        "adagrad": tf.train.AdagradOptimizer(0.3),
        "adadelta": tf.train.AdadeltaOptimizer(1.0),
        "rmsprop": tf.train.RMSPropOptimizer(0.01, momentum=0.5),
        "ftrl": tf.train.FtrlOptimizer(0.3, l1_regularization_strength=0.001),
    }
    losses, train_ops = {}, {}
    for name in sorted(optimizers):
        with tf.variable_scope(name):
            w = tf.get_variable("w", [64, 10], initializer=tf.glorot_uniform_initializer(seed=1))
            b = tf.get_variable("b", [10], initializer=tf.zeros_initializer())
            loss = tf.losses.sparse_softmax_cross_entropy(y, tf.matmul(x, w) + b)
        losses[name] = loss
        train_ops[name] = optimizers[name].minimize(loss, var_list=[w, b])
    out = {}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for name in sorted(optimizers):
            out[name] = np.array([sess.run([train_ops[name], losses[name]])[1] for _ in range(5)], np.float32)
    out["variable_names"] = np.array(sorted(v.name for v in tf.global_variables()))
    return out
