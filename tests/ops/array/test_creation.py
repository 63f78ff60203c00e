"""array/creation.py and array_impl.py: fill, zeros/ones(_like), range, linspace, one_hot and pad."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import tensor_util
from tensorweave.testing.op_test import assert_run_error, check_op

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


# -- fill ------------------------------------------------------------------------------------
def test_fill():
    y = tf.fill([2, 3], 1.5)
    assert y.op.type == "Fill"
    check_op(y, np.full((2, 3), 1.5, np.float32))
    check_op(tf.fill([0, 2], 7), np.zeros((0, 2), np.int32))
    check_op(tf.fill([2], "ab"), np.array([b"ab", b"ab"], dtype=object), exact_dtype=False)
    dims = tf.placeholder(tf.int32, [3])
    assert tf.fill(dims, 0.0).shape.as_list() == [None, None, None]
    assert tf.fill(tf.shape(tf.placeholder(tf.float32, [None, 4])), 0.0).shape.as_list() == [None, 4]
    check_op(tf.fill(dims, 2.0), np.full((1, 2, 3), 2.0, np.float32), {dims: [1, 2, 3]})
    np.testing.assert_array_equal(tensor_util.constant_value(tf.fill([2], 3)), [3, 3])


def test_fill_errors():
    with pytest.raises(ValueError, match="Shape must be rank 0 but is rank 1"):
        tf.fill([2, 2], [1, 2])
    with pytest.raises(ValueError, match="must be >= 0"):
        tf.fill([2, -1], 1.0)
    dims = tf.placeholder(tf.int32)
    assert_run_error(tf.fill(dims, 1.0), {dims: [2, -1]}, match="must be >= 0")
    assert_run_error(tf.fill(dims, 1.0), {dims: [[2]]}, match="dims must be a vector")


# -- zeros / ones ----------------------------------------------------------------------------
@pytest.mark.parametrize("fn, value", [(tf.zeros, 0), (tf.ones, 1)])
def test_zeros_ones_small_are_constants(fn, value):
    y = fn([2, 3])
    assert y.op.type == "Const" and y.op.name == fn.__name__ and y.dtype == tf.float32
    check_op(y, np.full((2, 3), value, np.float32))
    check_op(fn([2], tf.int64), np.full(2, value, np.int64))
    check_op(fn(3, tf.bool), np.full(3, bool(value)))
    check_op(fn((tf.Dimension(2), 2)), np.full((2, 2), value, np.float32))


@pytest.mark.parametrize("fn, value", [(tf.zeros, 0), (tf.ones, 1)])
def test_zeros_ones_large_or_dynamic_use_fill(fn, value):
    big = fn([40, 30], tf.int32)
    assert big.op.type == "Fill" and big.shape.as_list() == [40, 30]
    check_op(big, np.full((40, 30), value, np.int32))
    n = tf.placeholder(tf.int32, [])
    dyn = fn([n, 2])
    assert dyn.op.type == "Fill" and dyn.shape.as_list() == [None, 2]
    check_op(dyn, np.full((3, 2), value, np.float32), {n: 3})
    shape = tf.placeholder(tf.int32, [2])
    check_op(fn(shape), np.full((1, 4), value, np.float32), {shape: [1, 4]})


def test_zeros_string_and_ones_string_error():
    check_op(tf.zeros([2], tf.string), np.array([b"", b""], dtype=object), exact_dtype=False)
    with pytest.raises(TypeError):
        tf.ones([2], tf.string)


def test_zeros_like_ones_like():
    x = tf.constant(X)
    z, o = tf.zeros_like(x), tf.ones_like(x, dtype=tf.int32)
    assert z.op.type == "Const" and o.dtype == tf.int32
    check_op(z, np.zeros_like(X))
    check_op(o, np.ones(X.shape, np.int32))
    p = tf.placeholder(tf.float32, [None, 3])
    zl, ol = tf.zeros_like(p), tf.ones_like(p)
    assert zl.op.type == "ZerosLike" and ol.op.type == "OnesLike"
    assert zl.shape.as_list() == [None, 3] and ol.shape.as_list() == [None, 3]
    check_op(zl, np.zeros((2, 3), np.float32), {p: X[0, :2, :3]})
    check_op(ol, np.ones((2, 3), np.float32), {p: X[0, :2, :3]})
    cast = tf.ones_like(p, dtype=tf.int64)
    assert cast.dtype == tf.int64 and cast.shape.as_list() == [None, 3]
    check_op(cast, np.ones((1, 3), np.int64), {p: X[0, :1, :3]})
    check_op(tf.zeros_like(p, dtype=tf.bool), np.zeros((1, 3), bool), {p: X[0, :1, :3]})
    b = tf.placeholder(tf.bool)
    check_op(tf.ones_like(b), np.ones(2, bool), {b: [False, True]})


# -- range -----------------------------------------------------------------------------------
def test_range_forms_and_dtype_inference():
    r = tf.range(5)
    assert r.op.type == "Range" and r.op.name == "range" and r.dtype == tf.int32
    check_op(r, np.arange(5, dtype=np.int32))
    check_op(tf.range(1, 10, 2), np.arange(1, 10, 2, dtype=np.int32))
    check_op(tf.range(10, -3, -3), np.arange(10, -3, -3, dtype=np.int32))
    check_op(tf.range(3, 3), np.zeros(0, np.int32))
    f = tf.range(1, 4.5)
    assert f.dtype == tf.float32 and f.shape.as_list() == [4]
    check_op(f, np.arange(1, 4.5, dtype=np.float32))
    check_op(tf.range(0.0, 1.0, 0.25, dtype=tf.float64), np.arange(0, 1, 0.25))
    check_op(tf.range(tf.constant(2, tf.int64), 5), np.arange(2, 5, dtype=np.int64))


def test_range_float_values_match_tf_kernel():
    # TF computes start + i * delta in the output type (not by accumulation).
    r = tf.range(0.1, 30.0, 0.1)
    expected = np.float32(0.1) + np.arange(299, dtype=np.float32) * np.float32(0.1)
    assert r.shape.as_list() == [299]
    value = check_op(r, expected)
    np.testing.assert_array_equal(value, expected)


def test_range_dynamic():
    n = tf.placeholder(tf.int32, [])
    r = tf.range(n)
    assert r.shape.as_list() == [None]
    check_op(r, np.arange(4, dtype=np.int32), {n: 4})
    assert_run_error(r, {n: -3}, match="Requires start <= limit when delta > 0: 0/-3")
    assert_run_error(tf.range(0, 5, n), {n: 0}, match="Requires delta != 0")
    assert_run_error(tf.range(0, 5, n), {n: -1}, match="Requires start >= limit when delta < 0")
    v = tf.placeholder(tf.int32)
    assert_run_error(tf.range(v), {v: [1, 2]}, match="limit must be a scalar")


def test_range_graph_errors():
    with pytest.raises(ValueError, match="Requires start <= limit when delta > 0: 5/1"):
        tf.range(5, 1)
    with pytest.raises(ValueError, match="Requires delta != 0"):
        tf.range(1, 5, 0)
    with pytest.raises(TypeError):
        tf.range(1.5, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.range(tf.constant([True]))


# -- linspace --------------------------------------------------------------------------------
def test_linspace():
    y = tf.linspace(-1.3, 7.1, 13)
    assert y.op.type == "LinSpace" and y.shape.as_list() == [13] and tf.lin_space is tf.linspace
    start, stop = np.float32(-1.3), np.float32(7.1)
    expected = np.arange(13, dtype=np.float32) * ((stop - start) / np.float32(12)) + start
    expected[-1] = stop
    np.testing.assert_array_equal(check_op(y, expected), expected)
    check_op(tf.linspace(2.0, 5.0, 1), np.array([2.0], np.float32))
    d = tf.linspace(tf.constant(0.0, tf.float64), 1.0, 5)
    check_op(d, np.linspace(0, 1, 5))
    n = tf.placeholder(tf.int32, [])
    assert tf.linspace(0.0, 1.0, n).shape.as_list() == [None]
    assert_run_error(tf.linspace(0.0, 1.0, n), {n: 0}, match="Requires num > 0: 0")
    with pytest.raises(ValueError, match="Requires num > 0"):
        tf.linspace(0.0, 1.0, 0)
    with pytest.raises(TypeError):
        tf.linspace(0, 1, 3)  # int32 start: LinSpace takes floats only


# -- one_hot ---------------------------------------------------------------------------------
def _one_hot_ref(indices, depth, axis=-1, on=1.0, off=0.0, dtype=np.float32):
    indices = np.asarray(indices)
    out = np.where(indices[..., None] == np.arange(depth), on, off).astype(dtype)
    return out if axis == -1 else np.moveaxis(out, -1, axis)


@pytest.mark.parametrize("axis", [-1, 0, 1, 2])
def test_one_hot_axes_and_out_of_range_indices(axis):
    idx = np.array([[0, 2, -1], [3, 7, 1]])
    y = tf.one_hot(idx, 4, axis=axis)
    assert y.dtype == tf.float32 and y.shape.is_fully_defined()
    check_op(y, _one_hot_ref(idx, 4, axis))


def test_one_hot_values_and_dtypes():
    check_op(tf.one_hot([1, 0], 3, on_value=5, off_value=-1),
             _one_hot_ref([1, 0], 3, on=5, off=-1, dtype=np.int32))
    check_op(tf.one_hot([1], 2, on_value=True, off_value=False), np.array([[False, True]]))
    check_op(tf.one_hot([1], 2, on_value=3, dtype=tf.float64), _one_hot_ref([1], 2, on=3, dtype=np.float64))
    check_op(tf.one_hot(tf.constant([2], tf.int64), 3, off_value=0.5), _one_hot_ref([2], 3, off=0.5))
    with pytest.raises(TypeError, match="does not match"):
        tf.one_hot([1], 3, on_value=1, off_value=0.0)
    with pytest.raises(TypeError, match="does not match dtype parameter"):
        tf.one_hot([1], 3, on_value=1.0, dtype=tf.int32)
    with pytest.raises(TypeError):
        tf.one_hot([1.0], 3)


def test_one_hot_dynamic_and_errors():
    idx, depth = tf.placeholder(tf.int32, [None]), tf.placeholder(tf.int32, [])
    y = tf.one_hot(idx, depth)
    assert y.shape.as_list() == [None, None]
    check_op(y, _one_hot_ref([0, 3], 4), {idx: [0, 3], depth: 4})
    assert_run_error(y, {idx: [0], depth: -1}, match="depth must be non-negative, got: -1")
    with pytest.raises(ValueError, match="axis must be >= -1"):
        tf.one_hot([1], 3, axis=-2)
    with pytest.raises(ValueError, match="Expected axis"):
        tf.one_hot([1], 3, axis=3)


# -- sequence_mask ---------------------------------------------------------------------------
def test_sequence_mask():
    lengths = np.array([[1, 3], [0, 2]])
    y = tf.sequence_mask(lengths, 4)
    assert y.dtype == tf.bool and y.shape.as_list() == [2, 2, 4]
    check_op(y, np.arange(4) < lengths[..., None])
    n = tf.placeholder(tf.int32, [None])
    dyn = tf.sequence_mask(n, dtype=tf.float32)
    assert dyn.dtype == tf.float32 and dyn.shape.as_list() == [None, None]
    check_op(dyn, (np.arange(3) < np.array([2, 3, 0])[:, None]).astype(np.float32), {n: [2, 3, 0]})
    with pytest.raises(ValueError, match="maxlen must be scalar"):
        tf.sequence_mask([1, 2], [3])


# -- pad -------------------------------------------------------------------------------------
PADS = [[1, 0], [0, 2], [2, 1]]


def test_pad_constant():
    x = tf.constant(X)
    y = tf.pad(x, PADS)
    assert y.op.type == "Pad" and y.shape.as_list() == [3, 5, 7]
    check_op(y, np.pad(X, PADS))
    y2 = tf.pad(x, PADS, constant_values=-2.5)
    assert y2.op.type == "PadV2"
    check_op(y2, np.pad(X, PADS, constant_values=-2.5))
    check_op(tf.pad(x, PADS, mode="constant", constant_values=tf.constant(1.0)),
             np.pad(X, PADS, constant_values=1.0))


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC", "reflect"])
def test_pad_mirror(mode):
    y = tf.pad(tf.constant(X), PADS, mode)
    assert y.op.type == "MirrorPad" and y.op.get_attr("mode") == mode.upper().encode()
    check_op(y, np.pad(X, PADS, mode=mode.lower()))


def test_pad_partial_shapes_and_errors():
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.pad(p, [[1, 1], [2, 0]]).shape.as_list() == [None, 5]
    assert tf.pad(p, tf.placeholder(tf.int32, [2, 2])).shape.as_list() == [None, None]
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):  # TF's wording
        tf.pad(p, [[1, 1]])
    with pytest.raises(ValueError, match="Paddings must be non-negative"):
        tf.pad(p, [[-1, 1], [0, 0]])
    with pytest.raises(ValueError, match="Unknown padding mode"):
        tf.pad(p, [[1, 1], [0, 0]], "WRAP")
    u = tf.placeholder(tf.float32)
    assert_run_error(tf.pad(u, [[2, 2]], "REFLECT"), {u: np.zeros(2)}, match="must be less than the dimension size")
    assert_run_error(tf.pad(u, [[3, 2]], "SYMMETRIC"), {u: np.zeros(2)}, match="no greater than the dimension size")
    assert_run_error(tf.pad(u, [[1, 2]]), {u: np.zeros((2, 2))}, match="first dimension of paddings must be the rank")
    pads = tf.placeholder(tf.int32)
    assert_run_error(tf.pad(u, pads), {u: np.zeros(2), pads: [[-1, 2]]}, match="Paddings must be non-negative")
