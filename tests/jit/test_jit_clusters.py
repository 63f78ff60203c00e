"""JIT clusters (issue 17, XLA's role): jit_scope, global_jit_level and their limits; results
against the unfused graph (float32: equal within float32 rounding); the walkthrough's two
examples each run as ONE fused kernel, seen in step stats."""
import numpy as np
import pytest

import tensorweave as tf

# numba is the optional extra tensorweave[jit] (CI installs it); without it nothing is fused
pytest.importorskip("numba")
from tests.jit.helpers import fused, gelu, gelu_numpy, jit_config, run_traced, unfused, x4

ON_1 = tf.OptimizerOptions.ON_1
OFF = tf.OptimizerOptions.OFF

RNG = np.random.RandomState(7)
X = ((RNG.rand(4097) - 0.5) * 24).astype(np.float32)  # tanh saturates past |u| = 7.9


def _example(fn, scoped=True):
    x = tf.placeholder(tf.float32, [None], name="x")
    if scoped:
        with tf.xla.experimental.jit_scope():
            y = fn(x)
    else:
        y = fn(x)
    return y, [x]


@pytest.mark.parametrize("fn,n_ops", [(x4, 3), (gelu, 9)])
def test_walkthrough_examples_run_as_one_fused_kernel(fn, n_ops):
    with tf.Graph().as_default():
        y, (x,) = _example(fn)
        value, labels = run_traced(y, {x: X})
    assert len(fused(labels)) == 1, labels
    assert len(labels) == 2, labels  # the feed and the one fused kernel
    listed = fused(labels)[0].split("[")[1]
    assert listed.count(",") + 1 == n_ops  # every op of the example, listed in the label
    reference = unfused(lambda: _example(fn, scoped=False), [X])
    np.testing.assert_allclose(value, reference, rtol=2e-6, atol=1e-6)
    expected = X.astype(np.float64) ** 4 if fn is x4 else gelu_numpy(X)
    np.testing.assert_allclose(value, expected, rtol=1e-5, atol=1e-5)


def test_fused_tanh_saturates_like_the_unfused_kernel():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        with tf.xla.experimental.jit_scope():
            y = tf.tanh(x * 1.0) * 1.0
        values = np.array([7.9, 7.9074, 8.0, -9.0, 20.0, 0.0, -0.0, 1e-8, np.nan], np.float32)
        value, labels = run_traced(y, {x: values})
        assert len(fused(labels)) == 1
        with tf.Session() as sess:
            plain = sess.run(tf.tanh(x), {x: values})
    np.testing.assert_array_equal(value[2:5], [1.0, -1.0, 1.0])
    np.testing.assert_allclose(value, plain, rtol=2e-7, atol=0)
    assert np.signbit(value[6]) and np.isnan(value[8])


def test_global_jit_level_clusters_unmarked_ops_of_at_least_four():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None], name="x")
        g = gelu(x)
        small = x * x + 1.0  # two ops: under TF's minimum cluster size for auto-clustering
        (gv, sv), labels = run_traced([g, small], {x: X}, jit_config(ON_1))
        assert len(fused(labels)) == 1 and fused(labels)[0].startswith(g.op.name + " = ")
        _, labels_off = run_traced([g, small], {x: X}, jit_config(OFF))
        _, labels_default = run_traced([g, small], {x: X})
    assert not fused(labels_off) and not fused(labels_default)
    np.testing.assert_allclose(gv, gelu_numpy(X), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(sv, X * X + 1, rtol=1e-6)


def test_compile_ops_false_keeps_ops_out_even_when_auto_clustering():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        with tf.xla.experimental.jit_scope(compile_ops=False):
            y = gelu(x)
        assert y.op.get_attr("_XlaCompile") is False
        _, labels = run_traced(y, {x: X}, jit_config(ON_1))
    assert not fused(labels)


def test_two_jit_scopes_make_two_clusters_and_nested_scopes_share_one():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None])
        with tf.xla.experimental.jit_scope():
            t = x * x + 1.0
            with tf.xla.experimental.jit_scope():
                t = t * 3.0
        with tf.xla.experimental.jit_scope():
            u = t * t - 1.0
        assert t.op.get_attr("_XlaScope") == b"jit_scope_0" and u.op.get_attr("_XlaScope") == b"jit_scope_1"
        value, labels = run_traced(u, {x: X[:8]})
    assert len(fused(labels)) == 2
    t64 = (X[:8] * X[:8] + 1) * 3
    np.testing.assert_allclose(value, t64 * t64 - 1, rtol=1e-6)


