"""Learning-rate schedules driven by the global step: exponential_decay (staircase) feeding a
MomentumOptimizer with global_step incremented by minimize, plus piecewise_constant,
polynomial_decay and inverse_time_decay read at each step."""
import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    tf.set_random_seed(21)
    images, labels = _data.digits(100)
    x = tf.constant(images)
    y = tf.constant(labels)
    logits = tf.layers.dense(x, 10)
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    global_step = tf.Variable(0, trainable=False, name="global_step")
    lr = tf.train.exponential_decay(0.5, global_step, decay_steps=3, decay_rate=0.5, staircase=True)
    pw = tf.train.piecewise_constant(global_step, [2, 5], [1.0, 0.5, 0.1])
    poly = tf.train.polynomial_decay(0.1, global_step, 8, end_learning_rate=0.01, power=2.0)
    inv = tf.train.inverse_time_decay(0.1, global_step, 2, 0.5)
    train_op = tf.train.MomentumOptimizer(lr, 0.9).minimize(loss, global_step=global_step)
    rows = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(8):
            rows.append(sess.run([lr, pw, poly, inv, loss]))
            sess.run(train_op)
        step = sess.run(global_step)
    return {"schedule": np.array(rows, np.float32), "final_step": np.int64(step)}
