"""Intra-op splitting (tensorweave/ops/intra_op.py): ChunkRunner runs every chunk exactly once
whether or not helpers show up, re-raises a chunk's error, and lets go of the kernel's arrays;
split MatMul / BatchMatMulV2 products equal NumPy's for odd sizes, transposes, adjoints,
broadcast batches and both split directions; the session's intra-op setting is honoured."""
import sys
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.kernels import buffer_forwarding, intra_op
from tensorweave.ops import nn as nn_ops
from tensorweave.ops.kernels.intra_op import ChunkRunner, MatMulSplitter, split_bounds
from tensorweave.runtime.thread_pool import ThreadPool
from tensorweave.testing.op_test import evaluate


@pytest.fixture(scope="module")
def pool():
    p = ThreadPool(2, "test-intra-op")
    yield p
    p.shutdown()


def test_split_bounds_cover_the_range():
    assert split_bounds(10, 3) == [0, 3, 6, 10]
    assert split_bounds(2, 4) == [0, 0, 1, 1, 2]


@pytest.mark.parametrize("helpers", [0, 1, 3])
def test_every_chunk_runs_once(pool, helpers):
    seen = []
    lock = threading.Lock()

    def chunk(i):
        with lock:
            seen.append(i)

    ChunkRunner(lambda: pool, helpers).run(17, chunk)
    assert sorted(seen) == list(range(17))


def test_busy_pool_means_the_caller_does_the_work():
    """Helpers queued behind blocked pool threads never run; the caller still finishes."""
    blocked = threading.Event()
    p = ThreadPool(1, "test-busy")
    p.schedule(blocked.wait)
    seen = []
    ChunkRunner(lambda: p, 1).run(5, seen.append)
    assert sorted(seen) == list(range(5))
    blocked.set()
    p.shutdown()


def test_chunk_errors_reach_the_caller(pool):
    def chunk(i):
        if i == 3:
            raise ValueError("chunk 3")

    with pytest.raises(ValueError, match="chunk 3"):
        ChunkRunner(lambda: pool, 1).run(6, chunk)


def test_late_helpers_do_not_keep_the_kernels_arrays():
    blocked = threading.Event()
    p = ThreadPool(1, "test-release")
    p.schedule(blocked.wait)  # the helper stays queued until the run is over
    array = np.ones(10)
    before = sys.getrefcount(array)
    ChunkRunner(lambda: p, 1).run(2, lambda i: array.sum())
    assert sys.getrefcount(array) == before
    blocked.set()
    p.shutdown()


SHAPES = [((7, 5), (5, 11)), ((31, 3), (3, 2)), ((1, 9), (9, 13)), ((13, 1), (1, 6)), ((4, 0), (0, 5)),
          ((3, 50), (50, 4)), ((5, 41), (41, 2))]  # the last two: long inner dimensions, split in k


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64])
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_splitter_matches_numpy(pool, sa, sb, dtype):
    rng = np.random.RandomState(1)
    a, b = rng.randn(*sa).astype(dtype), rng.randn(*sb).astype(dtype)
    for helpers in (1, 2):
        split = MatMulSplitter(ChunkRunner(lambda: pool, helpers), min_macs=0)
        assert split.wants_split(a, b) == (max(sa[0], sb[1]) >= helpers + 1)
        if split.wants_split(a, b):
            np.testing.assert_allclose(split(a, b), a @ b, rtol=1e-5, atol=1e-5)
            np.testing.assert_allclose(split(b.T, a.T), b.T @ a.T, rtol=1e-5, atol=1e-5)  # views


def test_splitter_batches_broadcast(pool):
    rng = np.random.RandomState(2)
    a, b = rng.randn(3, 1, 9, 4), rng.randn(5, 4, 7)
    split = MatMulSplitter(ChunkRunner(lambda: pool, 1), min_macs=0)
    np.testing.assert_allclose(split(a, b), np.matmul(a, b), rtol=1e-12)
    bt, at = b.swapaxes(-1, -2), a.swapaxes(-1, -2)[..., :3]  # (5, 7, 4) @ (3, 1, 4, 3)
    np.testing.assert_allclose(split(bt, at), np.matmul(bt, at), rtol=1e-12)


