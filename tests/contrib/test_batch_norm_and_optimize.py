"""tf.contrib.layers.batch_norm and optimize_loss against TF 1.x's numbers (tf_slim on TF 2.15,
tests/data/tf215_contrib_expected.json): outputs, moving averages after two training steps,
variables, update ops, and three training steps of every optimizer name."""
import numpy as np
import pytest

import tensorweave as tf
from tests.contrib.fixtures import EXPECTED, X_FC, X_IMG, X_SEQ, close

layers = tf.contrib.layers

BN_CASES = {
    "default": ({}, X_IMG * 2.0 + 0.3, 2),
    "scale_decay": ({"scale": True, "decay": 0.9, "epsilon": 0.01}, X_IMG * 2.0 + 0.3, 2),
    "in_place": ({"updates_collections": None, "decay": 0.5}, X_IMG * 2.0 + 0.3, 2),
    "rank2": ({"decay": 0.8, "scale": True}, X_FC * 1.5 - 0.2, 2),
    "rank3": ({"decay": 0.8}, X_SEQ + 0.5, 2),
    "not_fused": ({"fused": False, "decay": 0.7}, X_IMG * 2.0 + 0.3, 2),
    "inference": ({"is_training": False, "center": False}, X_IMG * 2.0 + 0.3, 1),
    "zero_debias": ({"zero_debias_moving_mean": True, "decay": 0.9}, X_IMG * 2.0 + 0.3, 2),
}


@pytest.mark.parametrize("case", sorted(BN_CASES))
def test_batch_norm_matches_tf(case):
    kwargs, x, steps = BN_CASES[case]
    expected = EXPECTED["batch_norm"][case]
    out = layers.batch_norm(tf.constant(x.astype(np.float32)), **kwargs)
    assert out.shape.as_list() == list(x.shape)
    updates = tf.get_collection(tf.GraphKeys.UPDATE_OPS)
    assert len(updates) == expected["n_update_ops"]
    assert [v.name for v in tf.global_variables()] == expected["variables"]
    assert [v.name for v in tf.trainable_variables()] == expected["trainable"]
    moving_mean = tf.contrib.framework.get_unique_variable("BatchNorm/moving_mean")
    moving_variance = tf.contrib.framework.get_unique_variable("BatchNorm/moving_variance")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for _ in range(steps):
            y, _ = sess.run([out, updates])
        close(y, expected["y"], rtol=1e-4, atol=1e-5)
        close(sess.run(moving_mean), expected["moving_mean"])
        close(sess.run(moving_variance), expected["moving_variance"])


def test_batch_norm_nchw_equals_nhwc():
    x = tf.constant(X_IMG * 2.0 + 0.3)
    a = layers.batch_norm(x, scale=True, updates_collections=None, scope="a")
    b = layers.batch_norm(tf.transpose(x, [0, 3, 1, 2]), scale=True, updates_collections=None,
                          data_format="NCHW", scope="b")
    c = layers.batch_norm(tf.transpose(x, [0, 3, 1, 2]), fused=False, scale=True, updates_collections=None,
                          data_format="NCHW", scope="c")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        ya, yb, yc = sess.run([a, b, c])
        means = sess.run([tf.contrib.framework.get_unique_variable(s + "/moving_mean") for s in "abc"])
    close(np.transpose(yb, [0, 2, 3, 1]), ya, rtol=1e-4, atol=1e-5)
    close(np.transpose(yc, [0, 2, 3, 1]), ya, rtol=1e-4, atol=1e-5)
    close(means[1], means[0])
    close(means[2], means[0])


def test_batch_norm_is_training_tensor_picks_the_statistics_at_run_time():
    x = tf.constant(X_IMG * 2.0 + 0.3)
    training = tf.placeholder(tf.bool, [])
    out = layers.batch_norm(x, is_training=training, updates_collections=None, decay=0.5)
    moving_mean = tf.contrib.framework.get_unique_variable("BatchNorm/moving_mean")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        inference = sess.run(out, {training: False})
        np.testing.assert_array_equal(sess.run(moving_mean), np.zeros(3, np.float32))
        train = sess.run(out, {training: True})
        batch_mean = (X_IMG * 2.0 + 0.3).mean(axis=(0, 1, 2))
        close(sess.run(moving_mean), 0.5 * batch_mean)
    close(inference, (X_IMG * 2.0 + 0.3) / np.sqrt(1.0 + 0.001), rtol=1e-5)
    xs = X_IMG * 2.0 + 0.3
    close(train, (xs - batch_mean) / np.sqrt(xs.var(axis=(0, 1, 2)) + 0.001), rtol=1e-4, atol=1e-5)


def test_batch_norm_rejects_bad_arguments():
    with pytest.raises(ValueError, match="NCHW or NHWC"):
        layers.batch_norm(tf.constant(X_IMG), data_format="NWC")
    with pytest.raises(ValueError, match="undefined rank"):
        layers.batch_norm(tf.placeholder(tf.float32))


OPT_CASES = {
    "SGD": {"optimizer": "SGD"},
    "Adam": {"optimizer": "Adam"},
    "Adagrad": {"optimizer": "Adagrad"},
    "Momentum": {"optimizer": "Momentum"},
    "RMSProp": {"optimizer": "RMSProp"},
    "Ftrl": {"optimizer": "Ftrl"},
    "clip": {"optimizer": "SGD", "clip_gradients": 0.5},
    "decay": {"optimizer": "SGD", "learning_rate_decay_fn": lambda lr, gs: tf.train.exponential_decay(lr, gs, 1, 0.5)},
    "class": {"optimizer": lambda: tf.train.MomentumOptimizer(0.05, 0.5)},
    "multipliers": {"optimizer": "SGD", "gradient_multipliers": {"w:0": 3.0}},
}


