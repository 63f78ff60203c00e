"""Partitioning (white paper 3.2.2, 5.2, 5.5) and the rendezvous: one Send/Recv pair per (tensor,
destination device), control edges across devices, dead values crossing, failures cancelling
every partition, Recv scheduling lowering peak memory, 16-bit transfers."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.sendrecv import pack_bfloat16, unpack_bfloat16
from tensorweave.runtime.rendezvous import LocalRendezvous
from tensorweave.runtime.step_context import DEAD

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}"


def config(n, **kwargs):
    return tf.ConfigProto(device_count={"CPU": n}, operation_timeout_in_ms=20000, **kwargs)


def partition_graphs(sess, fetches, feed_dict=None):
    md = tf.RunMetadata()
    result = sess.run(fetches, feed_dict, options=tf.RunOptions(output_partition_graphs=True), run_metadata=md)
    return result, {g.node[0].device: g for g in md.partition_graphs}


def nodes_of(graph_def, op_type):
    return [n for n in graph_def.node if n.op == op_type]


# -- the rendezvous ----------------------------------------------------------------------------------
def key(name, frame="", iteration=0):
    return LocalRendezvous.create_key(CPU.format(0), 7, CPU.format(1), name, frame, iteration)


def test_rendezvous_either_side_may_come_first():
    r = LocalRendezvous()
    got = []
    r.send(key("early"), 1.0, False)
    r.recv_async(key("early"), lambda err, v, dead: got.append((err, v, dead)))
    r.recv_async(key("late"), lambda err, v, dead: got.append((err, v, dead)))
    assert len(got) == 1
    r.send(key("late"), 2.0, False)
    r.send(key("dead"), None, True)
    r.recv_async(key("dead"), lambda err, v, dead: got.append((err, v, dead)))
    assert got == [(None, 1.0, False), (None, 2.0, False), (None, None, True)]
    assert r.num_pending == 0


def test_rendezvous_keys_include_frame_and_iteration():
    r = LocalRendezvous()
    got = []
    for i in range(3):
        r.send(key("x", "loop", i), i * 10, False)
    r.recv_async(key("x", "loop", 2), lambda err, v, dead: got.append(v))
    r.recv_async(key("x", "", 0), lambda err, v, dead: got.append(v))
    assert got == [20]
    assert str(key("x", "loop", 2)).endswith(";x;loop:2")
    assert key("x", "loop", 2) == key("x", "loop", 2) and key("x", "loop", 2) != key("x", "loop", 1)


def test_rendezvous_abort_wakes_waiters_and_fails_later_calls():
    r = LocalRendezvous()
    got = []
    r.recv_async(key("never"), lambda err, v, dead: got.append(err))
    error = tf.errors.CancelledError(None, None, "step cancelled")
    r.start_abort(error)
    assert got == [error]
    r.recv_async(key("after"), lambda err, v, dead: got.append(err))
    assert got == [error, error]
    with pytest.raises(tf.errors.CancelledError):
        r.send(key("after"), 1.0, False)


# -- Send/Recv pairs -----------------------------------------------------------------------------------
def test_one_send_recv_pair_per_tensor_and_destination_device():
    with tf.device("/device:CPU:0"):
        x = tf.constant(np.arange(4, dtype=np.float32))
        y = x * 2.0
    with tf.device("/device:CPU:1"):
        a, b, c = y + 1.0, y * 3.0, tf.reduce_sum(y)     # three consumers of y on CPU:1
    with tf.device("/device:CPU:2"):
        d, e = y - 1.0, tf.reduce_max(y) + c               # two of y, one of c, on CPU:2
    with tf.Session(config=config(3)) as sess:
        values, graphs = partition_graphs(sess, [a, b, c, d, e])
    np.testing.assert_array_equal(values[0], [1, 3, 5, 7])
    assert values[4] == 6.0 + 12.0
    sends = nodes_of(graphs[CPU.format(0)], "_Send") + nodes_of(graphs[CPU.format(1)], "_Send")
    recvs = {dev: nodes_of(g, "_Recv") for dev, g in graphs.items()}
    assert len(recvs[CPU.format(1)]) == 1                       # y once
    assert len(recvs[CPU.format(2)]) == 2                       # y once, c once
    assert len(sends) == 3
    pairs = {(n.attr["tensor_name"].s, n.attr["recv_device"].s) for n in sends}
    assert pairs == {(n.attr["tensor_name"].s, n.attr["recv_device"].s.decode().encode())
                     for dev in recvs for n in recvs[dev]}
    for n in sends:
        assert n.attr["send_device"].s.decode() == n.device
        assert n.attr["send_device_incarnation"].i != 0
    consumers = [n for n in graphs[CPU.format(1)].node if n.op in ("AddV2", "Mul", "Sum")]
    assert all(recvs[CPU.format(1)][0].name in list(n.input) for n in consumers)


def test_control_edges_cross_devices():
    with tf.device("/device:CPU:0"):
        v = tf.Variable(0.0)
        bump = tf.assign_add(v, 1.0)
    with tf.device("/device:CPU:1"):
        with tf.control_dependencies([bump]):
            after = tf.constant(5.0) * 1.0
    with tf.Session(config=config(2)) as sess:
        sess.run(v.initializer)
        value, graphs = partition_graphs(sess, after)
        assert value == 5.0 and sess.run(v) == 1.0     # the control input ran
        for _ in range(3):
            sess.run(after)
        assert sess.run(v) == 4.0
    recv = nodes_of(graphs[CPU.format(1)], "_Recv")
    assert len(recv) == 1
    controlled = [n for n in graphs[CPU.format(1)].node if f"^{recv[0].name}" in list(n.input)]
    assert controlled, "the control edge must now come from the Recv"


def test_feeds_and_fetches_on_several_devices():
    x = tf.placeholder(tf.float32, [2])
    with tf.device("/device:CPU:0"):
        a = x + 1.0
    with tf.device("/device:CPU:1"):
        b = x * 2.0
    with tf.Session(config=config(2)) as sess:
        out = sess.run([a, b, x], {x: [1.0, 2.0]})
    assert [o.tolist() for o in out] == [[2.0, 3.0], [2.0, 4.0], [1.0, 2.0]]


def test_dead_values_cross_devices():
    pred = tf.placeholder(tf.bool, [])
    with tf.device("/device:CPU:0"):
        x = tf.constant(3.0)
    with tf.device("/device:CPU:1"):
        y = tf.cond(pred, lambda: x * 10.0, lambda: x - 1.0)
    with tf.Session(config=config(2)) as sess:
        assert sess.run(y, {pred: True}) == 30.0
        assert sess.run(y, {pred: False}) == 2.0


def test_error_in_one_partition_cancels_the_others():
    def fail(v):
        raise ValueError("bad value")

    with tf.device("/device:CPU:0"):
        broken = tf.py_func(fail, [tf.constant(1.0)], tf.float32)
    with tf.device("/device:CPU:1"):
        waiting = tf.identity(broken) + 1.0                   # blocks on its Recv
        other = tf.constant(2.0) * 2.0
    with tf.Session(config=config(2)) as sess:
        start = time.monotonic()
        with pytest.raises(tf.errors.InvalidArgumentError, match="bad value"):
            sess.run([waiting, other])
        assert time.monotonic() - start < 10.0
        assert sess.run(other) == 4.0                          # the session still works


def test_closing_the_session_cancels_a_waiting_multi_device_step():
    q = tf.FIFOQueue(2, tf.float32)
    with tf.device("/device:CPU:0"):
        item = q.dequeue()                                     # never fed: waits
    with tf.device("/device:CPU:1"):
        out = item * 2.0
    sess = tf.Session(config=tf.ConfigProto(device_count={"CPU": 2}))
    errors = []

    def run():
        try:
            sess.run(out)
        except tf.errors.OpError as err:
            errors.append(err)

    t = threading.Thread(target=run)
    t.start()
    time.sleep(0.2)
    sess.close()
    t.join(10)
    assert not t.is_alive() and isinstance(errors[0], tf.errors.CancelledError)


def test_concurrent_steps_keep_their_transfers_apart():
    x = tf.placeholder(tf.float32, [])
    with tf.device("/device:CPU:0"):
        a = x * 2.0
    with tf.device("/device:CPU:1"):
        b = a + x
    results = {}
    with tf.Session(config=config(2)) as sess:
        def worker(k):
            results[k] = [sess.run(b, {x: float(k * 100 + i)}) for i in range(50)]
        threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
    for k in range(4):
        assert results[k] == [3.0 * (k * 100 + i) for i in range(50)]


# -- ASAP/ALAP Recv scheduling (white paper 5.2) ----------------------------------------------------
def recv_heavy_graph(k=5, n=512):
    """Device 0 makes k large tensors at once; device 1 consumes them one by one along a chain
    of matmuls, so Recvs that start early hold them all on device 1."""
    with tf.device("/device:CPU:0"):
        seed = tf.constant(np.float32(1.0))
        bigs = [tf.fill([n, n], seed * (i + 1)) for i in range(k)]
    with tf.device("/device:CPU:1"):
        w = tf.constant(np.eye(n, dtype=np.float32))
        h = tf.constant(np.ones((n, n), np.float32) / n)
        for big in bigs:
            h = tf.matmul(h, w) + big
        out = tf.reduce_sum(h)
    return out


def peak_on(sess, fetch, device):
    md = tf.RunMetadata()
    value = sess.run(fetch, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    stats = [d for d in md.step_stats.dev_stats if d.device == device][0]
    return value, max(n.memory[0].allocator_bytes_in_use for n in stats.node_stats)


def test_recv_scheduling_lowers_peak_memory():
    out = recv_heavy_graph()
    results = {}
    for scheduled in (False, True):
        cfg = config(2, graph_options=tf.GraphOptions(enable_recv_scheduling=scheduled))
        with tf.Session(config=cfg) as sess:
            results[scheduled] = [peak_on(sess, out, CPU.format(1)) for _ in range(3)]
    assert {v for v, _ in results[True]} == {v for v, _ in results[False]}
    early = min(p for _, p in results[False])
    late = max(p for _, p in results[True])
    big = 512 * 512 * 4
    assert early >= 4 * big          # every Recv'd tensor held at once
    assert late <= 3 * big           # received just before use
    with tf.Session(config=config(2, graph_options=tf.GraphOptions(enable_recv_scheduling=True))) as sess:
        _, graphs = partition_graphs(sess, out)
    recvs = nodes_of(graphs[CPU.format(1)], "_Recv")
    assert sum(any(i.startswith("^") for i in r.input) for r in recvs) >= 3


# -- lossy 16-bit transfers (white paper 5.5) -------------------------------------------------------------
def test_bfloat16_round_trip_error_bound():
    rng = np.random.RandomState(0)
    values = (rng.randn(100000) * np.exp2(rng.randint(-60, 60, 100000))).astype(np.float32)
    packed = pack_bfloat16(values)
    assert packed.dtype == np.uint16 and packed.nbytes == values.nbytes // 2
    restored = unpack_bfloat16(packed)
    rel = np.abs(restored - values) / np.abs(values)
    assert rel.max() <= 2.0 ** -8
    assert (restored.view(np.uint32) & 0xFFFF).max() == 0          # low mantissa bits zero-filled
    special = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1.0], np.float32)
    back = unpack_bfloat16(pack_bfloat16(special))
    assert np.isposinf(back[0]) and np.isneginf(back[1]) and np.isnan(back[2])
    assert back[3:].tolist() == [0.0, -0.0, 1.0] and np.signbit(back[4])


def test_bfloat16_sendrecv_option():
    rng = np.random.RandomState(1)
    data = rng.randn(64).astype(np.float32)
    with tf.device("/device:CPU:0"):
        x = tf.constant(data)
        n = tf.constant(np.arange(3, dtype=np.int32))
    with tf.device("/device:CPU:1"):
        y = tf.identity(x)
        m = n + 0
    with tf.Session(config=config(2)) as sess:                    # off by default: exact
        exact, graphs = partition_graphs(sess, [y, m])
    np.testing.assert_array_equal(exact[0], data)
    assert not nodes_of(graphs[CPU.format(0)], "_Bfloat16Pack")
    cfg = config(2, graph_options=tf.GraphOptions(enable_bfloat16_sendrecv=True))
    with tf.Session(config=cfg) as sess:
        lossy, graphs = partition_graphs(sess, [y, m])
    assert not np.array_equal(lossy[0], data)
    assert np.max(np.abs(lossy[0] - data) / np.abs(data)) <= 2.0 ** -8
    assert lossy[1].tolist() == [0, 1, 2]                          # only float32 is compressed
    sends = nodes_of(graphs[CPU.format(0)], "_Send")
    assert sorted(s.attr["T"].type for s in sends) == sorted([tf.uint16.as_datatype_enum,
                                                              tf.int32.as_datatype_enum])
    assert len(nodes_of(graphs[CPU.format(1)], "_Bfloat16Unpack")) == 1


def test_dead_marker_is_not_a_value():
    assert repr(DEAD) == "<dead>"
