"""tf.profiler.profile against TensorFlow 2.21's tf.compat.v1.profiler on the same model
(tests/data/tf_tracing_expected.json): the printed reports and the result trees (parameter and
FLOP counts) must match exactly."""
import json
import os

import pytest

import tensorweave as tf
from tests.data.tracing_models import more_ops_model

EXPECTED = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data", "tf_tracing_expected.json")
with open(EXPECTED) as _f:
    PROFILER = json.load(_f)["profiler"]
CASES = sorted(k for k in PROFILER if k not in ("default_options", "more_ops_op_flops"))


def small_model():
    """The fixture script's model: two dense layers, a strided convolution, SGD on their sum."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, (8, 6), name="x")
        with tf.variable_scope("dense1"):
            w1 = tf.get_variable("kernel", (6, 5), initializer=tf.ones_initializer())
            b1 = tf.get_variable("bias", (5,), initializer=tf.zeros_initializer())
            h = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w1), b1))
        with tf.variable_scope("dense2"):
            w2 = tf.get_variable("kernel", (5, 3), initializer=tf.ones_initializer())
            y = tf.matmul(h, w2) + 1.0
        with tf.variable_scope("conv"):
            img = tf.placeholder(tf.float32, (2, 7, 7, 3), name="img")
            k = tf.get_variable("filter", (3, 3, 3, 4), initializer=tf.ones_initializer())
            conv = tf.nn.conv2d(img, k, strides=[1, 2, 2, 1], padding="SAME")
            z = tf.reduce_mean(conv * 2.0 - 1.0)
        tf.Variable(0, trainable=False, name="steps")
        tf.train.GradientDescentOptimizer(0.1).minimize(tf.reduce_sum(y) + z)
    return g


@pytest.fixture(scope="module")
def graph():
    return small_model()


def tree(node, multi):
    out = {"name": node.name, "parameters": node.parameters, "total_parameters": node.total_parameters,
           "float_ops": node.float_ops, "total_float_ops": node.total_float_ops,
           "children": [tree(c, multi) for c in node.children]}
    if multi:
        out["graph_nodes"] = sorted([n.name, n.float_ops, n.parameters] for n in node.graph_nodes)
    return out


def report(text):
    return text[text.index("node name |"):text.index("\n======================End of Report")].rstrip("\n") + "\n"


@pytest.mark.parametrize("case", CASES)
def test_report_and_tree_match_tensorflow(graph, case, capsys):
    want = PROFILER[case]
    cmd = "op" if case.startswith("op") else "scope"
    result = tf.profiler.profile(graph, cmd=cmd, options=want["options"])
    assert report(capsys.readouterr().out) == want["report"]
    assert tree(result, cmd == "op") == want["tree"]


def test_option_builder_defaults_match_tensorflow():
    builder = tf.profiler.ProfileOptionBuilder
    for name, want in PROFILER["default_options"].items():
        assert getattr(builder, name)() == want


def test_default_options_are_trainable_parameters(graph, capsys):
    result = tf.profiler.profile(graph)
    assert result.total_parameters == 158
    assert report(capsys.readouterr().out) == PROFILER["scope_params"]["report"]


def test_default_graph_and_printed_header(capsys):
    with small_model().as_default():
        tf.profiler.profile(options=tf.profiler.ProfileOptionBuilder.float_operation())
    out = capsys.readouterr().out
    assert "-select                     float_ops" in out
    assert "-account_displayed_op_only  true" in out
    assert "-output                     stdout:" in out
    assert "flops: Number of float operations." in out


def test_registered_flops_of_more_ops_match_tensorflow(capsys):
    want = PROFILER["more_ops_op_flops"]
    result = tf.profiler.profile(more_ops_model(tf), cmd="op", options=want["options"])
    assert report(capsys.readouterr().out) == want["report"]

    def counts(t):  # graph node names aside: our summed gradient is gradients/img_grad/AddN
        return {**t, "graph_nodes": sorted(n[1:] for n in t["graph_nodes"]),
                "children": [counts(c) for c in t["children"]]}
    assert counts(tree(result, True)) == counts(want["tree"])
