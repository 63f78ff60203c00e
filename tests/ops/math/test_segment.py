"""Unique / UniqueWithCounts, sorted and unsorted segment reductions, and the IndexedSlices ->
Tensor conversion, against NumPy references."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.math import segment as segment_ops
from tensorweave.testing.op_test import check_op, evaluate


# ---------------------------------------------------------------------------------------------
# NumPy references
# ---------------------------------------------------------------------------------------------
def np_unique(x):
    y, idx, pos = [], [], {}
    for v in x:
        if v not in pos:
            pos[v] = len(y)
            y.append(v)
        idx.append(pos[v])
    return np.array(y, dtype=np.asarray(x).dtype), np.array(idx)


def np_segment(reduce, data, ids, rows, empty):
    data = np.asarray(data)
    out = np.full((rows,) + data.shape[1:], empty, dtype=data.dtype)
    for s in range(rows):
        members = data[np.asarray(ids) == s]
        if len(members):
            out[s] = reduce(members, axis=0)
    return out


# ---------------------------------------------------------------------------------------------
# Unique
# ---------------------------------------------------------------------------------------------
@pytest.mark.parametrize("values", [[3, 1, 3, 2, 1], [5], [], [7, 7, 7], list(range(6))])
def test_unique_matches_first_occurrence_order(values):
    x = tf.constant(np.array(values, dtype=np.int32))
    y, idx = segment_ops.unique(x)
    want_y, want_idx = np_unique(values)
    check_op(y, want_y.astype(np.int32))
    check_op(idx, want_idx.astype(np.int32))
    assert idx.shape.as_list() == [len(values)]
    assert y.shape.as_list() == [None]


@pytest.mark.parametrize("n", [200, 5000])
def test_unique_large_inputs_use_the_same_order(n):
    rng = np.random.RandomState(n)
    values = rng.randint(-50, 50, n).astype(np.int64)
    y, idx = segment_ops.unique(values, out_idx=tf.int64)
    got_y, got_idx = evaluate([y, idx])
    want_y, want_idx = np_unique(values.tolist())
    np.testing.assert_array_equal(got_y, want_y)
    np.testing.assert_array_equal(got_idx, want_idx)
    assert got_y.dtype == np.int64 and got_idx.dtype == np.int64
    np.testing.assert_array_equal(got_y[got_idx], values)


def test_unique_floats_strings_and_nan():
    y, idx = evaluate(segment_ops.unique(np.array([np.nan, 2.5, np.nan, 0.0, -0.0, 2.5], np.float32)))
    assert y.dtype == np.float32 and len(y) == 4          # each NaN distinct; 0.0 == -0.0
    assert np.isnan(y[0]) and np.isnan(y[2]) and y[1] == 2.5 and y[3] == 0.0
    np.testing.assert_array_equal(idx, [0, 1, 2, 3, 3, 1])
    y, idx = evaluate(segment_ops.unique([b"b", b"a", b"b"]))
    assert list(y) == [b"b", b"a"]
    np.testing.assert_array_equal(idx, [0, 1, 0])
    big = np.array([1.5, np.nan] * 100, np.float64)
    y, idx = evaluate(segment_ops.unique(big))
    assert y.shape == (101,) and y[0] == 1.5 and np.isnan(y[1:]).all()


def test_unique_with_counts():
    y, idx, count = segment_ops.unique_with_counts(tf.constant([4, 2, 4, 4, 9], tf.int64))
    check_op(y, np.array([4, 2, 9], np.int64))
    check_op(idx, np.array([0, 1, 0, 0, 2], np.int32))
    check_op(count, np.array([3, 1, 1], np.int32))
    assert count.shape.as_list() == [None]


def test_unique_rejects_non_vectors():
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        segment_ops.unique([[1, 2]])
    x = tf.placeholder(tf.int32)
    y, _ = segment_ops.unique(x)
    with pytest.raises(tf.errors.InvalidArgumentError, match="unique expects a 1D vector"):
        evaluate(y, {x: [[1, 2]]})
    with pytest.raises(TypeError):
        segment_ops.unique([1, 2], out_idx=tf.float32)


def test_unique_has_no_gradient():
    x = tf.placeholder(tf.float32, [3])
    y, _ = segment_ops.unique(x)
    assert tf.gradients(y, x) == [None]


# ---------------------------------------------------------------------------------------------
# Sorted segment reductions
# ---------------------------------------------------------------------------------------------
SEGMENT_CASES = [
    ("segment_sum", np.sum, 0),
    ("segment_mean", np.mean, 0),
    ("segment_max", np.max, 0),
    ("segment_min", np.min, 0),
    ("segment_prod", np.prod, 1),
]


@pytest.mark.parametrize("fn,reduce,empty", SEGMENT_CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_segment_reductions(fn, reduce, empty, dtype):
    rng = np.random.RandomState(0)
    data = rng.uniform(-2, 2, (7, 3, 2)).astype(dtype)
    ids = np.array([0, 0, 2, 2, 2, 5, 6], np.int32)   # segments 1, 3, 4 empty
    out = getattr(segment_ops, fn)(data, ids)
    assert out.shape.as_list() == [None, 3, 2]
    check_op(out, np_segment(reduce, data, ids, 7, empty), rtol=1e-5)


@pytest.mark.parametrize("fn,reduce,empty", SEGMENT_CASES)
def test_segment_reductions_integers_and_int64_ids(fn, reduce, empty):
    data = np.array([5, -7, 3, 8, 2], np.int32)
    ids = np.array([1, 1, 1, 3, 3], np.int64)
    want = np_segment(reduce, data.astype(np.float64), ids, 4, empty)
    if fn == "segment_mean":
        want = np.trunc(want)  # integer mean truncates toward zero, as in C++: -1/3 -> 0
    check_op(getattr(segment_ops, fn)(data, ids), want.astype(np.int32))


def test_segment_mean_integer_truncates_toward_zero():
    check_op(segment_ops.segment_mean(tf.constant([-1, -2, -4]), [0, 0, 0]), np.array([-2], np.int32))
    check_op(segment_ops.segment_mean(tf.constant([1, 2, 4]), [0, 0, 0]), np.array([2], np.int32))


def test_segment_sum_empty_and_complex():
    check_op(segment_ops.segment_sum(np.zeros([0, 3], np.float32), np.zeros([0], np.int32)),
             np.zeros([0, 3], np.float32))
    c = np.array([1 + 2j, 3 - 1j, 2j], np.complex64)
    check_op(segment_ops.segment_sum(c, [0, 0, 1]), np.array([4 + 1j, 2j], np.complex64))


@pytest.mark.parametrize("ids,message", [
    ([0, 2, 1], "segment ids are not increasing"),
    ([1, 0, 0], "segment ids are not increasing"),
    ([0, -1, -1], "segment ids must be >= 0"),
    ([-1, 0, 0], r"Segment id -1 out of range \[0, 1\), possibly because 'segment_ids' input is not sorted"),
    ([0, 0], "segment_ids should be the same size as dimension 0 of input"),
    ([[0, 0, 1]], "segment_ids should be a vector"),
])
@pytest.mark.parametrize("fn", ["segment_sum", "segment_max"])
def test_segment_runtime_errors(ids, message, fn):
    data = tf.placeholder(tf.float32)
    seg = tf.placeholder(tf.int32)
    out = getattr(segment_ops, fn)(data, seg)
    with pytest.raises(tf.errors.InvalidArgumentError, match=message):
        evaluate(out, {data: [1.0, 2.0, 3.0], seg: ids})


def test_segment_graph_time_errors():
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        segment_ops.segment_sum([1.0, 2.0], [[0, 1]])
    with pytest.raises(ValueError, match="Shape must be at least rank 1 but is rank 0"):
        segment_ops.segment_sum(1.0, [0])
    with pytest.raises(TypeError):
        segment_ops.segment_sum([1.0, 2.0], [0.0, 1.0])
    with pytest.raises(TypeError):
        segment_ops.segment_sum(tf.constant([b"a"]), [0])
    with pytest.raises(TypeError):
        segment_ops.segment_max(tf.constant([1j], tf.complex64), [0])
    assert segment_ops.segment_sum(tf.placeholder(tf.float32), [0]).shape.ndims is None


# ---------------------------------------------------------------------------------------------
# Unsorted segment reductions
# ---------------------------------------------------------------------------------------------
UNSORTED_CASES = [
    ("unsorted_segment_max", np.max, np.finfo(np.float32).min),
    ("unsorted_segment_min", np.min, np.finfo(np.float32).max),
    ("unsorted_segment_prod", np.prod, 1),
]


@pytest.mark.parametrize("fn,reduce,empty", UNSORTED_CASES)
def test_unsorted_segment_reductions(fn, reduce, empty):
    rng = np.random.RandomState(1)
    data = rng.uniform(-2, 2, (6, 2)).astype(np.float32)
    ids = np.array([3, 0, -1, 3, 0, 2], np.int32)         # -1 dropped, segment 1 empty
    out = getattr(segment_ops, fn)(data, ids, 4)
    assert out.shape.as_list() == [4, 2]
    check_op(out, np_segment(reduce, data, ids, 4, empty), rtol=1e-6)


def test_unsorted_segment_multi_dim_ids_and_integers():
    data = np.arange(12, dtype=np.int32).reshape(2, 3, 2)
    ids = np.array([[0, 2, 0], [2, 2, -1]], np.int64)
    out = segment_ops.unsorted_segment_max(data, ids, tf.constant(3, tf.int64))
    assert out.shape.as_list() == [3, 2]
    lowest = np.iinfo(np.int32).min
    check_op(out, np.array([[4, 5], [lowest, lowest], [8, 9]], np.int32))
    check_op(segment_ops.unsorted_segment_prod(data, ids, 3), np.array([[0, 5], [1, 1], [96, 189]], np.int32))
    check_op(segment_ops.unsorted_segment_max(np.zeros([3, 0], np.float32), [0, 1, 2], 4), np.zeros([4, 0]))
    check_op(segment_ops.unsorted_segment_min(np.float32([[1, 2], [3, 4]]), [-1, -1], 1),
             np.full([1, 2], np.finfo(np.float32).max, np.float32))


def test_unsorted_segment_errors():
    data = tf.placeholder(tf.float32)
    ids = tf.placeholder(tf.int32)
    num = tf.placeholder(tf.int32)
    out = segment_ops.unsorted_segment_min(data, ids, num)
    assert out.shape.ndims is None
    with pytest.raises(tf.errors.InvalidArgumentError, match=r"segment_ids\[1\] = 1 is out of range \[0, 1\)"):
        evaluate(out, {data: [1.0, 2.0], ids: [0, 1], num: 1})
    with pytest.raises(tf.errors.InvalidArgumentError, match="num_segments == -1 must not be negative"):
        evaluate(out, {data: [1.0, 2.0], ids: [0, 1], num: -1})
    with pytest.raises(tf.errors.InvalidArgumentError, match="does not start with segment_ids.shape"):
        evaluate(out, {data: [1.0, 2.0], ids: [[0], [1]], num: 3})
    with pytest.raises(ValueError, match="Dimensions must be equal, but are 5 and 4"):
        segment_ops.unsorted_segment_max(tf.zeros([5, 3]), tf.zeros([4], tf.int32), 7)
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        segment_ops.unsorted_segment_max(tf.zeros([5, 3]), tf.zeros([5], tf.int32), [7, 1])
    ph = tf.placeholder(tf.float32, [None, 3])
    assert segment_ops.unsorted_segment_prod(ph, tf.placeholder(tf.int32, [None]), 4).shape.as_list() == [4, 3]


# ---------------------------------------------------------------------------------------------
# IndexedSlices -> Tensor
# ---------------------------------------------------------------------------------------------
def test_indexed_slices_convert_to_dense_summing_duplicates():
    values = tf.constant([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    slices = tf.IndexedSlices(values, tf.constant([4, 1, 4]), tf.constant([6, 2]))
    dense = tf.convert_to_tensor(slices)
    assert dense.shape.as_list() == [6, 2]
    want = np.zeros([6, 2], np.float32)
    want[4] = [6.0, 8.0]
    want[1] = [3.0, 4.0]
    check_op(dense, want)
    # an op taking a Tensor accepts the IndexedSlices directly
    check_op(tf.identity(slices), want)


def test_indexed_slices_with_fed_dense_shape():
    shape = tf.placeholder(tf.int32, [2])
    slices = tf.IndexedSlices(tf.constant([[1.0, 1.0]]), tf.constant([2]), shape)
    dense = tf.convert_to_tensor(slices)
    assert dense.shape.as_list() == [None, 2]
    np.testing.assert_array_equal(evaluate(dense, {shape: [3, 2]}), [[0, 0], [0, 0], [1, 1]])


def test_indexed_slices_conversion_errors_and_fetch():
    values = tf.constant([[1.0]])
    with pytest.raises(ValueError, match="without dense_shape"):
        tf.convert_to_tensor(tf.IndexedSlices(values, tf.constant([0])))
    with pytest.raises(ValueError, match="requested dtype int32"):
        tf.convert_to_tensor(tf.IndexedSlices(values, tf.constant([0]), tf.constant([1, 1])), dtype=tf.int32)
    fetched = evaluate(tf.IndexedSlices(values, tf.constant([0]), tf.constant([1, 1])))
    assert isinstance(fetched, tf.IndexedSlicesValue)
    np.testing.assert_array_equal(fetched.indices, [0])
    np.testing.assert_array_equal(fetched.dense_shape, [1, 1])
