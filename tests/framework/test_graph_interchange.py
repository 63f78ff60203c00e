"""GraphDefs travel both ways between tensorweave and TensorFlow 2.21:
- frozen graphs TF wrote for an MLP, a CNN (conv, pooling, fused and moment batch norm) and an
  LSTM under dynamic_rnn (v1 while loop with TensorArrays) import and run here with TF's
  numbers (tests/data/tf_graphs, make_tf_graph_interchange_fixtures.py);
- tf.io.write_graph writes the same bytes as TF's, binary and text, and a text-format GraphDef
  reads back and imports;
- the frozen graphs we wrote (tests/data/tw_written) were imported by TF, which computed our
  outputs (tw_checked_by_tf.json, recorded by the fixture script's --check mode)."""
import json
import os

import numpy as np
import pytest
from google.protobuf import text_format
from tensorboard.compat.proto import graph_pb2

import tensorweave as tf

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
MODELS = ("mlp", "cnn", "lstm")


def _read(path):
    graph_def = graph_pb2.GraphDef()
    with open(path, "rb") as f:
        graph_def.ParseFromString(f.read())
    return graph_def


def _run(graph_def, value):
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            return sess.run("output:0", {"input:0": value})


@pytest.mark.parametrize("name", MODELS)
def test_tf_frozen_graph_runs_with_tf_numbers(name):
    expected = np.load(os.path.join(DATA, "tf_graphs_expected.npz"))
    got = _run(_read(os.path.join(DATA, "tf_graphs", f"{name}.pb")), expected[f"{name}/input"])
    np.testing.assert_allclose(got, expected[f"{name}/output"], rtol=1e-5, atol=1e-6)


def test_text_format_graph_def_reads_back_and_imports():
    expected = np.load(os.path.join(DATA, "tf_graphs_expected.npz"))
    graph_def = graph_pb2.GraphDef()
    with open(os.path.join(DATA, "tf_graphs", "mlp.pbtxt")) as f:
        text_format.Merge(f.read(), graph_def)
    assert graph_def == _read(os.path.join(DATA, "tf_graphs", "mlp.pb"))
    np.testing.assert_allclose(_run(graph_def, expected["mlp/input"]), expected["mlp/output"], rtol=1e-5)


@pytest.mark.parametrize("as_text,suffix", [(False, "pb"), (True, "pbtxt")])
def test_write_graph_writes_tensorflows_bytes(tmp_path, as_text, suffix):
    graph_def = _read(os.path.join(DATA, "tf_graphs", "mlp.pb"))
    path = tf.io.write_graph(graph_def, str(tmp_path / "sub"), f"mlp.{suffix}", as_text=as_text)
    assert path == os.path.join(str(tmp_path / "sub"), f"mlp.{suffix}")
    assert tf.train.write_graph is tf.io.write_graph
    with open(path, "rb") as f, open(os.path.join(DATA, "tf_graphs", f"mlp.{suffix}"), "rb") as g:
        assert f.read() == g.read()


def test_write_graph_of_our_graph_round_trips_as_text(tmp_path):
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 2], name="input")
        tf.multiply(tf.add(x, 1.0), 3.0, name="output")
    path = tf.train.write_graph(graph, str(tmp_path), "g.pbtxt")  # as_text defaults to True
    graph_def = graph_pb2.GraphDef()
    with open(path) as f:
        text_format.Merge(f.read(), graph_def)
    assert graph_def == graph.as_graph_def()
    np.testing.assert_array_equal(_run(graph_def, np.array([[1, 2]], np.float32)), [[6, 9]])
    with pytest.raises(TypeError):
        tf.train.write_graph("not a graph", str(tmp_path), "bad.pb")


@pytest.mark.parametrize("name", MODELS)
def test_our_frozen_graphs_ran_in_tensorflow_with_our_numbers(name):
    with open(os.path.join(DATA, "tw_checked_by_tf.json")) as f:
        report = json.load(f)
    ours = np.load(os.path.join(DATA, "tw_written_expected.npz"))
    tf_output = np.array(report["graphs"][name]["output"], np.float32)
    np.testing.assert_allclose(tf_output, ours[f"{name}/output"], rtol=1e-5, atol=1e-6)
    # and the committed file still computes those numbers here
    got = _run(_read(os.path.join(DATA, "tw_written", f"{name}.pb")), ours[f"{name}/input"])
    np.testing.assert_allclose(got, ours[f"{name}/output"], rtol=1e-5, atol=1e-6)


def test_our_frozen_graphs_hold_no_variables():
    for name in MODELS:
        ops = {n.op for n in _read(os.path.join(DATA, "tw_written", f"{name}.pb")).node}
        assert "VariableV2" not in ops and "Const" in ops and "Placeholder" in ops
