"""tf.train.Coordinator and LooperThread: stop requests, join with a grace period, exceptions
re-raised by join, clean-stop exception types. Every wait is bounded."""
import sys
import threading
import time

import pytest

import tensorweave as tf


def _start(fn, *args):
    t = threading.Thread(target=fn, args=args, daemon=True)
    t.start()
    return t


def _stop_after(coord, seconds):
    time.sleep(seconds)
    coord.request_stop()


def _wait_then_mark(coord, flags, i):
    while not coord.should_stop():
        coord.wait_for_stop(0.01)
    flags[i] = True


def test_stop_request_reaches_every_thread():
    coord = tf.train.Coordinator()
    flags = [False, False, False]
    threads = [_start(_wait_then_mark, coord, flags, i) for i in range(3)]
    assert not coord.should_stop()
    _start(_stop_after, coord, 0.05)
    coord.join(threads, stop_grace_period_secs=10)
    assert coord.should_stop() and coord.joined and all(flags)


def test_join_returns_when_threads_end_without_stop():
    coord = tf.train.Coordinator()
    threads = [_start(time.sleep, 0.02) for _ in range(2)]
    start = time.monotonic()
    coord.join(threads, stop_grace_period_secs=10)
    assert time.monotonic() - start < 5
    assert not coord.should_stop()


def test_wait_for_stop_timeout():
    coord = tf.train.Coordinator()
    assert coord.wait_for_stop(0.01) is False
    coord.request_stop()
    assert coord.wait_for_stop(10) is True


def _raise_in_thread(coord, exc):
    with coord.stop_on_exception():
        raise exc


def test_join_reraises_first_reported_exception():
    coord = tf.train.Coordinator()
    first = ValueError("first failure")
    t1 = _start(_raise_in_thread, coord, first)
    t1.join(10)
    t2 = _start(_raise_in_thread, coord, RuntimeError("second failure"))
    t2.join(10)
    assert coord.should_stop()
    with pytest.raises(ValueError, match="first failure") as info:
        coord.join([t1, t2], stop_grace_period_secs=10)
    assert info.value is first
    assert info.value.__traceback__ is not None  # the thread's traceback is kept


def test_request_stop_with_exc_info_tuple_and_raise_requested_exception():
    coord = tf.train.Coordinator()
    try:
        raise KeyError("boom")
    except KeyError:
        coord.request_stop(sys.exc_info())
    with pytest.raises(KeyError):
        coord.raise_requested_exception()
    with pytest.raises(ValueError):
        tf.train.Coordinator().request_stop(ex=("not", "an", "exc_info"))


def test_out_of_range_is_a_clean_stop():
    coord = tf.train.Coordinator()
    t = _start(_raise_in_thread, coord, tf.errors.OutOfRangeError(None, None, "epochs done"))
    t.join(10)
    assert coord.should_stop()
    coord.join([t], stop_grace_period_secs=10)  # does not raise
    custom = tf.train.Coordinator(clean_stop_exception_types=(KeyError,))
    custom.request_stop(KeyError("fine"))
    custom.join([])


def test_stragglers_raise_runtime_error_naming_them():
    coord = tf.train.Coordinator()
    release = threading.Event()
    straggler = threading.Thread(target=release.wait, args=(30,), name="stuck-thread", daemon=True)
    straggler.start()
    coord.request_stop()
    start = time.monotonic()
    with pytest.raises(RuntimeError, match="stuck-thread"):
        coord.join([straggler], stop_grace_period_secs=0.1)
    assert time.monotonic() - start < 10
    coord.clear_stop()
    coord.request_stop()
    coord.join([straggler], stop_grace_period_secs=0.05, ignore_live_threads=True)
    release.set()
    straggler.join(10)


def test_exception_after_join_is_raised_immediately():
    coord = tf.train.Coordinator()
    coord.request_stop()
    coord.join([])
    with pytest.raises(ValueError, match="late"):
        coord.request_stop(ValueError("late"))


def test_clear_stop_resets():
    coord = tf.train.Coordinator()
    coord.request_stop(ValueError("x"))
    coord.clear_stop()
    assert not coord.should_stop() and not coord.joined
    coord.raise_requested_exception()  # nothing left to raise
    coord.request_stop()
    coord.join([])


def test_registered_threads_are_joined():
    coord = tf.train.Coordinator()
    done = []

    def work():
        coord.wait_for_stop(10)
        time.sleep(0.02)
        done.append(1)

    t = threading.Thread(target=work, daemon=True)
    coord.register_thread(t)
    t.start()
    coord.request_stop()
    coord.join(stop_grace_period_secs=10)
    assert done == [1]


def test_looper_thread_back_to_back_and_timer():
    coord = tf.train.Coordinator()
    counts = {"fast": 0, "timed": 0}

    def bump(key):
        counts[key] += 1
        if counts["fast"] >= 50 and counts["timed"] >= 2:
            coord.request_stop()

    fast = tf.train.LooperThread.loop(coord, None, bump, args=("fast",))
    timed = tf.train.LooperThread.loop(coord, 0.01, bump, args=("timed",))
    coord.join([fast, timed], stop_grace_period_secs=10)
    assert counts["fast"] >= 50 and counts["timed"] >= 2


def test_looper_thread_reports_errors():
    coord = tf.train.Coordinator()

    def fail():
        raise ZeroDivisionError("in looper")

    looper = tf.train.LooperThread.loop(coord, 0.01, fail)
    with pytest.raises(ZeroDivisionError):
        coord.join([looper], stop_grace_period_secs=10)
    with pytest.raises(ValueError):
        tf.train.LooperThread("not a coordinator", 1.0)
    with pytest.raises(ValueError):
        tf.train.LooperThread(tf.train.Coordinator(), 1.0, args=(1,))
