"""Every executor strategy runs the same graphs the same way (runtime/executor_choice.py): plain
graphs, conditionals and loops (nested), asynchronous kernels (a FIFOQueue, and test kernels that
complete later), steps over two devices, and failing steps. Each graph runs under the strategy
the runtime chooses itself and under each forced strategy (the session's test hook), traced
(FULL_TRACE) and untraced; values, and error classes and messages, must match the dataflow
executor's untraced run."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.control_flow.primitives import switch
from tensorweave.runtime import partition_runner
from tensorweave.runtime.executor_choice import ExecutorStrategy, choose_executor

from tests.runtime.kernels_for_tests import TestAsyncDouble

STRATEGIES = [None, ExecutorStrategy.SEQUENTIAL, ExecutorStrategy.DATAFLOW]  # None: the runtime's choice


def two_cpus():
    return tf.ConfigProto(device_count={"CPU": 2}, operation_timeout_in_ms=30000)


# -- the graphs: each builds into the default graph and returns (runs, config, sequential_ok): the
# steps to run as (fetches, feed_dict) pairs, the session config, and whether the sequential
# interpreter can run every partition (else a forced SEQUENTIAL falls back to dataflow) --------
def plain():
    x = tf.placeholder(tf.float32, [2, 3])
    w = tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4))
    v = tf.Variable(np.ones(4, np.float32))
    y = tf.nn.relu(tf.matmul(x, w) - 10.0) + v
    z = tf.reduce_sum(y * y, axis=1)
    feed = {x: np.arange(6, dtype=np.float32).reshape(2, 3)}
    return [(v.initializer, None), ([y, z], feed), (z, feed)], None, True


def cond():
    x = tf.placeholder(tf.float32, [])
    y = tf.cond(x > 0.0, lambda: x * 2.0, lambda: x - 1.0)
    inner = tf.cond(x > 0.0,
                    lambda: tf.cond(x > 5.0, lambda: x * 10.0, lambda: x + 100.0),
                    lambda: tf.constant(-7.0))
    return [([y, inner], {x: value}) for value in (3.0, -2.0, 8.0)], None, True


def while_loop():
    def body(i, acc):
        return i + 1, acc + tf.cast(i, tf.float32)

    n = tf.placeholder(tf.int32, [])
    out = tf.while_loop(lambda i, acc: i < n, body, [tf.constant(0), tf.constant(0.0)])
    return [(out, {n: 5}), (out, {n: 0})], None, False


def nested_loops_and_cond():
    def outer(i, acc):
        inner = tf.while_loop(lambda j, a: j < i,
                              lambda j, a: (j + 1, a + tf.cond(j < 2, lambda: 1.0, lambda: 10.0)),
                              [tf.constant(0), acc])
        return i + 1, inner[1]

    out = tf.while_loop(lambda i, acc: i < 5, outer, [tf.constant(0), tf.constant(0.0)])
    return [(out, None)], None, False


def fifo_queue():
    q = tf.FIFOQueue(10, tf.float32, shapes=[[]])
    deq = q.dequeue() * 3.0
    enq = q.enqueue([tf.constant(5.0)])
    # the dequeue waits for the enqueue of the same step (the sequential interpreter hands over)
    return [([deq, enq], None), (enq, None), (deq, None)], None, True


def async_kernels():
    x = tf.placeholder(tf.float32, [None])
    y = apply_op(TestAsyncDouble, seconds=0.01, x=x)
    z = tf.reshape(y, [3]) + tf.constant(1.0)
    w = tf.cond(tf.reduce_sum(x) > 0.0, lambda: z * 2.0, lambda: z)
    return [([z, w], {x: [1.0, 2.0, 3.0]}), (w, {x: [-1.0, -2.0, -3.0]})], None, True


def two_devices():
    """Values go one way: the partitions run in order, receiving synchronously."""
    with tf.device("/cpu:0"):
        a = tf.placeholder(tf.float32, [3])
        b = a * 2.0
    with tf.device("/cpu:1"):
        c = b + 1.0
        d = tf.reduce_sum(c * b)
    return [([c, d], {a: [1.0, 2.0, 3.0]}), (d, {a: [0.0, 1.0, 2.0]})], two_cpus(), True


def two_devices_back_and_forth():
    """Values go both ways: a Recv may wait, so both partitions run on the dataflow executor."""
    with tf.device("/cpu:0"):
        a = tf.placeholder(tf.float32, [3])
        b = a * 2.0
    with tf.device("/cpu:1"):
        c = b + 1.0
    with tf.device("/cpu:0"):
        d = c * b
    return [([c, d], {a: [1.0, 2.0, 3.0]})], two_cpus(), False


def two_devices_with_control_flow():
    with tf.device("/cpu:0"):
        x = tf.placeholder(tf.float32, [])

    def body(i, acc):
        with tf.device("/cpu:1"):
            acc2 = tf.cond(i < 2, lambda: acc * 2.0, lambda: acc + x)
        return i + 1, acc2

    with tf.device("/cpu:0"):
        out = tf.while_loop(lambda i, acc: i < 4, body, [tf.constant(0), tf.constant(1.0)])
    return [(out, {x: 0.5})], two_cpus(), False


def failing_kernel():
    x = tf.placeholder(tf.float32, [None])
    y = tf.reshape(x, [2, 2]) + 1.0
    return [(y, {x: [1.0, 2.0, 3.0, 4.0]}), (y, {x: [1.0, 2.0, 3.0]})], None, True


def failing_kernel_in_a_branch():
    x = tf.placeholder(tf.float32, [None])
    y = tf.cond(tf.size(x) > 2, lambda: tf.reshape(x, [2, 2]), lambda: tf.zeros([2, 2]))
    return [(y, {x: [1.0]}), (y, {x: [1.0, 2.0, 3.0]})], None, True


def dead_fetch():
    x = tf.placeholder(tf.float32, [])
    low, high = switch(x, x > 0.0)
    return [(high, {x: 1.0}), (high, {x: -1.0}), ([low, x], {x: 2.0})], None, True


CASES = [plain, cond, while_loop, nested_loops_and_cond, fifo_queue, async_kernels, two_devices,
         two_devices_back_and_forth, two_devices_with_control_flow, failing_kernel, failing_kernel_in_a_branch,
         dead_fetch]


def run_case(case, strategy, traced):
    """Each step's outcome: its values, or its error's class and message."""
    with tf.Graph().as_default():
        runs, config, _ = case()
        sess = tf.Session(config=config)
        sess._executor_strategy = strategy
        outcomes = []
        with sess:
            for fetches, feed in runs:
                kwargs = {}
                if traced:
                    kwargs = dict(options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                                  run_metadata=tf.RunMetadata())
                try:
                    value = sess.run(fetches, feed, **kwargs)
                except tf.errors.OpError as err:
                    outcomes.append((type(err), err.message))
                else:
                    outcomes.append(("ok", value))
                    if traced:
                        assert len(kwargs["run_metadata"].step_stats.dev_stats) >= 1
    return outcomes


def assert_same(got, want):
    assert len(got) == len(want)
    for (kind, value), (want_kind, want_value) in zip(got, want):
        assert kind == want_kind
        if kind == "ok":
            if want_value is None:
                assert value is None
            else:
                flat, want_flat = _flatten(value), _flatten(want_value)
                assert len(flat) == len(want_flat)
                for a, b in zip(flat, want_flat):
                    np.testing.assert_array_equal(a, b)
        else:
            assert value == want_value


def _flatten(value):
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flatten(v)]
    return [value]


@pytest.mark.parametrize("traced", [False, True], ids=["untraced", "traced"])
@pytest.mark.parametrize("strategy", STRATEGIES, ids=["chosen", "sequential", "dataflow"])
@pytest.mark.parametrize("case", CASES, ids=[c.__name__ for c in CASES])
def test_every_strategy_runs_the_same_graphs_the_same_way(case, strategy, traced, monkeypatch):
    want = run_case(case, ExecutorStrategy.DATAFLOW, False)
    chosen = set()

    def spy(*args, **kwargs):
        choice = choose_executor(*args, **kwargs)
        chosen.add(choice.strategy)
        return choice

    monkeypatch.setattr(partition_runner, "choose_executor", spy)
    got = run_case(case, strategy, traced)
    assert_same(got, want)
    with tf.Graph().as_default():
        sequential_ok = case()[2]
    if strategy is ExecutorStrategy.DATAFLOW or (strategy is ExecutorStrategy.SEQUENTIAL and not sequential_ok):
        assert chosen == {ExecutorStrategy.DATAFLOW}
    elif strategy is ExecutorStrategy.SEQUENTIAL:
        assert chosen == {ExecutorStrategy.SEQUENTIAL}


def test_errors_are_the_failing_nodes():
    """The reference outcomes themselves: the failures are the expected ones."""
    outcomes = run_case(failing_kernel, ExecutorStrategy.DATAFLOW, False)
    assert outcomes[0][0] == "ok" and outcomes[1][0] is tf.errors.InvalidArgumentError
    assert "Reshape" in outcomes[1][1]
    outcomes = run_case(dead_fetch, ExecutorStrategy.DATAFLOW, False)
    assert outcomes[0] == ("ok", 1.0)
    assert outcomes[1][0] is tf.errors.InvalidArgumentError and "is dead" in outcomes[1][1]
    assert outcomes[2][0] is tf.errors.InvalidArgumentError


# -- the decision itself, and the rows it is made from -----------------------------------------------
def plan_choices(build, config=None, **run_kwargs):
    with tf.Graph().as_default():
        runs, case_config, _ = build()
        with tf.Session(config=config or case_config) as sess:
            for fetches, feed in runs:
                try:
                    sess.run(fetches, feed, **run_kwargs)
                except tf.errors.OpError:
                    pass
            return [runner.choice for c in sess._run_cache.values() for runner in c.plan.runners]


def test_choose_executor_decides_once_per_partition():
    (choice,) = set(plan_choices(plain))
    assert choice.sequential and not choice.hand_over
    (choice,) = set(plan_choices(cond))
    assert choice.sequential and not choice.hand_over  # dead values: a hook, not another executor
    (choice,) = set(plan_choices(fifo_queue))
    assert choice.sequential and choice.hand_over
    assert {c.strategy for c in plan_choices(while_loop)} == {ExecutorStrategy.DATAFLOW}
    assert {c.strategy for c in plan_choices(two_devices)} == {ExecutorStrategy.SEQUENTIAL}
    assert {c.strategy for c in plan_choices(two_devices_back_and_forth)} == {ExecutorStrategy.DATAFLOW}
    # tracing a step does not change how its partitions run
    traced = dict(options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=tf.RunMetadata())
    assert plan_choices(cond, **traced) == plan_choices(cond)


def _row_snapshot(tables):
    def frozen(value):  # a copy: a list written in place must show
        return tuple(value) if isinstance(value, list) else value
    return [tuple(frozen(getattr(item, name)) for name in type(item).__slots__) for item in tables.items]


@pytest.mark.parametrize("case", [plain, cond, nested_loops_and_cond, fifo_queue, async_kernels, two_devices,
                                  failing_kernel_in_a_branch], ids=lambda c: c.__name__)
@pytest.mark.parametrize("strategy", STRATEGIES, ids=["chosen", "sequential", "dataflow"])
def test_running_steps_never_writes_the_compiled_rows(case, strategy):
    with tf.Graph().as_default():
        runs, config, _ = case()
        with tf.Session(config=config) as sess:
            sess._executor_strategy = strategy
            snapshots = {}
            for repeat in range(2):
                for fetches, feed in runs:
                    for traced in (False, True):
                        kwargs = {}
                        if traced:
                            kwargs = dict(options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE))
                        try:
                            sess.run(fetches, feed, **kwargs)
                        except tf.errors.OpError:
                            pass
                        for c in sess._run_cache.values():
                            for runner in c.plan.runners:
                                rows = _row_snapshot(runner.tables)
                                assert snapshots.setdefault(runner, rows) == rows
