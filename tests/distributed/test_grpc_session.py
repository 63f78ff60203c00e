"""Sessions on grpc:// targets: the master places and partitions over the cluster's tasks, the
workers run their subgraphs and push tensors to each other (in-process clusters: every task a
tf.train.Server of this process, talking over real gRPC)."""
from __future__ import annotations

import gc
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tests.distributed.cluster_util import in_process_cluster
from tests.grappler.helpers import off_config


@pytest.fixture(scope="module")
def cluster():
    with in_process_cluster(ps=2, worker=1) as servers:
        yield servers


def _target(cluster) -> str:
    return cluster["worker"][0].target


def test_local_server_runs_steps_and_extends():
    server = tf.train.Server.create_local_server()
    try:
        assert server.target.startswith("grpc://localhost:")
        assert server.server_def.job_name == "localhost"
        assert server.server_def.cluster.job[0].tasks[0] == "localhost:0"  # as given, as TF keeps it
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None, 2], name="x")
            v = tf.Variable([[1.0], [2.0]], name="v")
            y = tf.matmul(x, v)
            with tf.Session(server.target) as sess:
                sess.run(tf.global_variables_initializer())
                out = sess.run({"y": y, "pair": (y, v)}, {x: [[1.0, 1.0]]})
                np.testing.assert_allclose(out["y"], [[3.0]])
                np.testing.assert_allclose(out["pair"][1], [[1.0], [2.0]])
                z = y * 10.0  # added after the session's first step: the master extends its graph
                np.testing.assert_allclose(sess.run(z, {x: [[2.0, 0.0]]}), [[20.0]])
                run = sess.make_callable(z, [x])
                np.testing.assert_allclose(run(np.array([[0.0, 1.0]], np.float32)), [[20.0]])
                devices = sess.list_devices()
                assert [d.name for d in devices] == ["/job:localhost/replica:0/task:0/device:CPU:0"]
                assert devices[0].device_type == "CPU" and devices[0].memory_limit_bytes == 268435456
                assert devices[0].incarnation != 0
    finally:
        server.stop()


def test_variables_on_ps_tasks_and_feeds_consumed_there(cluster):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            a = tf.Variable(tf.zeros([3]), name="a")
        with tf.device("/job:ps/task:1"):
            b = tf.Variable(tf.ones([3]), name="b")
        x = tf.placeholder(tf.float32, [3], name="x")
        with tf.device("/job:worker/task:0"):
            total = tf.reduce_sum(a + b * x)
        update = tf.group(tf.assign_add(a, x), tf.assign_sub(b, x))  # run on ps 0 and ps 1
        with tf.Session(_target(cluster)) as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(update, {x: [1.0, 2.0, 3.0]})
            np.testing.assert_allclose(sess.run(a), [3.0, 6.0, 9.0])
            np.testing.assert_allclose(sess.run(b), [-2.0, -5.0, -8.0])
            assert sess.run(total, {x: np.ones(3, np.float32)}) == pytest.approx(3.0)
            devices = {d.name for d in sess.list_devices()}
            assert "/job:ps/replica:0/task:1/device:CPU:0" in devices and len(devices) == 3


def test_unplaced_ops_stay_on_the_masters_task(cluster):
    with tf.Graph().as_default():
        c = tf.constant([1.0, 2.0]) * 3.0
        options, metadata = tf.RunOptions(output_partition_graphs=True), tf.RunMetadata()
        with tf.Session(_target(cluster)) as sess:
            np.testing.assert_allclose(sess.run(c, options=options, run_metadata=metadata), [3.0, 6.0])
        assert [node.device for g in metadata.partition_graphs for node in g.node] == [
            "/job:worker/replica:0/task:0/device:CPU:0"] * 3  # two constants and the product


def test_second_session_sees_the_same_variables(cluster):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(5.0, name="shared_v")
        with tf.Session(_target(cluster)) as sess:
            sess.run(v.initializer)
            sess.run(tf.assign_add(v, 2.0))
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v2 = tf.Variable(0.0, name="shared_v")
        with tf.Session(_target(cluster)) as sess:
            assert sess.run(v2) == 7.0  # state lives on the task, not in the session