def test_splitter_declines_small_int_and_mixed_products(pool):
    split = MatMulSplitter(ChunkRunner(lambda: pool, 1))
    assert not split.wants_split(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32))
    eager = MatMulSplitter(ChunkRunner(lambda: pool, 1), min_macs=0)
    assert not eager.wants_split(np.ones((8, 8), np.int32), np.ones((8, 8), np.int32))
    assert not eager.wants_split(np.ones((8, 8), np.float32), np.ones((8, 8), np.float64))
    assert not MatMulSplitter(ChunkRunner(lambda: pool, 0), min_macs=0).wants_split(
        np.ones((8, 8)), np.ones((8, 8)))


@pytest.fixture
def always_split(monkeypatch):
    """Every product splits, over 3 threads, whatever this machine has."""
    monkeypatch.setattr(intra_op, "_SPLIT_MATMUL_MACS", 0)
    monkeypatch.setattr(intra_op, "available_cores", lambda: 3)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_matmul_kernel_splits_all_transposes(always_split, ta, tb):
    rng = np.random.RandomState(3)
    a, b = rng.randn(11, 7).astype(np.float32), rng.randn(7, 5).astype(np.float32)
    a_in, b_in = (a.T.copy() if ta else a), (b.T.copy() if tb else b)
    x, y = tf.placeholder(tf.float32), tf.placeholder(tf.float32)  # unknown shapes: checked path
    static = tf.matmul(tf.constant(a_in), tf.constant(b_in), transpose_a=ta, transpose_b=tb)
    dynamic = tf.matmul(x, y, transpose_a=ta, transpose_b=tb)
    got = evaluate([static, dynamic], {x: a_in, y: b_in})
    for value in got:
        np.testing.assert_allclose(value, a @ b, rtol=1e-5)


def test_batch_matmul_kernel_splits_with_adjoints(always_split):
    rng = np.random.RandomState(4)
    x = rng.randn(2, 3, 6, 4) + 1j * rng.randn(2, 3, 6, 4)
    y = rng.randn(3, 6, 5) + 1j * rng.randn(3, 6, 5)
    product = tf.matmul(tf.constant(x), tf.constant(y), adjoint_a=True)
    np.testing.assert_allclose(evaluate(product), np.matmul(np.conj(x).swapaxes(-1, -2), y), rtol=1e-12)
    with pytest.raises(tf.errors.InvalidArgumentError):
        bad = tf.placeholder(tf.float64)
        evaluate(tf.matmul(tf.constant(np.ones((2, 3, 4))), bad), {bad: np.ones((3, 4, 2))})


def test_intra_op_setting_of_one_thread_disables_splitting(monkeypatch):
    monkeypatch.setattr(intra_op, "available_cores", lambda: 4)
    seen = []
    original = intra_op.intra_op_settings

    def spy(ctx):
        settings = original(ctx)
        seen.append(settings)
        return settings

    monkeypatch.setattr(intra_op, "intra_op_settings", spy)
    a = tf.constant(np.ones((3, 3), np.float32))
    product = tf.matmul(a, a)
    for intra, threads in ((1, 1), (0, 4)):
        config = tf.ConfigProto(intra_op_parallelism_threads=intra, inter_op_parallelism_threads=3)
        with tf.Session(config=config) as sess:
            np.testing.assert_allclose(sess.run(product), np.full((3, 3), 3.0))
        assert seen[-1].threads == threads and seen[-1].helpers(uses_blas=True) == threads - 1


@pytest.fixture
def split_elementwise(monkeypatch):
    """Every element-wise output with at least 6 rows splits, over 3 threads (and every
    kernel that may write into an input looks for one, whatever the size)."""
    monkeypatch.setattr(intra_op, "_SPLIT_ELEMENTS", 0)
    monkeypatch.setattr(buffer_forwarding, "MIN_FORWARD_ELEMENTS", 0)
    monkeypatch.setattr(intra_op, "available_cores", lambda: 3)


