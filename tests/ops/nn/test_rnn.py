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


def lstm_cell_reference(x, c, m, kernel, bias, w_f=None, w_i=None, w_o=None, proj=None, forget_bias=1.0):
    """TF's LSTMCell step with optional peepholes and projection (gate order i, j, f, o)."""
    z = np.concatenate([x, m], 1) @ kernel + bias
    i, j, f, o = np.split(z, 4, axis=1)
    if w_f is not None:
        c = sigmoid(f + forget_bias + w_f * c) * c + sigmoid(i + w_i * c) * np.tanh(j)
        m = sigmoid(o + w_o * c) * np.tanh(c)
    else:
        c = sigmoid(f + forget_bias) * c + sigmoid(i) * np.tanh(j)
        m = sigmoid(o) * np.tanh(c)
    if proj is not None:
        m = m @ proj
    return c, m


def gru_reference(x, h, gate_kernel, gate_bias, cand_kernel, cand_bias):
    r, u = np.split(sigmoid(np.concatenate([x, h], 1) @ gate_kernel + gate_bias), 2, axis=1)
    c = np.tanh(np.concatenate([x, r * h], 1) @ cand_kernel + cand_bias)
    return u * h + (1 - u) * c


def test_lstm_cell_peepholes_projection_values():
    rng = np.random.RandomState(2)
    x_val = rng.standard_normal((2, 4, 3))
    x = tf.placeholder(tf.float64, [2, 4, 3])
    cell = tf.nn.rnn_cell.LSTMCell(5, use_peepholes=True, num_proj=2,
                                   initializer=tf.random_uniform_initializer(-0.5, 0.5, seed=1))
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        weights = dict(zip([v.name.split("/")[-1].split(":")[0] if "projection" not in v.name else "proj"
                            for v in cell.variables], sess.run(cell.variables)))
        out, (c_final, m_final) = sess.run([outputs, state], {x: x_val})
    c, m = np.zeros((2, 5)), np.zeros((2, 2))
    for t in range(4):
        c, m = lstm_cell_reference(x_val[:, t], c, m, weights["kernel"], weights["bias"], weights["w_f_diag"],
                                   weights["w_i_diag"], weights["w_o_diag"], weights["proj"])
        np.testing.assert_allclose(out[:, t], m, rtol=1e-10)
    np.testing.assert_allclose(c_final, c, rtol=1e-10)
    np.testing.assert_allclose(m_final, m, rtol=1e-10)


def test_gru_values_and_time_major():
    rng = np.random.RandomState(3)
    x_val = rng.standard_normal((3, 2, 4))   # [time, batch, depth]
    x = tf.placeholder(tf.float64, [3, 2, 4])
    cell = tf.nn.rnn_cell.GRUCell(3)
    outputs, state = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64, time_major=True)
    assert outputs.shape.as_list() == [3, 2, 3]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        gk, gb, ck, cb = sess.run(cell.variables)
        out, final = sess.run([outputs, state], {x: x_val})
    h = np.zeros((2, 3))
    for t in range(3):
        h = gru_reference(x_val[t], h, gk, gb, ck, cb)
        np.testing.assert_allclose(out[t], h, rtol=1e-10)
    np.testing.assert_allclose(final, h, rtol=1e-10)


def _rnn_jacobian_error(x, x_val, y, feeds, init):
    from tensorweave.testing import gradient_checker
    with tf.Session() as sess:
        sess.run(init)
        y_shape = np.shape(sess.run(y, feeds))
    theoretical, numeric = gradient_checker.compute_gradient(
        x, x_val.shape, y, y_shape, x_init_value=x_val, delta=1e-6, init_targets=init,
        extra_feed_dict={k: v for k, v in feeds.items() if k is not x})
    return np.max(np.abs(theoretical - numeric))


@pytest.mark.parametrize("kind", ["lstm_peephole_proj", "gru", "multi_tuple_false"])
def test_dynamic_rnn_gradients_match_numeric(kind):
    """Gradients through the backward loop, with respect to the inputs and to each weight
    (fed through its read tensor, so the checker can vary it)."""
    rng = np.random.RandomState(4)
    x_val = rng.standard_normal((2, 3, 2))
    x = tf.placeholder(tf.float64, [2, 3, 2])
    init = tf.random_uniform_initializer(-0.6, 0.6, seed=5)
    with tf.variable_scope("model", initializer=init):
        if kind == "lstm_peephole_proj":
            cell = tf.nn.rnn_cell.LSTMCell(3, use_peepholes=True, num_proj=2, cell_clip=5.0)
        elif kind == "gru":
            cell = tf.nn.rnn_cell.GRUCell(3)
        else:
            cell = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicRNNCell(2), tf.nn.rnn_cell.BasicRNNCell(3)],
                                               state_is_tuple=False)
        outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[3, 2], dtype=tf.float64)
    y = tf.reduce_sum(outputs * outputs, axis=1) + tf.reduce_sum(tf.concat(nest_flatten(state), 1))
    init_op = tf.global_variables_initializer()
    assert _rnn_jacobian_error(x, x_val, y, {x: x_val}, init_op) < 1e-7
    with tf.Session() as sess:
        sess.run(init_op)
        weight_values = sess.run(cell.variables)
    for var, value in zip(cell.variables, weight_values):
        read = var.value()
        assert _rnn_jacobian_error(read, value, y, {x: x_val, read: value}, init_op) < 1e-7, var.name


