"""Random ops: TensorFlow's exact numbers (against values real TensorFlow 2.21 produced, in
tests/data/tf_random_expected.npz, see make_tf_random_fixtures.py), the Philox generator and
the C library functions it feeds, value statistics, seeding semantics, shapes and errors."""
import hashlib
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_run_error
from tensorweave.examples import mnist
from tensorweave.ops.kernels import philox, random_distributions
from tensorweave.ops.random import random_ops
from tensorweave.testing.op_test import assert_static_shape_matches

from tests.data.random_programs import graph_seeded_ops

N = 100_000


def run(fetches, feed=None, graph=None):
    with tf.Session(graph=graph) as sess:
        return sess.run(fetches, feed)


def raw(op_def, **kwargs):
    return tf._apply_op(op_def, **kwargs)


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
    assert "Need minval < maxval, got 5 >= 3" in str(assert_run_error(out, {lo: 5}))
    assert "Need minval < maxval, got 3 >= 3" in str(assert_run_error(out, {lo: 3}))
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
    assert "logits should be a matrix, got shape [2]" in str(assert_run_error(dyn, {lp: [1.0, 2.0], ns: 3}))
    assert "num_samples should be non-negative, got -3" in str(assert_run_error(dyn, {lp: [[1.0, 2.0]], ns: -3}))
    assert "num_classes should be positive, got 0" in str(assert_run_error(dyn, {lp: np.zeros((2, 0)), ns: 3}))
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
    # Without an op seed, seed2 counts the graph's seed requests (0, 1, ...), as in TF 2.x.
    assert first.op.get_attr("seed") == 7 and second.op.get_attr("seed") == 7
    assert (first.op.get_attr("seed2"), second.op.get_attr("seed2")) == (0, 1)
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
    assert "Dimension -1 must be >= 0" in str(assert_run_error(out, {shape: [-1, 2]}))
    assert "shape must be a vector of {int32,int64}, got shape [1,2]" in str(assert_run_error(out, {shape: [[1, 2]]}))
    assert "got shape []" in str(assert_run_error(out, {shape: 3}))


def test_get_seed_matches_tensorflow():
    # (graph seed, op seed) pairs as TensorFlow 2.21's tf.compat.v1.get_seed returns them.
    tf.set_random_seed(2**40 + 5)           # large seeds fold into [0, 2**31 - 1)
    assert tf.get_seed(2**33) == (517, 4)
    assert tf.get_seed(None) == (517, 0)    # op seed: how many the graph gave out so far
    for _ in range(3):
        tf.constant(1.0)                    # ops do not count (TF1's op count did)
    assert tf.get_seed(None) == (517, 1)
    tf.set_random_seed(0)
    assert tf.get_seed(0) == (0, 2**31 - 1)  # (0, 0) would mean "nondeterministic"
    tf.set_random_seed(None)
    assert tf.get_seed(None) == (None, None)
    assert tf.get_seed(3) == (87654321, 3)


def test_dropout_without_dropping_still_takes_a_seed():
    # TF's dropout with rate 0 makes no op but asks for a seed, so later ops' seeds are unmoved.
    tf.set_random_seed(3)
    x = tf.ones([4])
    assert tf.nn.dropout(x, rate=0.0) is not None
    assert tf.random_uniform([2]).op.get_attr("seed2") == 1


# -- TensorFlow's numbers ---------------------------------------------------------------------------
_EXPECTED = np.load(os.path.join(os.path.dirname(__file__), "..", "..", "data", "tf_random_expected.npz"))
_SAMPLED = np.array([0, 1, 2, 3, 4, 999, 123_457, 999_999])


def _digest(a):
    return hashlib.sha256(np.ascontiguousarray(a).tobytes()).hexdigest()


def _assert_same_bits(actual, expected):
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    assert actual.tobytes() == expected.tobytes(), (actual, expected)