@pytest.mark.parametrize("case", sorted(OPT_CASES))
def test_optimize_loss_matches_tf(case):
    expected = EXPECTED["optimize_loss"][case]
    gs = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", initializer=tf.constant([[0.5], [-1.0], [2.0]]))
    b = tf.get_variable("b", initializer=tf.constant([0.1]))
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(X_FC[:, :3]), w) + b - 1.0))
    train = layers.optimize_loss(loss, gs, None if case == "class" else 0.1, summaries=[], **OPT_CASES[case])
    # TF's names: the optimizer's slots and accumulators in the OptimizeLoss scope too
    # (OptimizeLoss/w/Adam, OptimizeLoss/beta1_power), so TF's checkpoints line up.
    assert [v.name for v in tf.global_variables()] == expected["variables"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        losses = [float(sess.run(train)) for _ in range(3)]
        close(losses, expected["losses"])
        close(sess.run(w), expected["w"])
        close(sess.run(b), expected["b"])
        assert int(sess.run(gs)) == expected["global_step"]


def test_optimize_loss_runs_update_ops_first_and_honours_variables():
    gs = tf.train.get_or_create_global_step()
    counter = tf.Variable(0.0, trainable=False, name="counter")
    tf.add_to_collection(tf.GraphKeys.UPDATE_OPS, tf.assign_add(counter, 1.0))
    w = tf.Variable(1.0, name="w")
    frozen = tf.Variable(5.0, name="frozen")
    loss = w * w + frozen * frozen
    train = layers.optimize_loss(loss, gs, 0.25, "SGD", variables=[w], increment_global_step=False)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train)
        assert sess.run([counter, w, frozen, gs]) == [1.0, 0.5, 5.0, 0]


def test_optimize_loss_argument_errors():
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(1.0, name="w")
    loss = w * w
    with pytest.raises(ValueError, match="Optimizer name should be one of"):
        layers.optimize_loss(loss, gs, 0.1, "Nesterov")
    with pytest.raises(ValueError, match="Learning rate should be 0d Tensor or float"):
        layers.optimize_loss(loss, gs, 1, "SGD")
    with pytest.raises(ValueError, match="Invalid learning_rate"):
        layers.optimize_loss(loss, gs, -0.5, "SGD", name="neg")
    with pytest.raises(ValueError, match="Learning rate is None"):
        layers.optimize_loss(loss, gs, None, "SGD", name="none")
    with pytest.raises(ValueError, match="Unknown type"):
        layers.optimize_loss(loss, gs, 0.1, "SGD", clip_gradients=1, name="clip")
    with pytest.raises(ValueError, match="Summaries should be one of"):
        layers.optimize_loss(loss, gs, 0.1, "SGD", summaries=["loss", "histograms"])
    with pytest.raises(ValueError, match="scalar"):
        layers.optimize_loss(tf.stack([loss, loss]), gs, 0.1, "SGD")
    with pytest.raises(TypeError, match="integer"):
        layers.optimize_loss(loss, tf.Variable(0.0), 0.1, "SGD")


def test_optimize_loss_with_an_optimizer_instance_or_class_and_tensor_rate():
    gs = tf.train.get_or_create_global_step()
    w = tf.Variable(2.0, name="w")
    a = layers.optimize_loss(w * w, gs, None, tf.train.GradientDescentOptimizer(0.25), name="a")
    b = layers.optimize_loss(w * w, gs, tf.constant(0.25), tf.train.GradientDescentOptimizer, name="b")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert sess.run(a) == 4.0 and sess.run(w) == 1.0
        assert sess.run(b) == 1.0 and sess.run(w) == 0.5
        assert sess.run(gs) == 2


@pytest.mark.parametrize("case", ["default", "per_variable"])
def test_optimize_loss_summaries_are_tensorflows(case):
    """The summaries optimize_loss adds (default: loss, decayed learning rate, global gradient
    norm before and after clipping; on request per-variable gradient histograms and norms): TF's
    op names, types, tags and values (tf_slim under TF 2.15)."""
    expected = EXPECTED["optimize_loss_summaries"][case]
    kwargs = {"default": {"summaries": None, "clip_gradients": 0.5,
                          "learning_rate_decay_fn": lambda lr, gs: tf.train.exponential_decay(lr, gs, 1, 0.5)},
              "per_variable": {"summaries": ["gradients", "gradient_norm", "loss"]}}[case]
    gs = tf.train.get_or_create_global_step()
    w = tf.get_variable("w", initializer=tf.constant([[0.5], [-1.0], [2.0]]))
    b = tf.get_variable("b", initializer=tf.constant([0.1]))
    loss = tf.reduce_mean(tf.square(tf.matmul(tf.constant(X_FC[:, :3]), w) + b - 1.0))
    layers.optimize_loss(loss, gs, 0.1, "SGD", **kwargs)
    ops = tf.get_collection(tf.GraphKeys.SUMMARIES)
    assert [[t.op.name, t.op.type] for t in ops] == expected["ops"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        values = sess.run(ops)
    got = []
    for v in values:
        for x in tf.Summary.FromString(v).value:
            got.append([x.tag, x.WhichOneof("value"), x.simple_value if x.HasField("simple_value") else x.histo.sum])
    assert [g[:2] for g in got] == [e[:2] for e in expected["values"]]
    np.testing.assert_allclose([g[2] for g in got], [e[2] for e in expected["values"]], rtol=1e-5)
