"""tf.contrib.framework: arg_scope semantics and the variable helpers (TF 1.15's
contrib/framework arg_scope.py and variables.py)."""
import numpy as np
import pytest

import tensorweave as tf

framework = tf.contrib.framework
arg_scope, add_arg_scope = framework.arg_scope, framework.add_arg_scope


@add_arg_scope
def scoped(a, b=1, c=2, d=None):
    return a, b, c, d


def plain(a, b=1):
    return a, b


def test_arg_scope_supplies_defaults_and_call_arguments_win():
    assert scoped(0) == (0, 1, 2, None)
    with arg_scope([scoped], b=10, c=20):
        assert scoped(0) == (0, 10, 20, None)
        assert scoped(0, c=5) == (0, 10, 5, None)
        with arg_scope([scoped], c=30, d="x"):
            assert scoped(0) == (0, 10, 30, "x")
        assert scoped(0) == (0, 10, 20, None)
    assert scoped(0) == (0, 1, 2, None)


def test_arg_scope_reenters_a_saved_scope_and_checks_its_arguments():
    with arg_scope([scoped], b=3) as saved:
        pass
    with arg_scope(saved):
        assert scoped(0)[1] == 3
    with pytest.raises(ValueError, match="kwargs must be empty"):
        with arg_scope(saved, b=4):
            pass
    with pytest.raises(ValueError, match="not decorated with @add_arg_scope"):
        with arg_scope([plain], b=2):
            pass
    with pytest.raises(TypeError, match="list/tuple"):
        with arg_scope(scoped, b=2):
            pass


def test_has_arg_scope_and_arg_scoped_arguments():
    assert framework.has_arg_scope(scoped) and not framework.has_arg_scope(plain)
    assert tuple(framework.arg_scoped_arguments(scoped)) == ("b", "c", "d")
    assert framework.has_arg_scope(tf.contrib.layers.fully_connected)
    assert framework.has_arg_scope(tf.contrib.layers.conv2d)
    assert framework.has_arg_scope(tf.contrib.layers.batch_norm)
    assert framework.has_arg_scope(framework.model_variable)
    assert "activation_fn" in framework.arg_scoped_arguments(tf.contrib.layers.fully_connected)
    assert scoped.__name__ == "scoped"


