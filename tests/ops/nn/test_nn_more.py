"""tf.nn additions of issue 11 beyond the TF fixtures: candidate samplers' contract (unique
draws, expected counts, repeatability; their seeded numbers are checked against TF's in
test_nn_fixtures.py), nce_loss / sampled_softmax_loss training a word2vec-style
model, static_bidirectional_rnn's variable names, channels-first layouts against channels-last
ones, and build-time errors."""
import numpy as np
import pytest

import tensorweave as tf


def _run(fetches, feed=None):
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return sess.run(fetches, feed)


@pytest.mark.parametrize("sampler", [tf.nn.log_uniform_candidate_sampler, tf.nn.uniform_candidate_sampler])
def test_unique_sampler_contract(sampler):
    true = tf.constant([[1], [5], [30]], tf.int64)
    sampled, true_count, sampled_count = sampler(true, 1, 20, True, 40, seed=7)
    assert sampled.shape.as_list() == [20] and true_count.shape.as_list() == [3, 1]
    s, tc, sc = _run([sampled, true_count, sampled_count])
    assert s.dtype == np.int64 and len(set(s.tolist())) == 20 and s.min() >= 0 and s.max() < 40
    assert tc.dtype == np.float32 and np.all((tc > 0) & (tc <= 1)) and np.all((sc > 0) & (sc <= 1))
    if sampler is tf.nn.uniform_candidate_sampler:  # 1 - (1 - p) ** tries, one p for all
        assert np.allclose(tc, sc[0]) and np.allclose(sc, sc[0])
    else:  # smaller ids are likelier
        assert tc[0, 0] > tc[1, 0] > tc[2, 0]


def test_non_unique_expected_counts_and_seeded_repeatability():
    true = tf.constant([[0], [9]], tf.int64)
    sampled, true_count, _ = tf.nn.log_uniform_candidate_sampler(true, 1, 8, False, 10, seed=3)
    p = np.log(np.array([2.0, 11.0]) / np.array([1.0, 10.0])) / np.log(11.0)
    first = _run([sampled, true_count])
    second = _run([sampled, true_count])
    np.testing.assert_allclose(first[1][:, 0], p * 8, rtol=1e-6)
    np.testing.assert_array_equal(first[0], second[0])  # a seeded op repeats in a new session


def test_unique_sampler_range_too_small():
    sampled = tf.nn.uniform_candidate_sampler(tf.constant([[1]], tf.int64), 1, 5, True, 3)[0]
    with pytest.raises(tf.errors.InvalidArgumentError, match="range is too small"):
        _run(sampled)


def test_fixed_unigram_sampler_follows_weights():
    sampled = tf.nn.fixed_unigram_candidate_sampler(tf.constant([[0]], tf.int64), 1, 2000, False, 3,
                                                    unigrams=[1.0, 0.0, 3.0], seed=1)[0]
    counts = np.bincount(_run(sampled), minlength=3)
    assert counts[1] == 0 and 0.2 < counts[0] / 2000 < 0.3


@pytest.mark.parametrize("loss_fn", [tf.nn.nce_loss, tf.nn.sampled_softmax_loss])
def test_sampled_losses_train_a_skip_gram_model(loss_fn):
    rng = np.random.RandomState(0)
    vocab, dim, batch = 50, 8, 16
    embeddings = tf.Variable(tf.random_uniform([vocab, dim], -1.0, 1.0, seed=1))
    weights = tf.Variable(tf.truncated_normal([vocab, dim], stddev=0.3, seed=2))
    biases = tf.Variable(tf.zeros([vocab]))
    inputs = tf.placeholder(tf.int32, [batch])
    labels = tf.placeholder(tf.int64, [batch, 1])
    loss = tf.reduce_mean(loss_fn(weights, biases, labels, tf.nn.embedding_lookup(embeddings, inputs),
                                  num_sampled=10, num_classes=vocab))
    assert loss.shape.as_list() == []
    step = tf.train.GradientDescentOptimizer(0.5).minimize(loss)
    words = rng.randint(0, vocab, batch)
    feed = {inputs: words, labels: ((words + 1) % vocab).reshape(-1, 1)}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        before = np.mean([sess.run(loss, feed) for _ in range(5)])
        for _ in range(60):
            sess.run(step, feed)
        after = np.mean([sess.run(loss, feed) for _ in range(5)])
    assert np.isfinite(before) and after < 0.5 * before