def test_dead_values_cross_tasks(cluster):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.bool, [], name="p")
        with tf.device("/job:ps/task:0"):
            big = tf.constant(10.0)
        with tf.device("/job:worker/task:0"):
            small = tf.constant(1.0)
        out = tf.cond(p, lambda: big * 2.0, lambda: small + 1.0)
        with tf.Session(_target(cluster)) as sess:
            assert sess.run(out, {p: True}) == 20.0
            assert sess.run(out, {p: False}) == 2.0


def test_while_loop_partitioned_over_tasks(cluster):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:1"):
            step = tf.constant(3.0)

        def body(i, acc):
            with tf.device("/job:ps/task:1"):
                grown = acc + step
            return i + 1, grown

        with tf.device("/job:worker/task:0"):
            _, result = tf.while_loop(lambda i, acc: i < 5, body, [tf.constant(0), tf.constant(1.0)])
        with tf.Session(_target(cluster)) as sess:
            assert sess.run(result) == 16.0


def test_strings_and_large_tensors_cross_tasks(cluster):
    with tf.Graph().as_default():
        words = tf.placeholder(tf.string, [None], name="words")
        big = tf.placeholder(tf.float32, [None], name="big")
        with tf.device("/job:ps/task:0"):
            joined = tf.strings.join([words, tf.constant("!")])
            doubled = big * 2.0  # 8 MB each way: streamed in chunks
        with tf.device("/job:worker/task:0"):
            lengths = tf.strings.length(joined)
            total = tf.reduce_sum(doubled)
        values = np.arange(2_000_000, dtype=np.float32)
        with tf.Session(_target(cluster)) as sess:
            out, n, got, s = sess.run([joined, lengths, doubled, total], {words: [b"ab", b"", "céu"], big: values})
            assert list(out) == [b"ab!", b"!", "céu!".encode()]
            assert list(n) == [3, 1, 5]
            np.testing.assert_array_equal(got, values * 2)
            assert s == pytest.approx(float(values.astype(np.float64).sum() * 2), rel=1e-5)


def test_bfloat16_transfers_across_tasks(cluster):
    config = tf.ConfigProto(graph_options=tf.GraphOptions(enable_bfloat16_sendrecv=True))
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            x = tf.constant([1.0, 3.14159265, -1e-3, 1e5])
        with tf.device("/job:worker/task:0"):
            y = x * 1.0
        with tf.Session(_target(cluster), config=config) as sess:
            got = sess.run(y)
    np.testing.assert_allclose(got, [1.0, 3.14159265, -1e-3, 1e5], rtol=2 ** -8)
    assert got[1] != np.float32(3.14159265)  # it did go through 16 bits


def test_device_filters_limit_the_tasks(cluster):
    config = tf.ConfigProto(device_filters=["/job:ps/task:1"])
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            hidden = tf.constant(1.0)
        with tf.Session(_target(cluster), config=config) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(hidden)
    config = tf.ConfigProto(device_filters=["/job:ps/task:1"], allow_soft_placement=True)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            hidden = tf.constant(1.0) + 1.0
        with tf.Session(_target(cluster), config=config) as sess:
            assert sess.run(hidden) == 2.0


def test_reset_clears_containers_on_every_task(cluster):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:1"):
            v = tf.Variable(3.0, name="reset_me")
        with tf.Session(_target(cluster)) as sess:
            sess.run(v.initializer)
            assert sess.run(v) == 3.0
        tf.Session.reset(_target(cluster))
        with tf.Session(_target(cluster)) as sess:
            with pytest.raises(tf.errors.FailedPreconditionError):
                sess.run(v)


def test_errors_from_tasks_keep_their_class(cluster):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None)
        with tf.device("/job:ps/task:0"):
            bad = tf.reshape(x, [3])
        with tf.Session(_target(cluster)) as sess:
            with pytest.raises(tf.errors.InvalidArgumentError):
                sess.run(bad, {x: [1.0, 2.0]})
            assert list(sess.run(x * 1.0, {x: [1.0, 2.0]})) == [1.0, 2.0]  # the session goes on


