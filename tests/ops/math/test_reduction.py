"""Reductions (Sum, Mean, Max, Min, Prod, All, Any), ArgMax/ArgMin, reduce_logsumexp,
count_nonzero, AddN, UnsortedSegmentSum and BroadcastGradientArgs."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_run_error
from tensorweave.ops import math as math_ops
from tensorweave.testing.op_test import check_op, evaluate

RNG = np.random.RandomState(1)


REDUCTIONS = [(tf.reduce_sum, np.sum, "Sum"), (tf.reduce_mean, np.mean, "Mean"),
              (tf.reduce_max, np.max, "Max"), (tf.reduce_min, np.min, "Min"),
              (tf.reduce_prod, np.prod, "Prod")]
AXES = [None, 0, 1, -1, [0, 2], [-1, 0], [], (1,)]


@pytest.mark.parametrize("fn,ref,op_type", REDUCTIONS, ids=[r[2] for r in REDUCTIONS])
def test_reductions_over_constant_axes(fn, ref, op_type):
    a = RNG.randn(2, 3, 4)
    for dtype in (np.float32, np.float64):
        for axis in AXES:
            for keep in (False, True):
                out = fn(a.astype(dtype), axis=axis, keepdims=keep)
                assert out.op.type == op_type and out.dtype == tf.as_dtype(dtype)
                np_axis = tuple(axis) if isinstance(axis, (list, tuple)) else axis
                want = ref(a, axis=np_axis, keepdims=keep).astype(dtype)
                assert out.shape.as_list() == list(want.shape)
                check_op(out, want, rtol=1e-5)


@pytest.mark.parametrize("fn,ref,op_type", REDUCTIONS, ids=[r[2] for r in REDUCTIONS])
def test_reductions_with_fed_axes_and_unknown_shapes(fn, ref, op_type):
    x = tf.placeholder(tf.float64, [None, 3])
    axis = tf.placeholder(tf.int32)
    out = fn(x, axis)
    assert out.shape.ndims is None
    kept = fn(x, axis, keep_dims=True)
    assert kept.shape.as_list() == [None, None]
    a = RNG.randn(4, 3)
    for ax in (0, 1, -2, [0, 1], []):
        np_ax = tuple(ax) if isinstance(ax, list) else ax
        check_op(out, ref(a, axis=np_ax), feed_dict={x: a, axis: ax})
        check_op(kept, ref(a, axis=np_ax, keepdims=True), feed_dict={x: a, axis: ax})
    assert "Invalid reduction dimension (2 for input with 2 dimension(s)" in str(assert_run_error(
        out, {x: a, axis: 2}))
    assert "Axes contains duplicate dimension: 1" in str(assert_run_error(out, {x: a, axis: [1, -1]}))
    unknown_rank = tf.placeholder(tf.float64)
    everything = fn(unknown_rank)
    assert everything.shape.as_list() == []
    check_op(everything, ref(a), feed_dict={unknown_rank: a})
    check_op(fn(unknown_rank, 1), ref(a, axis=1), feed_dict={unknown_rank: a})


def test_axis_and_keepdims_spellings():
    a = np.arange(6.0).reshape(2, 3)
    check_op(tf.reduce_sum(a, reduction_indices=[1], keep_dims=True), a.sum(1, keepdims=True))
    check_op(tf.reduce_sum(a, axis=tf.constant([0], tf.int64)), a.sum(0))
    check_op(tf.reduce_mean(a, 1, True), a.mean(1, keepdims=True))
    out = tf.reduce_sum(a, 1, name="total")
    assert out.op.name == "total" and out.op.get_attr("keep_dims") is False
    assert out.op.get_attr("Tidx") == tf.int32
    with pytest.raises(ValueError, match="Cannot specify both 'axis' and 'reduction_indices'"):
        tf.reduce_sum(a, axis=0, reduction_indices=0)
    with pytest.raises(ValueError, match="Cannot specify both 'keepdims' and 'keep_dims'"):
        tf.reduce_sum(a, keepdims=True, keep_dims=True)


def test_graph_time_axis_errors():
    with pytest.raises(ValueError, match="Invalid reduction dimension 2 for input with 2 dimensions"):
        tf.reduce_sum(tf.ones([2, 3]), 2)
    with pytest.raises(ValueError, match="Invalid reduction dimension 0 for input with 0 dimensions"):
        tf.reduce_max(tf.constant(3.0), 0)
    check_op(tf.reduce_sum(tf.constant(3.0), []), np.float32(3))
    dup = tf.reduce_sum(tf.ones([2, 3]), [1, 1])  # as in TF, duplicates fail only when run
    assert "duplicate dimension: 1" in str(assert_run_error(dup))


def test_reduction_dtype_rules():
    for fn, value in ((tf.reduce_sum, [True]), (tf.reduce_max, tf.constant([1 + 1j])),
                      (tf.reduce_sum, tf.constant(["a"])), (tf.reduce_all, tf.constant([1]))):
        with pytest.raises(TypeError):
            fn(value)
    check_op(tf.reduce_sum(tf.constant([100, 100], tf.int8)), np.int8(-56))  # wraps, as TF
    check_op(tf.reduce_prod(tf.constant([100, 100], tf.int8)), np.int8(16))
    check_op(tf.reduce_sum(tf.constant([[1 + 1j, 2j]]), 1), np.array([1 + 3j]))
    check_op(tf.reduce_sum(tf.constant([1, 2], tf.uint8)), np.uint8(3))


def test_integer_mean_is_an_integer_rounded_toward_zero():
    check_op(tf.reduce_mean(tf.constant([-1, -2])), np.int32(-1))
    check_op(tf.reduce_mean(tf.constant([1, 2])), np.int32(1))
    check_op(tf.reduce_mean(tf.constant([[1, 2], [3, 5]]), 1), np.array([1, 4], np.int32))
    check_op(tf.reduce_mean(tf.constant([[2 ** 30] * 4, [-3, 0, 0, 0]]), 1),
             np.array([2 ** 30, 0], np.int32))
    check_op(tf.reduce_mean(tf.constant([100, 100, -1], tf.int8)), np.int8(66))
    check_op(tf.reduce_mean(tf.constant([-100, -100, -1], tf.int8)), np.int8(-67))
    check_op(tf.reduce_mean(tf.constant([255, 255], tf.uint8)), np.uint8(255))
    check_op(tf.reduce_mean(tf.zeros([0], tf.int32)), np.int32(0))


def test_empty_and_special_reductions():
    empty = tf.zeros([0, 2])
    check_op(tf.reduce_max(empty, 0), np.array([-np.inf, -np.inf], np.float32))
    check_op(tf.reduce_min(empty, 0), np.array([np.inf, np.inf], np.float32))
    check_op(tf.reduce_max(tf.zeros([0], tf.int32)), np.int32(-2 ** 31))
    check_op(tf.reduce_min(tf.zeros([0], tf.int32)), np.int32(2 ** 31 - 1))
    check_op(tf.reduce_prod(tf.zeros([0], tf.int32)), np.int32(1))
    check_op(tf.reduce_sum(empty, 0), np.zeros(2, np.float32))
    assert np.isnan(evaluate(tf.reduce_mean(tf.zeros([0]))))
    assert np.isnan(evaluate(tf.reduce_max([1.0, np.nan, 3.0])))
    # TF sums float16 means in float16: the sum overflows.
    check_op(tf.reduce_mean(tf.constant([60000.0, 60000.0], tf.float16)), np.float16(np.inf))


def test_reduce_all_any():
    a = np.array([[True, False], [True, True]])
    for fn, ref, op_type in ((tf.reduce_all, np.all, "All"), (tf.reduce_any, np.any, "Any")):
        for axis in (None, 0, 1, [0, 1]):
            out = fn(a, axis, keepdims=axis == 1)
            assert out.op.type == op_type and out.dtype == tf.bool
            np_axis = tuple(axis) if isinstance(axis, list) else axis
            check_op(out, ref(a, axis=np_axis, keepdims=axis == 1))
    check_op(tf.reduce_all(tf.zeros([0], tf.bool)), np.bool_(True))
    check_op(tf.reduce_any(tf.zeros([0], tf.bool)), np.bool_(False))


# -- argmax / argmin -------------------------------------------------------------------------------
def test_argmax_argmin():
    a = np.array([[1, 3, 3], [4, 2, 0]], np.float32)
    out = tf.argmax(a)
    assert (out.op.type, out.op.name, out.dtype) == ("ArgMax", "ArgMax", tf.int64)
    assert tf.make_ndarray(out.op.inputs[1].op.get_attr("value")) == 0  # TF1's default axis
    check_op(out, np.array([1, 0, 0], np.int64))
    check_op(tf.argmax(a, 1), np.array([1, 0], np.int64))  # first of tied maxima
    check_op(tf.argmin(a, axis=-1), np.array([0, 2], np.int64))
    check_op(tf.argmax(a, dimension=1, output_type=tf.int32), np.array([1, 0], np.int32))
    check_op(tf.argmin(tf.constant([True, False])), np.int64(1))
    check_op(tf.arg_max(a, 0), np.array([1, 0, 0], np.int64))
    check_op(tf.arg_min(a, 1, output_type=tf.int32), np.array([0, 2], np.int32))
    assert tf.argmax(tf.placeholder(tf.float32, [None, 5, 7]), 1).shape.as_list() == [None, 7]
    assert tf.argmax(tf.placeholder(tf.float32, [4, 5]), tf.placeholder(tf.int32)).shape.as_list() == [None]
    with pytest.raises(ValueError, match=r"must be in the range \[-2, 2\)"):
        tf.argmax(a, 2)
    with pytest.raises(ValueError, match="Cannot specify both 'axis' and 'dimension'"):
        tf.argmax(a, 0, dimension=0)


def test_argmax_runtime_errors():
    x = tf.placeholder(tf.float32)
    axis = tf.placeholder(tf.int32)
    out = tf.argmax(x, axis)
    check_op(out, np.array([1, 0], np.int64), feed_dict={x: [[1, 3], [4, 2]], axis: 1})
    assert "Expected dimension in the range [-1, 1), but got 3" in str(assert_run_error(out, {x: [1.0], axis: 3}))
    assert "dim must be a scalar" in str(assert_run_error(out, {x: [1.0], axis: [0]}))
    assert "Reduction axis 0 is empty in shape [0]" in str(assert_run_error(out, {x: np.zeros(0), axis: 0}))


# -- composites ----------------------------------------------------------------------------------
def test_reduce_logsumexp():
    a = np.array([[1.0, 2.0], [-np.inf, -np.inf], [np.inf, 1.0]], np.float32)
    out = tf.reduce_logsumexp(a, 1)
    assert out.op.name == "ReduceLogSumExp" and out.shape.as_list() == [3]
    check_op(out, np.array([np.log(np.exp(1) + np.exp(2)), -np.inf, np.inf], np.float32))
    big = np.array([[1000.0, 1000.0]])
    check_op(tf.reduce_logsumexp(big, keepdims=True), np.array([[1000 + np.log(2)]]))
    check_op(tf.reduce_logsumexp(big), np.float64(1000 + np.log(2)))
    x = tf.placeholder(tf.float64, [None, 2])
    check_op(tf.reduce_logsumexp(x, 0), np.array([1000.0, 1000.0]), feed_dict={x: big})


def test_count_nonzero():
    a = np.array([[1.0, 0.0], [3.0, 0.0]])
    out = tf.count_nonzero(a, 1)
    assert out.dtype == tf.int64 and out.shape.as_list() == [2]
    check_op(out, np.array([1, 1], np.int64))
    check_op(tf.count_nonzero(a, keepdims=True, dtype=tf.int32), np.array([[2]], np.int32))
    check_op(tf.count_nonzero(tf.constant(["", "a", "bc"])), np.int64(2))
    check_op(tf.count_nonzero(input=[True, False, True]), np.int64(2))


# -- add_n ---------------------------------------------------------------------------------------
def test_add_n():
    a, b, c = (RNG.randn(2, 3).astype(np.float32) for _ in range(3))
    out = tf.add_n([a, b, c])
    assert (out.op.type, out.op.name, out.op.get_attr("N")) == ("AddN", "AddN", 3)
    check_op(out, a + b + c, rtol=1e-6)
    check_op(tf.add_n([1, 2]), np.int32(3))
    check_op(tf.add_n([tf.constant([1.0]), [2]]), np.array([3.0], np.float32))
    single = tf.constant([1.0])
    assert tf.add_n([single]) is single
    named = tf.add_n([single], name="only")
    assert named.op.name == "only"
    check_op(named, np.array([1.0], np.float32))
    with pytest.raises(ValueError):
        tf.add_n([tf.ones([2]), tf.ones([3])])
    with pytest.raises(ValueError):
        tf.add_n([tf.ones([2]), tf.ones([1])])  # no broadcasting in AddN
    with pytest.raises(ValueError, match="at least one"):
        tf.add_n([])
    with pytest.raises(TypeError):
        tf.add_n([tf.ones([2]), tf.ones([2], tf.int32)])


def test_add_n_runtime_shape_check():
    x, y = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    out = tf.add_n([x, y, x])
    check_op(out, np.array([3, 6], np.float32), feed_dict={x: [1, 2], y: [1, 2]})
    assert "Input 0: [2] != input 1: [1]" in str(assert_run_error(out, {x: [1.0, 2.0], y: [1.0]}))


# -- segment sums and broadcast gradient args ---------------------------------------------------
def test_unsorted_segment_sum():
    data = np.arange(12.0).reshape(4, 3)
    ids = np.array([0, 2, 0, -1])
    out = tf.unsorted_segment_sum(data, ids, 3)
    assert out.op.type == "UnsortedSegmentSum" and out.shape.as_list() == [3, 3]
    want = np.zeros((3, 3))
    want[0] = data[0] + data[2]
    want[2] = data[1]
    check_op(out, want)  # negative ids are dropped, as in TF
    n = tf.placeholder(tf.int32)
    dyn = tf.unsorted_segment_sum(tf.constant(data), tf.constant(ids), n)
    assert dyn.shape.as_list() == [None, 3]
    assert "segment_ids[1] = 2 is out of range [0, 2)" in str(assert_run_error(dyn, {n: 2}))
    with pytest.raises(ValueError):
        tf.unsorted_segment_sum(data, [0, 1], 2)


def test_broadcast_gradient_args():
    r0, r1 = math_ops.broadcast_gradient_args([2, 1, 3], [4, 3])
    got = evaluate([r0, r1])
    assert got[0].tolist() == [1] and got[1].tolist() == [0]
    assert got[0].dtype == np.int32
    s0 = tf.placeholder(tf.int32)
    r0, _ = math_ops.broadcast_gradient_args(s0, [3])
    assert "Incompatible shapes: [2] vs. [3]" in str(assert_run_error(r0, {s0: [2]}))
