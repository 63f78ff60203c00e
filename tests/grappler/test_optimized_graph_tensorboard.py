"""The optimised step graph is visible: `RunOptions(output_partition_graphs=True)` returns it
in `RunMetadata.partition_graphs`, and `FileWriter.add_graph` of that GraphDef puts it where the
real TensorBoard server's graph dashboard reads it (started on 127.0.0.1, stopped by pid)."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.tools.tensorboard_server import TensorBoardServer

START_TIMEOUT_S = 90


def _optimised_partition(seed=0):
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        w = tf.constant(np.random.RandomState(seed).randn(4, 3).astype(np.float32), name="w")
        b = tf.constant(np.ones(3, np.float32), name="b")
        y = tf.nn.relu(tf.nn.bias_add(tf.matmul(x, w), b), name="y")
        meta = tf.RunMetadata()
        with tf.Session(graph=g) as sess:
            out = sess.run(y, {x: np.ones((2, 4), np.float32)},
                           options=tf.RunOptions(output_partition_graphs=True), run_metadata=meta)
    return out, meta.partition_graphs[0]


def test_partition_graph_holds_the_fused_node():
    _, graph_def = _optimised_partition()
    ops = {n.op for n in graph_def.node}
    assert "_FusedMatMul" in ops and "MatMul" not in ops and "BiasAdd" not in ops


def test_graph_def_given_positionally_is_written_with_tf1_warning(tmp_path, caplog):
    _, graph_def = _optimised_partition()
    writer = tf.summary.FileWriter(str(tmp_path))
    with caplog.at_level("WARNING", logger="tensorflow"):
        writer.add_graph(graph_def)
    writer.close()
    assert "Passing a `GraphDef` to the SummaryWriter is deprecated" in caplog.text
    events = list(tf.train.summary_iterator(writer.get_logdir() + "/" + _only_file(tmp_path)))
    assert any(e.graph_def for e in events)


def test_add_graph_refuses_other_objects(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path))
    try:
        with pytest.raises(TypeError, match="instance of `Graph` or the deprecated `GraphDef`"):
            writer.add_graph([1, 2])
    finally:
        writer.close()


def test_tensorboard_shows_the_optimised_graph(tmp_path):
    _, graph_def = _optimised_partition()
    writer = tf.summary.FileWriter(str(tmp_path / "optimised"))
    writer.add_graph(graph_def)
    writer.close()
    with TensorBoardServer(str(tmp_path)) as tb:
        assert tb.wait_for_runs(START_TIMEOUT_S, want="optimised") == ["optimised"]
        graph = tb.get("/data/plugin/graphs/graph", run="optimised", conceptual="false").decode()
        assert 'op: "_FusedMatMul"' in graph
        assert 'op: "MatMul"' not in graph
    assert tb.proc.poll() is not None


def _only_file(path):
    (name,) = [f for f in os.listdir(path) if "tfevents" in f]
    return name
