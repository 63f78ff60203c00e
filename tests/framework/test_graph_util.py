"""tf.graph_util: GraphDef surgery checked against what TensorFlow 2.21's graph_util makes of the
same GraphDef (tests/data/tf_graph_util_expected.json), and freezing checked by running the
frozen graph alone."""
import json
import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import tensorweave as tf

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")


@pytest.fixture(scope="module")
def tf_cases():
    with open(os.path.join(DATA, "tf_graph_util_expected.json")) as f:
        cases = json.load(f)
    graph_def = graph_pb2.GraphDef()
    text_format.Merge(cases["graph_def"], graph_def)
    return cases, graph_def


def _listing(graph_def):
    return [[n.name, n.op, list(n.input)] for n in graph_def.node]


def test_extract_sub_graph_matches_tensorflow(tf_cases):
    cases, graph_def = tf_cases
    assert _listing(tf.graph_util.extract_sub_graph(graph_def, ["out"])) == cases["extract_out"]
    got = tf.graph_util.extract_sub_graph(graph_def, ["sum", "unused"])
    assert _listing(got) == cases["extract_sum_unused"]
    assert got.versions == graph_def.versions


def test_remove_training_nodes_matches_tensorflow(tf_cases):
    cases, graph_def = tf_cases
    assert _listing(tf.graph_util.remove_training_nodes(graph_def)) == cases["remove_training"]
    protected = tf.graph_util.remove_training_nodes(graph_def, protected_nodes=["id2", "check"])
    assert _listing(protected) == cases["remove_training_protected"]


def test_must_run_on_cpu_matches_tensorflow(tf_cases):
    cases, graph_def = tf_cases
    assert {n.name: tf.graph_util.must_run_on_cpu(n) for n in graph_def.node} == cases["must_run_on_cpu"]
    with tf.Graph().as_default():
        v = tf.Variable(1.0)
        assert not tf.graph_util.must_run_on_cpu(v.op)
        assert tf.graph_util.must_run_on_cpu(v.op, pin_variables_on_cpu=True)
        assert tf.graph_util.must_run_on_cpu(tf.constant("a").op)
    with pytest.raises(TypeError):
        tf.graph_util.must_run_on_cpu("Const")


def test_extract_sub_graph_errors(tf_cases):
    _, graph_def = tf_cases
    with pytest.raises(TypeError, match="graph_pb2.GraphDef"):
        tf.graph_util.extract_sub_graph(tf.Graph(), ["out"])
    with pytest.raises(TypeError, match="must be a list"):
        tf.graph_util.extract_sub_graph(graph_def, "out")
    with pytest.raises(AssertionError, match="missing is not in graph"):
        tf.graph_util.extract_sub_graph(graph_def, ["missing"])


def test_remove_training_nodes_result_still_runs(tf_cases):
    _, graph_def = tf_cases
    slim = tf.graph_util.remove_training_nodes(graph_def)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    results = []
    for gd in (graph_def, slim):
        with tf.Graph().as_default():
            tf.import_graph_def(gd, name="")
            with tf.Session() as sess:
                results.append(sess.run("out:0", {"a:0": a}))
    np.testing.assert_array_equal(results[0], results[1])
    np.testing.assert_array_equal(results[1], np.square((a + 1) * 2))


def test_tensor_shape_from_node_def_name():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        tf.split(x, 2, axis=1, name="halves")
        assert tf.graph_util.tensor_shape_from_node_def_name(graph, "x").as_list() == [None, 4]
        assert tf.graph_util.tensor_shape_from_node_def_name(graph, "halves:1").as_list() == [None, 2]


def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    w = tf.Variable(np.arange(6, dtype=np.float32).reshape(3, 2) / 10, name="w")
    b = tf.Variable(np.array([0.5, -0.5], np.float32), name="b")
    unused = tf.Variable(1.0, name="unused")
    step = tf.Variable(0, name="step")
    y = tf.nn.relu(tf.matmul(x, w) + b, name="y")
    return x, y, unused, step


def test_convert_variables_to_constants_freezes_and_runs_identically():
    xv = np.array([[1, 2, 3], [-3, 1, 0]], np.float32)
    with tf.Graph().as_default() as graph:
        x, y, _, _ = _model()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(tf.assign_add(graph.get_tensor_by_name("w:0"), tf.ones([3, 2])))  # not the initial value
            expected = sess.run(y, {x: xv})
            frozen = tf.graph_util.convert_variables_to_constants(sess, graph.as_graph_def(), ["y"])
    ops = {n.name: n.op for n in frozen.node}
    assert ops["w"] == "Const" and ops["b"] == "Const"
    assert "unused" not in ops and "step" not in ops  # only what "y" needs
    assert not any(op in ("VariableV2", "Assign") for op in ops.values())
    with tf.Graph().as_default():
        tf.import_graph_def(frozen, name="")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run("y:0", {"x:0": xv}), expected)


def test_convert_variables_whitelist_and_blacklist():
    with tf.Graph().as_default() as graph:
        _model()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            gd = graph.as_graph_def()
            only_w = tf.graph_util.convert_variables_to_constants(sess, gd, ["y"], variable_names_whitelist=["w"])
            not_w = tf.graph_util.convert_variables_to_constants(sess, gd, ["y"], variable_names_blacklist=["w"])
    assert {n.name: n.op for n in only_w.node}["b"] == "VariableV2"
    assert {n.name: n.op for n in only_w.node}["w"] == "Const"
    assert {n.name: n.op for n in not_w.node}["w"] == "VariableV2"
    assert {n.name: n.op for n in not_w.node}["b"] == "Const"
    value = [n for n in only_w.node if n.name == "w"][0].attr["value"].tensor
    np.testing.assert_allclose(tf.make_ndarray(value), np.arange(6).reshape(3, 2) / 10, rtol=1e-6)


def test_convert_variables_resource_reads_become_identity():
    # A GraphDef with TF's resource-variable pattern (VarHandleOp read by ReadVariableOp), run
    # through a stand-in session that answers the read, as TF's would.
    graph_def = graph_pb2.GraphDef()
    text_format.Merge('''
      node { name: "v" op: "VarHandleOp" attr { key: "dtype" value { type: DT_FLOAT } }
             attr { key: "shape" value { shape { dim { size: 2 } } } } }
      node { name: "v/Read/ReadVariableOp" op: "ReadVariableOp" input: "v"
             attr { key: "dtype" value { type: DT_FLOAT } } }
      node { name: "out" op: "Identity" input: "v/Read/ReadVariableOp"
             attr { key: "T" value { type: DT_FLOAT } } }''', graph_def)

    class FakeSession:
        def run(self, fetches):
            assert fetches == ["v/Read/ReadVariableOp:0"]
            return [np.array([1.5, 2.5], np.float32)]

    frozen = tf.graph_util.convert_variables_to_constants(FakeSession(), graph_def, ["out"])
    nodes = {n.name: n for n in frozen.node}
    assert nodes["v"].op == "Const" and nodes["v/Read/ReadVariableOp"].op == "Identity"
    assert nodes["v/Read/ReadVariableOp"].attr["T"].type == nodes["v"].attr["dtype"].type
    with tf.Graph().as_default():
        tf.import_graph_def(frozen, name="")
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run("out:0"), [1.5, 2.5])
