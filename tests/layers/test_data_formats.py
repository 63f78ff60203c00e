"""channels_first layers give channels_last's numbers on transposed inputs (TensorFlow's CPU
kernels refuse most channels_first layers, so TF cannot record them; the weights are the same
under the same graph seed, their shapes not depending on the data format). Also: `training`
given as a tensor picks the branch at run time, for dropout and batch normalization."""
import numpy as np
import pytest

import tensorweave as tf

LAYERS = [
    ("conv1d", (2, 3, 9), lambda t, f: tf.layers.conv1d(t, 4, 3, strides=2, padding="same", data_format=f)),
    ("conv2d", (2, 3, 7, 6), lambda t, f: tf.layers.conv2d(t, 4, (3, 2), dilation_rate=(1, 2), data_format=f,
                                                            activation=tf.nn.relu)),
    ("conv3d", (1, 2, 5, 4, 4), lambda t, f: tf.layers.conv3d(t, 3, 2, strides=(2, 1, 1), padding="same",
                                                               data_format=f)),
    ("conv2d_transpose", (2, 3, 4, 3), lambda t, f: tf.layers.conv2d_transpose(t, 2, 3, strides=(2, 1),
                                                                               data_format=f)),
    ("conv3d_transpose", (1, 2, 3, 2, 3), lambda t, f: tf.layers.conv3d_transpose(t, 3, 2, strides=2,
                                                                                  padding="same", data_format=f)),
    ("separable_conv1d", (2, 3, 8), lambda t, f: tf.layers.separable_conv1d(t, 4, 3, depth_multiplier=2,
                                                                            data_format=f)),
    ("separable_conv2d", (2, 3, 6, 7), lambda t, f: tf.layers.separable_conv2d(t, 2, 3, strides=2, padding="same",
                                                                               data_format=f)),
    ("max_pooling1d", (2, 3, 9), lambda t, f: tf.layers.max_pooling1d(t, 3, 2, padding="same", data_format=f)),
    ("max_pooling2d", (2, 3, 7, 6), lambda t, f: tf.layers.max_pooling2d(t, 3, 2, data_format=f)),
    ("average_pooling2d", (2, 3, 7, 6), lambda t, f: tf.layers.average_pooling2d(t, 2, 2, padding="same",
                                                                                 data_format=f)),
    ("max_pooling3d", (1, 2, 5, 4, 4), lambda t, f: tf.layers.max_pooling3d(t, 2, 2, data_format=f)),
    ("average_pooling3d", (1, 2, 5, 4, 4), lambda t, f: tf.layers.average_pooling3d(t, 3, 1, padding="same",
                                                                                   data_format=f)),
    ("batch_normalization", (4, 3, 5, 2), lambda t, f: tf.layers.batch_normalization(
        t, axis=1 if f == "channels_first" else -1, training=True)),
    ("batch_normalization_5d", (2, 3, 2, 3, 2), lambda t, f: tf.layers.batch_normalization(
        t, axis=1 if f == "channels_first" else -1, training=True)),
]


def _to_last(a):
    return np.moveaxis(a, 1, -1)


def _run(build, data_format, x):
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        y = build(tf.constant(x), data_format)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            return y.shape.as_list(), sess.run(y)


@pytest.mark.parametrize("name, shape, build", LAYERS, ids=[c[0] for c in LAYERS])
def test_channels_first_matches_channels_last(name, shape, build):
    x = np.random.RandomState(len(name)).randn(*shape).astype(np.float32)
    static_first, first = _run(build, "channels_first", x)
    static_last, last = _run(build, "channels_last", _to_last(x))
    np.testing.assert_allclose(_to_last(first), last, rtol=1e-5, atol=1e-5)
    assert static_first == list(first.shape) and static_last == list(last.shape)


def test_training_tensor_switches_dropout_and_batch_norm_at_run_time():
    x_value = np.random.RandomState(0).rand(8, 4).astype(np.float32) + 1.0
    with tf.Graph().as_default():
        x = tf.constant(x_value)
        training = tf.placeholder(tf.bool, [])
        dropped = tf.layers.dropout(x, 0.5, training=training, seed=1)
        normed = tf.layers.batch_normalization(x, training=training, momentum=0.5)
        updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
        moving_mean = [v for v in tf.global_variables() if "moving_mean" in v.name][0]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            off = sess.run([dropped, normed] + updates, {training: False})
            np.testing.assert_array_equal(off[0], x_value)
            np.testing.assert_allclose(off[1], x_value / np.sqrt(1 + 1e-3), rtol=1e-6)  # moving stats 0, 1
            np.testing.assert_array_equal(sess.run(moving_mean), np.zeros(4))  # no update when not training
            on = sess.run([dropped, normed] + updates, {training: True})
            assert {0.0, 2.0} >= set(np.unique(np.round(on[0] / x_value, 5)))
            np.testing.assert_allclose(on[1].mean(axis=0), 0, atol=1e-5)
            np.testing.assert_allclose(sess.run(moving_mean), x_value.mean(axis=0) * 0.5, rtol=1e-5)


def test_frozen_batch_norm_inference_uses_moving_statistics():
    with tf.Graph().as_default():
        x = tf.constant(np.full([2, 2, 2, 3], 4.0, np.float32))
        y = tf.layers.batch_normalization(x, moving_mean_initializer=tf.constant_initializer(1.0),
                                          moving_variance_initializer=tf.constant_initializer(4.0),
                                          gamma_initializer=tf.constant_initializer(2.0), epsilon=0.0)
        assert tf.get_collection(tf.GraphKeys.UPDATE_OPS) == []
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(y), np.full([2, 2, 2, 3], 3.0), rtol=1e-6)