def test_queue_shared_by_name_across_sessions(cluster):
    def queue():
        with tf.device("/job:ps/task:0"):
            return tf.FIFOQueue(10, tf.int32, shapes=[], shared_name="shared_q", name="q")

    with tf.Graph().as_default():
        q = queue()
        enqueue = q.enqueue(tf.constant(41))
        with tf.Session(_target(cluster)) as sess:
            sess.run(enqueue)
    with tf.Graph().as_default():
        q = queue()
        with tf.Session(_target(cluster)) as sess:
            assert sess.run(q.dequeue()) == 41


def _train_mlp(target: str, steps: int = 5) -> list[float]:
    with tf.Graph().as_default():
        tf.set_random_seed(7)
        rng = np.random.RandomState(0)
        xs = rng.randn(32, 4).astype(np.float32)
        ys = (xs.sum(axis=1, keepdims=True) > 0).astype(np.float32)
        cluster = tf.train.ClusterSpec({"ps": ["a:1", "b:2"], "worker": ["c:3"]})
        setter = tf.train.replica_device_setter(cluster=cluster) if target else None
        with tf.device(setter):
            x = tf.placeholder(tf.float32, [None, 4])
            y = tf.placeholder(tf.float32, [None, 1])
            hidden = tf.layers.dense(x, 8, activation=tf.nn.relu)
            logits = tf.layers.dense(hidden, 1)
            loss = tf.losses.sigmoid_cross_entropy(y, logits)
            global_step = tf.train.get_or_create_global_step()
            train = tf.train.GradientDescentOptimizer(0.5).minimize(loss, global_step=global_step)
        with tf.Session(target) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [float(sess.run([train, loss], {x: xs, y: ys})[1]) for _ in range(steps)]
            assert sess.run(global_step) == steps
            return losses


def test_training_through_the_cluster_matches_local_training(cluster):
    local = _train_mlp("")
    distributed = _train_mlp(_target(cluster))
    np.testing.assert_allclose(distributed, local, rtol=1e-6)
    assert distributed[-1] < distributed[0]


def test_updates_follow_the_variable_whatever_their_device_scope(cluster):
    # TF runs an update where its variable lives, even when created under another task's scope
    # (replica_device_setter programs do `assign_add(global_step, 1)` on the worker).
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:1"):
            v = tf.Variable(1.0, name="follow_v")
        with tf.device("/job:worker/task:0"):
            inc = tf.assign_add(v, 2.0)
        with tf.Session(_target(cluster)) as sess:
            sess.run(v.initializer)
            assert sess.run(inc) == 3.0
            assert sess.run(v) == 3.0


def test_in_graph_replication_over_two_worker_tasks():
    with in_process_cluster(ps=1, worker=2) as servers:
        with tf.Graph().as_default():
            with tf.device("/job:ps/task:0"):
                w = tf.Variable([[0.0], [0.0]], name="w")
            xs = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]], np.float32)
            ys = xs @ np.array([[0.5], [-1.0]], np.float32)
            grads, losses = [], []
            for tower in range(2):  # one client, a tower on each worker task
                with tf.device(f"/job:worker/task:{tower}"):
                    x = tf.constant(xs[tower * 2:(tower + 1) * 2])
                    y = tf.constant(ys[tower * 2:(tower + 1) * 2])
                    loss = tf.reduce_mean(tf.square(tf.matmul(x, w) - y))
                    grads.append(tf.gradients(loss, w)[0])
                    losses.append(loss)
            with tf.device("/job:ps/task:0"):
                train = tf.assign_sub(w, 0.01 * tf.add_n(grads) / 2.0)
            total = tf.add_n(losses)
            with tf.Session(servers["worker"][0].target) as sess:
                sess.run(w.initializer)
                first = sess.run(total)
                for _ in range(50):
                    sess.run(train)
                assert sess.run(total) < first * 0.2
                options, metadata = tf.RunOptions(output_partition_graphs=True), tf.RunMetadata()
                sess.run(train, options=options, run_metadata=metadata)
                devices = {node.device for g in metadata.partition_graphs for node in g.node}
                assert {"/job:worker/replica:0/task:0/device:CPU:0", "/job:worker/replica:0/task:1/device:CPU:0",
                        "/job:ps/replica:0/task:0/device:CPU:0"} == devices  # a tower on each worker task
            # the reference: the same arithmetic in NumPy
            weights = np.zeros((2, 1), np.float32)
            for _ in range(51):
                g = sum(2 * xs[t * 2:(t + 1) * 2].T @ (xs[t * 2:(t + 1) * 2] @ weights - ys[t * 2:(t + 1) * 2]) / 2
                        for t in range(2))
                weights -= 0.01 * g / 2.0
            with tf.Session(servers["worker"][0].target) as sess:
                np.testing.assert_allclose(sess.run(w), weights, rtol=1e-4)


