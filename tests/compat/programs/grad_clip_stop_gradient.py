"""Gradient manipulation: compute_gradients, clip_by_value / clip_by_norm per variable, tf.gradients
through tf.stop_gradient (a target-network idiom), grad_ys, and apply_gradients."""
import numpy as np


def run(tf, workdir):
    tf.set_random_seed(22)
    rng = np.random.RandomState(9)
    xs = rng.randn(16, 4).astype(np.float32)
    ys = rng.randn(16, 1).astype(np.float32)
    x = tf.placeholder(tf.float32, [None, 4])
    y = tf.placeholder(tf.float32, [None, 1])
    with tf.variable_scope("online"):
        w = tf.get_variable("w", [4, 1], initializer=tf.random_normal_initializer(seed=5))
    with tf.variable_scope("target"):
        w_t = tf.get_variable("w", [4, 1], initializer=tf.random_normal_initializer(seed=6), trainable=False)
    q = tf.matmul(x, w)
    target = y + 0.9 * tf.stop_gradient(tf.matmul(x, w_t) + q)
    loss = tf.reduce_mean(tf.square(target - q))
    opt = tf.train.GradientDescentOptimizer(0.1)
    gvs = opt.compute_gradients(loss)
    clipped = [(tf.clip_by_norm(tf.clip_by_value(g, -1.0, 1.0), 0.8), v) for g, v in gvs if g is not None]
    train_op = opt.apply_gradients(clipped)
    g_plain = tf.gradients(loss, w)[0]
    g_no_stop = tf.gradients(tf.reduce_mean(tf.square(y + 0.9 * (tf.matmul(x, w_t) + q) - q)), w)[0]
    g_ys = tf.gradients(q, w, grad_ys=tf.ones_like(q) * 2.0)[0]
    none_grad = tf.gradients(tf.stop_gradient(q), w)[0]
    sync = tf.assign(w_t, w)
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        gp, gn, gy = sess.run([g_plain, g_no_stop, g_ys], {x: xs, y: ys})
        for step in range(6):
            losses.append(sess.run([train_op, loss], {x: xs, y: ys})[1])
            if step == 2:
                sess.run(sync)
        wv = sess.run(w)
    return {"grad_with_stop": gp, "grad_without_stop": gn, "grad_ys": gy, "losses": np.array(losses, np.float32),
            "w": wv, "stop_gradient_grad_is_none": np.bool_(none_grad is None),
            "n_grads": np.int64(len(clipped))}
