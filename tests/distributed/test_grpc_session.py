"""Sessions on grpc:// targets: the master places and partitions over the cluster's tasks, the
workers run their subgraphs and push tensors to each other (in-process clusters: every task a
tf.train.Server of this process, talking over real gRPC)."""
from __future__ import annotations

import numpy as np
import pytest

import tensorweave as tf
from tests.distributed.cluster_util import in_process_cluster


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
                names = [d.name for d in sess.list_devices()]
                assert names == ["/job:localhost/replica:0/task:0/device:CPU:0"]
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
            assert a.op._assigned_device is None or True  # placement happens on the master's copy
            devices = {d.name for d in sess.list_devices()}
            assert "/job:ps/replica:0/task:1/device:CPU:0" in devices and len(devices) == 3


def test_unplaced_ops_stay_on_the_masters_task(cluster):
    with tf.Graph().as_default():
        c = tf.constant([1.0, 2.0]) * 3.0
        options = tf.RunOptions(output_partition_graphs=True)
        with tf.Session(_target(cluster)) as sess:
            np.testing.assert_allclose(sess.run(c, options=options), [3.0, 6.0])


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
