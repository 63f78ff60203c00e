"""tf.contrib.layers against TF 1.x's numbers (tf_slim on TF 2.15, tests/data/tf215_contrib_expected.json):
initializers, regularizers, fully_connected, conv2d, flatten, layer_norm, arg_scope and
fully_connected with a batch_norm normalizer, with TF's variable names and collections."""
import numpy as np
import pytest

import tensorweave as tf
from tests.contrib.fixtures import EXPECTED, X_FC, X_IMG, X_SEQ, close

layers = tf.contrib.layers


def test_initializers_draw_tf_numbers():
    cases = {
        "xavier_uniform": lambda: layers.xavier_initializer(seed=11),
        "xavier_normal": lambda: layers.xavier_initializer(uniform=False, seed=12),
        "vs_default": lambda: layers.variance_scaling_initializer(seed=13),
        "vs_fan_out_uniform": lambda: layers.variance_scaling_initializer(factor=1.5, mode="FAN_OUT", uniform=True,
                                                                          seed=14),
        "vs_fan_avg": lambda: layers.variance_scaling_initializer(factor=0.5, mode="FAN_AVG", seed=15),
    }
    tf.set_random_seed(5)
    ops = {}
    for name, make in cases.items():
        ops[name + "_2d"] = make()([3, 4])
        ops[name + "_4d"] = make()([2, 2, 3, 4])
    with tf.Session() as sess:
        got = sess.run(ops)
    expected = EXPECTED["initializers"]
    assert set(got) == set(expected)
    for name, value in got.items():
        assert value.dtype == np.float32 and list(value.shape) == list(np.shape(expected[name])), name
        close(value, expected[name])


def test_initializer_argument_errors():
    with pytest.raises(TypeError, match="non-floating"):
        layers.variance_scaling_initializer(dtype=tf.int32)
    with pytest.raises(TypeError, match="Unknown mode"):
        layers.variance_scaling_initializer(mode="fan_in")
    assert layers.xavier_initializer_conv2d is layers.xavier_initializer


def test_regularizers_match_tf():
    w = tf.constant([[1.0, -2.0], [0.5, -0.25]])
    v = tf.constant([3.0, -1.0])
    ops = {
        "l1": layers.l1_regularizer(0.3)(w),
        "l2": layers.l2_regularizer(0.2)(w),
        "l1_l2": layers.l1_l2_regularizer(0.3, 0.2)(w),
        "sum": layers.sum_regularizer([layers.l1_regularizer(0.1), None, layers.l2_regularizer(0.4)])(w),
        "apply": layers.apply_regularization(layers.l2_regularizer(0.5), [w, v]),
    }
    expected = EXPECTED["regularizers"]
    assert {k: t.name for k, t in ops.items()} == expected["names"]
    assert [t.name for t in tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)] == expected["losses"]
    with tf.Session() as sess:
        got = sess.run(ops)
    for name, value in got.items():
        close(value, expected["values"][name])


def test_regularizer_scales_are_checked():
    with pytest.raises(ValueError, match="integer"):
        layers.l2_regularizer(1)
    with pytest.raises(ValueError, match="less than 0"):
        layers.l1_regularizer(-0.5)
    assert layers.l1_regularizer(0.0)(tf.constant([1.0])) is None
    assert layers.l1_l2_regularizer(0.0, 0.0)(tf.constant([1.0])) is None
    assert layers.sum_regularizer([None]) is None
    with pytest.raises(ValueError, match="No weights"):
        layers.apply_regularization(layers.l2_regularizer(0.1))


def _build_layers():
    tf.set_random_seed(7)
    x = tf.constant(X_FC)
    fc = layers.fully_connected(x, 3, weights_initializer=layers.xavier_initializer(seed=21),
                                biases_initializer=tf.constant_initializer(0.1),
                                weights_regularizer=layers.l2_regularizer(0.01))
    fc_none = layers.fully_connected(x, 2, activation_fn=None, scope="linear",
                                     weights_initializer=layers.xavier_initializer(seed=22))
    fc3 = layers.fully_connected(tf.constant(X_SEQ), 2, activation_fn=tf.nn.tanh, scope="fc3",
                                 weights_initializer=layers.xavier_initializer(seed=23))
    conv = layers.conv2d(tf.constant(X_IMG), 4, [3, 3], stride=2,
                         weights_initializer=layers.xavier_initializer(seed=24),
                         biases_initializer=tf.constant_initializer(-0.05))
    conv_valid = layers.conv2d(tf.constant(X_IMG), 2, 3, padding="VALID", rate=2, activation_fn=None,
                               weights_initializer=layers.variance_scaling_initializer(seed=25), scope="dil")
    flat = layers.flatten(conv)
    ln = layers.layer_norm(tf.constant(X_SEQ) * 3.0 + 1.0)
    ln_last = layers.layer_norm(tf.constant(X_SEQ), begin_norm_axis=-1, scope="ln_last")
    with tf.contrib.framework.arg_scope([layers.fully_connected, layers.conv2d], activation_fn=tf.nn.sigmoid,
                                        weights_initializer=layers.xavier_initializer(seed=26),
                                        weights_regularizer=layers.l1_regularizer(0.02)):
        scoped_conv = layers.conv2d(tf.constant(X_IMG), 2, 1, scope="scoped_conv")
        scoped_fc = layers.fully_connected(x, 2, scope="scoped_fc")
    fc_bn = layers.fully_connected(x, 3, normalizer_fn=layers.batch_norm,
                                   normalizer_params={"scale": True, "updates_collections": None},
                                   weights_initializer=layers.xavier_initializer(seed=27), scope="fc_bn")
    return {"fc": fc, "fc_none": fc_none, "fc3": fc3, "conv": conv, "conv_valid": conv_valid, "flat": flat,
            "ln": ln, "ln_last": ln_last, "scoped_conv": scoped_conv, "scoped_fc": scoped_fc, "fc_bn": fc_bn}


