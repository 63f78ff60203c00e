"""Several logical devices in one process (white paper 3.2, 4.4): the same numbers on 1, 2 and 4
devices, loops and conds whose nodes span devices, and step stats per device."""
import numpy as np
import pytest

import tensorweave as tf

CPU = "/job:localhost/replica:0/task:0/device:CPU:{}"


def config(n, **kwargs):
    return tf.ConfigProto(device_count={"CPU": n}, operation_timeout_in_ms=30000, **kwargs)


# -- the same model, 1, 2 and 4 devices ---------------------------------------------------------------
def train_mlp(num_devices, placement, steps=6):
    """A 3-layer MLP trained with SGD; `placement(i)` gives layer i's device scope."""
    g = tf.Graph()
    with g.as_default():
        x = tf.placeholder(tf.float32, [16, 12])
        y = tf.placeholder(tf.float32, [16, 3])
        sizes = [12, 24, 24, 3]
        h = x
        for i in range(3):
            with tf.device(placement(i)):
                w = tf.get_variable(f"w{i}", [sizes[i], sizes[i + 1]],
                                    initializer=tf.glorot_uniform_initializer(seed=i))
                b = tf.get_variable(f"b{i}", [sizes[i + 1]], initializer=tf.zeros_initializer())
                h = tf.matmul(h, w) + b
                if i < 2:
                    h = tf.nn.relu(h)
        loss = tf.reduce_mean(tf.square(h - y))
        train = tf.train.MomentumOptimizer(0.05, 0.9).minimize(loss)
        rng = np.random.RandomState(0)
        xs = rng.randn(16, 12).astype(np.float32)
        ys = rng.randn(16, 3).astype(np.float32)
        with tf.Session(config=config(num_devices)) as sess:
            sess.run(tf.global_variables_initializer())
            losses = [sess.run([loss, train], {x: xs, y: ys})[0] for _ in range(steps)]
            weights = sess.run(tf.trainable_variables())
        devices = {op._assigned_device for op in g.get_operations() if op._assigned_device}
    return losses, weights, devices


def test_same_numbers_on_one_two_and_four_devices():
    base_losses, base_weights, base_devices = train_mlp(1, lambda i: "")
    assert len(base_devices) == 1 and base_losses[-1] < base_losses[0]
    for n in (2, 4):
        losses, weights, devices = train_mlp(n, lambda i, n=n: f"/device:CPU:{i % n}")
        assert len(devices) == min(n, 3)
        assert losses == base_losses
        for a, b in zip(weights, base_weights):
            np.testing.assert_array_equal(a, b)
    losses, weights, _ = train_mlp(2, lambda i: "")          # placed by the cost model
    assert losses == base_losses


# -- control flow across devices (white paper 4.4) -------------------------------------------------------
def test_while_loop_whose_body_spans_two_devices():
    def cond(i, x):
        with tf.device("/device:CPU:0"):
            return i < 10

    def body(i, x):
        with tf.device("/device:CPU:1"):
            x2 = x * 2.0 + 1.0
        with tf.device("/device:CPU:0"):
            i2 = i + 1
        return i2, x2

    with tf.device("/device:CPU:0"):
        start = tf.placeholder(tf.float32, [2])
        out = tf.while_loop(cond, body, [tf.constant(0), start])
    expected = np.array([1.0, 2.0])
    for _ in range(10):
        expected = expected * 2 + 1
    with tf.Session(config=config(2)) as sess:
        md = tf.RunMetadata()
        i, x = sess.run(out, {start: [1.0, 2.0]}, options=tf.RunOptions(output_partition_graphs=True),
                        run_metadata=md)
        assert i == 10
        np.testing.assert_array_equal(x, expected)
        for _ in range(5):
            np.testing.assert_array_equal(sess.run(out, {start: [1.0, 2.0]})[1], expected)
        np.testing.assert_array_equal(sess.run(out, {start: [0.0, 0.0]})[1], np.full(2, 1023.0))
    cpu1 = [g for g in md.partition_graphs if g.node[0].device == CPU.format(1)][0]
    ops = [n.op for n in cpu1.node]
    # the control loop that drives CPU:1's iterations from CPU:0's loop condition
    assert {"Enter", "Merge", "Switch", "NextIteration"} <= set(ops)
    assert ops.count("_Recv") >= 2


def test_loop_with_zero_iterations_and_state_on_another_device():
    with tf.device("/device:CPU:1"):
        counter = tf.Variable(0.0)
    n = tf.placeholder(tf.int32, [])

    def body(i):
        with tf.device("/device:CPU:1"):
            bump = tf.assign_add(counter, 1.0)
        with tf.control_dependencies([bump]):
            return i + 1

    with tf.device("/device:CPU:0"):
        out = tf.while_loop(lambda i: i < n, body, [tf.constant(0)], parallel_iterations=1)
    with tf.Session(config=config(2)) as sess:
        sess.run(counter.initializer)
        assert sess.run(out, {n: 0}) == 0
        assert sess.run(counter) == 0.0
        assert sess.run(out, {n: 7}) == 7
        assert sess.run(counter) == 7.0


