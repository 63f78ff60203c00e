"""Straight-line generated code for sequential partitions (runtime/plan_codegen.py): the same
values, errors, checkpoints, traces and buffer-forwarding decisions as the sequential
interpreter's table loop, once a plan has run INTERPRETED_STEPS steps; never for partitions with dead values
or asynchronous kernels (executor_choice decides)."""
import gc
import os
import subprocess
import sys
import threading
import time
import weakref

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import _util
from tensorweave.runtime import plan_codegen
from tensorweave.runtime.executor_choice import ExecutorStrategy
from tensorweave.runtime.plan_codegen import StraightLineCode, calls_directly

NAPS: list = []  # one entry per TestCodegenNap run

# -- test-only ops: a kernel that sleeps, and a pair that shows when a value is dropped ----------
TestCodegenNap = define_op("TestCodegenNap", inputs=["x: float"], outputs=["y: float"], attrs=["seconds: float"],
                           shape_fn=_util.unchanged)


@TestCodegenNap.kernel()
def _nap_kernel(ctx):
    seconds = ctx.attr("seconds")

    def compute(x):
        NAPS.append(1)
        time.sleep(seconds)
        return x + np.float32(1)
    return compute


class _Tracked(np.ndarray):
    """An array a weak reference can watch."""


ALIVE: list = []  # what TestCodegenWatch saw: whether TestCodegenMake's last value was alive

TestCodegenMake = define_op("TestCodegenMake", inputs=["x: float"], outputs=["y: float"],
                            shape_fn=_util.unchanged)
TestCodegenWatch = define_op("TestCodegenWatch", inputs=["x: float"], outputs=["y: float"],
                             shape_fn=_util.unchanged)
_made: list = []


@TestCodegenMake.kernel()
def _make_kernel(ctx):
    def compute(x):
        value = np.array(x, dtype=np.float32).view(_Tracked)
        _made.append(weakref.ref(value))
        return value
    return compute


@TestCodegenWatch.kernel()
def _watch_kernel(ctx):
    def compute(x):
        ALIVE.append(_made[-1]() is not None)
        return x
    return compute


def _apply(op, x, **attrs):
    return apply_op(op, x=x, **attrs)


@pytest.fixture(autouse=True)
def code_from_the_second_step(monkeypatch):
    """These tests run a plan's first step interpreted and its later ones as generated code."""
    monkeypatch.setattr(plan_codegen, "INTERPRETED_STEPS", 1)


def _straight_line(sess):
    """The StraightLineCode of every sequential partition of the session's plans."""
    found = []
    for runner in sess._run_cache.values():
        for partition in runner.plan.runners:
            run = partition.sequential.run if partition.sequential is not None else None
            if run is not None and isinstance(getattr(run, "__self__", None), StraightLineCode):
                found.append(run.__self__)
    return found


def _mixed_graph():
    x = tf.placeholder(tf.float32, [4, 3])
    w = tf.Variable(np.arange(12, dtype=np.float32).reshape(3, 4) / 10)
    c = tf.constant(np.linspace(-1, 1, 16, dtype=np.float32).reshape(4, 4))
    h = tf.nn.relu(tf.matmul(x, w) + c)
    parts = tf.split(h, 2, axis=1)                    # two outputs, both used
    values, _ = tf.unique(tf.reshape(tf.cast(h > 0.5, tf.int32), [-1]))  # one output unused
    loss = tf.reduce_sum(tf.square(parts[0] - parts[1])) + tf.reduce_sum(tf.identity(w))
    train = tf.train.AdamOptimizer(0.1).minimize(loss)
    feed = {x: np.arange(12, dtype=np.float32).reshape(4, 3) / 7}
    return [loss, parts[1], values, c, x], train, w, feed


def _run_mixed(strategy, steps=4):
    with tf.Graph().as_default():
        fetches, train, w, feed = _mixed_graph()
        with tf.Session() as sess:
            sess._executor_strategy = strategy
            sess.run(tf.global_variables_initializer())
            out = []
            for _ in range(steps):
                out.append(sess.run(fetches, feed))
                sess.run(train, feed)
            out.append(sess.run(w))
            return out, _straight_line(sess)


