"""The executor's fast paths keep its semantics: per-frame iteration layouts, the lock-free
single-runner mode next to pool threads, the sequential interpreter with asynchronous kernels
that hands a waiting step to the dataflow executor, and the threaded multi-partition path where
the caller's thread runs posted work."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util
from tensorweave.runtime import step_plan
from tensorweave.runtime.executor_tables import assign_frames
from tensorweave.runtime.graph_compiler import NodeItem, PartitionTables
from tensorweave.runtime.executor import RETURNED as _RETURNED
from tensorweave.runtime.sequential import AsyncCall

from tests.runtime.kernels_for_tests import NAPS, TestAsyncDouble, TestNap, assert_close_cancels

# -- test-only ops ----------------------------------------------------------------------------------
TestShortNap = define_op("TestShortNap", inputs=["x: float"], outputs=["y: float"],
                         shape_fn=_util.unchanged, expensive=True)


@TestShortNap.kernel()
def _short_nap_kernel(ctx):
    def compute(x):
        time.sleep(0.002)  # releases the GIL, as a BLAS call does
        return x + 1.0
    return compute


def cpus(n, **kwargs):
    return tf.ConfigProto(device_count={"CPU": n}, operation_timeout_in_ms=30000, **kwargs)


@pytest.fixture
def threaded_path(monkeypatch):
    """Every multi-partition step takes the threaded path (each partition on its device)."""
    monkeypatch.setattr(step_plan, "SMALL_STEP_S", 0.0)


# -- frame layouts -----------------------------------------------------------------------------------
def _item(tables, name, control_flow=None, frame_name=""):
    item = NodeItem(len(tables.items), name, None)
    item.control_flow = control_flow
    item.frame_name = frame_name
    tables.items.append(item)
    return item


def test_static_frames_follow_enter_and_exit():
    tables = PartitionTables()
    src = _item(tables, "src")
    enter = _item(tables, "enter", "enter", "loop")
    body = _item(tables, "body")
    leave = _item(tables, "exit", "exit")
    after = _item(tables, "after")
    for a, b in ((src, enter), (enter, body), (body, leave), (leave, after)):
        a.out_edges.append((b.id, 0, 0))
    tables.roots = [src.id]
    assert assign_frames(tables) == ["", "", "loop", "loop", ""]
    # a node fed from two frames (which TF rejects) keeps the partition-wide layout
    src.out_edges.append((body.id, 0, 1))
    assert assign_frames(tables) is None


def test_nested_loops_get_their_own_layouts():
    def outer_body(i, acc):
        inner = tf.while_loop(lambda j, a: j < i, lambda j, a: (j + 1, a + tf.cast(j, tf.float32)),
                              [tf.constant(0), acc])
        return i + 1, inner[1]

    out = tf.while_loop(lambda i, acc: i < 7, outer_body, [tf.constant(0), tf.constant(0.0)])
    with tf.Session() as sess:
        assert sess.run(out) == [7, float(sum(j for i in range(7) for j in range(i)))]
        runner = list(sess._run_cache.values())[0].plan.single
    tables = runner.tables
    assert tables.per_frame_layouts and len(tables.layouts) == 3
    sizes = sorted(layout.num_nodes for layout in tables.layouts.values())
    assert sum(sizes) == len(tables.items) and sizes[0] < len(tables.items) // 2


def test_loop_invariants_reach_every_iteration_with_parallel_iterations():
    x = tf.placeholder(tf.float32, [3])
    w = tf.constant([1.0, 2.0, 3.0])

    def body(i, acc):
        return i + 1, acc + x * w  # x and w enter the loop as invariants

    for parallel in (1, 4):
        out = tf.while_loop(lambda i, acc: i < 5, body, [tf.constant(0), tf.zeros([3])],
                            parallel_iterations=parallel)
        with tf.Session() as sess:
            np.testing.assert_allclose(sess.run(out[1], {x: [1.0, 1.0, 2.0]}), [5.0, 10.0, 30.0])


# -- one runner without the lock, several with it ------------------------------------------------------
def test_expensive_kernels_in_parallel_iterations():
    """Pool threads run the expensive body kernels while the caller's thread runs the loop: the
    step switches between lock-free and locked propagation as threads join and leave."""
    def body(i, acc):
        return i + 1, acc + apply_op(TestShortNap, x=tf.cast(i, tf.float32))

    out = tf.while_loop(lambda i, acc: i < 20, body, [tf.constant(0), tf.constant(0.0)],
                        parallel_iterations=4)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        for _ in range(3):
            assert sess.run(out) == [20, float(sum(range(1, 21)))]


# -- the straight-line path with asynchronous kernels -----------------------------------------------------
def test_async_call_orders():
    call = AsyncCall()
    call.done(1)                       # during the call
    assert call.returned() == 1
    late = []
    call = AsyncCall()
    assert call.returned() is _RETURNED
    call.done(2)                       # after the call, before the taker is ready
    call.forward_to(late.append)
    call = AsyncCall()
    assert call.returned() is _RETURNED
    call.forward_to(late.append)
    call.done(3)                       # after the taker is ready
    assert late == [2, 3]


def test_waiting_kernel_hands_the_step_to_the_dataflow_executor():
    v = tf.Variable(0.0)
    x = tf.placeholder(tf.float32, [None])
    y = apply_op(TestAsyncDouble, seconds=0.02, x=x)
    z = tf.reshape(y, [3]) + tf.constant(1.0)   # the constant runs after the waiting kernel
    bump = tf.assign_add(v, 1.0)                # independent of it
    with tf.Session() as sess:
        sess.run(v.initializer)
        for i in range(3):
            got, _ = sess.run([z, bump], {x: [1.0, 2.0, 3.0]})
            np.testing.assert_array_equal(got, [3.0, 5.0, 7.0])
            assert sess.run(v) == i + 1.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="Reshape"):
            sess.run(z, {x: [1.0, 2.0]})


def test_dequeue_waits_for_an_enqueue_of_the_same_step():
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    deq = q.dequeue()
    enq = q.enqueue([tf.constant(5.0)])
    with tf.Session() as sess:
        for _ in range(3):
            assert sess.run([deq, enq])[0] == 5.0
        sess.run(enq)
        assert sess.run(deq) == 5.0  # a dequeue with data completes during its call


def test_straight_line_async_step_is_cancelled_by_close():
    q = tf.FIFOQueue(1, tf.float32, shapes=[[]])
    deq = q.dequeue() + 1.0
    sess = tf.Session()
    assert_close_cancels(sess, deq)


# -- the threaded multi-partition path -------------------------------------------------------------------
def test_values_going_back_and_forth_between_devices(threaded_path):
    with tf.device("/device:CPU:0"):
        a = tf.constant(1.0)
        b = a + 1.0
    with tf.device("/device:CPU:1"):
        c = b * 3.0
    with tf.device("/device:CPU:0"):
        d = c + a
    with tf.device("/device:CPU:1"):
        e = d * b
    with tf.Session(config=cpus(2)) as sess:
        for _ in range(20):
            assert sess.run([e, c]) == [14.0, 6.0]


def test_loops_and_conds_across_devices_on_the_threaded_path(threaded_path):
    def body(i, x):
        with tf.device("/device:CPU:1"):
            x2 = tf.cond(i < 3, lambda: x * 2.0, lambda: x + 1.0)
        with tf.device("/device:CPU:0"):
            i2 = i + 1
        return i2, x2

    with tf.device("/device:CPU:0"):
        out = tf.while_loop(lambda i, x: i < 6, body, [tf.constant(0), tf.constant(1.0)])
    with tf.Session(config=cpus(2)) as sess:
        for _ in range(5):
            assert sess.run(out) == [6, 11.0]


def test_threaded_step_timeout_and_close(threaded_path):
    q = tf.FIFOQueue(1, tf.float32)
    with tf.device("/device:CPU:1"):
        out = q.dequeue() + 1.0
    with tf.device("/device:CPU:0"):
        total = out * 2.0
    sess = tf.Session(config=tf.ConfigProto(device_count={"CPU": 2}))
    with pytest.raises(tf.errors.DeadlineExceededError):
        sess.run(total, options=tf.RunOptions(timeout_in_ms=200))
    assert_close_cancels(sess, total)


def test_trace_of_a_loop_on_the_threaded_path(threaded_path):
    with tf.device("/device:CPU:0"):
        n = tf.placeholder(tf.int32, [])

    def body(i, x):
        with tf.device("/device:CPU:1"):
            x2 = x + 1.0
        return i + 1, x2

    out = tf.while_loop(lambda i, x: i < n, body, [tf.constant(0), tf.constant(0.0)])
    with tf.Session(config=cpus(2)) as sess:
        md = tf.RunMetadata()
        assert sess.run(out, {n: 4}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                        run_metadata=md) == [4, 4.0]
    labels = [s.timeline_label for d in md.step_stats.dev_stats for s in d.node_stats]
    assert sum(" = Merge(" in label for label in labels) >= 5  # per iteration, and the exit test
    assert any("_Recv(" in label for label in labels)


# -- conditionals on the straight-line path ----------------------------------------------------------
def test_control_trigger_runs_after_dead_inputs_and_dead_control_inputs_kill():
    from tensorweave.ops.control_flow import primitives as cf
    v = tf.Variable(0.0)
    pred = tf.placeholder(tf.bool, [])
    f, t = cf.switch(tf.constant(1.0), pred)
    with tf.control_dependencies([tf.identity(t)]):
        trigger = apply_op(cf.ControlTrigger)
        dead_when_false = tf.identity(tf.constant(2.0))
    with tf.control_dependencies([trigger]):
        bump = tf.assign_add(v, 1.0)
    with tf.Session() as sess:
        sess.run(v.initializer)
        sess.run(bump.op, {pred: False})
        sess.run(bump.op, {pred: True})
        assert sess.run(v) == 2.0
        assert sess.run(dead_when_false, {pred: True}) == 2.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="dead"):
            sess.run(dead_when_false, {pred: False})


def test_dequeue_in_a_branch_runs_only_when_taken():
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    enq = q.enqueue([tf.constant(7.0)])
    pred = tf.placeholder(tf.bool, [])
    out = tf.cond(pred, lambda: q.dequeue() * 2.0, lambda: tf.constant(-1.0))
    with tf.Session() as sess:
        assert sess.run(out, {pred: False}) == -1.0      # the empty queue is not touched
        assert sess.run(q.size()) == 0
        timer = threading.Timer(0.05, lambda: sess.run(enq))
        timer.start()                                    # the dequeue waits: handed over
        assert sess.run(out, {pred: True}) == 14.0
        timer.join()
        sess.run(enq)
        assert sess.run(out, {pred: True}) == 14.0       # completes during its call
        md = tf.RunMetadata()                            # the traced (dataflow) path agrees
        assert sess.run(out, {pred: False}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                        run_metadata=md) == -1.0


def test_partitions_with_work_run_at_the_same_time():
    """The threaded path starts partitions that have work before running one on the caller's
    thread, so their expensive kernels overlap."""
    NAPS.clear()
    x = tf.placeholder(tf.float32)
    with tf.device("/device:CPU:0"):
        a = apply_op(TestNap, x=x, seconds=0.2)
    with tf.device("/device:CPU:1"):
        b = apply_op(TestNap, x=x, seconds=0.2)
    with tf.Session(config=cpus(2, inter_op_parallelism_threads=1)) as sess:
        assert sess.run([a, b], {x: 1.0}) == [1.0, 1.0]
    (s1, e1, t1), (s2, e2, t2) = NAPS
    assert s1 < e2 and s2 < e1, "the two partitions' kernels did not overlap"
    assert t1 != t2