def test_jit_scope_is_refused_eagerly():
    from tensorweave.eager import context
    with context.eager_mode():
        with pytest.raises(RuntimeError, match="not supported when eager execution is enabled"):
            with tf.xla.experimental.jit_scope():
                pass


def test_broadcasts_casts_comparisons_select_and_a_final_reduction():
    def build(scoped):
        a = tf.placeholder(tf.float32, [3, 4])
        b = tf.placeholder(tf.float32, [4])
        with tf.xla.experimental.jit_scope() if scoped else _nothing():
            c = a * b + 2.0
            d = tf.where(c > 1.0, c * c, -c)
            e = tf.cast(d, tf.float64) / 3.0
            total = tf.reduce_sum(e, axis=1, keepdims=True)
            m = tf.reduce_max(tf.exp(a) - b, axis=[0, 1])
        return [total, m], [a, b]

    av = RNG.randn(3, 4).astype(np.float32)
    bv = RNG.randn(4).astype(np.float32)
    with tf.Graph().as_default():
        fetches, (a, b) = build(True)
        values, labels = run_traced(fetches, {a: av, b: bv})
    assert len(fused(labels)) == 2 and all("Sum" in f or "Max" in f for f in fused(labels))
    reference = unfused(lambda: build(False), [av, bv])
    assert values[0].dtype == np.float64 and values[0].shape == (3, 1)
    np.testing.assert_allclose(values[0], reference[0], rtol=1e-6)
    np.testing.assert_allclose(values[1], reference[1], rtol=1e-6)


class _nothing:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return False


def test_integer_clusters_wrap_like_the_unfused_kernels():
    with tf.Graph().as_default():
        a = tf.placeholder(tf.int32, [None])
        with tf.xla.experimental.jit_scope():
            y = (a * a + 7) * a - tf.abs(a)
        big = np.array([2 ** 20, -(2 ** 16) - 3, 5, 0], np.int32)
        value, labels = run_traced(y, {a: big})
        assert len(fused(labels)) == 1
        with tf.Session() as sess:
            with tf.xla.experimental.jit_scope(compile_ops=False):
                plain = (a * a + 7) * a - tf.abs(a)
            expected = sess.run(plain, {a: big})
    np.testing.assert_array_equal(value, expected)


def test_fetched_intermediates_stay_and_shapes_that_do_not_broadcast_fail_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None, name="x")
        y = tf.placeholder(tf.float32, None, name="y")
        with tf.xla.experimental.jit_scope():
            first = x * x + 1.0
            second = first * y - x
        (fv, sv), labels = run_traced([first, second], {x: X[:5], y: X[5:10]})
        # `first` is fetched: it ends a cluster of its own and keeps its name
        assert len(fused(labels)) == 2 and any(f.startswith(first.op.name + " = ") for f in fused(labels))
        np.testing.assert_allclose(fv, X[:5] * X[:5] + 1, rtol=1e-6)
        np.testing.assert_allclose(sv, (X[:5] * X[:5] + 1) * X[5:10] - X[:5], rtol=1e-6)
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
                sess.run(second, {x: X[:5], y: X[:3]})


