"""Partitioned variables and sharded embeddings over a cluster (issue 14; OSDI 4.2, Figure 4):
two PS tasks and a worker, each a tf.train.Server in this process talking real gRPC on
127.0.0.1. The shards are placed round-robin over the PS tasks by replica_device_setter; the
numbers equal one unpartitioned variable in a local session; a sharded embedding step gathers on
each PS task and moves only the looked-up rows between tasks (the bytes pushed are counted)."""
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import worker as worker_module
from tests.distributed.cluster_util import in_process_cluster
from tests.grappler.helpers import off_config


ROWS, DIM = 4096, 16  # a 256 KiB table
LOOKED_UP = [5, 17, 17, 2050, 4000, 1023, 3071, 9]


@pytest.fixture(scope="module")
def cluster():
    with in_process_cluster(ps=2, worker=1) as servers:
        yield servers


class _PushCounter:
    """Sums the bytes of every tensor a task pushes to another (Worker.push)."""

    def __init__(self, monkeypatch):
        self.bytes = 0
        self.tensors = []
        self._lock = threading.Lock()
        original = worker_module.Worker.push

        def push(worker, peer, step_id, key, value, *rest):
            with self._lock:
                self.bytes += int(getattr(value, "nbytes", 0))
                self.tensors.append((str(key), getattr(value, "shape", None)))
            return original(worker, peer, step_id, key, value, *rest)

        monkeypatch.setattr(worker_module.Worker, "push", push)

    def reset(self):
        with self._lock:
            self.bytes = 0
            self.tensors = []


def _dense_model(partitioned, cluster_spec=None):
    """A linear model whose weight [9, 3] is partitioned in 2 (or not), trained by SGD."""
    rng = np.random.RandomState(0)
    xs = rng.uniform(-1, 1, (16, 9)).astype(np.float32)
    ys = rng.uniform(-1, 1, (16, 3)).astype(np.float32)
    weight0 = rng.uniform(-1, 1, (9, 3)).astype(np.float32)
    setter = tf.train.replica_device_setter(cluster=cluster_spec) if cluster_spec else None
    with tf.device(setter):
        part = tf.fixed_size_partitioner(2) if partitioned else None
        w = tf.get_variable("w", initializer=tf.constant(weight0), partitioner=part)
        b = tf.get_variable("b", [3], initializer=tf.zeros_initializer())
        loss = tf.reduce_mean(tf.square(tf.matmul(xs, w) + b - ys))
        train = tf.train.GradientDescentOptimizer(0.3).minimize(loss)
    full = w.as_tensor() if partitioned else w.value()
    return w, loss, train, full


def _train(target, model, steps=10):
    w, loss, train, full = model
    with tf.Session(target) as sess:
        sess.run(tf.global_variables_initializer())
        losses = [sess.run([loss, train])[0] for _ in range(steps)]
        return np.array(losses), sess.run(full)


def test_partitioned_weight_over_two_ps_equals_unpartitioned(cluster):
    with tf.Graph().as_default():
        local_losses, local_w = _train("", _dense_model(False))
    with tf.Graph().as_default():
        spec = tf.train.ClusterSpec(cluster["worker"][0].server_def.cluster)
        model = _dense_model(True, spec)
        assert [v.device for v in model[0]] == ["/job:ps/task:0", "/job:ps/task:1"]
        losses, w = _train(cluster["worker"][0].target, model)
    np.testing.assert_allclose(losses, local_losses, rtol=1e-5)
    np.testing.assert_allclose(w, local_w, rtol=1e-5, atol=1e-6)


def _embedding_model(partitioned, cluster_spec=None):
    table = (np.arange(ROWS * DIM, dtype=np.float32).reshape(ROWS, DIM) % 97) / 97.0 - 0.5
    setter = tf.train.replica_device_setter(cluster=cluster_spec) if cluster_spec else None
    with tf.device(setter):
        part = tf.fixed_size_partitioner(2) if partitioned else None
        emb = tf.get_variable("emb", initializer=tf.constant(table), partitioner=part)
        ids = tf.constant(LOOKED_UP, tf.int64)
        rows = tf.nn.embedding_lookup(emb, ids, partition_strategy="div", max_norm=2.0)
        loss = tf.reduce_sum(tf.square(rows - 0.25))
        train = tf.train.AdagradOptimizer(0.5).minimize(loss)
    return emb, loss, train, rows


