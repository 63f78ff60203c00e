"""Steps always end (issue 10): RunOptions.timeout_in_ms, ConfigProto.operation_timeout_in_ms and
Session.close end a running step on every executor strategy (the sequential interpreter, the
dataflow executor, the runtime's own choice), in plain graphs, loops, asynchronous kernels and
steps over two devices, each within a bound of how soon. TensorFlow 2.21's classes and messages
come from tests/data/tf_deadlines.json (written by make_tf_deadline_fixtures.py)."""
import json
import os
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.runtime.config import timeout_seconds
from tensorweave.runtime.executor_choice import ExecutorStrategy
from tensorweave.runtime.plan_codegen import StraightLineCode
from tensorweave.runtime.session import RunCallable

from tests.runtime.kernels_for_tests import TestAsyncNever, TestNap

STRATEGIES = [None, ExecutorStrategy.SEQUENTIAL, ExecutorStrategy.DATAFLOW]  # None: the runtime's choice

with open(os.path.join(os.path.dirname(__file__), "..", "data", "tf_deadlines.json")) as _f:
    TF = json.load(_f)


def tf_message(case):
    """TF's message without the prefix TF 2.x's Python layer adds to graph errors."""
    return TF[case]["message"].replace("Graph execution error:\n\n", "", 1)


# -- the steps: each builds into the default graph and returns (fetch, feed_dict, devices) -------
def long_loop():
    return tf.while_loop(lambda i: i < 10 ** 8, lambda i: i + 1, [tf.constant(0)]), None, 1


def nap_chain():
    """400 expensive kernels of 5 ms each (2 s): a straight-line program (from a placeholder:
    constant folding would run it while building the plan)."""
    x = tf.placeholder(tf.float32, [])
    y = x
    for _ in range(400):
        y = apply_op(TestNap, x=y, seconds=0.005)
    return y, {x: 1.0}, 1


def blocked_dequeue():
    return tf.FIFOQueue(1, tf.float32).dequeue(), None, 1


def async_never():
    return apply_op(TestAsyncNever, x=tf.constant(1.0)), None, 1


def loop_then_receive():
    """A loop on one device whose result the other device waits for."""
    with tf.device("/cpu:0"):
        out = tf.while_loop(lambda i: i < 10 ** 8, lambda i: i + 1, [tf.constant(0)])
    with tf.device("/cpu:1"):
        doubled = out * 2
    return doubled, None, 2


def loop_across_devices():
    def body(i):
        with tf.device("/cpu:1"):
            return i + 1

    with tf.device("/cpu:0"):
        out = tf.while_loop(lambda i: i < 10 ** 8, body, [tf.constant(0)])
    return out, None, 2


def nap_chain_across_devices():
    x = tf.placeholder(tf.float32, [])
    y = x
    for k in range(400):
        with tf.device(f"/cpu:{k % 2}"):
            y = apply_op(TestNap, x=y, seconds=0.005)
    return y, {x: 1.0}, 2


def blocked_dequeue_across_devices():
    with tf.device("/cpu:0"):
        value = tf.FIFOQueue(1, tf.float32).dequeue()
    with tf.device("/cpu:1"):
        out = value + 1.0
    return out, None, 2


CASES = [long_loop, nap_chain, blocked_dequeue, async_never, loop_then_receive, loop_across_devices,
         nap_chain_across_devices, blocked_dequeue_across_devices]


def session(devices, strategy, **config):
    sess = tf.Session(config=tf.ConfigProto(device_count={"CPU": devices}, **config))
    sess._executor_strategy = strategy
    return sess


def timed_run(sess, fetch, feed=None, **kwargs):
    start = time.monotonic()
    with pytest.raises(tf.errors.OpError) as info:
        sess.run(fetch, feed, **kwargs)
    return info.value, time.monotonic() - start


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("strategy", STRATEGIES, ids=str)
def test_run_options_deadline_ends_the_step(case, strategy):
    with tf.Graph().as_default():
        fetch, feed, devices = case()
        with session(devices, strategy) as sess:
            err, seconds = timed_run(sess, fetch, feed, options=tf.RunOptions(timeout_in_ms=500))
    assert type(err) is tf.errors.DeadlineExceededError
    assert err.message == tf_message("run_options_timeout")
    assert 0.45 <= seconds < 2.0  # TensorFlow: 0.51 s


