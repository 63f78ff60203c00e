"""A tf.contrib.layers model: arg_scope over conv2d and fully_connected with batch_norm as the
normalizer, xavier initialisation, an l2_regularizer, trained with contrib.layers.optimize_loss."""
import numpy as np

from tests.compat.programs import _data

USES_CONTRIB = True


def run(tf, workdir):
    layers = tf.contrib.layers
    tf.set_random_seed(8)
    images, labels = _data.digits(96)
    x = tf.placeholder(tf.float32, [None, 64])
    y = tf.placeholder(tf.int64, [None])
    is_training = tf.placeholder(tf.bool, [])
    net = tf.reshape(x, [-1, 8, 8, 1])
    with tf.contrib.framework.arg_scope(
            [layers.conv2d, layers.fully_connected],
            weights_initializer=layers.xavier_initializer(seed=9),
            weights_regularizer=layers.l2_regularizer(1e-3),
            normalizer_fn=layers.batch_norm,
            normalizer_params={"is_training": is_training, "decay": 0.9}):
        net = layers.conv2d(net, 8, [3, 3], scope="conv1")
        net = layers.flatten(net)
        net = layers.fully_connected(net, 32, scope="fc1")
    logits = layers.fully_connected(net, 10, activation_fn=None, scope="logits")
    loss = tf.losses.sparse_softmax_cross_entropy(y, logits)
    total = loss + tf.add_n(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES))
    global_step = tf.train.get_or_create_global_step()
    train_op = layers.optimize_loss(total, global_step, learning_rate=0.1, optimizer="SGD")
    losses = []
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _, idx in _data.batches(96, 32, 6):
            losses.append(sess.run(train_op, {x: images[idx], y: labels[idx], is_training: True}))
        infer = sess.run(logits, {x: images[:8], is_training: False})
        step = sess.run(global_step)
    return {"losses": np.array(losses, np.float32), "inference_logits": infer, "global_step": np.int64(step),
            "variable_names": np.array(sorted(v.name for v in tf.global_variables())),
            "n_regularization_losses": np.int64(len(tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)))}
