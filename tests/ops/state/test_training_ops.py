"""Dense Apply* kernels update the variable's buffer in place only when nothing else can see it:
values read before an update (fetched in an earlier step, fetched or still waiting for a kernel
in the same step, views of the variable) keep their snapshot; the updates themselves match
NumPy's formulas whether they ran in place or not, in one block or many."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.state import training_ops

@pytest.fixture(autouse=True)
def in_place_for_all_sizes(monkeypatch):
    """The tests' variables are tiny: let them take the in-place path of large ones."""
    monkeypatch.setattr(training_ops, "_IN_PLACE_SIZE", 0)


W0 = np.arange(12, dtype=np.float32).reshape(3, 4)
G = np.full((3, 4), 0.5, np.float32)


def _gd_graph(lr=0.1):
    w = tf.Variable(W0)
    grad = tf.constant(G)
    return w, grad, tf.train.GradientDescentOptimizer(lr).apply_gradients([(grad, w)])


def _session(*_):
    sess = tf.Session()
    sess.run(tf.global_variables_initializer())
    return sess


def test_value_fetched_in_an_earlier_step_is_not_changed_by_later_updates():
    w, _, train = _gd_graph()
    sess = _session()
    fetched = [sess.run(w), sess.run(w.value()), sess.run(tf.identity(w)), sess.run(tf.reshape(w, [-1]))]
    for _ in range(3):
        sess.run(train)
    for value in fetched:
        np.testing.assert_array_equal(value.reshape(3, 4), W0)
    np.testing.assert_allclose(sess.run(w), W0 - 3 * 0.1 * G, rtol=1e-6)


@pytest.mark.parametrize("snapshot", [lambda w: tf.reshape(w, [-1]), lambda w: tf.identity(w),
                                      lambda w: w.value(), lambda w: tf.squeeze(tf.expand_dims(w, 0))])
def test_value_fetched_in_the_same_step_keeps_its_snapshot(snapshot):
    w, grad, _ = _gd_graph()
    snap = snapshot(w)
    with tf.control_dependencies([snap]):  # the read runs first; the fetch holds it to the end
        train = tf.train.GradientDescentOptimizer(0.1).apply_gradients([(grad, w)])
    sess = _session()
    for step in range(3):
        before, _ = sess.run([snap, train])
        np.testing.assert_allclose(np.reshape(before, (3, 4)), W0 - step * 0.1 * G, rtol=1e-6)
    np.testing.assert_allclose(sess.run(w), W0 - 3 * 0.1 * G, rtol=1e-6)


def test_value_waiting_for_a_kernel_keeps_its_snapshot():
    w, grad, _ = _gd_graph()
    read = tf.identity(w)  # forwards the variable's buffer itself
    with tf.control_dependencies([read]):
        train = tf.train.GradientDescentOptimizer(0.1).apply_gradients([(grad, w)])
    with tf.control_dependencies([train]):
        later = read * 1.0  # runs after the update, on the value read before it
    sess = _session()
    for step in range(2):
        np.testing.assert_allclose(sess.run(later), W0 - step * 0.1 * G, rtol=1e-6)


def test_copy_on_write_buffers_are_reused_only_when_released():
    """Steps that hold a snapshot (copy-on-write) alternate with steps that do not (in place,
    or into the buffer the last copy replaced): every snapshot and every update stays right."""
    w, grad, plain = _gd_graph()
    read = tf.identity(w)
    with tf.control_dependencies([read]):
        held = tf.train.GradientDescentOptimizer(0.1).apply_gradients([(grad, w)])
    with tf.control_dependencies([held]):
        later = read * 1.0
    sess = _session()
    snapshots = []
    for step in range(6):
        if step % 2:
            sess.run(plain)
        else:
            snapshots.append((step, sess.run(later)))
    for step, value in snapshots:
        np.testing.assert_allclose(value, W0 - step * 0.1 * G, rtol=1e-6)
    np.testing.assert_allclose(sess.run(w), W0 - 6 * 0.1 * G, rtol=1e-5)


def test_slots_fetched_earlier_keep_their_values():
    w = tf.Variable(W0)
    opt = tf.train.MomentumOptimizer(0.1, 0.9)
    train = opt.apply_gradients([(tf.constant(G), w)])
    accum = opt.get_slot(w, "momentum")
    sess = _session()
    sess.run(train)
    accum1, w1 = sess.run([accum, w])
    sess.run(train)
    np.testing.assert_allclose(accum1, G, rtol=1e-6)
    np.testing.assert_allclose(w1, W0 - 0.1 * G, rtol=1e-6)
    np.testing.assert_allclose(sess.run(accum), 0.9 * G + G, rtol=1e-6)
    np.testing.assert_allclose(sess.run(w), W0 - 0.1 * G - 0.1 * (1.9 * G), rtol=1e-6)