def nest_flatten(structure):
    if isinstance(structure, (list, tuple)):
        return [leaf for item in structure for leaf in nest_flatten(item)]
    return [structure]


def test_static_and_dynamic_rnn_gradients_agree():
    rng = np.random.RandomState(6)
    x_val = rng.standard_normal((2, 4, 3))
    x = tf.placeholder(tf.float64, [2, 4, 3])
    cell = tf.nn.rnn_cell.BasicLSTMCell(3)
    dyn, _ = tf.nn.dynamic_rnn(cell, x, dtype=tf.float64, scope="shared")
    static, _ = tf.nn.static_rnn(cell, tf.unstack(x, axis=1), dtype=tf.float64, scope="shared")
    weights = cell.variables
    g_dyn = tf.gradients(tf.reduce_sum(tf.sin(dyn)), [x] + weights)
    g_static = tf.gradients(tf.reduce_sum(tf.sin(tf.stack(static, 1))), [x] + weights)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        a, b = sess.run([g_dyn, g_static], {x: x_val})
    for ga, gb in zip(a, b):
        np.testing.assert_allclose(ga, gb, rtol=1e-10, atol=1e-12)


def test_sequence_length_stops_gradients_past_the_end():
    x = tf.placeholder(tf.float64, [2, 4, 2])
    cell = tf.nn.rnn_cell.BasicRNNCell(3)
    outputs, state = tf.nn.dynamic_rnn(cell, x, sequence_length=[1, 3], dtype=tf.float64)
    g = tf.gradients(tf.reduce_sum(outputs) + tf.reduce_sum(state), x)[0]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run(g, {x: np.ones((2, 4, 2))})
    assert np.all(got[0, 1:] == 0) and np.all(got[1, 3:] == 0)
    assert np.all(got[0, 0] != 0) and np.all(got[1, :3] != 0)


def test_multi_rnn_cell_concatenated_state_equals_tuple_state():
    x = tf.placeholder(tf.float64, [2, 3, 2])
    init = tf.constant_initializer(0.3)
    with tf.variable_scope("a", initializer=init):
        tup = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(3)])
        out_a, st_a = tf.nn.dynamic_rnn(tup, x, dtype=tf.float64)
    with tf.variable_scope("b", initializer=init):
        cat = tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.GRUCell(2), tf.nn.rnn_cell.GRUCell(3)],
                                          state_is_tuple=False)
        out_b, st_b = tf.nn.dynamic_rnn(cat, x, dtype=tf.float64)
    assert cat.state_size == 5 and st_b.shape.as_list() == [2, 5]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        oa, sa, ob, sb = sess.run([out_a, st_a, out_b, st_b], {x: np.full((2, 3, 2), 0.5)})
    np.testing.assert_allclose(oa, ob)
    np.testing.assert_allclose(np.concatenate(sa, 1), sb)
    with pytest.raises(ValueError, match="state_is_tuple"):
        tf.nn.rnn_cell.MultiRNNCell([tf.nn.rnn_cell.BasicLSTMCell(2)], state_is_tuple=False)


def test_dropout_wrapper_keeps_lstm_memory_and_variational_masks_repeat():
    x = tf.placeholder(tf.float64, [4, 1, 3])
    init = tf.constant_initializer(0.2)
    with tf.variable_scope("plain", initializer=init):
        plain = tf.nn.rnn_cell.BasicLSTMCell(6)
        _, (c_ref, h_ref) = tf.nn.static_rnn(plain, [x[:, 0]], dtype=tf.float64)
    with tf.variable_scope("dropped", initializer=init):
        dropped = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicLSTMCell(6), state_keep_prob=0.5, seed=3)
        _, (c_drop, h_drop) = tf.nn.static_rnn(dropped, [x[:, 0]], dtype=tf.float64)
    var_cell = tf.nn.rnn_cell.DropoutWrapper(tf.nn.rnn_cell.BasicRNNCell(8, activation=lambda v: v * 0.0 + 1.0),
                                             output_keep_prob=0.5, variational_recurrent=True,
                                             dtype=tf.float64, seed=7)
    var_out, _ = tf.nn.dynamic_rnn(var_cell, tf.ones([3, 5, 2], tf.float64), dtype=tf.float64, scope="var")
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        cr, hr, cd, hd, vo = sess.run([c_ref, h_ref, c_drop, h_drop, var_out], {x: np.ones((4, 1, 3))})
    np.testing.assert_allclose(cd, cr)                       # memory c is never dropped
    assert set(np.round(np.unique(hd / hr), 12)) == {0.0, 2.0}   # h: dropped or scaled by 1/keep
    mask = vo[0, 0]
    assert set(np.unique(mask)) == {0.0, 2.0}
    assert np.all(vo == mask)   # one mask for every time step and batch row


def test_rnn_argument_errors():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    cell = tf.nn.rnn_cell.BasicRNNCell(2)
    with pytest.raises(ValueError, match="dtype"):
        tf.nn.dynamic_rnn(cell, x)
    with pytest.raises(TypeError, match="RNNCell"):
        tf.nn.dynamic_rnn(object(), x, dtype=tf.float32)
    with pytest.raises(ValueError, match="rank"):
        tf.nn.dynamic_rnn(cell, tf.placeholder(tf.float32, [3]), dtype=tf.float32)
    with pytest.raises(ValueError, match="sequence_length"):
        tf.nn.dynamic_rnn(cell, x, sequence_length=[[1, 2]], dtype=tf.float32)
    with pytest.raises(ValueError):
        tf.nn.static_rnn(cell, [], dtype=tf.float32)
