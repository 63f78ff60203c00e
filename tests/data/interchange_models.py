"""The model programs of the GraphDef/SavedModel interchange fixtures, written once against the
TF1 API and run both by TensorFlow (make_tf_graph_interchange_fixtures.py) and by tensorweave
(make_tw_interchange_files.py): `models(tf, rng)` gives name -> (build(x), input shape)."""
import numpy as np


def models(tf, rng):
    def init(shape, scale=0.5):
        return tf.constant_initializer(rng.uniform(-scale, scale, size=shape).astype(np.float32))

    def mlp(x):
        w1 = tf.get_variable("w1", [6, 8], initializer=init([6, 8]))
        b1 = tf.get_variable("b1", [8], initializer=init([8]))
        w2 = tf.get_variable("w2", [8, 3], initializer=init([8, 3]))
        b2 = tf.get_variable("b2", [3], initializer=init([3]))
        h = tf.nn.relu(tf.matmul(x, w1) + b1, name="hidden")
        return tf.nn.softmax(tf.nn.bias_add(tf.matmul(h, w2), b2), name="output")

    def cnn(x):
        k = tf.get_variable("conv1/kernel", [3, 3, 2, 4], initializer=init([3, 3, 2, 4]))
        h = tf.nn.conv2d(x, k, strides=[1, 1, 1, 1], padding="SAME")
        scale = tf.get_variable("bn/scale", [4], initializer=init([4]))
        offset = tf.get_variable("bn/offset", [4], initializer=init([4]))
        mean = tf.get_variable("bn/mean", [4], initializer=init([4]))
        var = tf.get_variable("bn/variance", [4], initializer=tf.constant_initializer(
            rng.uniform(0.5, 1.5, size=[4]).astype(np.float32)))
        h, _, _ = tf.nn.fused_batch_norm(h, scale, offset, mean, var, is_training=False)
        h = tf.nn.relu(h)
        h = tf.nn.max_pool(h, ksize=[1, 2, 2, 1], strides=[1, 2, 2, 1], padding="VALID")
        k2 = tf.get_variable("conv2/kernel", [3, 3, 4, 4], initializer=init([3, 3, 4, 4]))
        h = tf.nn.conv2d(h, k2, strides=[1, 1, 1, 1], padding="VALID")
        m, v = tf.nn.moments(h, axes=[0, 1, 2])
        h = tf.nn.batch_normalization(h, m, v, None, None, 1e-3)
        h = tf.nn.avg_pool(tf.nn.relu(h), ksize=[1, 2, 2, 1], strides=[1, 1, 1, 1], padding="SAME")
        h = tf.reshape(h, [-1, 2 * 2 * 4])
        w = tf.get_variable("dense/kernel", [16, 5], initializer=init([16, 5]))
        return tf.nn.softmax(tf.matmul(h, w), name="output")

    class LSTMCell:
        """A plain LSTM cell written with tf ops (Keras 3 removed tf.nn.rnn_cell's classes from
        TF 2.21); dynamic_rnn takes any object with state_size, output_size, zero_state and
        __call__."""

        def __init__(self, units):
            self.units = units

        @property
        def state_size(self):
            return (self.units, self.units)

        @property
        def output_size(self):
            return self.units

        def zero_state(self, batch_size, dtype):
            return (tf.zeros([batch_size, self.units], dtype), tf.zeros([batch_size, self.units], dtype))

        def __call__(self, inputs, state, scope=None):
            c, h = state
            with tf.variable_scope("lstm_cell", reuse=tf.AUTO_REUSE):
                n_in = int(inputs.get_shape()[-1])
                w = tf.get_variable("kernel", [n_in + self.units, 4 * self.units],
                                    initializer=init([n_in + self.units, 4 * self.units]))
                b = tf.get_variable("bias", [4 * self.units], initializer=init([4 * self.units]))
            gates = tf.nn.bias_add(tf.matmul(tf.concat([inputs, h], 1), w), b)
            i, j, f, o = tf.split(gates, 4, axis=1)
            new_c = c * tf.sigmoid(f + 1.0) + tf.sigmoid(i) * tf.tanh(j)
            new_h = tf.tanh(new_c) * tf.sigmoid(o)
            return new_h, (new_c, new_h)

    def lstm(x):
        outputs, (c, h) = tf.nn.dynamic_rnn(LSTMCell(5), x, dtype=tf.float32)
        return tf.identity(tf.reduce_sum(outputs, axis=1) + h, name="output")

    return {"mlp": (mlp, [4, 6]), "cnn": (cnn, [2, 8, 8, 2]), "lstm": (lstm, [3, 4, 2])}