def test_traced_steps_collect_every_tasks_step_stats(cluster):
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            a = tf.constant([1.0, 2.0], name="on_ps") * 2.0
        with tf.device("/job:worker/task:0"):
            b = tf.reduce_sum(a, name="on_worker")
        options = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)
        metadata = tf.RunMetadata()
        # the graph as written: the master's constant folding would leave nothing to run on the PS
        with tf.Session(_target(cluster), config=off_config()) as sess:
            assert sess.run(b, options=options, run_metadata=metadata) == 6.0
        by_device = {d.device: {n.node_name for n in d.node_stats} for d in metadata.step_stats.dev_stats}
        assert "on_ps" in by_device["/job:ps/replica:0/task:0/device:CPU:0"]
        assert "on_worker" in by_device["/job:worker/replica:0/task:0/device:CPU:0"]


def test_supervisor_between_graph_workers_share_the_ps(tmp_path):
    results: dict[int, tuple[float, int]] = {}
    with in_process_cluster(ps=1, worker=2) as servers:
        def worker(task: int) -> None:
            with tf.Graph().as_default():
                setter = tf.train.replica_device_setter(worker_device=f"/job:worker/task:{task}", ps_tasks=1)
                with tf.device(setter):
                    step = tf.train.get_or_create_global_step()
                    w = tf.get_variable("w", [], initializer=tf.zeros_initializer())
                    loss = tf.square(w - 3.0)
                    train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, global_step=step)
                sv = tf.train.Supervisor(is_chief=task == 0, logdir=str(tmp_path) if task == 0 else None,
                                         global_step=step, save_model_secs=0, save_summaries_secs=0,
                                         recovery_wait_secs=0.2)
                with sv.managed_session(servers["worker"][task].target) as sess:
                    for _ in range(30):
                        _, value, at = sess.run([train, loss, step])
                    results[task] = (float(value), int(at))
                sv.stop()

        threads = [threading.Thread(target=worker, args=(t,)) for t in (1, 0)]  # the non-chief waits
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
    assert sorted(results) == [0, 1]
    assert max(at for _, at in results.values()) == 60  # one global step, on the PS, for both
    assert all(value < 1e-3 for value, _ in results.values())


def test_subgraphs_register_once_per_signature_and_go_at_close(cluster):
    ps_worker = cluster["ps"][0]._worker
    before = set(ps_worker._graphs)
    with tf.Graph().as_default():
        with tf.device("/job:ps/task:0"):
            v = tf.Variable(0.0, name="count_v")
        inc = tf.assign_add(v, 1.0)
        with tf.Session(_target(cluster)) as sess:
            sess.run(v.initializer)
            for _ in range(20):
                sess.run(inc)
            assert sess.run(v) == 20.0
            registered = set(ps_worker._graphs) - before
            assert len(registered) == 3  # initializer, increment, read: once each, not per step
        assert set(ps_worker._graphs) - before == set()  # deregistered when the session closed


def test_a_dropped_session_closes_its_master_session(cluster):
    master = cluster["worker"][0]._master
    before = set(master.sessions)
    with tf.Graph().as_default():
        sess = tf.Session(_target(cluster))
        assert sess.run(tf.constant(2.0) * 3.0) == 6.0
        assert len(set(master.sessions) - before) == 1
        del sess
        gc.collect()
        deadline = time.monotonic() + 5
        while set(master.sessions) - before and time.monotonic() < deadline:
            time.sleep(0.01)
    assert set(master.sessions) - before == set()