def test_generated_code_gives_the_interpreters_values():
    got, codes = _run_mixed(None)
    want, none = _run_mixed(ExecutorStrategy.INTERPRETER)
    assert none == []  # the test hook: the table loop only
    # the initializer ran once (interpreted); the fetches and the train step run as code
    assert sum(code.function is not None for code in codes) == 2
    for step_got, step_want in zip(got, want):
        for a, b in zip(step_got if isinstance(step_got, list) else [step_got],
                        step_want if isinstance(step_want, list) else [step_want]):
            np.testing.assert_array_equal(a, b)


def test_first_step_is_interpreted_and_the_code_is_written_once():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        y = tf.sin(x) * 2.0 + tf.constant([1.0, 2.0, 3.0])
        with tf.Session() as sess:
            feed = {x: np.ones(3, np.float32)}
            sess.run(y, feed)
            (code,) = _straight_line(sess)
            assert code.function is None
            sess.run(y, feed)
            function = code.function
            assert function is not None
            np.testing.assert_allclose(sess.run(y, feed), np.sin(1.0) * 2 + np.array([1, 2, 3]), rtol=1e-6)
            assert code.function is function
            # constants are globals of the function, not kernel calls; ufuncs are called directly
            assert "c" in "".join(name[0] for name in function.__globals__ if name[1:].isdigit())
            assert any(calls_directly(v) for v in function.__globals__.values())


def test_partitions_with_dead_values_or_waiting_kernels_are_not_written_out():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.cond(x > 0.0, lambda: x * 2.0, lambda: x - 1.0)
        q = tf.FIFOQueue(4, tf.float32)
        enqueue = q.enqueue([x])
        dequeued = q.dequeue() + 1.0
        plain = x * 5.0
        with tf.Session() as sess:
            for _ in range(3):
                assert sess.run(y, {x: 1.0}) == 2.0
                sess.run(enqueue, {x: 2.0})
                assert sess.run(dequeued) == 3.0
                assert sess.run(plain, {x: 1.0}) == 5.0
            kinds = set()
            for runner in sess._run_cache.values():
                for partition in runner.plan.runners:
                    tables, choice = partition.tables, partition.choice
                    assert choice.straight_line == (not tables.has_control_flow and not tables.has_async)
                    kinds.add(choice.straight_line)
            assert kinds == {True, False}


def test_kernel_errors_name_the_node_as_the_interpreter_does():
    outcomes = {}
    for strategy in (None, ExecutorStrategy.INTERPRETER):
        with tf.Graph().as_default():
            x = tf.placeholder(tf.float32, [None])
            y = tf.reshape(tf.exp(x), [2, 2], name="the_reshape") + 1.0
            with tf.Session() as sess:
                sess._executor_strategy = strategy
                sess.run(y, {x: np.ones(4, np.float32)})
                sess.run(y, {x: np.ones(4, np.float32)})
                with pytest.raises(tf.errors.InvalidArgumentError) as info:
                    sess.run(y, {x: np.ones(3, np.float32)})
                assert info.value.op is not None and info.value.op.name == "the_reshape"
                outcomes[strategy] = (type(info.value), info.value.message)
                if strategy is None:
                    assert _straight_line(sess)[0].function is not None
    assert outcomes[None] == outcomes[ExecutorStrategy.INTERPRETER]


def test_uninitialized_variable_read_inline_names_the_reader():
    with tf.Graph().as_default():
        v = tf.Variable(np.ones(3, np.float32), name="never_set")
        y = tf.identity(v, name="reader") * 2.0
        w = tf.Variable(1.0)
        with tf.Session() as sess:
            sess.run(w.initializer)
            for _ in range(3):
                with pytest.raises(tf.errors.FailedPreconditionError, match="never_set") as info:
                    sess.run(y)
                assert info.value.op.name == "never_set/read"  # the variable's own read (an Identity)
            assert _straight_line(sess)[-1].function is not None


def test_deadline_stops_generated_code_at_a_checkpoint():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = x
        for _ in range(300):  # 300 naps of 2 ms: checkpoints every CHECK_EVERY nodes
            y = _apply(TestCodegenNap, y, seconds=0.002)
        with tf.Session() as sess:
            short = tf.RunOptions(timeout_in_ms=60)
            sess.run(y, {x: 0.0}, options=tf.RunOptions(timeout_in_ms=60000))
            (code,) = _straight_line(sess)
            sess.run(y, {x: 0.0}, options=tf.RunOptions(timeout_in_ms=60000))
            assert code.function is not None
            NAPS.clear()
            with pytest.raises(tf.errors.DeadlineExceededError):
                sess.run(y, {x: 0.0}, options=short)
            assert len(NAPS) < 200  # stopped at a checkpoint (every 64 nodes), not after all 300


