"""The model make_tf_memory_fixtures.py and tests/grappler/test_memory_optimizer.py both build
(`tf` passed in): three dense layers with swish activations (z * sigmoid(z)), whose gradient
reads two cheap forward values per layer."""
import numpy as np


def swish_mlp(tf, layers=3, width=8, batch=4):
    """(placeholder, loss, gradients of the weights and biases, feed)."""
    rng = np.random.RandomState(0)
    x = tf.placeholder(tf.float32, [batch, width])
    h = x
    params = []
    for i in range(layers):
        with tf.name_scope("layer%d" % i):
            w = tf.Variable((rng.randn(width, width) * 0.3).astype(np.float32))
            b = tf.Variable((rng.randn(width) * 0.1).astype(np.float32))
            params += [w, b]
            z = tf.nn.bias_add(tf.matmul(h, w), b)
            h = z * tf.sigmoid(z)
    loss = tf.reduce_mean(tf.square(h))
    return x, loss, tf.gradients(loss, params), {x: rng.randn(batch, width).astype(np.float32)}
