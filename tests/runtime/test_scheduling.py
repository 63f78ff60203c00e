"""Scheduling of expensive kernels (runtime/critical_path.py, runtime/kernel_scheduling.py,
runtime/thread_pool.py): static priorities are the longest estimated path to the end of the
step; kernels that split their work over the device's pool run one at a time per step, the most
urgent first, except that a more urgent one does not wait behind a less urgent one; kernels that
do not split still run side by side; the pool runs queued work before intra-op help."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util
from tensorweave.runtime import critical_path
from tensorweave.runtime.graph_compiler import NodeItem, PartitionTables
from tensorweave.runtime.thread_pool import ThreadPool, help_requests

RUNS: list = []  # (node name, start, end) of every TestSplitting / TestSerial kernel run


def _nap_kernel(ask_for_help):
    def build(ctx):
        name, seconds = ctx.op.name, ctx.attr("seconds")

        def compute(x):
            if ask_for_help:  # as an intra-op kernel does: this marks it as one that splits
                ctx.device.thread_pool.schedule_help(lambda: None)
            start = time.perf_counter()
            time.sleep(seconds)  # releases the GIL, as a BLAS call does
            RUNS.append((name, start, time.perf_counter()))
            return x
        return compute
    return build


TestSplitting = define_op("TestSplitting", inputs=["x: float"], outputs=["y: float"], attrs=["seconds: float"],
                          shape_fn=_util.unchanged, expensive=True)
TestSplitting.kernel()(_nap_kernel(True))
TestSerial = define_op("TestSerial", inputs=["x: float"], outputs=["y: float"], attrs=["seconds: float"],
                       shape_fn=_util.unchanged, expensive=True)
TestSerial.kernel()(_nap_kernel(False))


def splitting(x, seconds, name):
    return apply_op(TestSplitting, x=x, seconds=seconds, name=name)


def serial(x, seconds, name):
    return apply_op(TestSerial, x=x, seconds=seconds, name=name)


def big_input():
    """Large enough for the plan to count the test kernels as expensive."""
    return tf.zeros([50000])


def long_tail(x, n=40):
    """Cheap nodes after `x`: the path after it is longer than after a leaf."""
    for _ in range(n):
        x = x * 1.0
    return x


def runs_of_last_step(fetches, steps=3, config=None):
    with tf.Session(config=config or tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        for _ in range(steps):  # the first step learns which kernels split
            RUNS.clear()
            sess.run(fetches)
    return {name: (start, end) for name, start, end in RUNS}


def overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


# -- priorities ------------------------------------------------------------------------------------
def _item(tables, name, **attrs):
    item = NodeItem(len(tables.items), name, None)
    for key, value in attrs.items():
        setattr(item, key, value)
    tables.items.append(item)
    return item


def test_priority_is_the_longest_weighted_path_to_the_end():
    tables = PartitionTables()
    src, big, small, after_big, end = (_item(tables, n) for n in ("src", "big", "small", "after", "end"))
    for a, b in ((src, big), (src, small), (big, after_big), (after_big, end), (small, end)):
        a.out_edges.append((b.id, 0, 0))
    tables.roots = [src.id]
    cost = {"src": 1.0, "big": 10.0, "small": 2.0, "after": 1.0, "end": 1.0}
    prio = critical_path.node_priorities(tables, lambda item: cost[item.name])
    assert prio == [13.0, 12.0, 3.0, 2.0, 1.0]


def test_a_loop_iteration_continues_with_the_later_iterations_and_what_follows_the_loop():
    tables = PartitionTables()
    enter = _item(tables, "enter", control_flow="enter", frame_name="loop")
    merge = _item(tables, "merge", control_flow="merge")
    body = _item(tables, "body")
    nxt = _item(tables, "next", control_flow="next_iteration")
    leave = _item(tables, "exit", control_flow="exit")
    after = _item(tables, "after")
    for a, b in ((enter, merge), (merge, body), (body, nxt), (nxt, merge), (body, leave), (leave, after)):
        a.out_edges.append((b.id, 0, 0))
    tables.roots = [enter.id]
    prio = critical_path.node_priorities(tables, lambda item: 1.0)
    iteration = 3.0  # merge, body, next (or exit)
    later = (critical_path.LOOP_TRIP_GUESS - 1) * iteration + 2.0  # then exit and after
    assert prio[after.id] == 1.0 and prio[leave.id] == 2.0
    assert prio[nxt.id] == 1.0 + later
    assert prio[body.id] == 2.0 + later and prio[merge.id] == 3.0 + later and prio[enter.id] == 4.0 + later


# -- splitting kernels -----------------------------------------------------------------------------
def test_splitting_kernels_run_one_at_a_time_most_urgent_first():
    x = big_input()
    critical = long_tail(splitting(x, 0.05, "critical"))
    leaf = splitting(x, 0.05, "leaf")
    runs = runs_of_last_step([critical, leaf])
    assert not overlap(runs["critical"], runs["leaf"])
    assert runs["critical"][1] <= runs["leaf"][0]


def test_a_more_urgent_splitting_kernel_does_not_wait_behind_a_less_urgent_one():
    x = big_input()
    leaf = splitting(x, 0.3, "leaf")  # starts first, off the critical path
    later = serial(x, 0.05, "delay")  # makes the urgent one ready while `leaf` runs
    urgent = long_tail(splitting(later, 0.05, "urgent"), 200)
    runs = runs_of_last_step([leaf, urgent])
    assert runs["leaf"][0] < runs["urgent"][0] < runs["leaf"][1]


def test_kernels_that_do_not_split_still_run_side_by_side():
    x = big_input()
    runs = runs_of_last_step([serial(x, 0.1, "a"), serial(x, 0.1, "b")])
    assert overlap(runs["a"], runs["b"])


def test_many_splitting_kernels_all_run_and_the_step_agrees_with_the_trace():
    x = big_input()
    outs = [splitting(long_tail(x + 1.0, i), 0.005, f"k{i}") for i in range(8)]
    total = tf.reduce_sum(tf.add_n(outs))
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        for _ in range(3):
            RUNS.clear()
            assert sess.run(total) == 8.0 * 50000
            assert len(RUNS) == 8
        md = tf.RunMetadata()
        traced = sess.run(total, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
        assert traced == 8.0 * 50000
    names = {ns.node_name for d in md.step_stats.dev_stats for ns in d.node_stats}
    assert {f"k{i}" for i in range(8)} <= names


def test_a_failing_kernel_fails_the_step_and_releases_the_waiting_splitting_ones():
    x = tf.placeholder(tf.float32, [None])
    ok = splitting(x, 0.01, "ok")
    bad = tf.reshape(splitting(x, 0.01, "first"), [50000])  # fails unless x has 50000 elements
    after = splitting(bad, 0.01, "after")
    good, wrong = np.ones(50000, np.float32), np.ones(3, np.float32)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        for _ in range(2):
            sess.run([ok, after], {x: good})
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run([ok, after], {x: wrong})
        ok_value, after_value = sess.run([ok, after], {x: 2 * good})
    assert (ok_value == 2.0).all() and (after_value == 2.0).all()


# -- the pool's lanes ------------------------------------------------------------------------------
def test_pool_runs_queued_work_before_intra_op_help_and_counts_help_requests():
    pool = ThreadPool(1, "test-lanes")
    try:
        blocked = threading.Event()
        pool.schedule(blocked.wait)
        order = []
        before = help_requests.count
        pool.schedule_help(lambda: order.append("help"))
        pool.schedule(order.append, "work")
        assert help_requests.count == before + 1  # counted on the thread that asked
        done = threading.Event()
        pool.schedule_help(done.set)
        blocked.set()
        assert done.wait(5)
        assert order == ["work", "help"]
    finally:
        pool.shutdown()
