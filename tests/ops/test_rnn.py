"""RNN cells and dynamic_rnn/static_rnn against NumPy references, with TF's variable names."""
import numpy as np
import pytest

import tensorweave as tf


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_reference(x, kernel, bias, forget_bias=1.0):
    batch, steps, _ = x.shape
    n = bias.shape[0] // 4
    c = np.zeros((batch, n))
    h = np.zeros((batch, n))
    outs = []
    for t in range(steps):
        z = np.concatenate([x[:, t], h], 1) @ kernel + bias
        i, j, f, o = np.split(z, 4, axis=1)
        c = c * sigmoid(f + forget_bias) + sigmoid(i) * np.tanh(j)
        h = np.tanh(c) * sigmoid(o)
        outs.append(h)
    return np.stack(outs, 1), c, h


def test_basic_lstm_dynamic_rnn_matches_numpy_and_names():
    rng = np.random.RandomState(0)
    x_val = rng.standard_normal((3, 5, 4)).astype(np.float32)
    x = tf.placeholder(tf.float32, [3, 5, 4])
    cell = tf.nn.rnn_cell.BasicLSTMCell(6)
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32)
    names = sorted(v.name for v in tf.trainable_variables())
    assert names == ["rnn/basic_lstm_cell/bias:0", "rnn/basic_lstm_cell/kernel:0"]
    assert outputs.shape.as_list() == [3, 5, 6]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kernel, bias = sess.run(cell.variables)
        out, (c, h) = sess.run([outputs, state], {x: x_val})
    ref_out, ref_c, ref_h = lstm_reference(x_val.astype(np.float64), kernel, bias)
    np.testing.assert_allclose(out, ref_out, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(c, ref_c, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(h, ref_h, rtol=1e-4, atol=1e-5)


def test_static_rnn_equals_dynamic_rnn():
    rng = np.random.RandomState(1)
    x_val = rng.standard_normal((2, 4, 3)).astype(np.float32)
    x = tf.placeholder(tf.float32, [2, 4, 3])
    cell = tf.nn.rnn_cell.GRUCell(5)
    dyn, dyn_state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope="shared")
    static, static_state = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float32, scope="shared2")
    names = sorted(v.name for v in tf.trainable_variables())
    assert names == ["shared/gru_cell/candidate/bias:0", "shared/gru_cell/candidate/kernel:0",
                     "shared/gru_cell/gates/bias:0", "shared/gru_cell/gates/kernel:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        d, ds, s, ss = sess.run([dyn, dyn_state, tf.stack(static, 1), static_state], {x: x_val})
    np.testing.assert_allclose(d, s, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(ds, ss, rtol=1e-5, atol=1e-6)


def test_sequence_length_zeroes_outputs_and_keeps_state():
    x_val = np.ones((2, 4, 2), np.float32)
    x = tf.placeholder(tf.float32, [2, 4, 2])
    cell = tf.nn.rnn_cell.BasicRNNCell(3)
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[2, 4], dtype=tf.float32)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, st = sess.run([outputs, state], {x: x_val})
    assert np.all(out[0, 2:] == 0) and np.all(out[0, :2] != 0)
    np.testing.assert_allclose(st[0], out[0, 1])
    np.testing.assert_allclose(st[1], out[1, 3])


def test_lstm_cell_peepholes_projection_and_multi_cell_names():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    cells = [tf.nn.rnn_cell.LSTMCell(5, use_peepholes=True, num_proj=3), tf.nn.rnn_cell.BasicLSTMCell(4)]
    multi = tf.nn.rnn_cell.MultiRNNCell(cells)
    outputs, state = tf.nn.dynamic_rnn(multi, x, dtype=tf.float32, time_major=True)
    names = sorted(v.name for v in tf.trainable_variables())
    assert names == [
        "rnn/multi_rnn_cell/cell_0/lstm_cell/bias:0", "rnn/multi_rnn_cell/cell_0/lstm_cell/kernel:0",
        "rnn/multi_rnn_cell/cell_0/lstm_cell/projection/kernel:0",
        "rnn/multi_rnn_cell/cell_0/lstm_cell/w_f_diag:0", "rnn/multi_rnn_cell/cell_0/lstm_cell/w_i_diag:0",
        "rnn/multi_rnn_cell/cell_0/lstm_cell/w_o_diag:0",
        "rnn/multi_rnn_cell/cell_1/basic_lstm_cell/bias:0", "rnn/multi_rnn_cell/cell_1/basic_lstm_cell/kernel:0"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        out, st = sess.run([outputs, state], {x: np.ones((2, 3, 4), np.float32)})
    assert out.shape == (2, 3, 4)
    assert st[0].h.shape == (3, 3) and st[0].c.shape == (3, 5)


def test_dropout_wrapper_keep_one_is_identity():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    cell = tf.nn.rnn_cell.BasicRNNCell(3)
    wrapped = tf.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=1.0)
    a, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float32, scope="a")
    b, _ = tf.nn.static_rnn(wrapped, tf.unstack(x, axis=1), dtype=tf.float32, scope="b")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        va, vb = sess.run([a, tf.stack(b, 1)], {x: np.ones((2, 3, 4), np.float32)})
    np.testing.assert_allclose(va, vb, rtol=1e-6)
    with pytest.raises(ValueError):
        tf.nn.rnn_cell.DropoutWrapper(cell, output_keep_prob=1.5)