def test_control_inputs_of_members_are_kept():
    with tf.Graph().as_default():
        v = tf.Variable(0.0)
        x = tf.placeholder(tf.float32, [None])
        bump = tf.assign_add(v, 1.0)
        with tf.xla.experimental.jit_scope():
            with tf.control_dependencies([bump]):
                t = x * 2.0
            y = t * t
        with tf.Session() as sess:
            sess.run(v.initializer)
            md = tf.RunMetadata()
            sess.run(y, {x: X[:4]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                     run_metadata=md)
            assert sess.run(v) == 1.0
        labels = [n.timeline_label for d in md.step_stats.dev_stats for n in d.node_stats]
    assert len(fused(labels)) == 1


def test_a_target_grappler_rewrote_is_still_clustered():
    with tf.Graph().as_default():
        v = tf.Variable(X[:16])
        w = tf.Variable(np.zeros(16, np.float32))
        with tf.xla.experimental.jit_scope():
            y = x4(v)  # Grappler's arithmetic pass first makes the first product a Square
        done = tf.assign(w, y)
        with tf.Session() as sess:
            sess.run([v.initializer, w.initializer])
            md = tf.RunMetadata()
            sess.run(y.op, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
            sess.run(done.op)
            value = sess.run(w)
        labels = [n.timeline_label for d in md.step_stats.dev_stats for n in d.node_stats]
    assert len(fused(labels)) == 1 and fused(labels)[0].startswith(y.op.name + " = ")
    np.testing.assert_allclose(value, X[:16].astype(np.float64) ** 4, rtol=1e-6)


def _every_op_program(x, y, n, m, flag):
    """A sum of one term per element-wise op the JIT compiles (each term O(1), so a wrong
    formula shows), in three clusters: float unary, float binary and logic, integer."""
    floats = (tf.negative(x) + tf.abs(x) + tf.square(x) + tf.sqrt(tf.abs(x) + 1.0) + tf.rsqrt(tf.abs(x) + 1.0)
              + tf.reciprocal(tf.abs(x) + 2.0) + tf.exp(x * 0.5) + tf.log(tf.abs(x) + 0.5) + tf.log1p(tf.abs(x))
              + tf.expm1(x * 0.3) + tf.sin(x) + tf.cos(x) + tf.tanh(x) + tf.sigmoid(x) + tf.nn.relu(x)
              + tf.floor(x) + tf.ceil(x) + tf.sign(x))
    logic = tf.where(tf.logical_or(tf.logical_and(x < y, x <= 0.5), tf.logical_not(x >= y)),
                     tf.maximum(x, y) - tf.minimum(x, y), tf.pow(tf.abs(x) + 1.0, y) / (tf.abs(y) + 1.0))
    logic = logic + tf.cast(tf.equal(x > y, flag), tf.float32) + tf.cast(tf.not_equal(x, y), tf.float32) \
        + tf.squared_difference(x, y) + tf.realdiv(x, tf.abs(y) + 1.0) + tf.nn.bias_add(tf.reshape(x, [-1, 1]) * 0.0,
                                                                                     [0.5])[:, 0] * 0.0
    ints = tf.abs(n) * m - tf.negative(m) + tf.maximum(n, m) - tf.minimum(n, 3) + tf.square(n) + tf.sign(m) \
        + tf.cast(tf.cast(n, tf.float32) * 0.5, tf.int32)
    return [floats, logic, ints]


def test_every_compiled_op_against_the_unfused_graph():
    rng = np.random.RandomState(3)
    xv, yv = (rng.randn(2, 300) * 2).astype(np.float32)
    nv, mv = rng.randint(-50, 50, size=(2, 300)).astype(np.int32)
    fv = rng.rand(300) < 0.5

    def build(scoped):
        x, y = tf.placeholder(tf.float32, [300]), tf.placeholder(tf.float32, [300])
        n, m = tf.placeholder(tf.int32, [300]), tf.placeholder(tf.int32, [300])
        flag = tf.placeholder(tf.bool, [300])
        with tf.xla.experimental.jit_scope() if scoped else _nothing():
            fetches = _every_op_program(x, y, n, m, flag)
        return fetches, [x, y, n, m, flag]

    with tf.Graph().as_default():
        fetches, places = build(True)
        values, labels = run_traced(fetches, dict(zip(places, (xv, yv, nv, mv, fv))))
    assert len(fused(labels)) >= 3
    listed = " ".join(fused(labels))
    for op_type in ("Rsqrt", "Reciprocal", "Log1p", "Expm1", "Sigmoid", "Relu", "Sign", "Select", "LogicalOr",
                    "LogicalNot", "Pow", "SquaredDifference", "Cast", "Maximum", "Minimum", "NotEqual", "RealDiv"):
        assert f"{op_type} " in listed, (op_type, labels)
    reference = unfused(lambda: build(False), [xv, yv, nv, mv, fv])
    for got, want in zip(values, reference):
        if got.dtype.kind == "i":
            np.testing.assert_array_equal(got, want)
        else:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
