"""Partitioned variables (issue 14): partitioners, get_variable(partitioner=) and
PartitionedVariable, against TensorFlow's answers in tests/data/tf_partitioned_expected.npz
(written by tests/data/make_tf_partitioned_fixtures.py)."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.data.partitioned_models import PARTITIONER_CASES, TABLE, init_cases, initial_graph, partitioner

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))), "data")
EXPECTED = np.load(os.path.join(DATA, "tf_partitioned_expected.npz"))
INIT_CASES = init_cases(tf)


def test_partitioners_answer_as_tensorflow():
    for i, (shape, dtype, kind, args) in enumerate(PARTITIONER_CASES):
        got = partitioner(tf, kind, args)(shape=tf.TensorShape(shape), dtype=tf.as_dtype(dtype))
        assert list(got) == list(EXPECTED["partitions"][i][:len(shape)]), (shape, kind, args)


def test_partitioners_under_compat_v1_and_bad_arguments():
    assert tf.compat.v1.fixed_size_partitioner is tf.fixed_size_partitioner
    assert tf.compat.v1.variable_axis_size_partitioner is tf.variable_axis_size_partitioner
    assert tf.compat.v1.min_max_variable_partitioner is tf.min_max_variable_partitioner
    with pytest.raises(ValueError, match="must be positive"):
        tf.variable_axis_size_partitioner(0)
    with pytest.raises(ValueError, match="max_shards must be positive"):
        tf.variable_axis_size_partitioner(10, max_shards=-1)
    with pytest.raises(ValueError, match="not fully defined"):
        tf.variable_axis_size_partitioner(10)(shape=tf.TensorShape([None, 3]), dtype=tf.float32)
    with pytest.raises(ValueError, match="Can not partition variable along axis 2"):
        tf.min_max_variable_partitioner(4, axis=2)(shape=tf.TensorShape([4, 4]), dtype=tf.float32)


def _initial_graph():
    return initial_graph(tf)


def test_seeded_shards_equal_tensorflow_values():
    graph, made, default, axis1, from_value, reused = _initial_graph()
    assert reused is default
    with graph.as_default(), tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        for name, var in made.items():
            np.testing.assert_allclose(sess.run(tf.convert_to_tensor(var)), EXPECTED["init_" + name],
                                       rtol=1e-5, atol=1e-6, err_msg=name)
        np.testing.assert_allclose(sess.run(default.as_tensor()), EXPECTED["init_default"], rtol=1e-5)
        np.testing.assert_allclose(sess.run(tf.convert_to_tensor(axis1)), EXPECTED["init_axis1"], rtol=1e-5)
        np.testing.assert_array_equal(sess.run(tf.convert_to_tensor(from_value)), EXPECTED["init_from_value"])


def test_shards_names_shapes_collections_as_tensorflow():
    graph, made, default, axis1, from_value, _ = _initial_graph()
    with graph.as_default():
        assert [v.name for v in tf.global_variables()] == list(EXPECTED["global_names"])
        assert [v.name for v in tf.trainable_variables()] == list(EXPECTED["trainable_names"])
        assert [v.get_shape().as_list() for v in axis1] == EXPECTED["shard_shapes_axis1"].tolist()
        assert [v._save_slice_info.spec for v in from_value] == list(EXPECTED["shard_specs_from_value"])
        # the fixture converted it once before: TF named the second concatenation "<name>_1"
        assert tf.convert_to_tensor(from_value).name == "other/from_value:0"
        assert tf.convert_to_tensor(from_value).name == str(EXPECTED["concat_name"])
    # the PartitionedVariable itself is in no collection; its shards are ordinary VariableV2 nodes
    assert all(v.op.type == "VariableV2" for v in from_value)
    assert [v.get_shape().as_list() for v in from_value] == [[3, 4], [3, 4], [3, 4], [2, 4]]
    assert from_value.name == "other/from_value" and from_value.dtype == tf.float32
    assert from_value.get_shape().as_list() == [11, 4] and from_value.shape.as_list() == [11, 4]
    assert from_value.get_partitions() == [4, 1] and from_value._get_partitions() == [4, 1]
    assert from_value._partition_axes() == [0] and axis1._partition_axes() == [1]
    assert from_value.get_variable_list() == list(from_value) == from_value._get_variable_list()
    assert len(from_value) == 4
    info = list(from_value)[3]._save_slice_info
    assert (info.full_name, info.full_shape, info.var_offset, info.var_shape) == (
        "other/from_value", [11, 4], [9, 0], [2, 4])


def test_reuse_and_errors():
    with tf.Graph().as_default():
        part = tf.fixed_size_partitioner(2)
        with tf.variable_scope("s", partitioner=part):
            v = tf.get_variable("v", [6, 2])
        with tf.variable_scope("s", reuse=True):
            assert tf.get_variable("v") is v
            assert tf.get_variable("v", [6, 2], partitioner=part) is v
            with pytest.raises(ValueError, match="specified partitions"):
                tf.get_variable("v", [6, 2], partitioner=tf.fixed_size_partitioner(3))
            with pytest.raises(ValueError, match="specified shape"):
                tf.get_variable("v", [5, 2], partitioner=part)
        with tf.variable_scope("s", reuse=tf.AUTO_REUSE, partitioner=part):
            assert tf.get_variable("v", [6, 2]) is v
        with tf.variable_scope("t") as scope:
            scope.set_partitioner(tf.fixed_size_partitioner(3))
            assert scope.partitioner is not None
            assert len(list(tf.get_variable("x", [6, 2]))) == 3
        with tf.variable_scope("s", partitioner=part):
            with pytest.raises(ValueError, match="already exists"):
                tf.get_variable("v", [6, 2])
        with tf.variable_scope("s"):
            with pytest.raises(ValueError, match="partitioned version of the variable was found"):
                tf.get_variable("v", [6, 2])
            plain = tf.get_variable("plain", [4])
        with tf.variable_scope("s", partitioner=part):
            with pytest.raises(ValueError, match="unpartitioned version"):
                tf.get_variable("plain", [4])
            # a scalar is never split
            scalar = tf.get_variable("scalar", [])
            assert isinstance(scalar, tf.Variable) and plain is not scalar
            with pytest.raises(ValueError, match="only slice a variable along one dimension"):
                tf.get_variable("bad", [4, 4], partitioner=lambda shape, dtype: [2, 2])
            with pytest.raises(ValueError, match="must be fully defined"):
                tf.get_variable("unknown", [None, 4])
        with tf.variable_scope("s", reuse=True):
            with pytest.raises(ValueError, match="does not exist"):
                tf.get_variable("missing", [4, 4], partitioner=part)


def test_initializer_gets_partition_info():
    seen = []

    def init(shape, dtype=None, partition_info=None):
        seen.append((list(shape), partition_info.full_shape, partition_info.var_offset,
                     partition_info.single_offset(shape), partition_info.single_slice_dim(shape)))
        return tf.fill(shape, float(partition_info.single_offset(shape)))

    with tf.Graph().as_default():
        v = tf.get_variable("v", [7, 2], initializer=init, partitioner=tf.fixed_size_partitioner(3))
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            value = sess.run(tf.convert_to_tensor(v))
    assert seen == [([3, 2], [7, 2], [0, 0], 0, 0), ([2, 2], [7, 2], [3, 0], 3, 0), ([2, 2], [7, 2], [5, 0], 5, 0)]
    np.testing.assert_array_equal(value[:, 0], [0, 0, 0, 3, 3, 5, 5])


def test_concat_assign_and_conversion():
    with tf.Graph().as_default():
        v = tf.get_variable("v", initializer=tf.constant(TABLE), partitioner=tf.fixed_size_partitioner(3))
        with pytest.raises(ValueError, match="Incompatible type conversion"):
            tf.convert_to_tensor(v, dtype=tf.int32)
        with tf.control_dependencies([tf.no_op(name="outer")]):
            t = v.as_tensor()
        assert t.op.control_inputs == []
        total = tf.reduce_sum(v)  # a PartitionedVariable converts wherever a tensor is expected
        assigns = v.assign(tf.constant(TABLE * 2.0))
        adds = v.assign_add([tf.ones([4, 4]), tf.ones([4, 4]), tf.ones([3, 4])])
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_allclose(sess.run(total), TABLE.sum(), rtol=1e-5)
            sess.run(assigns)
            np.testing.assert_allclose(sess.run(t), TABLE * 2.0)
            sess.run(adds)
            np.testing.assert_allclose(sess.run(v.as_tensor()), TABLE * 2.0 + 1.0)
        assert len(assigns) == 3 and type(v).__name__ == "PartitionedVariable"


def test_create_partitioned_variables():
    with tf.Graph().as_default():
        parts = tf.create_partitioned_variables([7, 3], [2, 1], tf.constant_initializer(1.5), name="legacy")
        assert [p.name for p in parts] == ["legacy/part_0:0", "legacy/part_1:0"]
        assert [p.get_shape().as_list() for p in parts] == [[4, 3], [3, 3]]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            np.testing.assert_array_equal(sess.run(parts[1]), np.full([3, 3], 1.5, np.float32))


def test_graph_names_and_regularizer_placement_as_tensorflow():
    with tf.Graph().as_default() as graph:
        with tf.variable_scope("s"):
            tf.get_variable("v", initializer=tf.constant(np.ones((5, 3), np.float32)),
                            partitioner=tf.fixed_size_partitioner(2))
            w = tf.get_variable("w", [4, 3], partitioner=tf.fixed_size_partitioner(2),
                                regularizer=lambda x: tf.reduce_sum(x))
        names = {op.name: op for op in graph.get_operations()}
        # the slice of a Tensor initializer is made in the shard's absolute scope, as TF's
        assert "s/v/part_0/PartitionedInitializer/Slice" in names
        assert "s/v/part_1/PartitionedInitializer/Slice" in names
        losses = tf.get_collection(tf.GraphKeys.REGULARIZATION_LOSSES)
        assert [t.name for t in losses] == ["s/w/part_0/Regularizer/Sum:0", "s/w/part_1/Regularizer/Sum:0"]
        assert [t.op.colocation_groups() for t in losses] == [[b"loc:@s/w/part_0"], [b"loc:@s/w/part_1"]]
        # initializers are colocated with the shard they initialize
        init = names["s/w/part_1/Initializer/random_uniform/RandomUniform"]
        assert init.colocation_groups() == [b"loc:@s/w/part_1"]
        assert len(list(w)) == 2
