"""Random ops: value statistics, seeding semantics (graph and op seeds), shapes and errors."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops import random_ops
from tensorweave.testing.op_test import assert_static_shape_matches

N = 100_000


def run(fetches, feed=None, graph=None):
    with tf.Session(graph=graph) as sess:
        return sess.run(fetches, feed)


def raw(op_def, **kwargs):
    return tf._apply_op(op_def, **kwargs)


def run_error(fetch, feed=None):
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError) as info:
            sess.run(fetch, feed)
    return str(info.value)


# -- distributions ----------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_random_uniform_float(dtype):
    out = tf.random_uniform([N], minval=-2.0, maxval=3.0, dtype=dtype, seed=1)
    assert out.op.name == "random_uniform" and out.dtype == dtype and out.shape.as_list() == [N]
    value = run(out)
    assert value.dtype == dtype.as_numpy_dtype and value.shape == (N,)
    assert value.min() >= -2.0 and value.max() < 3.0
    wide = value.astype(np.float64)
    assert abs(wide.mean() - 0.5) < 0.03 and abs(wide.std() - 5 / np.sqrt(12)) < 0.03
    # Roughly uniform over ten bins.
    counts = np.histogram(wide, bins=10, range=(-2, 3))[0]
    assert np.all(np.abs(counts / N - 0.1) < 0.01)


def test_random_uniform_default_range_and_graph_structure():
    out = tf.random_uniform([2, 3])
    types = {op.name: op.type for op in tf.get_default_graph().get_operations()}
    assert types["random_uniform/RandomUniform"] == "RandomUniform"
    rnd = tf.get_default_graph().get_operation_by_name("random_uniform/RandomUniform")
    assert rnd.get_attr("dtype") == tf.float32 and rnd.get_attr("T") == tf.int32
    assert rnd.get_attr("seed") == 0 and rnd.get_attr("seed2") == 0
    value = run(out)
    assert value.shape == (2, 3) and np.all((value >= 0) & (value < 1))


@pytest.mark.parametrize("dtype", [tf.int32, tf.int64])
def test_random_uniform_int(dtype):
    out = tf.random_uniform([N], minval=-3, maxval=7, dtype=dtype, seed=4)
    assert out.op.type == "RandomUniformInt" and out.op.name == "random_uniform" and out.dtype == dtype
    value = run(out)
    assert value.dtype == dtype.as_numpy_dtype
    assert value.min() == -3 and value.max() == 6
    freq = np.bincount(value + 3, minlength=10) / N
    np.testing.assert_allclose(freq, 0.1, atol=0.01)


def test_random_uniform_int_errors():
    with pytest.raises(ValueError, match="Must specify maxval for integer dtype"):
        tf.random_uniform([2], dtype=tf.int32)
    with pytest.raises(ValueError, match="Invalid dtype"):
        tf.random_uniform([2], dtype=tf.complex64)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.random_uniform([2], minval=[0], maxval=3, dtype=tf.int64)
    lo = tf.placeholder(tf.int32, [])
    out = tf.random_uniform([2], minval=lo, maxval=3, dtype=tf.int32)
    assert "Need minval < maxval, got 5 >= 3" in run_error(out, {lo: 5})
    assert "Need minval < maxval, got 3 >= 3" in run_error(out, {lo: 3})
    # TF skips the check for empty outputs.
    empty = tf.random_uniform([0], minval=lo, maxval=3, dtype=tf.int32)
    assert run(empty, {lo: 5}).shape == (0,)


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_random_normal(dtype):
    out = tf.random_normal([N], mean=2.0, stddev=3.0, dtype=dtype, seed=2)
    assert out.op.name == "random_normal" and out.dtype == dtype
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert "RandomStandardNormal" in types
    value = run(out).astype(np.float64)
    assert abs(value.mean() - 2.0) < 0.05 and abs(value.std() - 3.0) < 0.05
    # About 68.3% within one standard deviation.
    assert abs(np.mean(np.abs(value - 2.0) < 3.0) - 0.6827) < 0.01


@pytest.mark.parametrize("dtype", [tf.float16, tf.float32, tf.float64])
def test_truncated_normal(dtype):
    out = tf.truncated_normal([400, 250], mean=-1.0, stddev=2.0, dtype=dtype, seed=3)
    assert out.op.name == "truncated_normal" and out.shape.as_list() == [400, 250]
    value = run(out).astype(np.float64)
    assert value.shape == (400, 250)
    assert np.all(np.abs(value + 1.0) <= 4.0 + 1e-6)  # never more than 2 stddevs from the mean
    # A standard normal truncated to [-2, 2] has std 0.8796; scaled by 2 here.
    assert abs(value.mean() + 1.0) < 0.03 and abs(value.std() - 2 * 0.8796) < 0.03
    # Mass is not piled up at the bounds (values are re-drawn, not clipped).
    assert np.mean(np.abs(value + 1.0) > 3.9) < 0.01


def test_multinomial_frequencies():
    probs = np.array([[0.1, 0.6, 0.3], [0.5, 0.0, 0.5]])
    logits = np.log(probs + 1e-30).astype(np.float32)
    logits[1, 1] = -np.inf
    out = tf.multinomial(logits, 50_000, seed=5)
    assert out.op.type == "Multinomial" and out.op.name == "multinomial/Multinomial"
    assert out.dtype == tf.int64 and out.shape.as_list() == [2, 50_000]
    value = run(out)
    assert value.dtype == np.int64
    for row in range(2):
        freq = np.bincount(value[row], minlength=3) / value.shape[1]
        np.testing.assert_allclose(freq, probs[row], atol=0.01)
    assert not np.any(value[1] == 1)  # zero-probability class never drawn


def test_multinomial_shapes_dtypes_and_errors():
    logits = tf.placeholder(tf.float32, [4, None])
    out = tf.multinomial(logits, 7, output_dtype=tf.int32)
    assert out.shape.as_list() == [4, 7] and out.dtype == tf.int32
    value = run(out, {logits: np.zeros((4, 3))})
    assert value.dtype == np.int32 and value.shape == (4, 7) and value.min() >= 0 and value.max() <= 2
    lp, ns = tf.placeholder(tf.float64), tf.placeholder(tf.int32)
    dyn = tf.multinomial(lp, ns)
    assert dyn.shape.as_list() == [None, None]
    assert run(dyn, {lp: np.zeros((0, 2)), ns: 3}).shape == (0, 3)
    assert "logits should be a matrix, got shape [2]" in run_error(dyn, {lp: [1.0, 2.0], ns: 3})
    assert "num_samples should be non-negative, got -3" in run_error(dyn, {lp: [[1.0, 2.0]], ns: -3})
    assert "num_classes should be positive, got 0" in run_error(dyn, {lp: np.zeros((2, 0)), ns: 3})
    with pytest.raises(ValueError, match="Shape must be rank 2 but is rank 1"):
        tf.multinomial([0.0, 1.0], 5)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.multinomial([[0.0, 1.0]], [5])


def test_random_shuffle():
    x = np.arange(1000)
    out = tf.random_shuffle(x, seed=6)
    assert out.op.type == "RandomShuffle" and out.shape.as_list() == [1000]
    first, second = run([out, out])  # one run: the same tensor fetched twice
    np.testing.assert_array_equal(first, second)
    np.testing.assert_array_equal(np.sort(first), x)
    assert not np.array_equal(first, x)
    rows = np.arange(12).reshape(6, 2)
    shuffled = run(tf.random_shuffle(rows, seed=1))
    assert sorted(map(tuple, shuffled)) == sorted(map(tuple, rows))  # rows move whole
    assert run(tf.random_shuffle(3)) == 3
    assert list(run(tf.random_shuffle([b"a"]))) == [b"a"]
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.random_shuffle(p).shape.as_list() == [None, 3]


# -- seeding ------------------------------------------------------------------------------------------
def _seeded_graph(graph_seed, op_seed=None):
    g = tf.Graph()
    with g.as_default():
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        a = tf.random_uniform([5], seed=op_seed)
        b = tf.random_normal([5], seed=op_seed)
        c = tf.truncated_normal([5], seed=op_seed)
        d = tf.random_uniform([5], maxval=100, dtype=tf.int64, seed=op_seed)
        e = tf.multinomial([[0.0, 0.0, 0.0]], 20, seed=op_seed)
        f = tf.random_shuffle(np.arange(20), seed=op_seed)
    return g, [a, b, c, d, e, f]


def _assert_all_equal(xs, ys):
    for x, y in zip(xs, ys):
        np.testing.assert_array_equal(x, y)


def test_seed_attrs_follow_get_seed():
    tf.set_random_seed(7)
    first = tf.random_shuffle([1, 2, 3])
    second = tf.random_shuffle([1, 2, 3])
    # Without an op seed, seed2 is the graph's op count when the op is made, as in TF.
    assert first.op.get_attr("seed") == 7 and second.op.get_attr("seed") == 7
    assert first.op.get_attr("seed2") != second.op.get_attr("seed2")
    out = tf.random_shuffle([1, 2, 3], seed=11)
    assert (out.op.get_attr("seed"), out.op.get_attr("seed2")) == (7, 11)
    tf.set_random_seed(None)
    out = tf.random_shuffle([1, 2, 3], seed=11)
    assert (out.op.get_attr("seed"), out.op.get_attr("seed2")) == (tf.get_seed(11)[0], 11)


def test_graph_seed_deterministic_across_sessions_and_graphs():
    g1, t1 = _seeded_graph(42)
    g2, t2 = _seeded_graph(42)
    with tf.Session(graph=g1) as s:
        first = s.run(t1)
        second = s.run(t1)
    with tf.Session(graph=g1) as s:
        again = s.run(t1)
    with tf.Session(graph=g2) as s:
        other_graph = s.run(t2)
    _assert_all_equal(first, again)
    _assert_all_equal(first, other_graph)
    # Each run of the same op draws new values.
    for x, y in zip(first, second):
        assert not np.array_equal(x, y)
    # Another graph seed gives other values.
    g3, t3 = _seeded_graph(43)
    for x, y in zip(first, run(t3, graph=g3)):
        assert not np.array_equal(x, y)


def test_op_seed_alone_is_deterministic():
    g1, t1 = _seeded_graph(None, op_seed=9)
    g2, t2 = _seeded_graph(None, op_seed=9)
    _assert_all_equal(run(t1, graph=g1), run(t2, graph=g2))
    g3, t3 = _seeded_graph(None, op_seed=10)
    assert not np.array_equal(run(t1, graph=g1)[0], run(t3, graph=g3)[0])


def test_ops_with_same_graph_seed_differ_without_op_seed():
    tf.set_random_seed(5)
    a = tf.random_uniform([10])
    b = tf.random_uniform([10])
    va, vb = run([a, b])
    assert not np.array_equal(va, vb)
    # ...but two ops with the same explicit op seed produce the same stream.
    c = tf.random_uniform([10], seed=1)
    d = tf.random_uniform([10], seed=1)
    vc, vd = run([c, d])
    np.testing.assert_array_equal(vc, vd)


def test_unseeded_ops_are_nondeterministic():
    _, t1 = _seeded_graph(None)
    a = raw(random_ops.RandomStandardNormal, shape=[8], dtype=tf.float64)
    assert a.op.get_attr("seed") == 0 and a.op.get_attr("seed2") == 0
    assert not np.array_equal(run(a), run(a))
    assert not np.array_equal(run(t1[0], graph=t1[0].graph), run(t1[0], graph=t1[0].graph))


# -- shapes -----------------------------------------------------------------------------------------
def test_static_shapes_from_shape_input():
    known = tf.random_normal(np.array([2, 3], np.int64))
    assert known.shape.as_list() == [2, 3]
    assert tf.random_uniform(tf.TensorShape([4, 1])).shape.as_list() == [4, 1]
    assert tf.random_uniform(()).shape.as_list() == []
    assert run(tf.random_uniform([])).shape == ()
    vec = tf.placeholder(tf.int32, [3])
    partial = tf.random_uniform(vec)
    assert partial.shape.as_list() == [None, None, None]
    value = run(partial, {vec: [1, 2, 3]})
    assert_static_shape_matches(partial, value)
    unknown = tf.truncated_normal(tf.placeholder(tf.int32))
    assert unknown.shape.ndims is None
    # A constant shape is checked once when the kernel is built; feeding it still works.
    const = tf.constant([2, 3])
    out = raw(random_ops.RandomUniform, shape=const, dtype=tf.float64)
    assert run(out).shape == (2, 3) and run(out, {const: [4, 1]}).shape == (4, 1)


def test_shape_input_errors():
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 0"):
        tf.random_uniform(5)
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.random_normal([[2, 3]])
    with pytest.raises(TypeError):
        tf.random_uniform([2.0, 3.0])
    with pytest.raises(TypeError):
        tf.random_normal([2], dtype=tf.int32)
    shape = tf.placeholder(tf.int32)
    out = raw(random_ops.RandomUniform, shape=shape, dtype=tf.float32)
    assert "Dimension -1 must be >= 0" in run_error(out, {shape: [-1, 2]})
    assert "shape must be a vector of {int32,int64}, got shape [1,2]" in run_error(out, {shape: [[1, 2]]})
    assert "got shape []" in run_error(out, {shape: 3})


def test_get_seed_matches_tensorflow():
    # (graph seed, op seed) pairs as TensorFlow 2.21's tf.compat.v1.get_seed returns them.
    tf.set_random_seed(2**40 + 5)           # large seeds fold into [0, 2**31 - 1)
    assert tf.get_seed(2**33) == (517, 4)
    assert tf.get_seed(None) == (517, 0)    # op seed: the graph's op count (empty graph)
    tf.constant(1.0)
    assert tf.get_seed(None) == (517, 1)
    tf.set_random_seed(0)
    assert tf.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would mean "nondeterministic"
    tf.set_random_seed(None)
    assert tf.get_seed(None) == (None, None)
    assert tf.get_seed(3) == (87654321, 3)