def test_nested_loops_across_devices():
    def outer_body(i, acc):
        def inner_body(j, a):
            with tf.device("/device:CPU:1"):
                a2 = a + tf.cast(j, tf.float32)
            return j + 1, a2
        _, acc2 = tf.while_loop(lambda j, a: j < i, inner_body, [tf.constant(0), acc])
        return i + 1, acc2

    with tf.device("/device:CPU:0"):
        out = tf.while_loop(lambda i, acc: i < 6, outer_body, [tf.constant(0), tf.constant(0.0)])
    with tf.Session(config=config(2)) as sess:
        assert sess.run(out) == [6, sum(j for i in range(6) for j in range(i))]


def test_cond_branches_on_different_devices():
    pred = tf.placeholder(tf.bool, [])
    with tf.device("/device:CPU:0"):
        x = tf.constant(3.0)

    def true_fn():
        with tf.device("/device:CPU:1"):
            return x * 10.0

    def false_fn():
        with tf.device("/device:CPU:2"):
            return x - 1.0

    y = tf.cond(pred, true_fn, false_fn)
    with tf.device("/device:CPU:2"):
        z = y + 1.0
    grad = tf.gradients(z, x)[0]
    with tf.Session(config=config(3)) as sess:
        assert sess.run([y, z, grad], {pred: True}) == [30.0, 31.0, 10.0]
        assert sess.run([y, z, grad], {pred: False}) == [2.0, 3.0, 1.0]


# -- step stats ------------------------------------------------------------------------------------------
def test_full_trace_fills_step_stats_per_device():
    with tf.device("/device:CPU:0"):
        a = tf.constant(np.ones((4, 4), np.float32), name="a")
        b = tf.matmul(a, a, name="product")
    with tf.device("/device:CPU:1"):
        c = tf.reduce_sum(b, name="total")
    with tf.Session(config=config(2)) as sess:
        md = tf.RunMetadata()
        assert sess.run(c, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                        run_metadata=md) == 64.0
        untraced = tf.RunMetadata()
        sess.run(c, run_metadata=untraced)
    assert len(untraced.step_stats.dev_stats) == 0
    by_device = {d.device: d for d in md.step_stats.dev_stats}
    assert set(by_device) == {CPU.format(0), CPU.format(1)}
    nodes = {n.node_name: n for n in by_device[CPU.format(0)].node_stats}
    product = nodes["product"]
    assert product.all_start_micros > 1_500_000_000_000_000         # microseconds since the epoch
    assert product.op_end_rel_micros >= 0 and product.all_end_rel_micros >= product.op_start_rel_micros
    assert product.timeline_label == "product = MatMul(a, a)"
    out = product.output[0]
    assert out.slot == 0 and [d.size for d in out.tensor_description.shape.dim] == [4, 4]
    assert out.tensor_description.dtype == tf.float32.as_datatype_enum
    assert out.tensor_description.allocation_description.requested_bytes == 64
    names = {n.node_name for n in by_device[CPU.format(1)].node_stats}
    assert "total" in names and any(n.endswith("_recv") for n in names)
    send = [n for n in by_device[CPU.format(0)].node_stats if "= _Send(" in n.timeline_label]
    assert send and send[0].timeline_label.endswith(f"@{CPU.format(1)})")
    md.SerializeToString()                                              # a real RunMetadata proto


def test_single_device_trace_and_partition_graph():
    a = tf.constant(2.0, name="two")
    b = tf.square(a, name="four")
    with tf.Session() as sess:
        md = tf.RunMetadata()
        opts = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE, output_partition_graphs=True)
        assert sess.run(b, options=opts, run_metadata=md) == 4.0
    assert [d.device for d in md.step_stats.dev_stats] == [CPU.format(0)]
    assert {n.node_name for n in md.step_stats.dev_stats[0].node_stats} == {"two", "four"}
    (graph,) = md.partition_graphs
    assert {(n.name, n.op) for n in graph.node} >= {("two", "Const"), ("four", "Square")}
    assert all(n.device == CPU.format(0) for n in graph.node)


def test_step_timeout_applies_to_multi_device_steps():
    q = tf.FIFOQueue(1, tf.float32)
    with tf.device("/device:CPU:1"):
        out = q.dequeue() + 1.0
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 2})) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(out, options=tf.RunOptions(timeout_in_ms=200))