@pytest.mark.parametrize("case", [long_loop, nap_chain, blocked_dequeue, loop_across_devices],
                         ids=lambda c: c.__name__)
@pytest.mark.parametrize("strategy", STRATEGIES, ids=str)
def test_traced_steps_end_at_their_deadline(case, strategy):
    """FULL_TRACE steps run the tracing hooks (their own loop bodies): they stop as well."""
    with tf.Graph().as_default():
        fetch, feed, devices = case()
        with session(devices, strategy) as sess:
            options = tf.RunOptions(timeout_in_ms=300, trace_level=tf.RunOptions.FULL_TRACE)
            err, seconds = timed_run(sess, fetch, feed, options=options)
    assert type(err) is tf.errors.DeadlineExceededError
    assert 0.27 <= seconds < 1.5


@pytest.mark.parametrize("strategy", STRATEGIES, ids=str)
def test_deadline_ends_a_chain_of_large_matmuls(strategy):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [1024, 1024])
        y = x
        for _ in range(400):  # minutes of work on this machine
            y = tf.matmul(y, x)
        value = np.random.RandomState(0).rand(1024, 1024).astype(np.float32) / 1024
        with session(1, strategy) as sess:
            err, seconds = timed_run(sess, y.op, {x: value}, options=tf.RunOptions(timeout_in_ms=200))
    assert type(err) is tf.errors.DeadlineExceededError
    assert err.message == tf_message("matmul_chain_timeout")
    assert seconds < 2.0


@pytest.mark.parametrize("strategy", STRATEGIES, ids=str)
def test_operation_timeout_is_every_steps_default_and_run_options_override_it(strategy):
    with tf.Graph().as_default():
        fetch, _, _ = long_loop()
        with session(1, strategy, operation_timeout_in_ms=300) as sess:
            err, seconds = timed_run(sess, fetch)
            assert type(err) is tf.errors.DeadlineExceededError
            assert err.message == TF["operation_timeout"]["default"]["message"].split("\n\n", 1)[1]
            assert 0.27 <= seconds < 1.5  # TensorFlow: 0.33 s
            err, seconds = timed_run(sess, fetch, options=tf.RunOptions(timeout_in_ms=800))
            assert type(err) is tf.errors.DeadlineExceededError
            assert 0.75 <= seconds < 2.5  # TensorFlow: 0.80 s
            # a RunOptions without a timeout keeps the session's
            err, seconds = timed_run(sess, fetch, options=tf.RunOptions(timeout_in_ms=-1))
            assert 0.27 <= seconds < 1.5


def test_timeout_seconds_follows_direct_session():
    config = tf.ConfigProto(operation_timeout_in_ms=300)
    assert timeout_seconds(None, config) == 0.3
    assert timeout_seconds(tf.RunOptions(timeout_in_ms=50), config) == 0.05
    assert timeout_seconds(tf.RunOptions(timeout_in_ms=-5), config) == 0.3
    assert timeout_seconds(tf.RunOptions(), tf.ConfigProto()) is None
    assert timeout_seconds(tf.RunOptions(timeout_in_ms=-5), tf.ConfigProto(operation_timeout_in_ms=-1)) is None


def _new_threads(before, limit=3.0):
    """Threads started since `before` that are still alive after up to `limit` seconds."""
    end = time.monotonic() + limit
    while True:
        left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        if not left or time.monotonic() > end:
            return left
        time.sleep(0.02)


def close_during_step(sess, fetch, feed=None):
    """Runs `fetch` on a thread, closes `sess` while it runs; returns the step's error and how
    long after the close it ended."""
    box = {}

    def run():
        try:
            sess.run(fetch, feed)
        except Exception as err:  # noqa: BLE001  (checked by the caller)
            box["error"] = err
        box["ended"] = time.monotonic()

    thread = threading.Thread(target=run)
    thread.start()
    end = time.monotonic() + 10
    while not sess._running and time.monotonic() < end:
        time.sleep(0.005)
    time.sleep(0.3)  # well inside the step
    closed = time.monotonic()
    sess.close()
    thread.join(10)
    assert not thread.is_alive(), "the step did not end after Session.close"
    return box.get("error"), box["ended"] - closed


CLOSE_CASES = CASES


