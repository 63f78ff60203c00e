"""Mutexes and tf.CriticalSection: mutual exclusion across concurrent steps, MutexLock as an
asynchronous kernel, release on failure/cancellation. Graph structure follows TF's
critical_section_ops (checked with tensorflow.compat.v1)."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.state import mutex as mutex_ops
from tensorweave.testing.op_test import assert_static_shape_matches
from tests.ops.queues.test_queue_ops import Background, wait_for_waiters


class Occupancy:
    """A py_func body that records how many steps are inside it at once."""

    def __init__(self):
        self.lock = threading.Lock()
        self.inside = 0
        self.most = 0

    def __call__(self, x):
        with self.lock:
            self.inside += 1
            self.most = max(self.most, self.inside)
        time.sleep(0.002)  # widen the read-modify-write window
        with self.lock:
            self.inside -= 1
        return x


def _increment_graph(use_critical_section):
    v = tf.Variable(0, name="counter")
    occupancy = Occupancy()

    def fn():
        current = v.read_value()
        slow = tf.py_func(occupancy, [current], tf.int32)
        return tf.assign(v, slow + 1)

    if use_critical_section:
        out = tf.CriticalSection(name="cs").execute(fn)
    else:
        out = fn()
    return v, out, occupancy


def _run_concurrently(sess, fetch, threads=4, steps=25):
    def worker():
        for _ in range(steps):
            sess.run(fetch)

    workers = [Background(worker) for _ in range(threads)]
    for w in workers:
        assert w.join().error is None


def test_critical_section_makes_read_modify_write_atomic():
    v, out, occupancy = _increment_graph(use_critical_section=True)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        sess.run(v.initializer)
        _run_concurrently(sess, out)
        assert sess.run(v) == 100
    assert occupancy.most == 1


def test_without_the_mutex_updates_are_lost():
    # The same graph without the critical section: steps overlap and lose increments, which
    # is what the test above rules out.
    v, out, occupancy = _increment_graph(use_critical_section=False)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        sess.run(v.initializer)
        _run_concurrently(sess, out)
        final = sess.run(v)
    assert occupancy.most > 1 and final < 100


def test_execute_graph_structure_and_outputs():
    cs = tf.CriticalSection(name="cs")
    assert cs.name == "cs" and cs._handle.op.type == "MutexV2"
    assert cs._handle.op.get_attr("shared_name") == b"cs/"
    x = tf.placeholder(tf.float32, [2])
    out = cs.execute(lambda: (x * 2.0, {"s": tf.reduce_sum(x)}))
    graph = tf.get_default_graph()
    types = [op.type for op in graph.get_operations()]
    assert "MutexLock" in types and "ConsumeMutexLock" in types
    lock_op = next(op for op in graph.get_operations() if op.type == "MutexLock")
    assert lock_op.outputs[0].dtype == tf.variant
    # The lock is taken only after fn's outside inputs (the placeholder) are ready.
    assert lock_op.control_inputs and any(c.type == "NoOp" for c in lock_op.control_inputs)
    with tf.Session() as sess:
        doubled, rest = sess.run(out, {x: [1.0, 2.5]})
        np.testing.assert_allclose(doubled, [2.0, 5.0])
        assert rest == {"s": 3.5}
        # Shapes of the ops' real outputs: the handle and the lock value are scalars.
        handle, lock_value = sess.run([cs._handle, lock_op.outputs[0]], {x: [0.0, 0.0]})
        assert_static_shape_matches(cs._handle, handle)
        assert_static_shape_matches(lock_op.outputs[0], lock_value)
        assert isinstance(lock_value, mutex_ops.MutexLockValue)
        del lock_value  # dropping a fetched lock releases the mutex (as TF's tensor destructor)
        doubled, _ = sess.run(out, {x: [0.5, 0.5]}, options=tf.RunOptions(timeout_in_ms=5000))
        np.testing.assert_allclose(doubled, [1.0, 1.0])


def test_nested_execute_in_same_section_rejected():
    cs = tf.CriticalSection()
    with pytest.raises(ValueError, match="already running"):
        cs.execute(lambda: cs.execute(lambda: tf.constant(1)))


def test_exclusive_resource_access_checked():
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    first, second = tf.CriticalSection(), tf.CriticalSection()
    first.execute(lambda: q.size())
    with pytest.raises(ValueError, match="exclusive resource access"):
        second.execute(lambda: q.size())
    first.execute(lambda: q.size())  # the same section may touch it again


def test_failed_step_releases_the_mutex():
    cs = tf.CriticalSection()
    x = tf.placeholder(tf.float32, [None])
    out = cs.execute(lambda: tf.reshape(x, [2]) + 1.0)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(out, {x: [1.0, 2.0, 3.0]})
        np.testing.assert_allclose(sess.run(out, {x: [1.0, 2.0]}, options=tf.RunOptions(timeout_in_ms=5000)),
                                   [2.0, 3.0])


def test_waiters_hold_no_threads_and_timeouts_release():
    q = tf.FIFOQueue(100, tf.int32, shapes=[[]])
    cs = tf.CriticalSection()
    hold = cs.execute(lambda: q.dequeue())  # takes the mutex, then waits on the queue
    quick = cs.execute(lambda: tf.constant(7))
    x = tf.placeholder(tf.int32, [])
    enq = q.enqueue(x)
    with tf.Session(config=tf.ConfigProto(inter_op_parallelism_threads=2)) as sess:
        holder = Background(sess.run, hold)
        wait_for_waiters(sess, q.queue_ref, 1)  # it holds the mutex and waits on the queue
        # The mutex is held: a step waiting for it times out, and the mutex stays usable.
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(quick, options=tf.RunOptions(timeout_in_ms=100))
        waiters = [Background(sess.run, quick) for _ in range(20)]
        wait_for_waiters(sess, cs._handle, 20, "_waiters")
        assert all(w.thread.is_alive() for w in waiters)
        sess.run(enq, {x: 3})  # runs while 21 steps wait: they hold no pool threads
        assert holder.join().result == 3
        assert all(w.join().result == 7 for w in waiters)
        # A step holding the mutex that times out releases it.
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(hold, options=tf.RunOptions(timeout_in_ms=100))
        assert sess.run(quick, options=tf.RunOptions(timeout_in_ms=5000)) == 7


def test_session_close_cancels_mutex_waiters():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    cs = tf.CriticalSection()
    hold = cs.execute(lambda: q.dequeue())
    quick = cs.execute(lambda: tf.constant(1))
    sess = tf.Session()
    holder = Background(sess.run, hold)
    wait_for_waiters(sess, q.queue_ref, 1)
    waiter = Background(sess.run, quick)
    wait_for_waiters(sess, cs._handle, 1, "_waiters")
    sess.close()
    assert isinstance(holder.join().error, tf.errors.CancelledError)
    assert isinstance(waiter.join().error, tf.errors.CancelledError)


def test_shared_name_shares_the_mutex():
    a = tf.CriticalSection(shared_name="shared_mutex")
    b = tf.CriticalSection(shared_name="shared_mutex")
    hold_q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    hold = a.execute(lambda: hold_q.dequeue())
    other = b.execute(lambda: tf.constant(2))
    with tf.Session() as sess:
        holder = Background(sess.run, hold)
        wait_for_waiters(sess, hold_q.queue_ref, 1)
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(other, options=tf.RunOptions(timeout_in_ms=100))
        sess.run(hold_q.enqueue(1))
        assert holder.join().result == 1
        assert sess.run(other) == 2


def test_lock_released_when_step_skips_consume():
    cs = tf.CriticalSection()
    x = tf.placeholder(tf.float32, [])
    inner = []

    def fn():
        doubled = x * 2.0
        inner.append(doubled)
        return doubled + 1.0

    out = cs.execute(fn)
    with tf.Session() as sess:
        # Fetching a tensor from inside fn runs MutexLock but prunes ConsumeMutexLock: the
        # lock value dies with the step, which releases the mutex (as TF's lock tensor).
        assert sess.run(inner[0], {x: 2.0}) == 4.0
        assert sess.run(out, {x: 1.0}, options=tf.RunOptions(timeout_in_ms=5000)) == 3.0
