"""ExponentialMovingAverage against NumPy's formula of TF's rule, with TF's variable names, plus
cosine decay, make_template, zero_fraction and bidirectional_dynamic_rnn."""
import math

import numpy as np
import pytest

import tensorweave as tf


def test_ema_matches_formula_with_num_updates():
    w = tf.Variable([1.0, 2.0], name="w")
    b = tf.Variable(3.0, name="b")
    step = tf.Variable(0, name="step", trainable=False)
    ema = tf.train.ExponentialMovingAverage(0.9, num_updates=step)
    train = tf.group(tf.assign_add(w, [1.0, -1.0]), tf.assign_add(b, 0.5), tf.assign_add(step, 1))
    update = ema.apply([w, b])
    assert ema.average(w).op.name == "w/ExponentialMovingAverage"
    assert ema.average_name(b) == "b/ExponentialMovingAverage" and update.name == "ExponentialMovingAverage"
    assert [v.op.name for v in tf.get_collection(tf.GraphKeys.MOVING_AVERAGE_VARIABLES)] == ["w", "b"]
    assert not ema.average(w).trainable if hasattr(ema.average(w), "trainable") else True
    assert sorted(ema.variables_to_restore()) == ["b/ExponentialMovingAverage", "step", "w/ExponentialMovingAverage"]
    with pytest.raises(ValueError, match="Moving average already computed for: w:0"):
        ema.apply([w])
    shadow_w, shadow_b, wv, bv = np.array([1.0, 2.0]), 3.0, np.array([1.0, 2.0]), 3.0
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for n in range(1, 6):
            sess.run(train)
            sess.run(update)
            wv, bv = wv + [1.0, -1.0], bv + 0.5
            decay = min(0.9, (1.0 + n) / (10.0 + n))
            shadow_w = decay * shadow_w + (1 - decay) * wv
            shadow_b = decay * shadow_b + (1 - decay) * bv
            got_w, got_b = sess.run([ema.average(w), ema.average(b)])
            np.testing.assert_allclose(got_w, shadow_w, rtol=1e-6)
            np.testing.assert_allclose(got_b, shadow_b, rtol=1e-6)


def test_ema_zero_debias_on_tensor_and_type_check():
    t = tf.placeholder(tf.float32, [2], name="t")
    ema = tf.train.ExponentialMovingAverage(0.5, zero_debias=True, name="zd")
    update = ema.apply([t])
    assert ema.average(t).op.name == "t/zd"
    biased = np.zeros(2)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for k in range(1, 4):
            value = np.array([float(k), 2.0])
            sess.run(update, {t: value})
            biased = 0.5 * biased + 0.5 * value
            np.testing.assert_allclose(sess.run(ema.average(t)), biased / (1 - 0.5 ** k), rtol=1e-6)
    with pytest.raises(TypeError, match="The variables must be half, float, or double: i:0"):
        tf.train.ExponentialMovingAverage(0.9).apply([tf.Variable(1, name="i")])


def test_cosine_decays():
    gs = tf.placeholder(tf.int64, [])
    lr = tf.train.cosine_decay(0.1, gs, 10, alpha=0.1)
    lr2 = tf.train.linear_cosine_decay(0.1, gs, 10)
    with tf.Session() as sess:
        for k in (0, 3, 10, 15):
            s = min(k, 10)
            cos = 0.5 * (1 + math.cos(math.pi * s / 10))
            got, got2 = sess.run([lr, lr2], {gs: k})
            np.testing.assert_allclose(got, 0.1 * (0.9 * cos + 0.1), rtol=1e-6)
            lin_cos = 0.5 * (1 + math.cos(math.pi * 2 * 0.5 * s / 10))
            np.testing.assert_allclose(got2, 0.1 * (((10 - s) / 10) * lin_cos + 0.001), rtol=1e-5)
    with pytest.raises(ValueError):
        tf.train.cosine_decay(0.1, None, 10)


