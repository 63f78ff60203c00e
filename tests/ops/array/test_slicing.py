"""array/slicing.py and array_impl.py: slice, strided_slice and Tensor.__getitem__, gather, Where coordinates,
boolean_mask and reverse."""
import sys

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import tensor_util
from tensorweave.ops.array.slicing import _where_indices
from tensorweave.testing.op_test import assert_run_error, check_op, evaluate

X = np.arange(60, dtype=np.float32).reshape(3, 4, 5)


# -- slice -----------------------------------------------------------------------------------
def test_slice():
    x = tf.constant(X)
    y = tf.slice(x, [1, 0, 2], [2, -1, 3])
    assert y.op.type == "Slice" and y.shape.as_list() == [2, 4, 3]
    check_op(y, X[1:3, :, 2:5])
    check_op(tf.slice(x, [0, 0, 0], [0, 4, 5]), X[:0])
    check_op(tf.slice(tf.constant([b"a", b"b", b"c"]), [1], [1]), np.array([b"b"], object), exact_dtype=False)
    p = tf.placeholder(tf.float32, [None, 4, 5])
    assert tf.slice(p, [1, 1, 0], [-1, 2, -1]).shape.as_list() == [None, 2, 5]
    begin = tf.placeholder(tf.int32, [3])
    assert tf.slice(x, begin, [1, 2, -1]).shape.as_list() == [1, 2, None]
    check_op(tf.slice(x, begin, [1, 2, -1]), X[2:3, 1:3, 3:], {begin: [2, 1, 3]})
    check_op(tf.slice(x, tf.constant([0, 1, 1], tf.int64), [1, 1, 1]), X[:1, 1:2, 1:2])


def test_slice_errors():
    x = tf.constant(X)
    with pytest.raises(ValueError, match=r"Expected size\[0\] in \[0, 2\], but got 3"):
        tf.slice(x, [1, 0, 0], [3, 1, 1])
    with pytest.raises(ValueError, match=r"Expected begin\[1\] in \[0, 4\], but got 5"):
        tf.slice(x, [0, 5, 0], [1, -1, 1])
    with pytest.raises(ValueError, match="rank"):
        tf.slice(x, [0, 0], [1, 1])
    u = tf.placeholder(tf.float32)
    zeros = np.zeros((2, 2))
    assert_run_error(tf.slice(u, [0, 1], [3, 1]), {u: zeros}, match=r"Expected size\[0\] in \[0, 2\], but got 3")
    assert_run_error(tf.slice(u, [0, 3], [1, 1]), {u: zeros}, match=r"Expected begin\[1\] in \[0, 2\], but got 3")


# -- strided_slice ---------------------------------------------------------------------------
STRIDED_CASES = [
    # (begin, end, strides, masks, numpy index)
    ([1], [3], [1], {}, np.s_[1:3]),
    ([0, 1], [3, 4], [2, 2], {}, np.s_[0:3:2, 1:4:2]),
    ([-1, 0], [0, 0], [-1, 1], {"end_mask": 3}, np.s_[::-1, :]),
    ([2], [0], [1], {"begin_mask": 1, "shrink_axis_mask": 1}, np.s_[2]),  # shrink ignores begin_mask
    ([-1, 0, 1], [0, 0, 3], [1, 1, 1], {"shrink_axis_mask": 1, "new_axis_mask": 2}, np.s_[-1, None, 1:3]),
    ([0, 1], [0, 2], [1, 1], {"ellipsis_mask": 1}, np.s_[..., 1:2]),
    ([1, 0, 0], [2, 0, 0], [1, 1, 1], {"ellipsis_mask": 2, "new_axis_mask": 4}, np.s_[1:2, ..., None]),
    ([5, -10], [-10, 10], [-2, 3], {}, np.s_[5:-10:-2, -10:10:3]),
    ([0, 0, 0], [0, 0, 0], [1, 1, 1], {"new_axis_mask": 7}, np.s_[None, None, None]),
    ([1, 2, 3], [0, 0, 0], [1, 1, 1], {"shrink_axis_mask": 7}, np.s_[1, 2, 3]),
]