def test_updates_span_many_blocks_and_match_numpy(monkeypatch):
    monkeypatch.setattr(training_ops, "_BLOCK", 5)  # 12 elements: blocks of 5, 5 and 2
    rng = np.random.RandomState(0)
    w0, g = rng.randn(3, 4).astype(np.float32), rng.randn(3, 4).astype(np.float32)
    w = tf.Variable(w0)
    opt = tf.train.AdamOptimizer(0.01)
    train = opt.apply_gradients([(tf.constant(g), w)])
    sess = _session()
    sess.run(train)
    m, v = 0.1 * g, 0.001 * g * g
    lr = 0.01 * np.sqrt(1 - 0.999) / (1 - 0.9)
    np.testing.assert_allclose(sess.run(w), w0 - lr * m / (np.sqrt(v) + 1e-8), rtol=1e-5)
    np.testing.assert_allclose(sess.run(opt.get_slot(w, "m")), m, rtol=1e-6)


def test_scalar_variable_and_wrong_grad_shape():
    v = tf.Variable(np.float32(2.0))
    train = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(tf.constant(np.float32(1.0)), v)])
    sess = _session()
    sess.run(train)
    assert sess.run(v) == np.float32(1.5)
    w = tf.Variable(W0)
    bad = tf.placeholder(tf.float32)
    sess = _session()
    apply = tf.train.GradientDescentOptimizer(0.5).apply_gradients([(bad, w)])
    with pytest.raises(tf.errors.InvalidArgumentError, match="same shape"):
        sess.run(apply, {bad: np.ones((4, 3), np.float32)})
    np.testing.assert_array_equal(sess.run(w), W0)


def test_adagrad_update_slots_false_keeps_the_accumulator():
    w = tf.Variable(W0)
    accum = tf.Variable(np.full((3, 4), 4.0, np.float32))
    apply = tf._apply_op(training_ops.OPS["ApplyAdagrad"], var=w._ref(), accum=accum._ref(),
                         lr=tf.constant(np.float32(0.5)), grad=tf.constant(G), update_slots=False)
    sess = _session()
    sess.run(apply)
    np.testing.assert_array_equal(sess.run(accum), np.full((3, 4), 4.0, np.float32))
    np.testing.assert_allclose(sess.run(w), W0 - 0.5 * G / 2.0, rtol=1e-6)


@pytest.mark.parametrize("rule,slots,hyper,attrs", [
    (training_ops._gd, 0, {"before": [0.1], "after": []}, {}),
    (training_ops._momentum, 1, {"before": [0.1], "after": [0.9]}, {"use_nesterov": False}),
    (training_ops._momentum, 1, {"before": [0.1], "after": [0.9]}, {"use_nesterov": True}),
    (training_ops._adagrad, 1, {"before": [0.1], "after": []}, {"update_slots": True}),
    (training_ops._adagrad, 1, {"before": [0.1], "after": []}, {"update_slots": False}),
])
@pytest.mark.parametrize("in_place", [True, False])
def test_fused_block_rules_equal_the_rules_bit_for_bit(monkeypatch, rule, slots, hyper, attrs, in_place):
    """The fused forms (written into the targets block by block) give the rules' own results."""
    monkeypatch.setattr(training_ops, "_BLOCK", 7)  # 30 elements: blocks of 7 and a last of 2
    rng = np.random.RandomState(1)
    states = [rng.randn(5, 6).astype(np.float32)]
    states += [rng.rand(5, 6).astype(np.float32) + 0.5 for _ in range(slots)]
    grad = rng.randn(5, 6).astype(np.float32)
    before = [np.asarray(v, np.float32) for v in hyper["before"]]
    args = before + [grad] + [np.asarray(v, np.float32) for v in hyper["after"]]
    want = [np.asarray(v).astype(np.float32) for v in rule(*states, *args, attrs)]
    targets = [s if in_place else np.empty_like(s) for s in states]
    training_ops._blocked_update(rule, states, targets, args, len(before), attrs)
    for got, expected in zip(targets, want):
        np.testing.assert_array_equal(got, expected)


def test_small_variables_are_updated_as_new_arrays(monkeypatch):
    monkeypatch.setattr(training_ops, "_IN_PLACE_SIZE", 1 << 14)
    w, grad, train = _gd_graph()
    read = tf.identity(w)
    with tf.control_dependencies([read]):
        held = tf.train.GradientDescentOptimizer(0.1).apply_gradients([(grad, w)])
    with tf.control_dependencies([held]):
        later = read * 1.0
    sess = _session()
    np.testing.assert_allclose(sess.run(later), W0, rtol=1e-6)
    sess.run(train)
    np.testing.assert_allclose(sess.run(w), W0 - 2 * 0.1 * G, rtol=1e-6)