def test_make_template_shares_variables():
    def scale(x, factor):
        v = tf.get_variable("v", [2], initializer=tf.constant_initializer(factor))
        return x * v

    tmpl = tf.make_template("scale_by", scale, factor=3.0)
    y1, y2 = tmpl(tf.constant([1.0, 2.0])), tmpl(tf.constant([3.0, 4.0]))
    other = tf.make_template("scale_by", scale, factor=2.0)
    y3 = other(tf.constant([1.0, 1.0]))
    assert [v.op.name for v in tf.trainable_variables()] == ["scale_by/v", "scale_by_1/v"]
    assert y1.name == "scale_by/mul:0" and y2.name == "scale_by_1/mul:0"
    assert [v.op.name for v in tmpl.trainable_variables] == ["scale_by/v"]
    assert tmpl.variable_scope_name == "scale_by"
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        got = sess.run([y1, y2, y3])
    for g, e in zip(got, ([3.0, 6.0], [9.0, 12.0], [2.0, 2.0])):
        np.testing.assert_allclose(g, e)

    def makes_variable(x):
        return x * tf.Variable(1.0)

    bad = tf.make_template("bad", makes_variable)
    bad(1.0)
    with pytest.raises(ValueError, match="Trainable variable created when calling a template after the first time"):
        bad(2.0)
    now = tf.make_template("now", scale, create_scope_now_=True, factor=1.0)
    assert now.variable_scope_name == "now"
    now(tf.constant([1.0, 1.0]))
    now(tf.constant([1.0, 1.0]))
    assert [v.op.name for v in now.trainable_variables] == ["now/v"]


def test_zero_fraction():
    x = tf.placeholder(tf.float32, None)
    z = tf.nn.zero_fraction(x)
    assert z.name == "zero_fraction/fraction:0" and z.dtype == tf.float32 and z.shape.ndims == 0
    with tf.Session() as sess:
        assert sess.run(z, {x: [[0.0, 1.0], [0.0, 0.0]]}) == pytest.approx(0.75)
        assert sess.run(z, {x: np.arange(5.0)}) == pytest.approx(0.2)


def _rnn_reference(x, lengths, kernel, bias, reverse):
    batch, steps, _ = x.shape
    out = np.zeros((batch, steps, bias.shape[0]), np.float64)
    final = np.zeros((batch, bias.shape[0]))
    for b in range(batch):
        h = np.zeros(bias.shape[0])
        order = range(lengths[b] - 1, -1, -1) if reverse else range(lengths[b])
        for t in order:
            h = np.tanh(np.concatenate([x[b, t], h]) @ kernel + bias)
            out[b, t] = h
        final[b] = h
    return out, final


@pytest.mark.parametrize("time_major", [False, True])
def test_bidirectional_dynamic_rnn(time_major):
    x = np.random.RandomState(1).randn(2, 4, 2).astype(np.float32)
    lengths = [4, 2]
    cell_fw, cell_bw = tf.nn.rnn_cell.BasicRNNCell(3), tf.nn.rnn_cell.BasicRNNCell(3)
    inputs = tf.constant(np.transpose(x, (1, 0, 2)) if time_major else x)
    (out_fw, out_bw), (state_fw, state_bw) = tf.nn.bidirectional_dynamic_rnn(
        cell_fw, cell_bw, inputs, sequence_length=lengths, dtype=tf.float32, time_major=time_major)
    names = [v.op.name for v in tf.trainable_variables()]
    assert names == ["bidirectional_rnn/fw/basic_rnn_cell/kernel", "bidirectional_rnn/fw/basic_rnn_cell/bias",
                     "bidirectional_rnn/bw/basic_rnn_cell/kernel", "bidirectional_rnn/bw/basic_rnn_cell/bias"]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        kf, bf, kb, bb = sess.run(tf.trainable_variables())
        of, ob, sf, sb = sess.run([out_fw, out_bw, state_fw, state_bw])
    if time_major:
        of, ob = np.transpose(of, (1, 0, 2)), np.transpose(ob, (1, 0, 2))
    ref_of, ref_sf = _rnn_reference(x, lengths, kf, bf, reverse=False)
    ref_ob, ref_sb = _rnn_reference(x, lengths, kb, bb, reverse=True)
    np.testing.assert_allclose(of, ref_of, atol=1e-5)
    np.testing.assert_allclose(ob, ref_ob, atol=1e-5)
    np.testing.assert_allclose(sf, ref_sf, atol=1e-5)
    np.testing.assert_allclose(sb, ref_sb[:, :], atol=1e-5)
    assert out_fw.shape.as_list() == list(of.shape if not time_major else (4, 2, 3))
