"""Shape optimisation: Prod(Shape(x)) becomes Size(x), and the ratio of two sizes known
statically (y a reduction of x over known dimensions) becomes a constant, with partially known
shapes; what is not provable stays."""
import numpy as np
import pytest

import tensorweave as tf
from tests.grappler.helpers import ONLY, by_name, off_config, on_config, optimize, types

SHAPE = ONLY["shape_optimization"]


def _same(fetches, feed_dict):
    with tf.Session(config=off_config()) as sess:
        expected = sess.run(fetches, feed_dict)
    with tf.Session(config=on_config()) as sess:
        got = sess.run(fetches, feed_dict)
    for e, g in zip(expected, got):
        np.testing.assert_array_equal(g, e)
    return got


@pytest.mark.parametrize("out_type", [tf.int32, tf.int64])
def test_prod_of_shape_becomes_size(out_type):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 4])
        p = tf.reduce_prod(tf.shape(x, out_type=out_type), name="count")
        ops, _ = optimize([p], [x], settings=SHAPE)
        node = by_name(ops)["count"]
        assert node.type == "Size" and node.inputs[0] is x and node.get_attr("out_type") == out_type
        assert types(ops) == ["Size"]
        got = _same([p], {x: np.zeros((5, 3, 4), np.float32)})[0]
        assert got == 60 and got.dtype == out_type.as_numpy_dtype


def test_prod_of_shape_keeping_dims_or_of_other_values_stays():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        kept = tf.reduce_prod(tf.shape(x), keepdims=True)
        ints = tf.placeholder(tf.int32, [2])
        other = tf.reduce_prod(ints)
        ops, _ = optimize([kept, other], [x, ints], settings=SHAPE)
        assert "Size" not in types(ops)


@pytest.mark.parametrize("division", [tf.div, tf.floordiv])
@pytest.mark.parametrize("reduce", [tf.reduce_mean, tf.reduce_sum, tf.reduce_max])
def test_ratio_of_sizes_of_a_reduction_folds(division, reduce):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3, 4])
        y = reduce(x, axis=[1, 2])
        ratio = division(tf.size(x), tf.size(y), name="ratio")
        ops, _ = optimize([ratio], [x], settings=SHAPE)
        node = by_name(ops)["ratio"]
        assert node.type == "Const" and tf.make_ndarray(node.get_attr("value")) == 12
        assert sorted(c.type for c in node.control_inputs) == ["Size", "Size"]  # dead when they are
        assert _same([ratio], {x: np.ones((2, 3, 4), np.float32)})[0] == 12


def test_ratio_not_provable_stays():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        z = tf.placeholder(tf.float32, [None, 3])     # another unknown batch
        y = tf.reduce_sum(x, axis=0)                  # reduces the unknown dimension
        a = tf.div(tf.size(x), tf.size(z), name="a")
        b = tf.div(tf.size(x), tf.size(y), name="b")
        ops, _ = optimize([a, b], [x, z], settings=SHAPE)
        assert by_name(ops)["a"].type == a.op.type and by_name(ops)["b"].type == b.op.type != "Const"
        _same([a, b], {x: np.ones((4, 3), np.float32), z: np.ones((2, 3), np.float32)})


def test_off_switch():
    config = tf.ConfigProto()
    config.graph_options.rewrite_options.shape_optimization = config.graph_options.rewrite_options.OFF
    config.graph_options.rewrite_options.min_graph_nodes = -1
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])
        p = tf.reduce_prod(tf.shape(x), name="count")
        meta = tf.RunMetadata()
        with tf.Session(config=config) as sess:
            sess.run(p, {x: np.ones((2, 3), np.float32)}, options=tf.RunOptions(output_partition_graphs=True),
                     run_metadata=meta)
        assert {n.name: n.op for g in meta.partition_graphs for n in g.node}["count"] == "Prod"


def test_nodes_in_loops_left_alone():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [None, 3])

        def body(i, total):
            return i + 1, total + tf.reduce_prod(tf.shape(x * tf.cast(i, tf.float32)))
        out = tf.while_loop(lambda i, t: i < 3, body, [tf.constant(0), tf.constant(0)])[1]
        ops, _ = optimize([out], [x], settings=SHAPE)
        assert "Prod" in types(ops) and "Size" not in types(ops)
        assert _same([out], {x: np.ones((2, 3), np.float32)})[0] == 18
