"""The tf.layers Layer API as TF 2.15's tf.compat.v1.layers behaves (expected names and
messages recorded from it by hand, issue 11): layer names vs scope names, weights lists,
trainable=False, losses and updates (UPDATE_OPS), name/reuse in functional forms, input checks,
subclassing with build/call/add_weight, constraints applied by optimizers."""
import types

import numpy as np
import pytest

import tensorweave as tf


@pytest.fixture(autouse=True)
def graph():
    with tf.Graph().as_default() as g:
        yield g


def _names(variables):
    return [v.name for v in variables]


def test_layer_names_are_per_graph_and_scopes_per_variable_scope():
    x = tf.placeholder(tf.float32, [2, 3])
    first = tf.layers.Dense(4)
    y = first(x)
    named = tf.layers.Dense(4, name="foo")
    y2 = named(x)
    y3 = tf.layers.dense(x, 4)
    again = first(x)
    assert (first.name, named.name, first.scope_name) == ("dense_1", "foo", "dense")
    assert (y.name, y2.name, y3.name, again.name) == ("dense/BiasAdd:0", "foo/BiasAdd:0", "dense_1/BiasAdd:0",
                                                      "dense/BiasAdd_1:0")
    with tf.variable_scope("tower"):
        tf.layers.dense(x, 4)
        tf.layers.dense(x, 4, name="dd")
    with tf.variable_scope("tower", reuse=True):
        y4 = tf.layers.dense(x, 4)
        y5 = tf.layers.dense(x, 4, name="dd")
    assert (y4.name, y5.name) == ("tower_1/dense/BiasAdd:0", "tower_1/dd/BiasAdd:0")
    assert _names(tf.global_variables()) == [
        "dense/kernel:0", "dense/bias:0", "foo/kernel:0", "foo/bias:0", "dense_1/kernel:0", "dense_1/bias:0",
        "tower/dense/kernel:0", "tower/dense/bias:0", "tower/dd/kernel:0", "tower/dd/bias:0"]
    with tf.Graph().as_default():  # a new graph numbers layers afresh
        assert tf.layers.Dense(1).name == "dense_1"


def test_weights_lists_and_trainable_false():
    x = tf.placeholder(tf.float32, [2, 4, 4, 3])
    conv = tf.layers.Conv2D(2, 3, trainable=False, kernel_regularizer=lambda w: tf.reduce_sum(w))
    conv(x)
    assert conv.trainable_weights == [] and _names(conv.non_trainable_weights) == ["conv2d/kernel:0",
                                                                                   "conv2d/bias:0"]
    assert _names(conv.weights) == _names(conv.variables) == ["conv2d/kernel:0", "conv2d/bias:0"]
    assert len(conv.losses) == 1 and tf.trainable_variables() == []
    assert tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES) == conv.losses


def test_batch_norm_updates_accumulate_in_update_ops_once_each():
    x = tf.placeholder(tf.float32, [2, 4, 4, 3])
    bn = tf.layers.BatchNormalization()
    bn(x, training=True)
    assert bn.name == "batch_normalization_1"
    assert _names(bn.trainable_weights) == ["batch_normalization/gamma:0", "batch_normalization/beta:0"]
    assert _names(bn.non_trainable_weights) == ["batch_normalization/moving_mean:0",
                                                "batch_normalization/moving_variance:0"]
    assert len(bn.updates) == 2 and len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 2
    bn(x, training=True)
    assert len(bn.updates) == 4 and len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 4
    assert len(tf.global_variables()) == 4
    bn(x, training=False)  # inference adds no update
    assert len(tf.get_collection(tf.GraphKeys.UPDATE_OPS)) == 4


def test_functional_name_and_reuse():
    tf.layers.dense(tf.placeholder(tf.float32, [2, 3]), 3, name="dd")
    with pytest.raises(ValueError, match="Variable dd/kernel already exists, disallowed"):
        tf.layers.dense(tf.placeholder(tf.float32, [2, 3]), 3, name="dd")
    out = tf.layers.dense(tf.placeholder(tf.float32, [2, 3]), 3, name="dd", reuse=True)
    assert out.name == "dd_2/BiasAdd:0" and len(tf.global_variables()) == 2
    with pytest.raises(ValueError, match="Trying to share variable dd/kernel, but specified"):
        tf.layers.dense(tf.placeholder(tf.float32, [2, 5]), 3, name="dd", reuse=True)
    auto = tf.layers.dense(tf.placeholder(tf.float32, [2, 3]), 3, name="dd", reuse=tf.AUTO_REUSE)
    assert auto.shape.as_list() == [2, 3] and len(tf.global_variables()) == 2


