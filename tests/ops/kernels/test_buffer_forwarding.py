"""Buffer forwarding (tensorweave/ops/buffer_forwarding.py): a kernel may write its result into
an input only when nothing but its own call holds that input. Fed arrays, constants, variable
buffers, loop invariants, fetched values and values another consumer still needs are never
written, on every executor path (straight line, as tables or as generated code, dataflow with
parallel kernels, the optimistic straight line of steps with conditionals, loops, several
devices, traced steps); a value whose
only consumer is the kernel is forwarded on each of those paths but the traced one.

A probe op reports what the rule says about its input on each path; the other tests run the
kernels that forward (binary and unary ufuncs, Relu and ReluGrad, BiasAdd, AddN, Cast, Sigmoid)
and check every value against NumPy."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.kernels import buffer_forwarding
from tensorweave.ops import _util, nn as nn_ops
from tensorweave.ops.kernels.buffer_forwarding import forwardable
from tensorweave.runtime import plan_codegen

# The probe: y = x + 0 (a new array), and whether the rule would let it write into x.
ForwardingProbe = define_op("ForwardingProbeForTests", inputs=["x: float32"],
                            outputs=["y: float32", "forwarded: bool"],
                            shape_fn=lambda op: _util.unchanged(op) + [tf.TensorShape([])])
ForwardingProbe.not_differentiable()
_F32 = np.dtype(np.float32)


@ForwardingProbe.kernel()
def _probe_kernel(ctx):
    def compute(x):
        forwarded = forwardable(x, np.shape(x), _F32)
        return x + np.float32(0), np.bool_(forwarded)

    return compute


def probe(x):
    return apply_op(ForwardingProbe, x=x)


SHAPE = (64, 300)  # 19,200 floats: above MIN_FORWARD_ELEMENTS, so kernels look for an input
RNG = np.random.RandomState(0)
X = RNG.randn(*SHAPE).astype(np.float32)
B = RNG.randn(SHAPE[1]).astype(np.float32)
LABELS = RNG.randint(0, SHAPE[1], SHAPE[0]).astype(np.int32)


def _softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def _sparse_xent(a, b):
    return -np.log(_softmax(a)[np.arange(SHAPE[0]), LABELS])


def _extra_fetches(path):
    """Fetches that make the step take `path`: two independent products make the partition a
    parallel dataflow one; a conditional makes it an optimistic straight line."""
    if path == "dataflow":
        m = tf.constant(RNG.rand(200, 200).astype(np.float32))
        return [tf.matmul(m, m), tf.matmul(m, m, transpose_a=True)]
    if path == "optimistic":
        return [tf.cond(tf.constant(True), lambda: tf.constant(1.0), lambda: tf.constant(2.0))]
    return []


def _run(path, fetches, feed=None, sess=None):
    extra = _extra_fetches(path)
    own = sess is None
    sess = sess or tf.Session()
    interpreted = plan_codegen.INTERPRETED_STEPS
    if path == "generated":  # the straight line as generated code (runtime/plan_codegen.py) at once
        plan_codegen.INTERPRETED_STEPS = 0
    try:
        return sess.run([fetches, extra], feed)[0]
    finally:
        plan_codegen.INTERPRETED_STEPS = interpreted
        if own:
            sess.close()


PATHS = ["straight", "dataflow", "optimistic", "generated"]


@pytest.mark.parametrize("path", PATHS)
def test_a_value_with_one_consumer_is_forwarded(path):
    x = tf.placeholder(tf.float32, SHAPE)
    _, forwarded = probe(tf.exp(x))
    assert _run(path, forwarded, {x: X})


@pytest.mark.parametrize("path", PATHS)
def test_values_held_elsewhere_are_not_forwarded(path):
    x = tf.placeholder(tf.float32, SHAPE)
    v = tf.Variable(X)
    a = tf.exp(x)
    held = {
        "fed": probe(x)[1],
        "const": probe(tf.constant(X))[1],
        "variable": probe(v.value())[1],
        "fetched": probe(a)[1],
        "view": probe(tf.reshape(tf.exp(x), [-1, SHAPE[1]]))[1],
    }
    twice = tf.exp(x)
    first, second = probe(twice)[1], probe(twice)[1]  # two consumers: only the later one may write
    with tf.Session() as sess:
        sess.run(v.initializer)
        got, a_value, pair = _run(path, [held, a, [first, second]], {x: X}, sess)
    assert not any(got.values()), got
    assert not all(pair)
    np.testing.assert_allclose(a_value, np.exp(X), rtol=1e-6)


def test_traced_steps_never_forward():
    x = tf.placeholder(tf.float32, SHAPE)
    _, forwarded = probe(tf.exp(x))
    with tf.Session() as sess:
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        assert not sess.run(forwarded, {x: X}, options=options, run_metadata=tf.RunMetadata())


def test_loop_values_forwarded_but_not_loop_invariants():
    x = tf.placeholder(tf.float32, SHAPE)

    def body(i, acc, flags):
        _, own = probe(tf.exp(acc))
        _, invariant = probe(x)  # an Enter of the fed value, delivered to every iteration
        return i + 1, acc * np.float32(0.5), tf.concat([flags, tf.reshape(tf.stack([own, invariant]), [1, 2])], 0)

    _, acc, flags = tf.while_loop(lambda i, acc, flags: i < 3, body,
                                  [tf.constant(0), x, tf.zeros([0, 2], tf.bool)],
                                  shape_invariants=[tf.TensorShape([]), tf.TensorShape(SHAPE),
                                                    tf.TensorShape([None, 2])])
    with tf.Session() as sess:
        got_acc, got_flags = sess.run([acc, flags], {x: X})
    np.testing.assert_allclose(got_acc, X * 0.125, rtol=1e-6)
    assert got_flags[:, 0].all() and not got_flags[:, 1].any()


def test_values_crossing_devices_keep_their_other_consumers():
    config = tf.ConfigProto(device_count={"CPU": 2})
    x = tf.placeholder(tf.float32, SHAPE)
    with tf.device("/cpu:0"):
        a = tf.exp(x)
    with tf.device("/cpu:1"):
        first, second = probe(a)[1], probe(a)[1]
        total = a + np.float32(1)
        _, sole = probe(tf.exp(x))
    with tf.Session(config=config) as sess:
        pair, got_total, _ = sess.run([[first, second], total, sole], {x: X})
    assert not all(pair)
    np.testing.assert_allclose(got_total, np.exp(X) + 1, rtol=1e-6)


# ---------------------------------------------------------------------------------------------
# The forwarding kernels, against NumPy, with inputs that must not be written
# ---------------------------------------------------------------------------------------------
def _kernels_on(a, b):
    """Each forwarding kernel on `a` (and `b`), with its NumPy reference (a, b given)."""
    g = tf.exp(b * np.float32(0.1))
    return [
        (a + b, lambda a, b: a + b),
        (a - tf.constant(B), lambda a, b: a - B),
        (a * np.float32(3), lambda a, b: a * 3),
        (tf.maximum(a, b), np.maximum),
        (tf.nn.relu(a), lambda a, b: np.maximum(a, 0)),
        (tf.nn.bias_add(a, tf.constant(B)), lambda a, b: a + B),
        (tf._apply_op(nn_ops.ReluGrad, gradients=g, features=a), lambda a, b: np.exp(b * 0.1) * (a > 0)),
        (tf.add_n([a, b, a]), lambda a, b: a + b + a),
        (tf.add_n([a, tf.exp(b * np.float32(0.1))]), lambda a, b: a + np.exp(b * np.float32(0.1))),  # into input 1
        (tf.exp(a * np.float32(0.01)), lambda a, b: np.exp(a * 0.01)),
        (tf.negative(a), lambda a, b: -a),
        (tf.sigmoid(a), lambda a, b: 1 / (1 + np.exp(-a))),
        (tf.cast(a, tf.float32), lambda a, b: a),
        (tf.nn.sparse_softmax_cross_entropy_with_logits(labels=LABELS, logits=a), _sparse_xent),
        (tf.gradients(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=LABELS, logits=a * np.float32(1)),
                      a)[0], lambda a, b: _softmax(a) - np.eye(SHAPE[1], dtype=np.float32)[LABELS]),
    ]


@pytest.mark.parametrize("path", PATHS)
def test_fed_values_are_never_written(path):
    x, y = tf.placeholder(tf.float32, SHAPE), tf.placeholder(tf.float32, SHAPE)
    cases = _kernels_on(x, y)
    xv, yv = X.copy(), (X * 0.5 + 1).astype(np.float32)
    xc, yc = xv.copy(), yv.copy()
    got = _run(path, [t for t, _ in cases], {x: xv, y: yv})
    np.testing.assert_array_equal(xv, xc)
    np.testing.assert_array_equal(yv, yc)
    for value, (tensor, want) in zip(got, cases):
        np.testing.assert_allclose(value, want(xc, yc), rtol=1e-5, atol=1e-6, err_msg=tensor.name)


@pytest.mark.parametrize("path", PATHS)
def test_values_with_several_consumers_all_see_them_unchanged(path):
    x = tf.placeholder(tf.float32, SHAPE)
    a, b = tf.exp(x * np.float32(0.1)), tf.sin(x)  # each consumed by every kernel below
    cases = _kernels_on(a, b) + _kernels_on(b, a)
    got = _run(path, [a, b, [t for t, _ in cases]], {x: X})
    want_a, want_b = np.exp(X * np.float32(0.1)), np.sin(X)
    np.testing.assert_allclose(got[0], want_a, rtol=1e-6)
    np.testing.assert_allclose(got[1], want_b, rtol=1e-6, atol=1e-7)
    refs = [(want_a, want_b)] * (len(cases) // 2) + [(want_b, want_a)] * (len(cases) // 2)
    for value, (tensor, want), (ra, rb) in zip(got[2], cases, refs):
        np.testing.assert_allclose(value, want(ra, rb), rtol=1e-5, atol=1e-6, err_msg=tensor.name)


@pytest.mark.parametrize("static", [True, False])
@pytest.mark.parametrize("path", PATHS)
def test_chains_of_sole_consumers_give_numpy_results(path, static):
    """Each intermediate below has one consumer: the kernels write into their inputs (sizes
    known when the plan is built, or only when the step runs)."""
    x = tf.placeholder(tf.float32, SHAPE if static else [None, SHAPE[1]])
    h = tf.nn.relu(tf.nn.bias_add(x * np.float32(2), tf.constant(B)))
    h = tf.add_n([tf.sigmoid(h), tf.exp(-h), tf.cast(tf.negative(h), tf.float32)])
    h = tf.maximum(h - np.float32(1), tf.zeros_like(h))
    want = np.maximum(X * 2 + B, 0)
    want = np.maximum(1 / (1 + np.exp(-want)) + np.exp(-want) - want - 1, 0)
    for _ in range(2):
        np.testing.assert_allclose(_run(path, h, {x: X}), want, rtol=1e-5, atol=1e-6)


def test_constants_and_variables_survive_steps():
    c = tf.constant(X)
    v = tf.Variable(X * 2)
    outs = [c + np.float32(1), tf.nn.relu(c), tf.add_n([c, c]), tf.cast(c, tf.float32) * np.float32(2),
            v + np.float32(1), tf.nn.relu(v), tf.add_n([v.value(), c]), tf.exp(v.value() * np.float32(0.01))]
    wants = [X + 1, np.maximum(X, 0), X + X, X * 2, X * 2 + 1, np.maximum(X * 2, 0), X * 3, np.exp(X * 0.02)]
    with tf.Session() as sess:
        sess.run(v.initializer)
        for _ in range(3):
            for value, want in zip(sess.run(outs), wants):
                np.testing.assert_allclose(value, want, rtol=1e-5)
        np.testing.assert_array_equal(sess.run(v), X * 2)
        np.testing.assert_array_equal(sess.run(c), X)


def test_fetched_intermediate_is_not_overwritten_by_its_consumer():
    x = tf.placeholder(tf.float32, SHAPE)
    a = tf.exp(x * np.float32(0.1))
    with tf.Session() as sess:
        for consumer in (a + np.float32(1), tf.nn.relu(a), tf.add_n([a, a]), tf.sigmoid(a)):
            got_a, _ = sess.run([a, consumer], {x: X})
            np.testing.assert_allclose(got_a, np.exp(X * np.float32(0.1)), rtol=1e-6)


def test_loop_accumulator_and_invariant():
    """The LSTM's backward-loop pattern: acc = acc + f(invariant) each iteration."""
    w = tf.placeholder(tf.float32, SHAPE)

    def body(i, acc):
        return i + 1, acc + tf.nn.relu(w) * tf.cast(i, tf.float32)

    _, acc = tf.while_loop(lambda i, acc: i < 4, body, [tf.constant(0), tf.zeros(SHAPE)])
    wv = X.copy()
    with tf.Session() as sess:
        for _ in range(2):
            np.testing.assert_allclose(sess.run(acc, {w: wv}), np.maximum(X, 0) * 6, rtol=1e-5)
    np.testing.assert_array_equal(wv, X)


def test_small_values_are_left_alone_and_threshold_applies_at_build(monkeypatch):
    monkeypatch.setattr(buffer_forwarding, "MIN_FORWARD_ELEMENTS", 0)
    x = tf.placeholder(tf.float32, [3])
    xv = np.array([1.0, -2.0, 3.0], np.float32)
    got = _run("straight", [tf.nn.relu(x), x + x, tf.exp(x) + np.float32(1)], {x: xv})
    np.testing.assert_array_equal(xv, [1.0, -2.0, 3.0])
    np.testing.assert_allclose(got[2], np.exp(xv) + 1, rtol=1e-6)
    np.testing.assert_array_equal(got[0], np.maximum(xv, 0))
