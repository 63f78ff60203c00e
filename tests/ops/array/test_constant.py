"""Graph inputs: tf.constant (TF1 dtype inference and shape filling), tf.placeholder (checked
at feed time), tf.placeholder_with_default."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import check_op, evaluate


@pytest.mark.parametrize("value,dtype,expected", [
    (1, tf.int32, np.int32(1)),
    (2**40, tf.int64, np.int64(2**40)),
    ([1, 2**40], tf.int64, np.array([1, 2**40], np.int64)),
    (1.5, tf.float32, np.float32(1.5)),
    (True, tf.bool, np.bool_(True)),
    ("abc", tf.string, b"abc"),
    (1 + 2j, tf.complex128, np.complex128(1 + 2j)),
    (np.float64(2.0), tf.float64, np.float64(2.0)),
    (np.arange(6, dtype=np.uint8).reshape(2, 3), tf.uint8, np.arange(6, dtype=np.uint8).reshape(2, 3)),
    ([[1.0, 2.0], [3.0, 4.0]], tf.float32, np.float32([[1, 2], [3, 4]])),
])
def test_constant_infers_tf1_dtypes(value, dtype, expected):
    c = tf.constant(value)
    assert c.dtype == dtype and c.op.type == "Const"
    check_op(c, expected)


def test_constant_with_dtype_converts_without_loss():
    check_op(tf.constant(3, dtype=tf.float64), np.float64(3))
    check_op(tf.constant([1, 2], dtype=tf.int64), np.int64([1, 2]))
    check_op(tf.constant(np.float32(1.5), dtype=tf.float64), np.float64(1.5))
    with pytest.raises(TypeError):
        tf.constant(1.5, dtype=tf.int32)        # a float can't become an int
    with pytest.raises(TypeError):
        tf.constant("a", dtype=tf.float32)
    with pytest.raises(ValueError):
        tf.constant(300, dtype=tf.uint8)        # out of range
    with pytest.raises(ValueError):
        tf.constant([[1], [1, 2]])              # ragged


def test_constant_shape_fills_with_the_last_value_as_tf1():
    # Values verified with TensorFlow 2.21 (tf.compat.v1.constant).
    check_op(tf.constant([1.0, 2.0], shape=[2, 2]), np.float32([[1, 2], [2, 2]]))
    check_op(tf.constant(3.0, shape=[2]), np.float32([3, 3]))
    check_op(tf.constant([1, 2, 3, 4], shape=[2, 2]), np.int32([[1, 2], [3, 4]]))
    check_op(tf.constant(7, shape=[2, 0]), np.zeros((2, 0), np.int32))
    check_op(tf.constant([], shape=[2], dtype=tf.float32), np.float32([0, 0]))
    check_op(tf.constant(["a"], shape=[2]), np.array([b"a", b"a"], dtype=object))
    assert tf.constant(5.0, shape=[3, 1]).shape.as_list() == [3, 1]
    with pytest.raises(ValueError, match="Too many elements provided"):
        tf.constant([1.0, 2.0, 3.0], shape=[2])
    with pytest.raises(TypeError, match="Expected Tensor's shape"):
        tf.constant([1.0, 2.0], shape=[2, 1], verify_shape=True)
    check_op(tf.constant([[1.0], [2.0]], shape=[2, 1], verify_shape=True), np.float32([[1], [2]]))


def test_constant_names_and_value_attr():
    a = tf.constant(1.0)
    b = tf.constant(1.0)
    c = tf.constant([1, 2], name="c")
    assert (a.op.name, b.op.name, c.op.name) == ("Const", "Const_1", "c")
    np.testing.assert_array_equal(tf.make_ndarray(c.op.get_attr("value")), [1, 2])
    assert c.op.get_attr("dtype") == tf.int32


def test_placeholder_checks_feeds():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    assert x.op.type == "Placeholder" and x.shape.as_list() == [None, 3]
    assert x.op.get_attr("dtype") == tf.float32
    y = x * 2.0
    np.testing.assert_array_equal(evaluate(y, {x: np.ones((4, 3))}), np.full((4, 3), 2.0, np.float32))
    with tf.Session() as sess:
        with pytest.raises(ValueError, match=r"Cannot feed value of shape \(2, 2\)"):
            sess.run(y, {x: np.ones((2, 2))})
        with pytest.raises(ValueError, match="could not convert string to float"):  # TF's class
            sess.run(y, {x: [["a", "b", "c"]]})
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match=r"must feed a value for placeholder tensor 'x' with dtype float "
                                 r"and shape \[\?,3\]"):
            sess.run(y)
    unknown = tf.placeholder(tf.int64)
    assert unknown.shape.ndims is None
    check_op(unknown + 1, np.int64([[2, 3]]), feed_dict={unknown: [[1, 2]]})


def test_placeholder_with_default():
    d = tf.placeholder_with_default([1.0, 2.0], [2])
    dyn = tf.placeholder_with_default(tf.constant([[1, 2]]), [None, 2])
    assert d.op.type == "PlaceholderWithDefault" and dyn.shape.as_list() == [None, 2]
    check_op(d * 2.0, np.float32([2, 4]))
    check_op(d * 2.0, np.float32([10, 12]), feed_dict={d: [5.0, 6.0]})
    check_op(dyn, np.int32([[3, 4], [5, 6]]), feed_dict={dyn: [[3, 4], [5, 6]]})
    with pytest.raises(ValueError):
        tf.placeholder_with_default([1.0, 2.0], [3])    # default doesn't fit the shape
    with tf.Session() as sess:
        with pytest.raises(ValueError):
            sess.run(d, {d: [1.0]})                     # fed value doesn't fit either
    g = tf.gradients(tf.reduce_sum(tf.placeholder_with_default(tf.constant([1.0, 2.0]), [2]) * 3.0),
                     [d])[0]
    assert g is None


# -- issue 10: a constant that one value fills stays one value ---------------------------------------
def test_constant_filled_by_one_value_stays_one_value():
    """50 million elements: no 200 MB array at graph construction nor in the GraphDef (TF keeps
    one float_val and the shape); the kernel builds the whole array at run time."""
    with tf.Graph().as_default() as g:
        c = tf.constant(1.5, shape=[50_000_000])
        assert c.shape.as_list() == [50_000_000]
        value = c.op._get_attr("value")  # as held: not TF's TensorProto
        assert value.strides == (0,) and not value.flags.writeable  # a broadcast view of one value
        assert g.as_graph_def().ByteSize() < 200
        node = g.as_graph_def().node[0].attr["value"].tensor
        assert list(node.float_val) == [1.5] and not node.tensor_content
        static = tf.get_static_value(c)
        assert static.shape == (50_000_000,) and static[12345] == 1.5
        total = tf.reduce_sum(tf.cast(c[:4], tf.float64))
        with tf.Session() as sess:
            assert sess.run(total) == 6.0


def test_huge_constant_builds_and_fails_at_run_time_as_tf():
    with tf.Graph().as_default() as g:
        one = tf.constant(0.0, shape=[1 << 40])
        many = tf.constant([1.0, 2.0], shape=[1 << 40])  # values repeat: kept as a proto
        assert one.shape.as_list() == many.shape.as_list() == [1 << 40]
        assert g.as_graph_def().ByteSize() < 300
        assert tf.get_static_value(many) is None
        with tf.Graph().as_default():  # the compact form survives export and import
            tf.import_graph_def(g.as_graph_def(), name="")
            assert tf.get_default_graph().as_graph_def().ByteSize() == g.as_graph_def().ByteSize()
        with tf.Session() as sess:
            for t in (one, many):
                with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot parse tensor from proto"):
                    sess.run(tf.reduce_sum(t))


def test_repeated_values_beyond_the_deferred_size_are_built_by_the_kernel(monkeypatch):
    from tensorweave.framework import tensor_proto
    monkeypatch.setattr(tensor_proto, "DEFERRED_BYTES", 8)
    with tf.Graph().as_default():
        c = tf.constant([1, 2], shape=[2, 3])
        assert isinstance(c.op._get_attr("value"), tensor_proto.DeferredTensor)
        assert c.shape.as_list() == [2, 3] and tf.get_static_value(c) is None
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(c), [[1, 2, 2], [2, 2, 2]])