@pytest.mark.parametrize("begin, end, strides, masks, index", STRIDED_CASES)
def test_strided_slice_masks(begin, end, strides, masks, index):
    y = tf.strided_slice(tf.constant(X), begin, end, strides, **masks)
    assert y.op.type == "StridedSlice" and y.shape.is_fully_defined()
    check_op(y, X[index])
    p = tf.placeholder(tf.float32, [None, 4, None])
    yp = tf.strided_slice(p, begin, end, strides, **masks)
    check_op(yp, X[index], {p: X})


def test_strided_slice_default_strides_and_dynamic_spec():
    x = tf.constant(X)
    check_op(tf.strided_slice(x, [1, 1], [3, 3]), X[1:3, 1:3])
    b = tf.placeholder(tf.int32, [2])
    y = tf.strided_slice(x, b, [3, 4], [1, 1], shrink_axis_mask=1)
    assert y.shape.as_list() == [None, 5]
    check_op(y, X[2, 1:4], {b: [2, 1]})
    check_op(tf.strided_slice(x, b, [3, 4]), X[1:3, 0:4], {b: [1, 0]})
    assert tf.strided_slice(x, [0], [1], tf.placeholder(tf.int32, [1])).shape.ndims is None


def test_kernels_read_fed_values_of_constant_inputs():
    # Any tensor may be fed, a Const included: kernels must not bake in graph-time constants.
    x = tf.constant(X)
    begin = tf.constant([0, 1])
    y = tf.strided_slice(x, begin, [2, 3])
    np.testing.assert_array_equal(evaluate(y, {begin: [1, 2]}), X[1:2, 2:3])
    axis = tf.constant(0)
    np.testing.assert_array_equal(evaluate(tf.gather(x, [1], axis=axis), {axis: 2}), X[:, :, [1]])
    shape = tf.constant([12, 5])
    assert evaluate(tf.reshape(x, shape), {shape: [5, 12]}).shape == (5, 12)


def test_strided_slice_errors():
    x = tf.constant(X)
    with pytest.raises(ValueError, match="slice index 3 of dimension 0 out of bounds"):
        tf.strided_slice(x, [3], [4], [1], shrink_axis_mask=1)
    with pytest.raises(ValueError, match="Index out of range using input dim 3; input has only 3 dims"):
        tf.strided_slice(x, [0, 0, 0, 0], [1, 1, 1, 1], [1, 1, 1, 1], shrink_axis_mask=15)
    with pytest.raises(ValueError, match=r"strides\[0\] must be non-zero"):
        tf.strided_slice(x, [0], [1], [0])
    with pytest.raises(ValueError, match="only stride 1 allowed on non-range indexing"):
        tf.strided_slice(x, [0], [1], [-1], shrink_axis_mask=1)
    with pytest.raises(ValueError, match="Multiple ellipses"):
        tf.strided_slice(x, [0, 0], [0, 0], [1, 1], ellipsis_mask=3)
    u, i = tf.placeholder(tf.float32), tf.placeholder(tf.int32, [])
    assert_run_error(u[i], {u: X, i: 3}, match="slice index 3 of dimension 0 out of bounds")
    assert_run_error(u[:, i], {u: X, i: -5}, match="slice index -1 of dimension 1 out of bounds")
    assert_run_error(u[1, 2, 3, 4], {u: X}, match="Index out of range using input dim 3")
    s = tf.placeholder(tf.int32, [1])
    assert_run_error(tf.strided_slice(u, [0], [1], s), {u: X, s: [0]}, match=r"strides\[0\] must be non-zero")


# -- Python indexing -------------------------------------------------------------------------
GETITEM_CASES = [
    np.s_[1], np.s_[-1], np.s_[1:], np.s_[:-1], np.s_[::2], np.s_[::-1], np.s_[2:0:-1],
    np.s_[1, 2], np.s_[1, :, 3], np.s_[..., 2], np.s_[0, ...], np.s_[None], np.s_[:, None, 1],
    np.s_[..., None], np.s_[1:, ::-2, -3:], np.s_[-10:10], np.s_[1, 2, 3], np.s_[:, :, ::-3],
    np.s_[:sys.maxsize], np.s_[()], [1, 2],
]