def _float_normals(name, dtype):
    """Float16/32 normals go through logf/sin/cos, which TF takes from the C library (not
    correctly rounded) and we round from float64: they may differ in the last bit or two."""
    return ("normal" in name or "truncated" in name) and np.dtype(dtype).itemsize <= 4


def _assert_tf_values(name, actual, expected):
    if not _float_normals(name, expected.dtype):
        _assert_same_bits(actual, expected)
        return
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    np.testing.assert_array_max_ulp(actual, expected, maxulp=2)


def _graph_seeded_program():
    """make_tf_random_fixtures.graph_seeded, op for op (the derived seeds follow the order)."""
    return graph_seeded_ops(tf)


def test_graph_seeded_ops_match_tensorflow_over_two_runs():
    ops = _graph_seeded_program()
    with tf.Session() as sess:
        runs = [sess.run(ops), sess.run(ops)]
    for run, values in enumerate(runs, 1):
        for name, value in values.items():
            _assert_tf_values(name, value, _EXPECTED[f"{name}_run{run}"])


def test_stateless_ops_match_tensorflow():
    ops = {
        "stateless_uniform": tf.random.stateless_uniform([7], seed=[7, -3]),
        "stateless_uniform_f64": tf.random.stateless_uniform([3], seed=[2**40 + 5, 123], dtype=tf.float64),
        "stateless_normal": tf.random.stateless_normal([5], seed=[7, -3], dtype=tf.float64),
        "stateless_normal_f16": tf.random.stateless_normal([6], seed=[4, 4], dtype=tf.float16),
        "stateless_truncated": tf.random.stateless_truncated_normal([6], seed=[1, 2], stddev=3.0),
        "stateless_int32": tf.random.stateless_uniform([5], seed=[1, 2], minval=-4, maxval=9, dtype=tf.int32),
        "stateless_full_int64": tf.random.stateless_uniform([3], seed=[1, 2], minval=None, maxval=None,
                                                            dtype=tf.int64),
        "stateless_categorical": tf.random.stateless_categorical([[0.5, 1.0, -2.0], [0.0, 0.0, 3.0]], 9,
                                                                 seed=[6, 9]),
    }
    types = [op.type for op in tf.get_default_graph().get_operations()]
    assert types.count("StatelessRandomGetKeyCounter") == 7 and "StatelessRandomUniformV2" in types
    with tf.Session() as sess:
        first, second = sess.run(ops), sess.run(ops)
    for name, value in first.items():
        _assert_tf_values(name, value, _EXPECTED[name])
        _assert_same_bits(second[name], value)  # stateless: every run the same


def test_stateless_errors():
    with pytest.raises(ValueError, match="must be both None or not None"):
        tf.random.stateless_uniform([2], seed=[1, 2], maxval=5, minval=None, dtype=tf.int32)
    with pytest.raises(ValueError, match="unsupported value threefry"):
        tf.random.stateless_normal([2], seed=[1, 2], alg="threefry")
    seed = tf.placeholder(tf.int64)
    assert "seed must have shape [2], not [3]" in str(assert_run_error(tf.random.stateless_uniform([2], seed=seed),
                                                            {seed: [1, 2, 3]}))
    assert tf.random.stateless_truncated_normal(tf.placeholder(tf.int32, [3]), seed=[1, 2]).shape.ndims == 3


_LARGE = {  # name: (op, shape, dtype); seeds (17, position + 1) as in the fixture script
    "big_uniform_f32": (random_ops.RandomUniform, [1000, 1000], tf.float32),
    "big_normal_f32": (random_ops.RandomStandardNormal, [1000, 1000], tf.float32),
    "big_truncated_f32": (random_ops.TruncatedNormal, [1000, 1000], tf.float32),
    "big_uniform_f64": (random_ops.RandomUniform, [1_000_000], tf.float64),
    "big_normal_f64": (random_ops.RandomStandardNormal, [100_000], tf.float64),
    "big_truncated_f64": (random_ops.TruncatedNormal, [50_000], tf.float64),
    "big_truncated_f16": (random_ops.TruncatedNormal, [100_000], tf.float16),
}


