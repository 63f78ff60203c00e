"""tf.contrib.rnn: the core cells under contrib names, LSTMBlockCell against TF's LSTMCell run
with the same weights (tests/data/tf215_contrib_expected.json), LayerNormBasicLSTMCell against
a NumPy reference, with TF 1.15's variable names."""
import numpy as np
import pytest

import tensorweave as tf
from tests.contrib.fixtures import EXPECTED, close

rnn = tf.contrib.rnn


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def test_core_cells_are_reexported():
    assert rnn.BasicLSTMCell is tf.nn.rnn_cell.BasicLSTMCell
    assert rnn.LSTMCell is tf.nn.rnn_cell.LSTMCell and rnn.GRUCell is tf.nn.rnn_cell.GRUCell
    assert rnn.BasicRNNCell is tf.nn.rnn_cell.BasicRNNCell and rnn.MultiRNNCell is tf.nn.rnn_cell.MultiRNNCell
    assert rnn.DropoutWrapper is tf.nn.rnn_cell.DropoutWrapper and rnn.RNNCell is tf.nn.rnn_cell.RNNCell
    assert rnn.LSTMStateTuple is tf.nn.rnn_cell.LSTMStateTuple and rnn.static_rnn is tf.nn.static_rnn


def _load(sess, weights, scope):
    for name, value in weights.items():
        var = tf.contrib.framework.get_unique_variable(f"{scope}/lstm_cell/{name}")
        sess.run(tf.assign(var, np.asarray(value, np.float32)))


@pytest.mark.parametrize("case", ["plain", "peephole_clip"])
def test_lstm_block_cell_matches_tf_lstm_cell(case):
    data = EXPECTED["lstm"]
    expected = data["cases"][case]
    kwargs = {"plain": {}, "peephole_clip": {"use_peephole": True, "cell_clip": 0.3, "forget_bias": 0.5}}[case]
    cell = rnn.LSTMBlockCell(5, **kwargs)
    assert cell.state_size == (5, 5) and cell.output_size == 5
    outputs, state = tf.nn.dynamic_rnn(cell, tf.constant(np.asarray(data["inputs"], np.float32)), dtype=tf.float32)
    names = [v.name for v in tf.global_variables()]
    wanted = ["rnn/lstm_cell/kernel:0", "rnn/lstm_cell/bias:0"]
    if case == "peephole_clip":
        wanted += ["rnn/lstm_cell/w_i_diag:0", "rnn/lstm_cell/w_f_diag:0", "rnn/lstm_cell/w_o_diag:0"]
    assert names == wanted
    assert sorted(expected["weights"]) == sorted(n.split("/")[-1][:-2] for n in names)
    assert tf.global_variables()[0].shape.as_list() == [3 + 5, 20]
    assert isinstance(state, rnn.LSTMStateTuple)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        _load(sess, expected["weights"], "rnn")
        o, s = sess.run([outputs, state])
    assert o.shape == tuple(outputs.shape.as_list())
    close(o, expected["outputs"])
    close(s.c, expected["c"])
    close(s.h, expected["h"])
    if case == "peephole_clip":
        assert np.abs(s.c).max() <= 0.3 + 1e-7


def test_lstm_block_cell_gradients_reach_every_variable():
    cell = rnn.LSTMBlockCell(3, use_peephole=True)
    outputs, _ = tf.nn.static_rnn(cell, [tf.ones([2, 4]), tf.ones([2, 4])], dtype=tf.float32)
    grads = tf.gradients(tf.reduce_sum(outputs[-1]), tf.trainable_variables())
    assert all(g is not None for g in grads)
    assert [v.name for v in tf.trainable_variables()][0] == "rnn/lstm_cell/kernel:0"


def _layer_norm(x, gamma, beta):
    mean = x.mean(axis=1, keepdims=True)
    var = x.var(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-12) * gamma + beta


def ln_lstm_reference(x, kernel, norms, forget_bias=1.0, bias=None):
    batch, steps, _ = x.shape
    n = kernel.shape[1] // 4
    c = np.zeros((batch, n))
    h = np.zeros((batch, n))
    outs = []
    for t in range(steps):
        z = np.concatenate([x[:, t], h], 1) @ kernel
        if bias is not None:
            z = z + bias
        i, j, f, o = np.split(z, 4, axis=1)
        if norms:
            i, j, f, o = (_layer_norm(v, *norms[k]) for v, k in zip((i, j, f, o), ("input", "transform", "forget",
                                                                                   "output")))
        c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
        if norms:
            c = _layer_norm(c, *norms["state"])
        h = np.tanh(c) * sigmoid(o)
        outs.append(h)
    return np.stack(outs, 1), c, h


def test_layer_norm_basic_lstm_cell_matches_numpy_and_names():
    rng = np.random.RandomState(5)
    x = rng.uniform(-1, 1, (3, 4, 2)).astype(np.float32)
    cell = rnn.LayerNormBasicLSTMCell(4, forget_bias=0.7, norm_gain=1.3, norm_shift=0.1)
    outputs, state = tf.nn.dynamic_rnn(cell, tf.constant(x), dtype=tf.float32)
    prefix = "rnn/layer_norm_basic_lstm_cell/"
    gates = ["input", "transform", "forget", "output", "state"]
    assert [v.name for v in tf.global_variables()] == [prefix + "kernel:0"] + [
        f"{prefix}{g}/{p}:0" for g in gates for p in ("gamma", "beta")]
    assert len(cell.variables) == 11
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel = sess.run(tf.global_variables()[0])
        norms = {g: (np.full(4, 1.3), np.full(4, 0.1)) for g in gates}
        o, s = sess.run([outputs, state])
    ref_o, ref_c, ref_h = ln_lstm_reference(x.astype(np.float64), kernel.astype(np.float64), norms, 0.7)
    close(o, ref_o, rtol=1e-4, atol=1e-5)
    close(s.c, ref_c, rtol=1e-4, atol=1e-5)
    close(s.h, ref_h, rtol=1e-4, atol=1e-5)


def test_layer_norm_basic_lstm_cell_without_layer_norm_has_a_bias():
    x = np.linspace(-1, 1, 2 * 3 * 2).reshape(2, 3, 2).astype(np.float32)
    cell = rnn.LayerNormBasicLSTMCell(3, layer_norm=False)
    outputs, _ = tf.nn.dynamic_rnn(cell, tf.constant(x), dtype=tf.float32, scope="plain")
    assert [v.name for v in tf.global_variables()] == ["plain/layer_norm_basic_lstm_cell/kernel:0",
                                                       "plain/layer_norm_basic_lstm_cell/bias:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias = sess.run(tf.global_variables())
        o = sess.run(outputs)
    assert np.abs(bias).max() > 0  # TF leaves the bias to the default (Glorot) initializer
    close(o, ln_lstm_reference(x.astype(np.float64), kernel.astype(np.float64), None, 1.0, bias)[0], rtol=1e-4)


def test_layer_norm_basic_lstm_cell_dropout_keep_prob():
    x = tf.ones([2, 3, 2])
    keep = tf.placeholder(tf.float32, [])
    cell = rnn.LayerNormBasicLSTMCell(8, dropout_keep_prob=keep, dropout_prob_seed=3)
    outputs, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    tf.set_random_seed(1)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        full = sess.run(outputs, {keep: 1.0})
        dropped = sess.run(outputs, {keep: 0.5})
    assert full.shape == dropped.shape == (2, 3, 8)
    assert not np.allclose(full, dropped)