@pytest.mark.parametrize("case", CLOSE_CASES, ids=lambda c: c.__name__)
@pytest.mark.parametrize("strategy", STRATEGIES, ids=str)
def test_close_cancels_the_running_step_and_leaves_no_thread(case, strategy):
    before = set(threading.enumerate())
    with tf.Graph().as_default():
        fetch, feed, devices = case()
        sess = session(devices, strategy)
        err, after_close = close_during_step(sess, fetch, feed)
    assert type(err) is tf.errors.CancelledError, err
    assert after_close < 1.0  # TensorFlow: 1 ms
    assert _new_threads(before) == []
    with pytest.raises(RuntimeError, match="closed Session"):
        sess.run(fetch, feed)


@pytest.mark.parametrize("strategy", STRATEGIES, ids=str)
def test_close_in_a_loop_is_tensorflows_loop_cancellation(strategy):
    with tf.Graph().as_default():
        fetch, _, _ = long_loop()
        err, _ = close_during_step(session(1, strategy), fetch)
    assert type(err) is tf.errors.CancelledError
    want = tf_message("close_during_loop").split("\n")[0]  # TF names its LoopCond node after it
    assert err.message.startswith(want) and "[[node while/" in err.message


@pytest.mark.parametrize("strategy", STRATEGIES, ids=str)
def test_close_never_frees_state_under_a_running_step(strategy):
    """8 threads read and update a variable; closing fails in-flight steps with CancelledError
    (or lets them finish), never with "uninitialized value": the variables are freed only
    when the last step has left."""
    with tf.Graph().as_default():
        v = tf.Variable(0.0)
        nap = apply_op(TestNap, x=tf.constant(1.0), seconds=0.01)  # the close usually lands here
        with tf.control_dependencies([nap]):
            update = tf.assign_add(v, 1.0)
            read = v + 0.0
        sess = session(1, strategy)
        sess.run(v.initializer)
        outcomes, unexpected = [], []

        def worker():
            for _ in range(1000):
                try:
                    sess.run([read, update])
                except tf.errors.CancelledError:
                    outcomes.append("cancelled")
                    return
                except RuntimeError as err:  # a run started after close
                    assert "closed Session" in str(err)
                    outcomes.append("closed")
                    return
                except Exception as err:  # noqa: BLE001  (the failure this test is about)
                    unexpected.append(err)
                    return

        threads = [threading.Thread(target=worker) for _ in range(8)]
        for t in threads:
            t.start()
        time.sleep(0.3)
        sess.close()
        for t in threads:
            t.join(10)
    assert not any(t.is_alive() for t in threads)
    assert unexpected == []
    assert len(outcomes) == 8
    assert not sess._running and sess._released


def test_state_is_released_when_the_last_step_leaves():
    with tf.Graph().as_default():
        v = tf.Variable(3.0)
        nap = apply_op(TestNap, x=v.read_value(), seconds=0.3)
        with tf.control_dependencies([nap]):
            read = v + 0.0
        sess = tf.Session()
        sess.run(v.initializer)
        result = {}
        thread = threading.Thread(target=lambda: result.setdefault("value", sess.run(read)))
        thread.start()
        end = time.monotonic() + 10
        while not sess._running and time.monotonic() < end:
            time.sleep(0.005)
        time.sleep(0.05)
        sess.close()  # during the nap: the step's next checkpoint is past the variable read
        assert not sess._released
        thread.join(10)
    assert result == {"value": 3.0}
    assert sess._released


def test_short_plain_programs_run_without_checkpoints():
    """A short program of cheap kernels runs the plain body (no test per kernel); a program
    with expensive kernels, or a long one, the body with checkpoints."""
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [])
        short = x * 2.0 + 1.0
        long_ = x
        for _ in range(200):
            long_ = long_ + 1.0
        big = tf.placeholder(tf.float32, [512, 512])
        product = tf.matmul(big, big)  # an expensive kernel
        sess = tf.Session()
        for fetch, feed, body in ((short, x, "run_plain"), (long_, x, "run_checked"),
                                  (product, big, "run_checked")):
            runner = RunCallable(sess, fetch, (feed,))
            run = runner.plan.single.sequential.run
            # generated straight-line code (plan_codegen) interprets a plan's first steps
            assert isinstance(run.__self__, StraightLineCode)
            assert run.__self__.interpret.__name__ == body
            value = np.ones(feed.shape.as_list(), np.float32)
            np.testing.assert_array_equal(runner(sess, (value,)), sess.run(fetch, {feed: value}))
        sess.close()