def _check_large(name, op):
    with tf.Session() as sess:
        for run in (1, 2):
            value = sess.run(op)
            prefix = f"{name}_run{run}"
            flat = value.reshape(-1)
            np.testing.assert_array_equal(value.shape, _EXPECTED[prefix + "_shape"])
            _assert_tf_values(name, flat[_SAMPLED[_SAMPLED < flat.size]], _EXPECTED[prefix + "_sampled"])
            mean = float(_EXPECTED[prefix + "_mean"])
            if _float_normals(name, value.dtype):
                assert flat.astype(np.float64).mean() == pytest.approx(mean, rel=1e-5, abs=1e-6)
                continue
            assert flat.astype(np.float64).mean() == pytest.approx(mean, rel=1e-12)
            assert _digest(value) == _EXPECTED[prefix + "_sha256"]


@pytest.mark.parametrize("name", list(_LARGE))
def test_large_outputs_match_tensorflow(name):
    op_def, shape, dtype = _LARGE[name]
    seed2 = list(_LARGE).index(name) + 1
    _check_large(name, raw(op_def, shape=shape, dtype=dtype, seed=17, seed2=seed2))


def test_large_uniform_int_matches_tensorflow():
    _check_large("big_int32", raw(random_ops.RandomUniformInt, shape=[1_000_000], minval=-3, maxval=1000,
                                  seed=17, seed2=99))


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_multinomial_shards_rows_as_tensorflow(threads):
    # TF seeds each row shard of its thread pool by its first row: the samples depend on the
    # pool's size, and ours follow it.
    logits = (np.sin(np.arange(640, dtype=np.float64)).reshape(64, 10) * 3).astype(np.float32)
    op = tf.multinomial(logits, 100, seed=31)
    with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=threads)) as sess:
        first, second = sess.run(op), sess.run(op)
    assert [_digest(first), _digest(second)] == list(_EXPECTED[f"multinomial_t{threads}_sha256"])
    np.testing.assert_array_equal(first[:, 0], _EXPECTED[f"multinomial_t{threads}_column0"])


def test_large_shuffle_matches_tensorflow():
    op = tf.random_shuffle(np.arange(100_003), seed=24)
    with tf.Session() as sess:
        assert [_digest(sess.run(op)), _digest(sess.run(op))] == list(_EXPECTED["big_shuffle_sha256"])


def test_mnist_example_starts_from_tensorflows_weights():
    tf.set_random_seed(1)
    mnist.build_model(64, 100, "adagrad", 0.1)  # the 8x8 digits: 64 pixels
    weights = [v for v in tf.trainable_variables() if v.shape.ndims == 2]
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        assert [_digest(w) for w in sess.run(weights)] == list(_EXPECTED["mnist_weights_sha256"])


# -- the generator and the C library functions ------------------------------------------------------
def _philox_block(counter, key):
    """Philox4x32-10 of one 128-bit counter, in plain Python (the reference for the NumPy one)."""
    m = 0xFFFFFFFF
    c = [(counter >> (32 * i)) & m for i in range(4)]
    k0, k1 = key
    for _ in range(10):
        p0, p1 = 0xD2511F53 * c[0], 0xCD9E8D57 * c[2]
        c = [(p1 >> 32) ^ c[1] ^ k0, p1 & m, (p0 >> 32) ^ c[3] ^ k1, p0 & m]
        k0, k1 = (k0 + 0x9E3779B9) & m, (k1 + 0xBB67AE85) & m
    return c


