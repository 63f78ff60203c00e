"""Linear regression (the classic TF1 first example) saved every few steps with tf.train.Saver
(max_to_keep), then restored through tf.train.latest_checkpoint into a new session and continued."""
import os

import numpy as np


def run(tf, workdir):
    tf.set_random_seed(16)
    rng = np.random.RandomState(6)
    train_x = rng.rand(30).astype(np.float32) * 10
    train_y = (0.7 * train_x + 2.0 + rng.randn(30) * 0.3).astype(np.float32)
    X = tf.placeholder("float")
    Y = tf.placeholder("float")
    W = tf.Variable(rng.randn(), name="weight", dtype=tf.float32)
    b = tf.Variable(rng.randn(), name="bias", dtype=tf.float32)
    pred = tf.add(tf.multiply(X, W), b)
    cost = tf.reduce_sum(tf.pow(pred - Y, 2)) / (2 * 30)
    global_step = tf.Variable(0, trainable=False, name="global_step")
    optimizer = tf.train.GradientDescentOptimizer(0.01).minimize(cost, global_step=global_step)
    saver = tf.train.Saver(max_to_keep=2)
    ckpt_dir = os.path.join(workdir, "linreg")
    costs = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for epoch in range(9):
            for (xv, yv) in zip(train_x, train_y):
                sess.run(optimizer, feed_dict={X: xv, Y: yv})
            costs.append(sess.run(cost, feed_dict={X: train_x, Y: train_y}))
            if epoch % 3 == 2:
                saver.save(sess, os.path.join(ckpt_dir, "model"), global_step=global_step)
        trained = sess.run([W, b])
    latest = tf.train.latest_checkpoint(ckpt_dir)
    kept = [os.path.basename(p) for p in tf.train.get_checkpoint_state(ckpt_dir).all_model_checkpoint_paths]
    with tf.Session() as sess:
        saver.restore(sess, latest)
        restored = sess.run([W, b, global_step])
        sess.run(optimizer, feed_dict={X: train_x[0], Y: train_y[0]})
        continued = sess.run([W, b])
    return {"costs": np.array(costs, np.float32), "trained": np.array(trained, np.float32),
            "restored": np.array(restored[:2], np.float32), "restored_step": np.int64(restored[2]),
            "continued": np.array(continued, np.float32), "latest": np.array(os.path.basename(latest)),
            "kept": np.array(kept)}
