"""einsum, tensordot, sort/argsort, meshgrid and reverse_sequence against NumPy, with static
shapes checked against real outputs and bad input rejected as TF does."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import check_op

RNG = np.random.RandomState(0)
A, B = RNG.randn(2, 3), RNG.randn(3, 4)
C, D = RNG.randn(5, 2, 3), RNG.randn(5, 3, 4)

EINSUM = [("ij,jk->ik", [A, B]), ("ij->ji", [A]), ("ij", [A]), ("ij->", [A]), ("ij,jk", [A, B]),
          ("...ij,...jk->...ik", [C, D]), ("bij,bjk->bik", [C, D]), ("ij,kl->ik", [A, A]),
          ("ii->i", [RNG.randn(3, 3)]), ("ii", [RNG.randn(3, 3)]), ("i,i->", [A[0], A[0]]),
          ("i,j->ij", [A[0], B[0]]), ("bij,jk,bkl->bil", [C, B, RNG.randn(5, 4, 2)]), ("ij,ij->i", [A, A]),
          ("...ij,jk->...ik", [C, B]), ("ijk->kji", [C])]


@pytest.mark.parametrize("equation,values", EINSUM, ids=[e for e, _ in EINSUM])
def test_einsum_matches_numpy(equation, values):
    expected = np.einsum(equation, *values)
    check_op(tf.einsum(equation, *[tf.constant(v) for v in values]), expected, rtol=1e-10)
    phs = [tf.placeholder(tf.float64, [None] * v.ndim) for v in values]
    check_op(tf.einsum(equation, *phs), expected, feed_dict=dict(zip(phs, values)), rtol=1e-10)


def test_einsum_errors():
    a, b = tf.ones([2, 3]), tf.ones([3, 4])
    with pytest.raises(ValueError, match='Got 1 inputs for equation "ij,jk->ik", expecting 2'):
        tf.einsum("ij,jk->ik", a)
    with pytest.raises(ValueError, match="label x not present"):
        tf.einsum("ij,jk->ix", a, b)
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.einsum("ijk,jk->i", a, b)
    assert tf.linalg.einsum is tf.einsum and tf.linalg.tensordot is tf.tensordot


@pytest.mark.parametrize("a,b,axes", [(A, B, 1), (A, B, [[1], [0]]), (A, B, 0),
                                      (C, RNG.randn(2, 3, 4), [[1, 2], [0, 1]]),
                                      (C, RNG.randn(2, 3, 5), [[2, 0], [1, 2]]), (A, A, 2)])
def test_tensordot_matches_numpy(a, b, axes):
    expected = np.tensordot(a, b, axes)
    t = tf.tensordot(tf.constant(a), tf.constant(b), axes)
    assert t.shape.as_list() == list(expected.shape)
    check_op(t, expected, rtol=1e-10)
    phs = [tf.placeholder(tf.float64, [None] * v.ndim) for v in (a, b)]
    check_op(tf.tensordot(*phs, axes), expected, feed_dict=dict(zip(phs, (a, b))), rtol=1e-10)


def test_tensordot_errors():
    a, b = tf.ones([2, 3]), tf.ones([3, 4])
    with pytest.raises(ValueError, match="`axes` must not be larger than the number of dimensions"):
        tf.tensordot(a, b, 3)
    with pytest.raises(ValueError, match="`axes` must be at least 0. Received: -1."):
        tf.tensordot(a, b, -1)
    with pytest.raises(ValueError, match="Different number of contraction axes `a` and `b`, 1 != 2."):
        tf.tensordot(a, b, [[1], [0, 1]])
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.tensordot(a, b, [[0], [0]])


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.float64])
@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_sort_and_argsort(dtype, axis):
    x = np.array([[3, 1, 2, 1], [0, 5, -2, 5], [7, 7, 1, -3]], dtype=dtype)
    check_op(tf.sort(x, axis=axis), np.sort(x, axis=axis))
    check_op(tf.sort(x, axis=axis, direction="DESCENDING"), -np.sort(-x, axis=axis))
    check_op(tf.argsort(x, axis=axis), np.argsort(x, axis=axis, kind="stable").astype(np.int32))
    check_op(tf.argsort(x, axis=axis, direction="DESCENDING"),
             np.argsort(-x, axis=axis, kind="stable").astype(np.int32))


def test_sort_extreme_ints_and_errors():
    x = np.array([np.iinfo(np.int32).min, 0, np.iinfo(np.int32).max, -1], np.int32)
    check_op(tf.sort(x), np.sort(x))
    with pytest.raises(ValueError, match="Argument `direction` should be one of ASCENDING, DESCENDING. "
                                         "Received: direction=UP"):
        tf.sort([3, 1], direction="UP")
    with pytest.raises(ValueError):
        tf.sort([3, 1], axis=1)


@pytest.mark.parametrize("indexing", ["xy", "ij"])
def test_meshgrid(indexing):
    x, y, z = np.array([1, 2]), np.array([3, 4, 5]), np.array([0.5, 1.5, 2.5, 3.5])
    for args in ([x, y], [x.astype(np.float32), y.astype(np.float32), z.astype(np.float32)]):
        outs = tf.meshgrid(*args, indexing=indexing)
        for t, e in zip(outs, np.meshgrid(*args, indexing=indexing)):
            check_op(t, e)
    px = tf.placeholder(tf.int64, [None])
    outs = tf.meshgrid(px, y, indexing=indexing)
    for t, e in zip(outs, np.meshgrid(x, y, indexing=indexing)):
        check_op(t, e, feed_dict={px: x})
    with pytest.raises(ValueError, match="Argument `indexing` parameter must be either 'xy' or 'ij', got 'ab'"):
        tf.meshgrid(x, y, indexing="ab")


def _reverse_sequence_reference(x, lengths, seq_axis, batch_axis):
    out = np.array(x)
    for b, n in enumerate(lengths):
        index = [slice(None)] * x.ndim
        index[batch_axis] = b
        index[seq_axis] = slice(0, n)
        rev = list(index)
        rev[seq_axis] = slice(n - 1, None, -1) if n > 0 else slice(0, 0)
        out[tuple(index)] = x[tuple(rev)]
    return out


@pytest.mark.parametrize("seq_axis,batch_axis", [(1, 0), (0, 1), (2, 0), (0, 2)])
def test_reverse_sequence(seq_axis, batch_axis):
    x = np.arange(3 * 4 * 3, dtype=np.float32).reshape(3, 4, 3)
    lengths = [0, 3, x.shape[seq_axis]][:x.shape[batch_axis]]
    lengths = (lengths + [1] * 4)[:x.shape[batch_axis]]
    expected = _reverse_sequence_reference(x, lengths, seq_axis, batch_axis)
    check_op(tf.reverse_sequence(x, lengths, seq_axis=seq_axis, batch_axis=batch_axis), expected)
    px = tf.placeholder(tf.float32, None)
    pl = tf.placeholder(tf.int64, [None])
    t = tf.reverse_sequence(px, pl, seq_dim=seq_axis, batch_dim=batch_axis)
    check_op(t, expected, feed_dict={px: x, pl: lengths})


def test_reverse_sequence_errors():
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 3 and 2"):
        tf.reverse_sequence(tf.ones([2, 3]), [1, 2], seq_axis=1, batch_axis=1)
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 2 and 3"):
        tf.reverse_sequence(tf.ones([2, 3]), [1, 2, 3], seq_axis=1, batch_axis=0)
    with pytest.raises(ValueError, match="seq_dim must be < input rank: 2 vs. 2"):
        tf.reverse_sequence(tf.ones([2, 3]), [1, 2], seq_axis=2, batch_axis=0)
    x, lengths = tf.placeholder(tf.float32, [2, 3]), tf.placeholder(tf.int64, [2])
    r = tf.reverse_sequence(x, lengths, seq_axis=1, batch_axis=0)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"seq_lens\(1\) > input.dims\(1\)"):
            sess.run(r, {x: np.ones([2, 3]), lengths: [1, 4]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"seq_lens\(0\) < 0"):
            sess.run(r, {x: np.ones([2, 3]), lengths: [-1, 2]})


def test_namespaces():
    assert tf.dtypes.float32 is tf.float32 and tf.dtypes.as_dtype("int64") is tf.int64
    assert tf.dtypes.DType is tf.DType
    assert tf.debugging.assert_equal is tf.assert_equal and tf.debugging.check_numerics is tf.check_numerics