def test_scope_name_before_call_and_input_checks():
    dense = tf.layers.Dense(3)
    with pytest.raises(ValueError, match="No name available for layer scope"):
        dense.scope_name  # noqa: B018
    dense(tf.placeholder(tf.float32, [None, 7]))
    with pytest.raises(ValueError, match='Input 0 of layer "dense_1" is incompatible with the layer'):
        dense(tf.placeholder(tf.float32, [None, 6]))
    with pytest.raises(ValueError, match="expected min_ndim=2"):
        tf.layers.dense(tf.placeholder(tf.float32, [3]), 2)
    with pytest.raises(ValueError, match="last dimension of the inputs to a Dense layer should be defined"):
        tf.layers.dense(tf.placeholder(tf.float32, [3, None]), 2)
    with pytest.raises(ValueError, match="expected ndim=4"):
        tf.layers.max_pooling2d(tf.placeholder(tf.float32, [3, 4, 2]), 2, 2)
    assert (dense.scope_name, dense.dtype, tf.layers.Dense(2, dtype=tf.float64).dtype) == ("dense", "float32",
                                                                                        "float64")


def test_layers_inside_variable_scope_and_static_shapes():
    x = tf.placeholder(tf.float32, [2, 4, 4, 3])
    with tf.variable_scope("outer"):
        dense = tf.layers.Dense(2)
        dense(tf.placeholder(tf.float32, [1, 2]))
        pooled = tf.layers.max_pooling2d(x, 2, 2)
    assert dense.scope_name == "outer/dense"
    assert _names(dense.variables) == ["outer/dense/kernel:0", "outer/dense/bias:0"]
    assert pooled.name == "outer/max_pooling2d/MaxPool:0"
    assert tf.layers.flatten(tf.placeholder(tf.float32, [None, 3, None])).shape.as_list() == [None, None]
    transposed = tf.layers.conv2d_transpose(tf.placeholder(tf.float32, [None, None, 5, 2]), 3, 3, strides=2)
    assert transposed.shape.as_list() == [None, None, 11, 3]


