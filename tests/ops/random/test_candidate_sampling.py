"""LogUniformCandidateSampler and ComputeAccidentalHits: static shapes against the real outputs,
the kernels' checks, and the properties the sampled losses rely on. (Their numbers are TF's:
tests/compat, programs sampled_softmax_candidates and word2vec_nce.)"""
import numpy as np
import pytest

import tensorweave as tf


def _true_classes():
    return tf.constant(np.array([[1, 7], [3, 3], [0, 9]], np.int64))


def test_sampler_static_shapes_match_outputs():
    true = _true_classes()
    outs = tf.nn.log_uniform_candidate_sampler(true, num_true=2, num_sampled=5, unique=True, range_max=10, seed=1)
    assert [o.shape.as_list() for o in outs] == [[5], [3, 2], [5]]
    assert [o.dtype for o in outs] == [tf.int64, tf.float32, tf.float32]
    with tf.Session() as sess:
        values = sess.run(list(outs))
    assert [list(v.shape) for v in values] == [[5], [3, 2], [5]]
    sampled = values[0]
    assert len(set(sampled.tolist())) == 5 and sampled.min() >= 0 and sampled.max() < 10


def test_sampler_probabilities_and_expected_counts():
    true = _true_classes()
    sampled, true_count, sampled_count = tf.nn.log_uniform_candidate_sampler(
        true, num_true=2, num_sampled=4, unique=False, range_max=10, seed=2)
    with tf.Session() as sess:
        s, tc, sc = sess.run([sampled, true_count, sampled_count])
    p = lambda k: np.log((k + 2.0) / (k + 1.0)) / np.log1p(10)  # noqa: E731
    # Without unique sampling the expected count is p * num_sampled.
    np.testing.assert_allclose(tc, (p(np.array([[1, 7], [3, 3], [0, 9]])) * 4).astype(np.float32), rtol=1e-6)
    np.testing.assert_allclose(sc, (p(s) * 4).astype(np.float32), rtol=1e-6)


def test_sampler_seeded_runs_repeat_across_sessions_and_advance_within_one():
    true = _true_classes()
    sampled = tf.nn.log_uniform_candidate_sampler(true, 2, 6, True, 50, seed=9)[0]
    with tf.Session() as sess:
        first, second = sess.run(sampled), sess.run(sampled)
    with tf.Session() as sess:
        again = sess.run(sampled)
    assert first.tolist() == again.tolist()
    assert first.tolist() != second.tolist()


def test_sampler_errors():
    with pytest.raises(ValueError):
        tf.nn.log_uniform_candidate_sampler(tf.constant([1, 2], tf.int64), 1, 2, True, 10)
    fed = tf.placeholder(tf.int64)
    small = tf.nn.log_uniform_candidate_sampler(fed, 2, 3, True, 10)[0]
    too_many = tf.nn.log_uniform_candidate_sampler(tf.constant([[1]], tf.int64), 1, 5, True, 4)[0]
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="true_classes must be a matrix"):
            sess.run(small, {fed: [1, 2]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="true_classes must have num_true columns"):
            sess.run(small, {fed: [[1, 2, 3]]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="Sampler's range is too small"):
            sess.run(too_many)


def test_accidental_hits():
    true = _true_classes()
    indices, ids, weights = tf.nn.compute_accidental_hits(true, tf.constant([3, 9, 4, 1], tf.int64), num_true=2)
    assert [t.shape.as_list() for t in (indices, ids, weights)] == [[None]] * 3
    with tf.Session() as sess:
        i, j, w = sess.run([indices, ids, weights])
    # Row 0 holds class 1 (sampled at 3); row 1 holds 3 twice (sampled at 0); row 2 holds 9 (at 1).
    assert i.tolist() == [0, 1, 1, 2] and j.tolist() == [3, 0, 0, 1]
    assert i.dtype == np.int32 and j.dtype == np.int64
    assert (w == np.float32(-np.finfo(np.float32).max)).all()


def test_nce_loss_shape_and_gradient_flow():
    tf.set_random_seed(3)
    weights = tf.Variable(tf.random_normal([20, 4], seed=1))
    biases = tf.Variable(tf.zeros([20]))
    inputs = tf.constant(np.random.RandomState(0).randn(5, 4).astype(np.float32))
    labels = tf.constant(np.arange(5).reshape(5, 1))
    loss = tf.nn.nce_loss(weights, biases, labels, inputs, num_sampled=3, num_classes=20)
    assert loss.shape.as_list() == [5]
    grads = tf.gradients(tf.reduce_sum(loss), [weights, biases, inputs])
    assert all(g is not None for g in grads)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        value = sess.run(loss)
    assert value.shape == (5,) and (value > 0).all()
