"""Grappler on the master (issue 17): a cluster session's step graph is optimised before it is
placed and partitioned, with the session's rewrite options. Two real server processes (a PS
and a worker task); the partition graphs in RunMetadata show the fused and folded nodes with
the passes on and the plain ones with them off, and the numbers are the same."""
import numpy as np
import pytest

import tensorweave as tf
from tests.distributed.cluster_util import task_processes
from tests.grappler.helpers import off_config, on_config


@pytest.fixture(scope="module")
def cluster():
    with task_processes(ps=1, worker=1) as spec:
        yield spec


def _run(spec, config):
    """(values, partition graphs by task) of a step of a small model over both tasks."""
    rng = np.random.RandomState(0)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            w = tf.Variable(rng.randn(3, 2).astype(np.float32), name="w")
        with tf.device("/job:worker/task:0"):
            x = tf.placeholder(tf.float32, [None, 3], name="x")
            scale = tf.square(tf.constant(2.0)) + tf.constant(1.0)     # folds to 5
            y = tf.nn.relu(tf.matmul(x * 1.0, w) + tf.constant([0.5, -0.5]))
            out = tf.identity(y * scale, name="out")
            size = tf.reduce_prod(tf.shape(x), name="size")              # Size(x)
        options = tf.RunOptions(output_partition_graphs=True, timeout_in_ms=30000)
        meta = tf.RunMetadata()
        with tf.Session("grpc://" + spec["worker"][0], config=config) as sess:
            sess.run(w.initializer, options=tf.RunOptions(timeout_in_ms=30000))
            values = sess.run([out, size], {x: rng.randn(4, 3).astype(np.float32)}, options=options,
                              run_metadata=meta)
    nodes = {}
    for graph in meta.partition_graphs:
        for node in graph.node:
            task = node.device.split("/device:")[0]
            nodes.setdefault(task, {})[node.name] = node.op
    return values, nodes


def test_master_runs_grappler_with_the_sessions_options(cluster):
    config = on_config()
    config.graph_options.rewrite_options.min_graph_nodes = -1
    on_values, on_nodes = _run(cluster, config)
    off_values, off_nodes = _run(cluster, off_config())
    np.testing.assert_allclose(on_values[0], off_values[0], rtol=1e-6)
    assert on_values[1] == off_values[1] == 12
    worker_on = on_nodes["/job:worker/replica:0/task:0"]
    worker_off = off_nodes["/job:worker/replica:0/task:0"]
    # remapper: MatMul + bias + Relu fused on the worker; the fused node keeps the Relu's name
    assert "_FusedMatMul" in worker_on.values() and "MatMul" not in worker_on.values()
    assert "MatMul" in worker_off.values() and "_FusedMatMul" not in worker_off.values()
    # constant folding: the scale is one Const; arithmetic: x * 1.0 is gone
    assert "Square" not in worker_on.values() and "Square" in worker_off.values()
    # shape optimisation: the product of the shape is the size
    assert worker_on["size"] == "Size" and worker_off["size"] == "Prod"
    # the variable stays on the PS task, read from there in both
    assert "VariableV2" in on_nodes["/job:ps/replica:0/task:0"].values()


def test_rewrite_options_turn_single_passes_off_on_the_master(cluster):
    config = on_config()
    rewrite = config.graph_options.rewrite_options
    rewrite.remapping = rewrite.OFF
    rewrite.shape_optimization = rewrite.OFF
    values, nodes = _run(cluster, config)
    worker = nodes["/job:worker/replica:0/task:0"]
    assert "MatMul" in worker.values() and "_FusedMatMul" not in worker.values()
    assert worker["size"] == "Prod"
    assert "Square" not in worker.values()  # constant folding still on
    assert values[1] == 12