def test_traced_steps_still_give_step_stats():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        y = tf.cos(x) + 1.0
        with tf.Session() as sess:
            for _ in range(2):
                sess.run(y, {x: [0.0, 1.0]})
            assert _straight_line(sess)[0].function is not None
            meta = tf.RunMetadata()
            got = sess.run(y, {x: [0.0, 1.0]}, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                           run_metadata=meta)
            np.testing.assert_allclose(got, np.cos([0.0, 1.0]) + 1, rtol=1e-6)
            names = {n.node_name for d in meta.step_stats.dev_stats for n in d.node_stats}
            assert any(name.startswith("Cos") for name in names)


def test_values_are_dropped_at_their_last_use():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [3])
        made = _apply(TestCodegenMake, x)
        used = tf.negative(made)                 # the made value's last use
        with tf.control_dependencies([used]):
            watched = _apply(TestCodegenWatch, x)  # runs after it
        with tf.Session() as sess:
            ALIVE.clear()
            for _ in range(3):
                sess.run([used, watched], {x: np.ones(3, np.float32)})
            assert _straight_line(sess)[0].function is not None
    assert ALIVE == [False, False, False]


def test_concurrent_second_steps_write_the_code_once():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [8])
        y = x
        for _ in range(200):
            y = tf.sin(y) + 0.5
        with tf.Session() as sess:
            feed = {x: np.linspace(0, 1, 8, dtype=np.float32)}
            want = sess.run(y, feed)
            (code,) = _straight_line(sess)
            results, errors = [], []

            def run():
                try:
                    results.append(sess.run(y, feed))
                except Exception as err:  # noqa: BLE001
                    errors.append(err)

            threads = [threading.Thread(target=run) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(30)
            assert not errors and len(results) == 4
            for r in results:
                np.testing.assert_array_equal(r, want)
            assert code.function is not None


def test_feeds_fetched_as_they_are_and_constants_fetched_as_copies():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        c = tf.constant([5.0, 6.0])
        with tf.Session() as sess:
            fed = np.array([1.0, 2.0], np.float32)
            for _ in range(3):
                got_x, got_c = sess.run([x, c], {x: fed})
                np.testing.assert_array_equal(got_x, fed)
                got_c[0] = 100.0  # a copy: the constant is not changed
                np.testing.assert_array_equal(sess.run(c), [5.0, 6.0])


def test_interpreted_steps_setting(monkeypatch):
    monkeypatch.setattr(plan_codegen, "INTERPRETED_STEPS", 0)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = x * 3.0
        with tf.Session() as sess:
            assert sess.run(y, {x: 2.0}) == 6.0
            assert _straight_line(sess)[0].function is not None
    gc.collect()


def test_default_tiering_writes_code_after_ten_interpreted_steps(monkeypatch):
    monkeypatch.setattr(plan_codegen, "INTERPRETED_STEPS", 10)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        y = tf.exp(x) - 1.0
        with tf.Session() as sess:
            for _ in range(10):
                assert sess.run(y, {x: 0.0}) == 0.0
            (code,) = _straight_line(sess)
            assert code.function is None
            assert sess.run(y, {x: 0.0}) == 0.0
            assert code.function is not None


_ZERO_BY_ZERO = """
import numpy as np, tensorweave as tf
x = tf.placeholder(tf.float32, [2]); y = tf.placeholder(tf.float32, [2])
z = x / y
with tf.Session() as s:
    for _ in range(15):  # the code is written at the plan's 11th step
        out = s.run(z, {x: np.zeros(2, np.float32), y: np.zeros(2, np.float32)})
print(np.isnan(out).all())
"""


def test_generated_code_keeps_numpy_floating_point_warnings_quiet_as_kernels_do():
    # TF gives NaN for 0/0 without a word; a bare ufunc called from the generated code must be
    # filtered like one called from a kernel (a fresh process: pytest's own filters stay out)
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = subprocess.run([sys.executable, "-c", _ZERO_BY_ZERO], cwd=root, capture_output=True, text=True,
                         timeout=120, env=dict(os.environ, PYTHONPATH=root))
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["True"]
    assert "RuntimeWarning" not in out.stderr