def test_sharded_embedding_moves_only_looked_up_rows(cluster, monkeypatch):
    with tf.Graph().as_default():
        emb, loss, train, rows = _embedding_model(False)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            local = [sess.run([loss, train])[0] for _ in range(5)]
            local_rows = sess.run(rows)
            local_table = sess.run(emb)
    counter = _PushCounter(monkeypatch)
    with tf.Graph().as_default():
        spec = tf.train.ClusterSpec(cluster["worker"][0].server_def.cluster)
        emb, loss, train, rows = _embedding_model(True, spec)
        assert [v.device for v in emb] == ["/job:ps/task:0", "/job:ps/task:1"]
        # the graph as written: the master's constant folding would fold the partitioning of
        # the constant ids this test looks at
        with tf.Session(cluster["worker"][0].target, config=off_config()) as sess:
            sess.run(tf.global_variables_initializer())
            remote = [sess.run([loss, train])[0]]
            counter.reset()
            remote.append(sess.run([loss, train])[0])
            step_bytes = counter.bytes
            step_tensors = list(counter.tensors)
            print("bytes pushed in one step:", step_bytes, step_tensors)
            remote += [sess.run([loss, train])[0] for _ in range(3)]
            options, metadata = tf.RunOptions(output_partition_graphs=True), tf.RunMetadata()
            remote_rows = sess.run(rows, options=options, run_metadata=metadata)
            remote_table = sess.run(emb.as_tensor())
    np.testing.assert_allclose(remote, local, rtol=1e-5)
    np.testing.assert_allclose(remote_rows, local_rows, rtol=1e-5)
    np.testing.assert_allclose(remote_table, local_table, rtol=1e-5)
    # one training step: the looked-up rows go to the worker and their gradient rows back
    # (plus ids and indices), nowhere near the 256 KiB table
    rows_bytes = len(LOOKED_UP) * DIM * 4
    assert step_bytes >= 2 * rows_bytes, step_tensors
    assert step_bytes < 4 * rows_bytes, step_tensors
    assert step_bytes < ROWS * DIM * 4 / 50
    # the Gathers run on the PS tasks, DynamicPartition and the stitch on the worker
    placed = {}
    for graph_def in metadata.partition_graphs:
        for node in graph_def.node:
            placed.setdefault(node.op, set()).add(node.device)
    gather_ops = placed.get("GatherV2", set()) | placed.get("Gather", set())
    assert gather_ops == {"/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"}
    assert placed["DynamicPartition"] == {"/job:worker/replica:0/task:0/device:CPU:0"}
    assert placed["ParallelDynamicStitch"] == {"/job:worker/replica:0/task:0/device:CPU:0"}


def test_sparse_updates_run_on_each_shards_task(cluster):
    with tf.Graph().as_default():
        spec = tf.train.ClusterSpec(cluster["worker"][0].server_def.cluster)
        emb, loss, train, rows = _embedding_model(True, spec)
        with tf.Session(cluster["worker"][0].target) as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run(emb.as_tensor())
            options, metadata = tf.RunOptions(output_partition_graphs=True), tf.RunMetadata()
            sess.run(train, options=options, run_metadata=metadata)
            after = sess.run(emb.as_tensor())
    applies = {node.device for g in metadata.partition_graphs for node in g.node if node.op == "SparseApplyAdagrad"}
    assert applies == {"/job:ps/replica:0/task:0/device:CPU:0", "/job:ps/replica:0/task:1/device:CPU:0"}
    changed = np.flatnonzero(np.any(after != before, axis=1))
    assert changed.tolist() == sorted(set(LOOKED_UP))


def test_sharded_checkpoint_of_ps_shards_restores_locally(cluster, tmp_path):
    with tf.Graph().as_default():
        spec = tf.train.ClusterSpec(cluster["worker"][0].server_def.cluster)
        emb, loss, train, rows = _embedding_model(True, spec)
        saver = tf.train.Saver(sharded=True)
        with tf.Session(cluster["worker"][0].target) as sess:
            sess.run(tf.global_variables_initializer())
            sess.run(train)
            trained = sess.run(emb.as_tensor())
            path = saver.save(sess, str(tmp_path / "model"), write_meta_graph=False)
    with tf.Graph().as_default():
        emb = tf.get_variable("emb", [ROWS, DIM])  # one variable, one device
        with tf.Session() as sess:
            tf.train.Saver([emb]).restore(sess, path)
            np.testing.assert_array_equal(sess.run(emb), trained)


def test_shard_initializers_run_on_their_ps_task(cluster, monkeypatch):
    def build(spec=None):
        setter = tf.train.replica_device_setter(cluster=spec) if spec else None
        with tf.device(setter):
            emb = tf.get_variable("big", [ROWS, DIM], initializer=tf.random_uniform_initializer(-1.0, 1.0, seed=5),
                                  partitioner=tf.fixed_size_partitioner(2))
        return emb
    with tf.Graph().as_default():
        emb = build()
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            local = sess.run(emb.as_tensor())
    counter = _PushCounter(monkeypatch)
    with tf.Graph().as_default():
        emb = build(tf.train.ClusterSpec(cluster["worker"][0].server_def.cluster))
        with tf.Session(cluster["worker"][0].target) as sess:
            counter.reset()
            sess.run(tf.global_variables_initializer())
            init_bytes = counter.bytes
            np.testing.assert_array_equal(sess.run(emb.as_tensor()), local)
    # the shards are drawn where they live (TF colocates an initializer with its variable):
    # no table crosses tasks to initialize it
    assert init_bytes < 1024, counter.tensors


def test_replica_device_setter_deals_shards_round_robin():
    with tf.Graph().as_default():
        with tf.device(tf.train.replica_device_setter(ps_tasks=3)):
            a = tf.get_variable("a", [10, 2], partitioner=tf.fixed_size_partitioner(4))
            b = tf.get_variable("b", [3])
            rows = tf.nn.embedding_lookup(a, tf.constant([0, 9]), partition_strategy="div")
            train = tf.train.AdagradOptimizer(0.1).minimize(tf.reduce_sum(rows) + tf.reduce_sum(b))
        assert [v.device for v in a] + [b.device] == [
            "/job:ps/task:0", "/job:ps/task:1", "/job:ps/task:2", "/job:ps/task:0", "/job:ps/task:1"]
        graph = tf.get_default_graph()
        applies = [op for op in graph.get_operations() if op.type == "SparseApplyAdagrad"]
        assert sorted(op.device for op in applies) == sorted(v.device for v in a)
        assert train.device == "/job:worker"
