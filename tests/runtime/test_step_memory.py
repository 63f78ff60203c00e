"""Memory in traced steps' StepStats (FULL_TRACE): each node's AllocatorMemoryUsed as TF fills it
(total, peak and live bytes of its own allocations, the allocator's bytes in use with its inputs
and outputs alive, allocation records), outputs freed right after their last consumer in both
executors, buffers counted once across views, and the per-device peak."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.runtime.executor_choice import ExecutorStrategy
from tensorweave.runtime.step_stats import peak_bytes_in_use

STRATEGIES = [ExecutorStrategy.SEQUENTIAL, ExecutorStrategy.DATAFLOW]
N = 256 * 4  # bytes of one float32 [256] value


def traced(fetches, feed, strategy=None, init=None):
    md = tf.RunMetadata()
    with tf.Session() as sess:
        sess._executor_strategy = strategy
        if init is not None:
            sess.run(init)
        values = sess.run(fetches, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                          run_metadata=md)
        devices = sess._device_mgr.devices
    (dev,) = md.step_stats.dev_stats
    return values, md, {n.node_name: n for n in dev.node_stats}, [n.node_name for n in dev.node_stats], devices


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_a_chain_holds_two_values_at_a_time(strategy):
    x = tf.placeholder(tf.float32, [256])
    y = x
    for i in range(6):
        y = y * 2.0 if i % 2 else y + 1.0
    value, md, nodes, order, devices = traced(y, {x: np.ones(256, np.float32)}, strategy)
    kernels = [n for n in nodes.values() if n.node_name.startswith(("mul", "add")) and "/" not in n.node_name]
    assert len(kernels) == 6
    for n in kernels:
        (m,) = n.memory
        assert m.allocator_name == "cpu"
        assert (m.total_bytes, m.peak_bytes, m.live_bytes) == (N, N, N)
        assert m.allocator_bytes_in_use == 2 * N        # its input and its output
        assert [r.alloc_bytes for r in m.allocation_records] == [N]
        assert n.output[0].tensor_description.allocation_description.allocated_bytes == N
    # freed at the last use: never more than two of the seven values at once (not 7 * N)
    assert peak_bytes_in_use(md.step_stats) == {devices[0].name: 2 * N}
    assert devices[0].stats.bytes_in_use == 0            # the step released what it counted


def test_fan_out_values_live_until_their_last_consumer():
    x = tf.placeholder(tf.float32, [256])
    w = tf.Variable(np.ones(256, np.float32))
    a = tf.multiply(x, 2.0, name="a")
    b = tf.add(a, 1.0, name="b")
    kept = tf.reshape(tf.add(a, w, name="sum"), [16, 16], name="kept")  # fetched: a view, alive to the end
    c = tf.multiply(b, 3.0, name="c")
    d = tf.subtract(c, 4.0, name="d")
    top, _ = tf.nn.top_k(tf.reshape(d, [16, 16], name="square"), k=4, name="top")  # indices unused
    out = tf.add(top, 1.0, name="out")
    _, md, nodes, order, devices = traced([d, out, kept], {x: np.ones(256, np.float32)},
                                          ExecutorStrategy.SEQUENTIAL, w.initializer)
    in_use = {name: nodes[name].memory[0].allocator_bytes_in_use for name in order if nodes[name].memory}
    assert in_use["a"] == 2 * N                          # the feed and a
    assert in_use["b"] == 2 * N                          # the feed is gone; a and b
    assert in_use["sum"] == 3 * N                        # a's last use: a, b and the sum
    assert in_use["c"] == 3 * N                          # a gone: b, the sum and c
    assert in_use["d"] == 3 * N                          # b gone: the sum, c and d
    assert in_use["top"] == 2 * N + N // 2               # c gone; values and indices allocated
    assert in_use["out"] == 2 * N + N // 2               # the unused indices freed with top_k
    topk = nodes["top"].memory[0]
    assert (topk.total_bytes, topk.live_bytes) == (N // 2, N // 4)
    for view in ("kept", "square", "Variable/read"):     # views and variable storage: no bytes
        assert nodes[view].memory[0].total_bytes == 0
    assert max(peak_bytes_in_use(md.step_stats).values()) == 3 * N


def test_outputs_nothing_reads_are_dropped_by_the_next_instruction():
    x = tf.placeholder(tf.float32, [16, 16])
    top, _ = tf.nn.top_k(x * 2.0, k=4, name="top")
    out = top + 1.0
    with tf.Session() as sess:
        sess._executor_strategy = ExecutorStrategy.SEQUENTIAL
        sess.run(out, {x: np.ones((16, 16), np.float32)})
        (runner,) = [r for c in sess._run_cache.values() for r in c.plan.runners]
        program = runner.sequential.program
    names = [ins.item.name for ins in program]
    topk = program[names.index("top")]
    after = program[names.index("top") + 1]
    assert topk.out_uses == (1, 0)
    assert topk.out_slot + 1 in after.free_slots         # the indices die before the next kernel
    assert topk.out_slot + 1 not in topk.last_uses


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_tracing_changes_no_value_and_untraced_steps_count_nothing(strategy):
    x = tf.placeholder(tf.float32, [64])
    y = tf.reduce_sum(tf.nn.top_k(tf.reshape(x * 3.0, [8, 8]), k=2)[0])
    with tf.Session() as sess:
        sess._executor_strategy = strategy
        feed = {x: np.arange(64, dtype=np.float32)}
        untraced = tf.RunMetadata()
        plain = sess.run(y, feed, run_metadata=untraced)
        md = tf.RunMetadata()
        assert sess.run(y, feed, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md) == plain
        device = sess._device_mgr.devices[0]
        assert not untraced.step_stats.dev_stats and device.stats.peak_bytes_in_use == max(
            peak_bytes_in_use(md.step_stats).values()) > 0