def test_static_bidirectional_rnn_variable_scopes_and_shapes():
    steps = [tf.placeholder(tf.float32, [None, 3]) for _ in range(4)]
    outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(
        tf.nn.rnn_cell.GRUCell(5), tf.nn.rnn_cell.GRUCell(2), steps, dtype=tf.float32,
        sequence_length=tf.constant([4, 1]))
    names = sorted(v.op.name for v in tf.trainable_variables())
    assert all(n.startswith(("bidirectional_rnn/fw/gru_cell/", "bidirectional_rnn/bw/gru_cell/")) for n in names)
    assert len(names) == 8
    assert len(outputs) == 4 and outputs[0].shape.as_list()[1] == 7
    assert state_fw.shape.as_list()[1] == 5 and state_bw.shape.as_list()[1] == 2
    values = np.random.RandomState(1).uniform(-1, 1, (4, 2, 3)).astype(np.float32)
    out = _run(outputs, dict(zip(steps, values)))
    assert np.all(np.stack(out)[1:, 1] == 0)  # past a row's length: zeros in both directions


def test_channels_first_layouts_match_channels_last():
    rng = np.random.RandomState(2)
    seq = rng.uniform(-1, 1, (2, 9, 3)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 3, 4)).astype(np.float32)
    img = rng.uniform(-1, 1, (2, 6, 7, 3)).astype(np.float32)
    nwc = tf.nn.conv1d(seq, w, 2, "SAME")
    ncw = tf.transpose(tf.nn.conv1d(np.transpose(seq, [0, 2, 1]), w, 2, "SAME", data_format="NCW"), [0, 2, 1])
    nhwc = tf.nn.pool(img, [2, 3], "MAX", "VALID", dilation_rate=[2, 1])
    nchw = tf.transpose(tf.nn.pool(np.transpose(img, [0, 3, 1, 2]), [2, 3], "MAX", "VALID",
                                   dilation_rate=[2, 1], data_format="NCHW"), [0, 2, 3, 1])
    a, b, c, d = _run([nwc, ncw, nhwc, nchw])
    np.testing.assert_allclose(a, b, rtol=1e-5)
    np.testing.assert_allclose(c, d, rtol=1e-6)
    assert nwc.shape.as_list() == [2, 5, 4] and nhwc.shape.as_list() == [2, 4, 5, 3]


def test_build_time_errors():
    x = tf.zeros([1, 8, 8, 2])
    with pytest.raises(ValueError, match="Invalid pooling_type"):
        tf.nn.pool(x, [2, 2], "MIN", "VALID")
    with pytest.raises(ValueError, match="SAME"):
        tf.nn.pool(x, [2, 2], "MAX", "SAME", dilation_rate=[2, 2])
    with pytest.raises(ValueError, match="strides > 1 not supported"):
        tf.nn.pool(x, [2, 2], "MAX", "VALID", dilation_rate=[2, 2], strides=[2, 2])
    with pytest.raises(ValueError, match="same shape"):
        tf.nn.log_poisson_loss(tf.zeros([3]), tf.zeros([4]))
    with pytest.raises(ValueError, match="input channels"):
        tf.nn.atrous_conv2d_transpose(x, tf.zeros([3, 3, 4, 5]), [1, 8, 8, 4], 2, "SAME")


def test_crelu_and_swish_shapes():
    x = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.nn.crelu(x).shape.as_list() == [None, 3, 8]
    assert tf.nn.crelu(x, axis=1).shape.as_list() == [None, 6, 4]
    assert tf.nn.swish(x).shape.as_list() == [None, 3, 4]


def test_conv2d_transpose_output_shape_checks_and_nchw():
    rng = np.random.RandomState(5)
    img = rng.uniform(-1, 1, (2, 4, 5, 3)).astype(np.float32)
    w = rng.uniform(-1, 1, (3, 3, 2, 3)).astype(np.float32)
    with pytest.raises(ValueError, match="output_shape does not match filter's output channels"):
        tf.nn.conv2d_transpose(img, w, [2, 8, 10, 5], [1, 2, 2, 1], "SAME")
    with pytest.raises(ValueError, match=r"output_shape must have shape \(4,\)"):
        tf.nn.conv2d_transpose(img, w, [2, 8, 10], [1, 2, 2, 1], "SAME")
    nhwc = tf.nn.conv2d_transpose(img, w, [2, 8, 10, 2], [1, 2, 2, 1], "SAME")
    nchw = tf.nn.conv2d_transpose(np.transpose(img, [0, 3, 1, 2]), w, [2, 2, 8, 10], [1, 1, 2, 2], "SAME",
                                  data_format="NCHW")
    a, b = _run([nhwc, nchw])
    np.testing.assert_allclose(a, np.transpose(b, [0, 2, 3, 1]), rtol=1e-5, atol=1e-6)
    assert nhwc.shape.as_list() == [2, 8, 10, 2]
