"""State a master session keeps on a task (in-process cluster: a PS and a worker server in this
process, talking over gRPC on 127.0.0.1).

- Stateful kernels are shared by every graph one session registers on a task (TF's OpSegment):
  a queue without a shared name, filled by one run signature, is the queue the next one reads,
  and a random op goes on with its sequence across run signatures, as in a local session; a new
  session gets new ones.
- An op taking a resource handle runs where the resource lives (TF's placer colocates resource
  edges), so a queue's enqueue built outside the queue's device scope still reaches it.
- A step aborted on a task before it started there ends there at once.
"""
import contextlib
import socket

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.distributed import wire
from tensorweave.distributed.worker import Worker


def _addresses(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [f"127.0.0.1:{s.getsockname()[1]}" for s in socks]
    finally:
        for s in socks:
            s.close()


@contextlib.contextmanager
def in_process_cluster():
    ps_address, worker_address = _addresses(2)
    spec = {"ps": [ps_address], "worker": [worker_address]}
    servers = [tf.train.Server(spec, job_name="ps", task_index=0),
               tf.train.Server(spec, job_name="worker", task_index=0)]
    try:
        yield servers[1]
    finally:
        for server in servers:
            server.stop()


def test_unshared_queue_and_random_state_outlive_run_signatures():
    with in_process_cluster() as worker:
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="q")
            r = tf.random_uniform([], seed=3, name="r")
        enqueue, size, dequeue = q.enqueue(3.0), q.size(), q.dequeue()
        with tf.Session(config=tf.ConfigProto(allow_soft_placement=True)) as local:
            expected = [local.run(r), local.run([r, size])[0], local.run(r)]
        with tf.Session(worker.target) as sess:
            sess.run(enqueue)
            sess.run(enqueue)
            assert sess.run(size) == 2
            got = [sess.run(r), sess.run([r, size])[0], sess.run(r)]
            assert sess.run(dequeue) == 3.0 and sess.run(size) == 1
        np.testing.assert_array_equal(got, expected)
        with tf.Session(worker.target) as again:  # a new session: a new queue, a new sequence
            assert again.run(size) == 0
            assert again.run(r) == expected[0]


def test_graph_extension_keeps_a_sessions_queue():
    with in_process_cluster() as worker:
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(4, tf.int32, shapes=[[]], name="q")
        with tf.Session(worker.target) as sess:
            sess.run(q.enqueue(7))
            size = q.size()  # a node added after the first run: the graph is extended
            assert sess.run(size) == 1
            assert sess.run(q.dequeue()) == 7


def test_resource_and_ref_consumers_run_where_the_state_lives():
    """As TF's placer: the state's device wins over the consumer's own request."""
    with tf.device("/device:CPU:1"):
        q = tf.FIFOQueue(4, tf.float32, shapes=[[]], name="q")
        v = tf.Variable(1.0, name="v")
    enqueue = q.enqueue(1.0)  # built outside the state's scope
    with tf.device("/device:CPU:0"):  # or under another device's
        enqueue_too = q.enqueue(2.0)
        add = tf.assign_add(v, 1.0)
        doubled = v * 2.0
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        sess.run([enqueue, enqueue_too, v.initializer])
        assert sess.run(q.size()) == 2
        assert sess.run(add) == 2.0 and sess.run(doubled) == 4.0
    for op in (enqueue, enqueue_too, add.op):
        assert op._assigned_device.endswith("CPU:1"), op.name
    assert doubled.op._assigned_device.endswith("CPU:0")  # a read is no ref argument: stays


def test_enqueue_outside_the_ps_scope_reaches_the_ps_queue():
    with in_process_cluster() as worker:
        with tf.device("/job:ps/task:0"):
            q = tf.FIFOQueue(4, tf.int32, shapes=[[]], shared_name="done", name="q")
        with tf.device("/job:worker/task:0"):
            enqueue = q.enqueue(5)
        with tf.Session(worker.target) as sess:
            sess.run(enqueue)
        # Another session (another client) sees the queue by its shared name.
        g = tf.Graph()
        with g.as_default(), tf.device("/job:ps/task:0"):
            same = tf.FIFOQueue(4, tf.int32, shapes=[[]], shared_name="done", name="other")
            with tf.Session(worker.target) as sess:
                assert sess.run(same.dequeue()) == 5


def test_an_abort_before_the_step_ends_it_on_the_task():
    """AbortStep for a step that has not started here (or never will): its RunGraph fails at
    once, values pushed to it are dropped, and the task keeps nothing for it."""
    worker = Worker("worker", 0, tf.train.ClusterSpec({"worker": ["127.0.0.1:1"]}))
    try:
        g = tf.Graph()
        with g.as_default():
            tf.constant(2.5, name="c")
        graph_def = np.frombuffer(g.as_graph_def().SerializeToString(), np.uint8)
        handle = worker.register_graph(wire.Message({}, {"graph_def": graph_def}))[0]["handle"]
        device = worker.devices.devices[0].name
        key = [device, 1, device, "t", "", 0]
        worker.push_tensor(wire.Message({"step": 5, "key": key}, {"value": np.float32(1.0)}))
        worker.abort_step(wire.Message({"step": 5}, {}))
        assert not worker._steps  # the value pushed before the abort went with it
        run = {"handle": handle, "feeds": [], "fetches": ["c:0"], "targets": []}
        with pytest.raises(tf.errors.AbortedError):
            worker.run_graph(wire.Message(dict(run, step=5), {}))
        assert worker.push_tensor(wire.Message({"step": 5, "key": key}, {"value": np.float32(1.0)}))[0] == {
            "dropped": True}
        assert worker.run_graph(wire.Message(dict(run, step=6), {}))[1] == [("c:0", 2.5)]
        assert not worker._steps and worker.get_status(wire.Message({}, {}))[0]["steps"] == 0
    finally:
        worker.shutdown()