def test_layers_match_tf_values_names_and_shapes():
    ops = _build_layers()
    expected = EXPECTED["layers"]
    names = lambda key: [v.name for v in tf.get_collection(key)]  # noqa: E731
    assert names(tf.GraphKeys.GLOBAL_VARIABLES) == expected["global_variables"]
    assert names(tf.GraphKeys.MODEL_VARIABLES) == expected["model_variables"]
    assert names(tf.GraphKeys.TRAINABLE_VARIABLES) == expected["trainable_variables"]
    reg = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    # TF's core layers name the loss after the layer's `kernel`; the contrib names are `weights`.
    assert [t.name.replace("/weights/", "/kernel/") for t in reg] == expected["regularization_losses"]
    assert {k: t.shape.as_list() for k, t in ops.items()} == expected["static_shapes"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(ops)
        got["regularization"] = sess.run(tf.add_n(reg))
        got["fc_weights"] = sess.run(tf.contrib.framework.get_unique_variable("fully_connected/weights"))
    for name, value in got.items():
        if name in ops:
            assert list(value.shape) == ops[name].shape.as_list(), name
        close(value, expected["values"][name])


def test_reuse_shares_the_layer_variables():
    x = tf.constant(X_FC)
    a = layers.fully_connected(x, 3, scope="shared")
    b = layers.fully_connected(x, 3, scope="shared", reuse=True)
    assert len(tf.global_variables()) == 2
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        va, vb = sess.run([a, b])
    np.testing.assert_array_equal(va, vb)
    with pytest.raises(ValueError, match="already exists"):
        layers.fully_connected(x, 3, scope="shared")


def test_layer_options_collections_and_trainable():
    x = tf.constant(X_FC)
    y = layers.fully_connected(x, 2, biases_initializer=None, trainable=False, outputs_collections="ends",
                               variables_collections={"weights": ["my_weights"]})
    assert [v.name for v in tf.global_variables()] == ["fully_connected/weights:0"]
    assert tf.trainable_variables() == []
    assert [v.name for v in tf.get_collection("my_weights")] == ["fully_connected/weights:0"]
    assert tf.get_collection("ends") == [y]
    assert layers.utils.get_tensor_aliases(y) == ["fully_connected"]
    with pytest.raises(ValueError, match="num_outputs"):
        layers.fully_connected(x, 2.0)
    with pytest.raises(ValueError, match="last dimension"):
        layers.fully_connected(tf.placeholder(tf.float32, [None, None]), 2)


def test_conv2d_nchw_equals_nhwc():
    img = tf.constant(X_IMG)
    init = tf.constant_initializer(np.linspace(-1, 1, 3 * 3 * 3 * 4).reshape(3, 3, 3, 4))
    nhwc = layers.conv2d(img, 4, 3, stride=2, weights_initializer=init, biases_initializer=tf.constant_initializer(0.2),
                         scope="a")
    nchw = layers.conv2d(tf.transpose(img, [0, 3, 1, 2]), 4, 3, stride=2, data_format="NCHW",
                         weights_initializer=init, biases_initializer=tf.constant_initializer(0.2), scope="b")
    assert nchw.shape.as_list() == [2, 4, 3, 3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([nhwc, nchw])
    close(np.transpose(b, [0, 2, 3, 1]), a)


def test_conv_argument_errors():
    with pytest.raises(ValueError, match="rank 4"):
        layers.conv2d(tf.constant(X_SEQ), 2, 3)
    with pytest.raises(ValueError, match="dilation_rate"):
        layers.conv2d(tf.constant(X_IMG), 2, 3, stride=2, rate=2)
    with pytest.raises(ValueError, match="data_format"):
        layers.conv2d(tf.constant(X_IMG), 2, 3, data_format="HWCN")


def test_flatten_unknown_batch_and_layer_norm_errors():
    x = tf.placeholder(tf.float32, [None, 2, 3])
    flat = layers.flatten(x)
    assert flat.shape.as_list() == [None, 6]
    with tf.Session() as sess:
        out = sess.run(flat, {x: np.ones((5, 2, 3), np.float32)})
    assert out.shape == (5, 6)
    partial, unknown, vector = (tf.placeholder(tf.float32, shape) for shape in ([None, None, 3], None, [5]))
    flats = [layers.flatten(t) for t in (partial, unknown, vector)]
    assert [f.shape.as_list() for f in flats] == [[None, None], [None, None], [5, 1]]
    with tf.Session() as sess:
        got = sess.run(flats, {partial: np.ones((2, 4, 3)), unknown: np.ones((2, 3, 2)), vector: np.ones(5)})
    assert [g.shape for g in got] == [(2, 12), (2, 6), (5, 1)]
    with pytest.raises(ValueError, match="must be < rank"):
        layers.layer_norm(tf.constant(X_FC), begin_norm_axis=2)
    with pytest.raises(ValueError, match="undefined rank"):
        layers.layer_norm(tf.placeholder(tf.float32))


def test_embed_sequence_looks_up_rows_of_embeddings():
    ids = tf.constant([[0, 2, 1], [3, 3, 0]])
    table = np.arange(12, dtype=np.float32).reshape(4, 3)
    out = layers.embed_sequence(ids, vocab_size=4, embed_dim=3, initializer=tf.constant_initializer(table))
    again = layers.embed_sequence(ids, scope="EmbedSequence", reuse=True)
    assert [v.name for v in tf.contrib.framework.get_model_variables()] == ["EmbedSequence/embeddings:0"]
    assert out.shape.as_list() == [2, 3, 3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([out, again])
    np.testing.assert_array_equal(a, table[[[0, 2, 1], [3, 3, 0]]])
    np.testing.assert_array_equal(b, a)
    with pytest.raises(ValueError, match="vocab size"):
        layers.embed_sequence(ids)


def test_conv1d_pooling_dropout_repeat_stack_match_tf():
    tf.set_random_seed(9)
    img = tf.constant(X_IMG)
    ops = {
        "conv1d": layers.convolution(tf.constant(X_SEQ), 3, 2, stride=2, scope="conv1d",
                                     weights_initializer=layers.xavier_initializer(seed=31)),
        "conv1d_dilated": layers.convolution(tf.constant(X_SEQ), 2, 2, rate=2, padding="VALID", scope="conv1d_dil",
                                             weights_initializer=layers.xavier_initializer(seed=32)),
        "max_pool": layers.max_pool2d(img, [2, 2]),
        "max_pool_same": layers.max_pool2d(img, 3, stride=2, padding="SAME"),
        "avg_pool": layers.avg_pool2d(img, [3, 2], stride=[1, 2]),
        "avg_pool_same": layers.avg_pool2d(img, 3, stride=2, padding="SAME"),
        "dropout": layers.dropout(img, 0.7, seed=33),
        "dropout_noise_shape": layers.dropout(img, 0.4, noise_shape=[2, 1, 1, 3], seed=34),
        "dropout_eval": layers.dropout(img, 0.7, is_training=False),
        "repeat": layers.repeat(img, 2, layers.conv2d, 3, [3, 3], scope="rep",
                                weights_initializer=layers.xavier_initializer(seed=35)),
        "stack": layers.stack(tf.constant(X_FC), layers.fully_connected, [4, 3, 2], scope="fc_stack",
                              weights_initializer=layers.xavier_initializer(seed=36)),
    }
    expected = EXPECTED["more_layers"]
    assert [v.name for v in tf.global_variables()] == expected["global_variables"]
    assert {k: t.shape.as_list() for k, t in ops.items()} == expected["static_shapes"]
    assert {k: t.op.name for k, t in ops.items() if "pool" in k} == expected["op_names"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(ops)
    for name, value in got.items():
        assert list(value.shape) == ops[name].shape.as_list(), name
        close(value, expected["values"][name])


def test_dropout_is_training_tensor_and_pool_errors():
    x = tf.ones([4, 10])
    training = tf.placeholder(tf.bool, [])
    out = layers.dropout(x, 0.5, is_training=training, seed=1)
    with tf.Session() as sess:
        np.testing.assert_array_equal(sess.run(out, {training: False}), np.ones((4, 10), np.float32))
        dropped = sess.run(out, {training: True})
    assert set(np.unique(dropped)) <= {0.0, 2.0} and 0 < (dropped == 0).sum() < 40
    with pytest.raises(ValueError, match="NCHW or NHWC"):
        layers.max_pool2d(tf.constant(X_IMG), 2, data_format="NWC")
    with pytest.raises(ValueError, match="rank 4"):
        layers.avg_pool2d(tf.constant(X_SEQ), 2)
    with pytest.raises(ValueError, match="list or tuple"):
        layers.stack(tf.constant(X_FC), layers.fully_connected, 3)


def test_linear_is_fully_connected_without_activation():
    x = tf.constant(X_FC)
    y = layers.linear(x, 2, weights_initializer=tf.constant_initializer(-1.0))
    assert [v.name for v in tf.global_variables()] == ["fully_connected/weights:0", "fully_connected/biases:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        close(sess.run(y), np.repeat(-X_FC.sum(1, keepdims=True), 2, axis=1))