BROADCASTS = [((7, 5), (5,)), ((7, 1), (1, 5)), ((1, 5), (9, 5)), ((8, 3, 2), (3, 1)), ((), (6, 2)),
              ((6, 4), (6, 4))]


@pytest.mark.parametrize("xs,ys", BROADCASTS)
def test_split_binary_ops_match_numpy(split_elementwise, xs, ys):
    rng = np.random.RandomState(5)
    x, y = np.asarray(rng.randn(*xs), np.float32), np.asarray(rng.rand(*ys) + 0.5, np.float32)
    xi, yi = np.asarray(rng.randint(-9, 9, xs), np.int32), np.asarray(rng.randint(-9, 9, ys), np.int32)
    px, py = tf.placeholder(tf.float32), tf.placeholder(tf.float32)  # unknown static shapes too
    cases = [(tf.add(x, y), np.add(x, y)), (tf.multiply(x, y), x * y), (tf.subtract(px, py), x - y),
             (tf.realdiv(x, y), x / y), (tf.maximum(x, y), np.maximum(x, y)), (tf.greater(x, y), x > y),
             (tf.add(xi, yi), xi + yi)]
    got = evaluate([t for t, _ in cases], {px: x, py: y})
    for value, (tensor, want) in zip(got, cases):
        assert value.dtype == want.dtype and value.shape == want.shape, tensor.name
        np.testing.assert_allclose(value, want, rtol=1e-6)


def test_split_binary_rejects_incompatible_shapes(split_elementwise):
    px, py = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    with pytest.raises(tf.errors.InvalidArgumentError, match="Incompatible shapes"):
        evaluate(px + py, {px: np.ones((8, 3)), py: np.ones((8, 4))})


def test_split_activations_and_bias_add_match_numpy(split_elementwise):
    rng = np.random.RandomState(6)
    x, g = rng.randn(9, 4, 3).astype(np.float32), rng.randn(9, 4, 3).astype(np.float32)
    b = rng.randn(3).astype(np.float32)
    x[0, 0, 0] = 0.0
    relu = tf.nn.relu(tf.constant(x))
    relu_grad = tf._apply_op(nn_ops.ReluGrad, gradients=tf.constant(g), features=tf.constant(x))
    bias = tf.nn.bias_add(tf.constant(x), tf.constant(b))
    got = evaluate([relu, relu_grad, bias])
    np.testing.assert_array_equal(got[0], np.maximum(x, 0))
    np.testing.assert_array_equal(got[1], g * (x > 0))
    np.testing.assert_array_equal(got[2], x + b)


@pytest.mark.parametrize("m,k,n", [(20, 8, 40), (1, 5, 3), (70, 4, 90), (5, 6, 2), (0, 3, 4), (3, 0, 5)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int32])
def test_oriented_dot_matches_numpy_in_both_orientations(m, k, n, dtype):
    rng = np.random.RandomState(7)
    a = (rng.randn(m, k) * 3).astype(dtype)
    b_stored = (rng.randn(n, k) * 3).astype(dtype)  # b = b_stored.T: the transposed layout
    for left in (a, np.ascontiguousarray(a.T).T):
        got = intra_op.oriented_dot(left, b_stored.T)
        assert got.flags.c_contiguous and got.dtype == dtype
        np.testing.assert_allclose(got, np.dot(a, b_stored.T), rtol=1e-5, atol=1e-4)


def test_splitter_uses_the_transposed_form_for_few_rows(pool):
    rng = np.random.RandomState(8)
    a, b_stored = rng.randn(6, 9).astype(np.float32), rng.randn(40, 9).astype(np.float32)
    split = MatMulSplitter(ChunkRunner(lambda: pool, 2), min_macs=0)
    np.testing.assert_allclose(split(a, b_stored.T), a @ b_stored.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(split(a.T.copy().T, b_stored.T), a @ b_stored.T, rtol=1e-5, atol=1e-5)