def test_subclass_with_build_call_add_weight_and_apply():
    class Custom(tf.layers.Layer):
        def build(self, input_shape):
            self.w = self.add_weight("w", [int(input_shape[-1]), 2], initializer=tf.ones_initializer())
            self.s = self.add_weight("s", [], initializer=tf.zeros_initializer(), trainable=False)

        def call(self, inputs):
            return tf.matmul(inputs, self.w) + self.s

    layer = Custom(name="my_layer")
    assert not layer.built
    out = layer.apply(tf.ones([1, 3]))
    assert layer.built and layer.name == "my_layer" and out.name == "my_layer/add:0"
    assert _names(layer.variables) == ["my_layer/w:0", "my_layer/s:0"]
    assert _names(layer.trainable_variables) == ["my_layer/w:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        np.testing.assert_array_equal(sess.run(out), [[3.0, 3.0]])


def test_call_receives_scope_argument_when_it_asks_for_it():
    seen = []

    class Scoped(tf.layers.Layer):
        def call(self, inputs, scope=None):
            seen.append(scope.name)
            return inputs

    with tf.variable_scope("a"):
        Scoped()(tf.ones([1]))
    assert seen == ["a/scoped"]


def test_kernel_constraint_is_applied_after_each_optimizer_step():
    x = tf.constant(np.ones([2, 3], np.float32))
    y = tf.layers.dense(x, 2, kernel_constraint=lambda w: tf.clip_by_value(w, -0.1, 0.1))
    kernel = tf.trainable_variables()[0]
    train = tf.train.GradientDescentOptimizer(1.0).minimize(tf.reduce_sum(y))
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert np.abs(sess.run(kernel)).max() <= 0.1 + 1e-7
        assert kernel.constraint is not None


def test_regularizers_sum_into_get_regularization_loss():
    x = tf.constant(np.ones([2, 3], np.float32))
    tf.layers.dense(x, 2, kernel_initializer=tf.ones_initializer(), kernel_regularizer=lambda w: tf.reduce_sum(w),
                    bias_regularizer=lambda b: tf.constant(1.5), activity_regularizer=lambda a: tf.reduce_sum(a))
    losses = tf.losses.get_regularization_losses()
    assert len(losses) == 3
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        # kernel 6 ones; bias 1.5; activity: sum of outputs (each 3) over 2x2, divided by batch 2
        assert sess.run(tf.losses.get_regularization_loss()) == pytest.approx(6 + 1.5 + 6)


def test_bad_arguments():
    with pytest.raises(ValueError, match="`units`"):
        tf.layers.Dense(0)
    with pytest.raises(ValueError, match="`kernel_size` argument must be a tuple of 2 integers"):
        tf.layers.Conv2D(3, (1, 2, 3))
    with pytest.raises(ValueError, match="`padding` argument"):
        tf.layers.Conv2D(3, 2, padding="full")
    with pytest.raises(ValueError, match="`data_format` argument"):
        tf.layers.MaxPooling2D(2, 2, data_format="nhwc")
    with pytest.raises(ValueError, match="strides > 1` not supported in conjunction with `dilation_rate > 1"):
        tf.layers.Conv2D(3, 2, strides=2, dilation_rate=2)
    with pytest.raises(ValueError, match="between 0 and 1"):
        tf.layers.Dropout(1.5)
    with pytest.raises(ValueError, match="fused=True"):
        tf.layers.batch_normalization(tf.placeholder(tf.float32, [2, 3]), fused=True)
    with pytest.raises(TypeError, match="Keyword argument not understood"):
        tf.layers.Dense(2, bogus=1)
    with pytest.raises(TypeError, match="`training`"):
        tf.layers.dropout(tf.ones([2]), training="yes")


def test_public_names_are_tf_compat_v1_layers():
    # tf.compat.v1.layers of TF 2.15.1, less its `experimental` submodule
    expected = [
        "AveragePooling1D", "AveragePooling2D", "AveragePooling3D", "BatchNormalization", "Conv1D", "Conv2D",
        "Conv2DTranspose", "Conv3D", "Conv3DTranspose", "Dense", "Dropout", "Flatten", "InputSpec", "Layer",
        "MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "SeparableConv1D", "SeparableConv2D", "average_pooling1d",
        "average_pooling2d", "average_pooling3d", "batch_normalization", "conv1d", "conv2d", "conv2d_transpose",
        "conv3d", "conv3d_transpose", "dense", "dropout", "flatten", "max_pooling1d", "max_pooling2d",
        "max_pooling3d", "separable_conv1d", "separable_conv2d"]
    names = [n for n in dir(tf.layers) if not n.startswith("_") and not isinstance(getattr(tf.layers, n),
                                                                                  types.ModuleType)]
    assert sorted(names) == expected


def test_positional_arguments_in_tfs_order():
    x = tf.placeholder(tf.float32, [1, 5, 5, 2])
    relu = tf.nn.relu
    # conv2d(inputs, filters, kernel_size, strides, padding, data_format, dilation_rate, activation, use_bias)
    y = tf.layers.conv2d(x, 3, 3, 1, "same", "channels_last", 1, relu, False)
    assert y.op.type == "Relu" and [v.op.name for v in tf.global_variables()] == ["conv2d/kernel"]
    # conv2d_transpose has no dilation_rate: activation comes right after data_format
    t = tf.layers.conv2d_transpose(x, 2, 2, 2, "valid", "channels_last", relu)
    assert t.op.type == "Relu" and t.shape.as_list() == [1, 10, 10, 2]
    s = tf.layers.SeparableConv2D(4, 3, 1, "same", "channels_last", 1, 2, relu)(x)
    assert s.op.type == "Relu" and s.shape.as_list() == [1, 5, 5, 4]
    assert tf.layers.Conv2DTranspose(2, 3, dilation_rate=2).dilation_rate == (2, 2)
    with pytest.raises(TypeError, match="multiple values for argument 'activation'"):
        tf.layers.conv2d(x, 3, 3, 1, "same", "channels_last", 1, relu, activation=relu)