@pytest.mark.parametrize("index", GETITEM_CASES, ids=[repr(c) for c in GETITEM_CASES])
def test_getitem_matches_numpy(index):
    y = tf.constant(X)[index]
    assert y.op.type == "StridedSlice" and y.op.name.startswith("strided_slice")
    expected = X[tuple(index)] if isinstance(index, list) else X[index]
    check_op(y, expected)


def test_getitem_with_tensor_indices():
    x = tf.constant(X)
    i = tf.placeholder(tf.int32, [])
    j = tf.placeholder(tf.int64, [])
    y = x[i, 1:, j]
    assert y.shape.as_list() == [None]  # as TF: begin is not constant, so 1: has unknown size
    check_op(y, X[2, 1:, 4], {i: 2, j: 4})
    z = x[i:, :j]
    assert z.shape.as_list() == [None, None, 5]
    check_op(z, X[1:, :3], {i: 1, j: 3})
    check_op(x[tf.constant(-1)], X[-1])
    check_op(x[np.int64(1), tf.Dimension(2)], X[1, 2])


def test_getitem_rejects_bad_indices():
    x = tf.constant(X)
    for bad in (1.5, "a", tf.constant([0, 1]), tf.constant(1.0)):
        with pytest.raises(TypeError, match="Only integers, slices"):
            x[bad]


def test_getitem_bool_mask_and_strings():
    x = tf.constant(X[0, 0])
    check_op(x[X[0, 0] > 2], X[0, 0][X[0, 0] > 2])
    s = tf.constant([b"ab", b"c"])
    assert evaluate(s[1]) == b"c"
    check_op(s[::-1], np.array([b"c", b"ab"], object), exact_dtype=False)


def test_shape_indexing_stays_static():
    x = tf.placeholder(tf.float32, [None, 4, 5])
    first = tf.shape(x)[0]
    assert first.shape.as_list() == [] and tensor_util.constant_value(first) is None
    known = tf.shape(tf.constant(X))[1]
    assert tensor_util.constant_value(known) == 4
    assert tensor_util.constant_value_as_shape(tf.shape(x)[1:]).as_list() == [4, 5]
    assert tensor_util.constant_value_as_shape(tf.shape(x)[::-1]).as_list() == [5, 4, None]
    check_op(tf.shape(x)[-1], 5, {x: X})
    u = tf.placeholder(tf.float32)
    assert u[0].shape.ndims is None


# -- gather ----------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_gather(axis):
    idx = np.array([[0, 2], [1, 1]])
    y = tf.gather(tf.constant(X), idx, axis=axis)
    assert y.op.type == "GatherV2"
    check_op(y, np.take(X, idx, axis=axis))


def test_gather_indices_types_and_shapes():
    x = tf.constant(X)
    check_op(tf.gather(x, tf.constant([2, 0], tf.int64)), X[[2, 0]])
    check_op(tf.gather(x, 1), X[1])
    check_op(tf.gather(x, np.zeros([0], np.int32), axis=1), X[:, :0])
    idx = tf.placeholder(tf.int32, [None])
    assert tf.gather(x, idx, axis=1).shape.as_list() == [3, None, 5]
    assert tf.gather(tf.placeholder(tf.float32), idx).shape.ndims is None
    assert tf.gather(x, idx, axis=tf.placeholder(tf.int32, [])).shape.as_list() == [None] * 3
    check_op(tf.gather(x, idx, axis=1, validate_indices=True), X[:, [3, 0]], {idx: [3, 0]})


def test_gather_batch_dims():
    idx = np.array([[0, 4, 1], [2, 2, 3], [1, 0, 0]])
    y = tf.gather(tf.constant(X), idx, axis=2, batch_dims=1)
    assert y.shape.as_list() == [3, 4, 3]
    check_op(y, np.stack([np.take(X[b], idx[b], axis=1) for b in range(3)]))


