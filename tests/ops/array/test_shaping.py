"""array/shaping.py, transposition.py and joining.py: identity, shape queries, reshape,
transpose, expand_dims, squeeze, tile, broadcast_to, concat, split, stack, unstack and list
autopacking."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import tensor_util
from tensorweave.ops import array as array_ops
from tensorweave.ops.array import array_impl, creation as fill_ops, joining as concat_ops
from tensorweave.ops.array import shaping, slicing as slicing_ops, transposition
from tensorweave.testing.op_test import assert_run_error, check_op, evaluate

X = np.arange(24, dtype=np.float32).reshape(2, 3, 4)


# -- module layout ---------------------------------------------------------------------------
def test_array_ops_reexports_whole_family():
    for module in (shaping, transposition, concat_ops, fill_ops, slicing_ops, array_impl):
        for name in module.__all__:
            assert name in array_ops.__all__
            assert getattr(array_ops, name) is getattr(module, name)
            assert getattr(tf, name) is getattr(module, name)
    assert "where" not in array_ops.__all__
    assert array_ops._where_indices is slicing_ops._where_indices
    assert tf.newaxis is None


# -- identity / stop_gradient ----------------------------------------------------------------
def test_identity_and_stop_gradient():
    x = tf.placeholder(tf.float32, [None, 4])
    for fn, op_type in ((tf.identity, "Identity"), (tf.stop_gradient, "StopGradient")):
        y = fn(x)
        assert y.op.type == op_type and y.shape.as_list() == [None, 4]
        check_op(y, X[0], {x: X[0]})
    c = tf.constant([1, 2])
    np.testing.assert_array_equal(tensor_util.constant_value(tf.stop_gradient(tf.identity(c))), [1, 2])


# -- shape, shape_n, size, rank --------------------------------------------------------------
def test_shape_size_rank_are_constants_when_static():
    x = tf.constant(X)
    s, n, r = tf.shape(x), tf.size(x), tf.rank(x)
    assert [s.op.type, n.op.type, r.op.type] == ["Const"] * 3
    assert s.op.name == "Shape" and n.op.name == "Size" and r.op.name == "Rank"
    check_op(s, [2, 3, 4])
    check_op(tf.shape(x, out_type=tf.int64), np.array([2, 3, 4], np.int64))
    check_op(n, 24)
    check_op(r, 3)


def test_shape_size_rank_ops_on_unknown_shapes():
    x = tf.placeholder(tf.float32, [None, 3, None])
    u = tf.placeholder(tf.float32)
    s, s64, n, r = tf.shape(x), tf.shape(u, out_type=tf.int64), tf.size(x, out_type=tf.int64), tf.rank(u)
    assert [t.op.type for t in (s, s64, n, r)] == ["Shape", "Shape", "Size", "Rank"]
    assert s.shape.as_list() == [3] and s64.shape.ndims == 1 and s64.shape[0].value is None
    assert s.dtype == tf.int32 and s64.dtype == tf.int64 and n.dtype == tf.int64 and r.dtype == tf.int32
    check_op(s, [2, 3, 4], {x: X})
    check_op(s64, np.array([2, 3, 4], np.int64), {u: X})
    check_op(n, np.int64(24), {x: X})
    check_op(r, 3, {u: X})
    check_op(tf.rank(u), 0, {u: 5.0})


def test_shape_n():
    a, b = tf.placeholder(tf.float32, [None, 2]), tf.placeholder(tf.float32)
    sa, sb = tf.shape_n([a, b], out_type=tf.int64)
    assert sa.op.type == "ShapeN" and sa.shape.as_list() == [2] and sb.shape.ndims == 1
    va, vb = evaluate([sa, sb], {a: np.zeros((5, 2)), b: np.zeros((1, 2, 3))})
    np.testing.assert_array_equal(va, [5, 2])
    np.testing.assert_array_equal(vb, [1, 2, 3])
    assert va.dtype == np.int64


def test_shape_constant_value_rules():
    x = tf.placeholder(tf.float32, [2, 5])
    g = tf.get_default_graph()
    shape_op = g.create_op("Shape", [x], attrs={"out_type": tf.int32}).outputs[0]
    np.testing.assert_array_equal(tensor_util.constant_value(shape_op), [2, 5])
    assert tensor_util.constant_value(g.create_op("Size", [x]).outputs[0]) == 10
    assert tensor_util.constant_value(g.create_op("Rank", [x]).outputs[0]) == 2
    partial = tf.placeholder(tf.float32, [None, 5])
    shape_partial = g.create_op("Shape", [partial]).outputs[0]
    assert tensor_util.constant_value(shape_partial) is None
    assert tensor_util.constant_value_as_shape(shape_partial).as_list() == [None, 5]


# -- reshape ---------------------------------------------------------------------------------
@pytest.mark.parametrize("shape", [[6, 4], [-1, 4], [2, -1, 2], [24], [-1], [4, 3, 2]])
def test_reshape_values_and_static_shape(shape):
    y = tf.reshape(tf.constant(X), shape)
    assert y.shape.is_fully_defined()
    check_op(y, X.reshape(shape))


def test_reshape_scalar_and_empty():
    check_op(tf.reshape(tf.constant([7.0]), []), np.float32(7.0))
    check_op(tf.reshape(tf.zeros([0, 3]), [3, 0]), np.zeros((3, 0), np.float32))


def test_reshape_partial_shapes():
    x = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.reshape(x, [-1, 12]).shape.as_list() == [None, 12]
    assert tf.reshape(x, [tf.shape(x)[0], -1]).shape.as_list() == [None, None]
    # stack of a partially known shape: the known entries survive
    y = tf.reshape(x, tf.stack([tf.shape(x)[0], tf.shape(x)[1], 4]))
    assert y.shape.as_list() == [None, 3, 4]
    assert tf.reshape(tf.placeholder(tf.float32), tf.shape(x)).shape.as_list() == [None, 3, 4]
    z = tf.reshape(tf.placeholder(tf.float32), tf.concat([tf.shape(x)[1:], [-1]], 0))
    assert z.shape.as_list() == [3, 4, None]
    assert tf.reshape(x, tf.placeholder(tf.int32, [2])).shape.as_list() == [None, None]
    check_op(y, X, {x: X})


def test_reshape_graph_errors():
    x = tf.constant(X)
    with pytest.raises(ValueError, match="Cannot reshape a tensor with 24 elements to shape"):
        tf.reshape(x, [5, 5])
    with pytest.raises(ValueError, match="evenly divisible by 5"):
        tf.reshape(x, [-1, 5])
    with pytest.raises(ValueError, match="Invalid value in tensor used for shape: -2"):
        tf.reshape(x, [-2, 12])
    with pytest.raises(TypeError):
        tf.reshape(x, [2.5, 4])


def test_reshape_run_errors():
    x = tf.placeholder(tf.float32)
    assert_run_error(tf.reshape(x, [5]), {x: X}, match="tensor with 24 values, but the requested shape has 5")
    assert_run_error(tf.reshape(x, [-1, 5]), {x: X}, match="requires a multiple of 5")
    assert_run_error(tf.reshape(x, [-1, -1]), {x: X}, match="Only one input size may be -1, not both 0 and 1")
    shape = tf.placeholder(tf.int32, [None])
    assert_run_error(tf.reshape(x, shape), {x: X, shape: [7]}, match="has 7")
    check_op(tf.reshape(x, shape), X.reshape(4, 6), {x: X, shape: [4, 6]})


# -- transpose -------------------------------------------------------------------------------
def test_transpose_values_and_shapes():
    x = tf.constant(X)
    check_op(tf.transpose(x), X.T)
    check_op(tf.transpose(x, [1, 0, 2]), X.transpose(1, 0, 2))
    check_op(tf.transpose(x, [-1, 0, 1]), X.transpose(2, 0, 1))
    assert tf.transpose(x).op.type == "Transpose" and tf.transpose(x).op.name.startswith("transpose")
    p = tf.placeholder(tf.float32, [None, 3])
    assert tf.transpose(p).shape.as_list() == [3, None]
    u = tf.placeholder(tf.float32)
    assert tf.transpose(u, [1, 0, 2]).shape.as_list() == [None] * 3
    check_op(tf.transpose(u), X.T, {u: X})  # unknown rank: perm built at run time
    check_op(tf.transpose(u), np.float32(3), {u: np.float32(3)})
    perm = tf.placeholder(tf.int32, [3])
    assert tf.transpose(x, perm).shape.as_list() == [None, None, None]
    check_op(tf.transpose(x, perm), X.transpose(2, 1, 0), {perm: [2, 1, 0]})


def test_transpose_conjugate():
    c = (X[0] + 1j * X[0]).astype(np.complex64)
    y = tf.transpose(tf.constant(c), conjugate=True)
    assert y.op.type == "ConjugateTranspose"
    check_op(y, c.T.conj())
    assert tf.transpose(tf.constant(X), conjugate=True).op.type == "Transpose"


def test_transpose_errors():
    x = tf.constant(X)
    with pytest.raises(ValueError, match="Dimension must be 3 but is 2"):
        tf.transpose(x, [1, 0])
    with pytest.raises(ValueError, match="out of range"):
        tf.transpose(x, [0, 1, 3])
    perm = tf.placeholder(tf.int32, [None])
    assert_run_error(tf.transpose(x, perm), {perm: [0, 0, 1]}, match="2 is missing from")
    assert_run_error(tf.transpose(x, perm), {perm: [0, 1]}, match="transpose expects a vector of size 3")


# -- expand_dims / squeeze -------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4])
def test_expand_dims(axis):
    y = tf.expand_dims(tf.constant(X), axis)
    check_op(y, np.expand_dims(X, axis))
    assert y.shape.is_fully_defined()


def test_expand_dims_dim_alias_and_errors():
    x = tf.constant(X)
    check_op(tf.expand_dims(x, dim=1), X[:, None])
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.expand_dims(x, 0, dim=0)
    with pytest.raises(ValueError, match="Must specify an axis"):
        tf.expand_dims(x)
    with pytest.raises(ValueError, match="not in the interval"):
        tf.expand_dims(x, 4)
    u, axis = tf.placeholder(tf.float32), tf.placeholder(tf.int32, [])
    assert tf.expand_dims(u, 0).shape.ndims is None
    assert_run_error(tf.expand_dims(u, axis), {u: X, axis: 5}, match="Tried to expand dim index 5")


def test_squeeze():
    x = tf.constant(X.reshape(2, 1, 3, 1, 4))
    check_op(tf.squeeze(x), X.reshape(2, 3, 4))
    check_op(tf.squeeze(x, [1]), X.reshape(2, 3, 1, 4))
    check_op(tf.squeeze(x, axis=-2), X.reshape(2, 1, 3, 4))
    check_op(tf.squeeze(x, squeeze_dims=[1, 3]), X.reshape(2, 3, 4))
    assert tf.squeeze(tf.placeholder(tf.float32, [None, 1, 3])).shape.ndims is None
    assert tf.squeeze(tf.placeholder(tf.float32, [None, 1, 3]), [1]).shape.as_list() == [None, 3]
    with pytest.raises(ValueError, match=r"Can not squeeze dim\[0\], expected a dimension of 1, got 2"):
        tf.squeeze(x, [0])
    with pytest.raises(ValueError, match="Cannot specify both"):
        tf.squeeze(x, axis=[1], squeeze_dims=[1])
    u = tf.placeholder(tf.float32, [None, 1])
    assert_run_error(tf.squeeze(u, [0]), {u: np.zeros((2, 1))}, match=r"Can not squeeze dim\[0\]")


# -- tile / broadcast_to ---------------------------------------------------------------------
def test_tile():
    x = tf.constant(X)
    check_op(tf.tile(x, [2, 1, 3]), np.tile(X, [2, 1, 3]))
    check_op(tf.tile(x, [1, 0, 1]), np.zeros((2, 0, 4), np.float32))
    p = tf.placeholder(tf.float32, [None, 3, 4])
    assert tf.tile(p, [2, 2, 1]).shape.as_list() == [None, 6, 4]
    assert tf.tile(p, tf.placeholder(tf.int32, [3])).shape.as_list() == [None, None, None]
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.tile(x, [1, 2])
    u, m = tf.placeholder(tf.float32), tf.placeholder(tf.int32)
    assert_run_error(tf.tile(u, m), {u: X, m: [1, 2]}, match="vector of length 3 but got length 2")
    assert_run_error(tf.tile(u, m), {u: X, m: [1, -1, 1]}, match=r"Expected multiples\[1\] >= 0")


def test_broadcast_to():
    x = tf.constant(X[:, :1])
    y = tf.broadcast_to(x, [3, 2, 5, 4])
    assert y.op.type == "BroadcastTo"
    value = check_op(y, np.broadcast_to(X[:, :1], (3, 2, 5, 4)))
    assert value.flags.writeable
    assert tf.broadcast_to(tf.placeholder(tf.float32, [None, 1]), [4, 3]).shape.as_list() == [4, 3]
    with pytest.raises(ValueError, match="Dimensions must be equal"):
        tf.broadcast_to(x, [3, 2, 5, 3])
    u = tf.placeholder(tf.float32)
    assert_run_error(tf.broadcast_to(u, [4, 3]), {u: np.zeros((2, 3))},
                     match=r"Incompatible shapes: \[2,3\] vs. \[4,3\]")


# -- concat ----------------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_concat(axis):
    parts = [X, X * 2, X[:1, :1, :1] if False else X + 1]
    y = tf.concat([tf.constant(p) for p in parts], axis)
    assert y.op.type == "ConcatV2"
    check_op(y, np.concatenate(parts, axis))


def test_concat_partial_shapes_and_single_value():
    a = tf.placeholder(tf.float32, [None, 3])
    b = tf.placeholder(tf.float32, [2, None])
    assert tf.concat([a, b], 0).shape.as_list() == [None, 3]
    assert tf.concat([a, b], 1).shape.as_list() == [2, None]
    assert tf.concat([a, tf.placeholder(tf.float32)], 0).shape.as_list() == [None, 3]
    assert tf.concat([a, b], tf.placeholder(tf.int32, [])).shape.as_list() == [None, None]
    one = tf.concat([a], 0)
    assert one.op.type == "Identity" and one.op.name.endswith("/concat")
    check_op(tf.concat([a, b], 0), np.concatenate([X[0, :, :3], X[1, :2, :3]]),
             {a: X[0, :, :3], b: X[1, :2, :3]})


def test_concat_errors():
    x = tf.constant(X)
    with pytest.raises(ValueError, match="Dimension 1 in both shapes must be equal, but are 3 and 2"):
        tf.concat([x, tf.zeros([2, 2, 4])], 0)
    with pytest.raises(ValueError, match="Shape must be rank 3 but is rank 2"):
        tf.concat([x, tf.zeros([2, 2])], 0)
    with pytest.raises(ValueError, match="range"):
        tf.concat([x, x], 3)
    with pytest.raises((TypeError, ValueError)):  # mixed dtypes
        tf.concat([x, tf.constant([1])], 0)
    u = tf.placeholder(tf.float32)
    assert_run_error(tf.concat([u, x], 0), {u: np.zeros((2, 3))}, match="Ranks of all input tensors should match")
    assert_run_error(tf.concat([u, x], 0), {u: np.zeros((2, 2, 4))}, match="Dimension 1 in both shapes must be equal")
    assert_run_error(tf.concat([u, u], 0), {u: 1.0}, match="Can't concatenate scalars")


def test_concat_constant_value():
    y = tf.concat([tf.constant([1, 2]), tf.constant([3])], 0)
    np.testing.assert_array_equal(tensor_util.constant_value(y), [1, 2, 3])


# -- split -----------------------------------------------------------------------------------
def test_split_even():
    x = tf.constant(X)
    parts = tf.split(x, 2, axis=2)
    assert isinstance(parts, list) and len(parts) == 2 and parts[0].op.type == "Split"
    for got, want in zip(parts, np.split(X, 2, axis=2)):
        check_op(got, want)
    parts = tf.split(x, 3, axis=-2)
    check_op(parts[2], X[:, 2:3])
    assert tf.split(x, tf.constant(2))[0].op.type == "Split"


def test_split_sizes():
    x = tf.constant(X)
    parts = tf.split(x, [1, -1, 2], axis=2)
    assert parts[0].op.type == "SplitV" and parts[0].op.get_attr("Tlen") == tf.int32
    assert [p.shape.as_list() for p in parts] == [[2, 3, 1], [2, 3, 1], [2, 3, 2]]
    for got, want in zip(parts, np.split(X, [1, 2], axis=2)):
        check_op(got, want)
    p = tf.placeholder(tf.float32, [None, 6])
    assert [t.shape.as_list() for t in tf.split(p, [2, 4], 1)] == [[None, 2], [None, 4]]
    sizes = tf.placeholder(tf.int32, [None])
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.split(x, sizes)
    parts = tf.split(x, sizes, axis=1, num=2)
    assert parts[0].shape.as_list() == [2, None, 4]
    got = evaluate(parts, {sizes: [2, 1]})
    np.testing.assert_array_equal(got[1], X[:, 2:])


def test_split_errors():
    x = tf.constant(X)
    with pytest.raises(ValueError, match="evenly divisible by 3 but is 4"):
        tf.split(x, 3, axis=2)
    with pytest.raises(ValueError, match="Determined shape must either match"):
        tf.split(x, [1, 1], axis=2)
    with pytest.raises(ValueError, match="Only one dimensions can have a value of -1"):
        tf.split(x, [-1, -1], axis=2)
    u = tf.placeholder(tf.float32)
    assert_run_error(tf.split(u, 2)[0], {u: np.zeros(3)}, match="evenly divide the split dimension")
    assert_run_error(tf.split(u, [1, 1])[0], {u: np.zeros(3)}, match="Determined shape must either match")
    assert_run_error(tf.split(u, [-1, 5])[0], {u: np.zeros(3)}, match="Got: 5")


# -- stack / unstack -------------------------------------------------------------------------
@pytest.mark.parametrize("axis", [0, 1, 3, -1, -4])
def test_stack(axis):
    a, b = tf.placeholder(tf.float32, [2, 3, 4]), tf.constant(X + 1)
    y = tf.stack([a, b], axis=axis)
    assert y.op.type == "Pack" and y.shape.is_fully_defined()
    check_op(y, np.stack([X, X + 1], axis), {a: X})


def test_stack_constants_and_autopacking():
    c = tf.stack([1, 2, 3])
    assert c.op.type == "Const" and c.dtype == tf.int32
    n = tf.placeholder(tf.int32, [])
    packed = tf.convert_to_tensor([n, 3, [4][0]])
    assert packed.op.type == "Pack" and packed.dtype == tf.int32 and packed.shape.as_list() == [3]
    check_op(packed, [7, 3, 4], {n: 7})
    nested = tf.convert_to_tensor([[n, 1], [2, 3]])
    check_op(nested, [[5, 1], [2, 3]], {n: 5})
    with pytest.raises(TypeError, match="Cannot convert a list containing a tensor of dtype"):
        tf.convert_to_tensor([n, 1.5], dtype=tf.float32)
    plain = tf.convert_to_tensor([1.0, 2.0])  # no tensors: still a Const
    assert plain.op.type == "Const" and plain.dtype == tf.float32
    np.testing.assert_array_equal(tensor_util.constant_value(tf.stack([tf.constant(1), 2])), [1, 2])


def test_stack_errors():
    with pytest.raises(ValueError, match="Shapes must be equal rank"):
        tf.stack([tf.constant(X), tf.zeros([3])])
    with pytest.raises(ValueError, match="not in"):
        tf.stack([tf.constant(X)], axis=4)
    a, b = tf.placeholder(tf.float32), tf.placeholder(tf.float32)
    assert_run_error(tf.stack([a, b]), {a: np.zeros(2), b: np.zeros(3)}, match="Shapes of all inputs must match")


@pytest.mark.parametrize("axis", [0, 1, 2, -1])
def test_unstack(axis):
    parts = tf.unstack(tf.constant(X), axis=axis)
    assert len(parts) == X.shape[axis] and parts[0].op.type == "Unpack"
    for i, t in enumerate(parts):
        check_op(t, np.take(X, i, axis=axis))


def test_unstack_strings_and_errors():
    s = tf.constant([b"a", b"bc"])
    assert evaluate(tf.unstack(s)) == [b"a", b"bc"]
    with pytest.raises(ValueError, match="Cannot infer num"):
        tf.unstack(tf.placeholder(tf.float32))
    with pytest.raises(ValueError, match="not in"):
        tf.unstack(tf.constant(X), axis=3)
    u = tf.placeholder(tf.float32)
    assert_run_error(tf.unstack(u, num=3)[0], {u: np.zeros(2)}, match="Input shape axis 0 must equal 3")


def test_symbolic_tensors_are_not_iterable_as_in_tf1_graph_mode():
    """`a, b = t` or `for row in t` on a symbolic tensor raises, as TF does in graph mode
    (rows come from tf.unstack or indexing)."""
    for t in (tf.constant(X), tf.placeholder(tf.float32, [None, 2])):
        with pytest.raises(TypeError, match="only iterable when eager"):
            iter(t)
    with pytest.raises(TypeError):
        first, second = tf.constant(X)
    check_op(tf.constant(X)[1], X[1])


# -- invert_permutation, unique re-export ----------------------------------------------------
def test_invert_permutation():
    y = tf.invert_permutation([2, 0, 3, 1])
    assert y.op.type == "InvertPermutation" and y.shape.as_list() == [4]
    check_op(y, np.array([1, 3, 0, 2], np.int32))
    np.testing.assert_array_equal(tensor_util.constant_value(y), [1, 3, 0, 2])  # shapes see through it
    check_op(tf.invert_permutation(np.array([1, 0], np.int64)), np.array([1, 0], np.int64))
    with pytest.raises(ValueError, match="Shape must be rank 1 but is rank 2"):
        tf.invert_permutation([[0]])
    with pytest.raises(TypeError):
        tf.invert_permutation(tf.constant([0.0]))
    p = tf.placeholder(tf.int32)
    assert_run_error(tf.invert_permutation(p), {p: [0, 0, 1]}, match="0 is duplicated in the input.")
    assert_run_error(tf.invert_permutation(p), {p: [0, 3, 1]}, match="3 is not between 0 and 3")
    assert_run_error(tf.invert_permutation(p), {p: [[0]]}, match="invert_permutation expects a 1D vector.")


def test_unique_is_reexported_from_segment_ops():
    from tensorweave.ops.math import segment as segment_ops
    assert array_ops.unique is segment_ops.unique and tf.unique is segment_ops.unique
    y, idx = array_ops.unique(tf.constant([3, 1, 3]))
    np.testing.assert_array_equal(evaluate(y), [3, 1])
    np.testing.assert_array_equal(evaluate(idx), [0, 1, 0])


def test_shape_of_a_scalar_is_an_empty_int_vector():
    for out_type in (tf.int32, tf.int64):
        s = tf.shape(tf.constant(2.0), out_type=out_type)
        assert s.op.type == "Const" and s.dtype == out_type and s.shape.as_list() == [0]


# -- gradients (numeric checks: tests/gradient_cases/array.py) -------------------------------
_NOT_DIFFERENTIABLE = ["StopGradient", "Shape", "ShapeN", "Size", "Rank", "InvertPermutation", "Where",
                       "ZerosLike", "OnesLike", "Range", "LinSpace", "OneHot", "RandomUniform",
                       "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt", "Multinomial",
                       "RandomShuffle", "Const", "Placeholder"]
_DIFFERENTIABLE = ["Identity", "Reshape", "Transpose", "ConjugateTranspose", "ExpandDims", "Squeeze",
                   "Tile", "BroadcastTo", "ConcatV2", "Split", "SplitV", "Pack", "Unpack", "Slice",
                   "StridedSlice", "StridedSliceGrad", "GatherV2", "ReverseV2", "Fill", "Pad", "PadV2",
                   "MirrorPad", "MirrorPadGrad", "PlaceholderWithDefault"]


def test_array_family_gradient_registrations():
    from tensorweave.framework.op_def import NOT_DIFFERENTIABLE, get_op_def
    for name in _NOT_DIFFERENTIABLE:
        assert get_op_def(name).gradient_fn is NOT_DIFFERENTIABLE, name
    for name in _DIFFERENTIABLE:
        assert callable(get_op_def(name).gradient_fn), name
    for module in (array_ops, concat_ops, fill_ops, slicing_ops):
        for value in vars(module).values():
            if type(value).__name__ == "OpDef":
                assert value.name in _NOT_DIFFERENTIABLE + _DIFFERENTIABLE, value.name


def test_not_differentiable_ops_give_none():
    x = tf.placeholder(tf.float32, [2, 3])
    assert tf.gradients(tf.cast(tf.shape(tf.identity(x)), tf.float32), x) == [None]
    assert tf.gradients(tf.zeros_like(x) + tf.ones_like(x), x) == [None]
    assert tf.gradients(tf.stop_gradient(x), x) == [None]
    y = tf.reduce_sum(tf.stop_gradient(x) * x)
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    np.testing.assert_allclose(evaluate(tf.gradients(y, x)[0], {x: xv}), xv)


def test_gather_gradient_is_indexed_slices():
    p = tf.placeholder(tf.float32, [4, 2])
    g = tf.gradients(tf.gather(p, [[3, 1], [3, 0]]), p)[0]
    assert isinstance(g, tf.IndexedSlices)
    assert g.values.shape.as_list() == [4, 2] and g.indices.shape.as_list() == [4]
    assert g.dense_shape.dtype == tf.int32
    pv = np.zeros((4, 2), np.float32)
    value = evaluate(g, {p: pv})
    np.testing.assert_array_equal(value.indices, [3, 1, 3, 0])
    np.testing.assert_array_equal(value.dense_shape, [4, 2])
    np.testing.assert_array_equal(value.values, np.ones((4, 2)))
    dense = evaluate(tf.convert_to_tensor(g), {p: pv})
    np.testing.assert_array_equal(dense, [[1, 1], [1, 1], [0, 0], [2, 2]])
    u = tf.placeholder(tf.float32)  # unknown rank: shapes read at run time
    gu = tf.gradients(tf.gather(u, [1, 1]), u)[0]
    np.testing.assert_array_equal(evaluate(tf.convert_to_tensor(gu), {u: np.zeros((3, 2, 2))})[:, 0, 0],
                                  [0, 2, 0])


def test_gather_gradient_other_axis_is_dense():
    p = tf.placeholder(tf.float32, [2, 3])
    g = tf.gradients(tf.gather(p, [2, 2, 0], axis=1), p)[0]
    assert isinstance(g, tf.Tensor) and g.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(evaluate(g, {p: np.zeros((2, 3))}), [[1, 0, 2], [1, 0, 2]])
    with pytest.raises(LookupError, match="constant axis"):
        tf.gradients(tf.gather(p, [0], axis=tf.placeholder(tf.int32, [])), p)


def test_strided_slice_grad_op():
    dy = np.arange(6.0).reshape(3, 2)
    out = slicing_ops.strided_slice_grad([2, 3, 2], [1, 0], [2, 0], [1, -1], dy, shrink_axis_mask=1,
                                         begin_mask=2, end_mask=2)
    assert out.op.type == "StridedSliceGrad" and out.shape.as_list() == [2, 3, 2]
    check_op(out, np.concatenate([np.zeros((1, 3, 2)), dy[None, ::-1]]))
    unknown = slicing_ops.strided_slice_grad(tf.placeholder(tf.int32, [3]), [1], [2], [1], dy)
    assert unknown.shape.as_list() == [None, None, None]
    bad = slicing_ops.strided_slice_grad([2, 3, 2], [1, 0], [2, 0], [1, -1], tf.placeholder(tf.float64),
                                         shrink_axis_mask=1, begin_mask=2, end_mask=2)
    assert_run_error(bad, {bad.op.inputs[4]: np.zeros((2, 2))}, match=r"shape of dy was \[2,2\] instead of \[3,2\]")
    # a new axis in the spec: the gradient drops it again
    x = tf.placeholder(tf.float32, [2, 3])
    g = tf.gradients(x[:, tf.newaxis, 1], x)[0]
    assert g.op.type == "StridedSliceGrad" and g.shape.as_list() == [2, 3]
    np.testing.assert_array_equal(evaluate(g, {x: np.zeros((2, 3))}), [[0, 1, 0], [0, 1, 0]])


def test_mirror_pad_grad_op():
    g = np.arange(24.0).reshape(6, 4)
    reflect = tf._apply_op(fill_ops.MirrorPadGrad, input=g, paddings=[[1, 2], [1, 1]], mode="REFLECT")
    assert reflect.shape.as_list() == [3, 2]
    check_op(reflect, [[56, 52], [60, 54], [28, 26]])  # TensorFlow's values
    symmetric = tf._apply_op(fill_ops.MirrorPadGrad, input=g, paddings=[[2, 1], [0, 2]], mode="SYMMETRIC")
    check_op(symmetric, [[30, 30], [30, 30], [78, 78]])
    partial = tf._apply_op(fill_ops.MirrorPadGrad, input=tf.placeholder(tf.float32, [6, None]),
                           paddings=[[1, 2], [1, 1]], mode="REFLECT")
    assert partial.shape.as_list() == [3, None]
    p = tf.placeholder(tf.float64)
    too_much = tf._apply_op(fill_ops.MirrorPadGrad, input=p, paddings=[[3, 3], [0, 0]], mode="REFLECT")
    assert_run_error(too_much, {p: g},
                     match="Total paddings must be less than the input dimension size: 6 was not less")
    reflect_bad = tf._apply_op(fill_ops.MirrorPadGrad, input=p, paddings=[[2, 2], [0, 0]], mode="REFLECT")
    assert_run_error(reflect_bad, {p: g}, match="paddings must be less than the output dimension size: 2, 2 not less")
    # MirrorPad's gradient is this op, and MirrorPadGrad's is MirrorPad again
    x = tf.placeholder(tf.float64, [3, 2])
    grad = tf.gradients(tf.pad(x, [[1, 1], [0, 1]], "SYMMETRIC"), x)[0]
    assert grad.op.type == "MirrorPadGrad"
    np.testing.assert_array_equal(evaluate(grad, {x: np.zeros((3, 2))}), [[2, 4], [1, 2], [2, 4]])


def test_gradient_graphs_keep_static_shapes():
    x = tf.placeholder(tf.float32, [2, 3, 4])
    grads = {
        "transpose": tf.gradients(tf.transpose(x, [2, 0, 1]), x)[0],
        "tile": tf.gradients(tf.tile(x, [1, 2, 1]), x)[0],
        "broadcast_to": tf.gradients(tf.broadcast_to(x[:, :1], [5, 2, 3, 4]), x)[0],
        "slice": tf.gradients(tf.slice(x, [0, 1, 1], [1, 2, -1]), x)[0],
        "concat": tf.gradients(tf.concat([x, x[:, :1]], 1), x)[0],
        "pad": tf.gradients(tf.pad(x, [[0, 1], [1, 0], [0, 0]]), x)[0],
    }
    for name, g in grads.items():
        assert g.shape.as_list() == [2, 3, 4], name
    y = tf.placeholder(tf.float32, [2, None, 4])
    ga, gy = tf.gradients(tf.concat([x, y], 1), [x, y])
    assert ga.op is gy.op and ga.op.type == "SplitV"  # one split, sizes read at run time
    z = tf.placeholder(tf.float32, [2, 1, 4])
    ga, gz = tf.gradients(tf.concat([x, z], 1), [x, z])
    assert ga.op is gz.op and ga.op.type == "SplitV"
    np.testing.assert_array_equal(tensor_util.constant_value(ga.op.inputs[1]), [3, 1])  # static sizes
    gy_value = evaluate(gy, {x: np.zeros((2, 3, 4)), y: np.zeros((2, 5, 4))})
    np.testing.assert_array_equal(gy_value, np.ones((2, 5, 4)))
    assert grads["transpose"].op.inputs[1].op.type == "InvertPermutation"
    value = evaluate(grads["tile"], {x: np.zeros((2, 3, 4))})
    np.testing.assert_array_equal(value, np.full((2, 3, 4), 2.0))