def test_philox_known_answers():
    # Random123's known-answer vectors for philox4x32-10 (Salmon et al.): counter, key -> output.
    cases = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
             ((2**32 - 1,) * 4, (2**32 - 1,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
             ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
              (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for ctr, key, expected in cases:
        counter = sum(word << (32 * i) for i, word in enumerate(ctr))
        assert tuple(philox.philox_words(key, counter, 1)) == expected
        assert tuple(_philox_block(counter, key)) == expected


@pytest.mark.parametrize("counter", [0, 2**32 - 5, (7 << 64) + 2**32 - 3, (9 << 64) + 2**64 - 6,
                                     2**128 - 7, (5 << 96) + 2**96 - 2])
def test_philox_counter_carries(counter):
    # Consecutive blocks across the carries of the 128-bit counter, and blocks at offsets.
    key = (0x01234567, 0x89ABCDEF)
    expected = np.array([_philox_block((counter + i) % 2**128, key) for i in range(20)], np.uint32)
    np.testing.assert_array_equal(philox.philox_words(key, counter, 20).reshape(-1, 4), expected)
    offsets = np.array([0, 1, 5, 13, 19], np.uint64)
    words = philox.pairs_to_words(*philox.philox_pairs_at(key, counter, offsets)).reshape(-1, 4)
    np.testing.assert_array_equal(words, expected[offsets.astype(int)])


def test_generator_reserves_like_tensorflow():
    gen = philox.PhiloxGenerator(5, 2**40 + 3)
    assert gen.key == (5, 0)
    assert gen.reserve_outputs(3) == (2**40 + 3) << 64   # counter [0, 0, seed2 low, seed2 high]
    assert gen.reserve_words(9) == ((2**40 + 3) << 64) + 768
    assert gen.reserve(1) == ((2**40 + 3) << 64) + 771
    assert philox.PhiloxGenerator(-1, 0).key == (2**32 - 1, 2**32 - 1)  # int64 attrs read as uint64
    assert philox.PhiloxGenerator(0, 0).key != philox.PhiloxGenerator(0, 0).key  # (0, 0): random


def test_samplers_do_not_depend_on_the_split():
    # Outputs of later blocks (uniform, normal) or groups (truncated normal: 256 blocks per
    # group of 4) come out the same when drawn from their own counter: any split of the work
    # gives the numbers TF gives.
    key, counter, n = (11, 12), 3 << 64, 70_003
    for sample, per, dtype in ((random_distributions.uniform, 1, np.float32),
                               (random_distributions.normal, 1, np.float32),
                               (random_distributions.uniform, 1, np.float64),
                               (random_distributions.truncated_normal, 256, np.float32)):
        whole = sample(key, counter, n, dtype)
        blocks = 4 if np.dtype(dtype) == np.float32 else 2
        for start in (blocks, 40_000):  # a multiple of the outputs per block (or group)
            part = sample(key, counter + start // blocks * per, n - start, dtype)
            _assert_same_bits(part, whole[start:])


# -- draws that TF skips ----------------------------------------------------------------------------
def test_empty_and_trivial_draws_do_not_advance_the_stream():
    shape = tf.placeholder(tf.int32, [1])
    ints = tf.random_uniform(shape, maxval=1000, dtype=tf.int32, seed=3)
    count = tf.placeholder(tf.int32, [])
    classes = tf.multinomial([[0.0, 1.0, 2.0]], count, seed=4)
    rows = tf.placeholder(tf.int32, [None])
    shuffled = tf.random_shuffle(rows, seed=5)
    with tf.Session() as sess:
        fresh = sess.run([ints, classes, shuffled], {shape: [4], count: 6, rows: np.arange(9)})
    with tf.Session() as sess:
        empty = sess.run([ints, classes, shuffled], {shape: [0], count: 0, rows: [7]})
        assert empty[0].shape == (0,) and empty[1].shape == (1, 0) and list(empty[2]) == [7]
        after = sess.run([ints, classes, shuffled], {shape: [4], count: 6, rows: np.arange(9)})
    _assert_all_equal(after, fresh)