def test_arg_scope_over_layers_sets_activation_and_regularizer():
    x = tf.constant(np.ones((2, 3), np.float32))
    with arg_scope([tf.contrib.layers.fully_connected], activation_fn=None,
                   weights_initializer=tf.constant_initializer(-1.0),
                   weights_regularizer=tf.contrib.layers.l1_regularizer(0.5)):
        y = tf.contrib.layers.fully_connected(x, 2)
    losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
    assert [t.name for t in losses] == ["fully_connected/weights/Regularizer/l1_regularizer:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, loss = sess.run([y, losses[0]])
    np.testing.assert_array_equal(out, np.full((2, 2), -3.0, np.float32))  # no relu
    assert loss == pytest.approx(3.0)


def test_model_variable_and_variable_collections():
    m = framework.model_variable("m", shape=[2], initializer=tf.zeros_initializer(), collections=["extra"])
    with tf.variable_scope("scope"):
        v = framework.variable("v", shape=[3], initializer=tf.ones_initializer(), trainable=False)
        w = framework.variable("weights", shape=[1], collections=[tf.GraphKeys.GLOBAL_VARIABLES, "extra"])
    local = framework.local_variable([1.0, 2.0], name="loc")
    assert framework.get_model_variables() == [m]
    assert tf.get_collection("extra") == [m, w]
    assert framework.get_variables() == [m, v, w]
    assert framework.get_variables("scope") == [v, w]
    assert framework.get_trainable_variables() == [m, w]
    assert framework.get_local_variables() == [local]
    assert framework.get_variables_by_name("v") == [v]
    assert framework.get_variables_by_suffix("ights") == [w]
    assert framework.get_variables(tf.get_variable_scope()) == [m, v, w]
    assert framework.get_unique_variable("scope/v") is v
    assert framework.get_variable_full_name(w) == "scope/weights"
    with pytest.raises(ValueError, match="Couldn't find"):
        framework.get_unique_variable("nothing")
    with framework.arg_scope([framework.model_variable], initializer=tf.constant_initializer(4.0)):
        four = framework.model_variable("four", shape=[])
    with tf.Session() as sess:
        sess.run([tf.global_variables_initializer(), tf.local_variables_initializer()])
        assert sess.run(four) == 4.0 and list(sess.run(local)) == [1.0, 2.0]


def test_variable_on_a_device_and_get_unique_variable_ambiguity():
    with tf.variable_scope("a"):
        framework.variable("x", shape=[], device="/cpu:0")
        framework.variable("x_1", shape=[])
    assert framework.get_unique_variable("a/x").device.upper().endswith("CPU:0")
    with pytest.raises(ValueError, match="does not uniquely identify"):
        framework.get_unique_variable("a/x_")


def test_get_variables_to_restore_include_exclude():
    with tf.variable_scope("enc"):
        e1 = framework.variable("w", shape=[1])
        e2 = framework.variable("b", shape=[1])
    with tf.variable_scope("dec"):
        d1 = framework.variable("w", shape=[1])
    assert framework.get_variables_to_restore() == [e1, e2, d1]
    assert framework.get_variables_to_restore(include=["enc"]) == [e1, e2]
    assert framework.get_variables_to_restore(exclude=["enc/b", "dec"]) == [e1]
    with pytest.raises(TypeError, match="include"):
        framework.get_variables_to_restore(include="enc")
    with pytest.raises(TypeError, match="exclude"):
        framework.get_variables_to_restore(exclude="enc")


def test_global_step_helpers():
    assert framework.get_global_step() is None
    step = framework.get_or_create_global_step()
    assert framework.get_or_create_global_step() is step and framework.get_global_step() is step
    assert step.name == "global_step:0" and step.dtype.base_dtype == tf.int64


def test_unprovided_contrib_modules_say_so():
    for name in ("slim", "learn", "seq2seq"):
        with pytest.raises(AttributeError, match=f"tf.contrib.{name} is not provided by tensorweave"):
            getattr(tf.contrib, name)
    with pytest.raises(AttributeError, match="tf.contrib.layers.separable_conv2d is not provided by tensorweave"):
        tf.contrib.layers.separable_conv2d
    assert tf.contrib.rnn.static_bidirectional_rnn is tf.nn.static_bidirectional_rnn
    with pytest.raises(AttributeError, match="tf.contrib.rnn.AttentionCellWrapper is not provided"):
        tf.contrib.rnn.AttentionCellWrapper
    with pytest.raises(AttributeError, match="tf.contrib.framework.assign_from_values_fn is not provided"):
        tf.contrib.framework.assign_from_values_fn
    assert not hasattr(tf.contrib, "__wrapped__")


def test_assign_from_checkpoint_fn_restores_and_skips_missing(tmp_path):
    path = str(tmp_path / "model.ckpt")
    with tf.Graph().as_default():
        a = tf.Variable([1.0, 2.0], name="a")
        with tf.Session() as sess:
            sess.run(a.initializer)
            tf.train.Saver([a]).save(sess, path)
    with tf.Graph().as_default():
        a = tf.Variable([0.0, 0.0], name="a")
        b = tf.Variable(7.0, name="b")
        with pytest.raises(ValueError, match="empty"):
            framework.assign_from_checkpoint_fn(path, [])
        assert framework.assign_from_checkpoint_fn(path, [b], ignore_missing_vars=True) is None
        restore = framework.assign_from_checkpoint_fn(path, [a, b], ignore_missing_vars=True)
        column = tf.Variable([[0.0], [0.0]], name="column")
        reshaped = framework.assign_from_checkpoint_fn(path, {"a": column}, reshape_variables=True)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            restore(sess)
            assert list(sess.run(a)) == [1.0, 2.0] and sess.run(b) == 7.0
            reshaped(sess)
            assert sess.run(column).tolist() == [[1.0], [2.0]]
        strict = framework.assign_from_checkpoint_fn(path, [a, b])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            with pytest.raises(tf.errors.NotFoundError):
                strict(sess)


def test_variable_custom_getter_replaces_get_variable():
    calls = []

    def getter(name, reuse=None, **kwargs):
        calls.append((name, reuse, kwargs["collections"]))
        return tf.get_variable(name + "_custom", **kwargs)

    with tf.variable_scope("s", reuse=tf.AUTO_REUSE):
        v = framework.model_variable("v", shape=[2], custom_getter=getter)
    assert v.name == "s/v_custom:0"
    assert calls == [("v", tf.AUTO_REUSE, [tf.GraphKeys.GLOBAL_VARIABLES, tf.GraphKeys.MODEL_VARIABLES])]
    assert framework.get_model_variables() == [v]