def test_gather_errors():
    x = tf.constant(X)
    with pytest.raises(TypeError):
        tf.gather(x, [0.5])
    with pytest.raises(ValueError, match="out of range"):
        tf.gather(x, [0], axis=3)
    idx = tf.placeholder(tf.int32)
    assert_run_error(tf.gather(x, idx), {idx: [0, 3]}, match=r"indices\[1\] = 3 is not in \[0, 3\)")
    assert_run_error(tf.gather(x, idx), {idx: [[0], [-1]]}, match=r"indices\[1,0\] = -1 is not in \[0, 3\)")


# -- Where (one argument) --------------------------------------------------------------------
def test_where_indices():
    cond = X[0] % 3 == 0
    y = _where_indices(cond)
    assert y.op.type == "Where" and y.op.name == "Where" and y.dtype == tf.int64
    assert y.shape.as_list() == [None, 2]
    check_op(y, np.argwhere(cond))
    check_op(_where_indices(tf.constant([0.0, 2.0, 0.0, -1.0])), np.array([[1], [3]], np.int64))
    u = tf.placeholder(tf.bool)
    assert _where_indices(u).shape.as_list() == [None, None]
    check_op(_where_indices(u), np.zeros((0, 3), np.int64), {u: np.zeros((2, 2, 2), bool)})
    with pytest.raises(TypeError):
        _where_indices(tf.constant([b"a"]))


# -- boolean_mask ----------------------------------------------------------------------------
def test_boolean_mask_1d_and_nd():
    x = tf.constant(X)
    m1 = np.array([True, False, True])
    y = tf.boolean_mask(x, m1)
    assert y.shape.as_list() == [None, 4, 5]
    check_op(y, X[m1])
    m2 = X[:, :, 0] % 2 == 0
    y2 = tf.boolean_mask(x, m2)
    assert y2.shape.as_list() == [None, 5]
    check_op(y2, X[m2])


def test_boolean_mask_axis_and_dynamic_shapes():
    x = tf.constant(X)
    m = np.array([True, False, False, True])
    check_op(tf.boolean_mask(x, m, axis=1), X[:, m])
    m5 = np.array([False, True, True, False, True])
    check_op(tf.boolean_mask(x, m5, axis=2), X[:, :, m5])
    p = tf.placeholder(tf.float32, [None, 4, None])
    mask = tf.placeholder(tf.bool, [None])
    y = tf.boolean_mask(p, mask)
    assert y.shape.as_list() == [None, 4, None]
    check_op(y, X[[True, False, True]], {p: X, mask: [True, False, True]})
    y1 = tf.boolean_mask(p, tf.placeholder_with_default(m, [4]), axis=1)
    assert y1.shape.as_list() == [None, None, None]
    check_op(y1, X[:, m], {p: X})


def test_boolean_mask_errors():
    x = tf.constant(X)
    with pytest.raises(ValueError, match="mask cannot be scalar"):
        tf.boolean_mask(x, True)
    with pytest.raises(ValueError, match="Number of mask dimensions must be specified"):
        tf.boolean_mask(x, tf.placeholder(tf.bool))
    with pytest.raises(ValueError):
        tf.boolean_mask(x, [True, False])


# -- reverse ---------------------------------------------------------------------------------
def test_reverse():
    x = tf.constant(X)
    y = tf.reverse(x, [0, -1])
    assert y.op.type == "ReverseV2" and tf.reverse_v2 is tf.reverse
    check_op(y, X[::-1, :, ::-1])
    check_op(tf.reverse(x, []), X)
    check_op(tf.reverse(x, tf.constant([1], tf.int64)), X[:, ::-1])
    with pytest.raises(ValueError, match="axis 0 specified more than once"):
        tf.reverse(x, [0, -3])
    with pytest.raises(ValueError, match="out of valid range"):
        tf.reverse(x, [3])
    u, axes = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
    assert_run_error(tf.reverse(u, axes), {u: X, axes: [1, 1]}, match="axis 1 specified more than once")
    assert_run_error(tf.reverse(u, axes), {u: X, axes: [4]}, match="out of valid range")
