"""Queues: FIFO, padding, random-shuffle and priority queues as asynchronous kernels (white
paper 4.6, 5.3). Expected values are NumPy references or TF1 behaviour checked against
tensorflow.compat.v1; concurrency tests use bounded joins and no tight timing assertions."""
import collections
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_static_shape_matches

JOIN_S = 30


class Background:
    """Runs `fn` on a thread and keeps its result or exception."""

    def __init__(self, fn, *args):
        self.result = None
        self.error = None
        self.thread = threading.Thread(target=self._run, args=(fn,) + args, daemon=True)
        self.thread.start()

    def _run(self, fn, *args):
        try:
            self.result = fn(*args)
        except Exception as err:  # noqa: BLE001  (checked by the test)
            self.error = err

    def join(self):
        self.thread.join(JOIN_S)
        assert not self.thread.is_alive(), "step still blocked"
        return self


def _wait_until(predicate, timeout=JOIN_S):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def wait_for_waiters(sess, handle, count, waiting_list="_dequeues"):
    """Waits until `count` requests wait in the resource behind `handle` (a queue's
    `_dequeues`/`_enqueues`, a mutex's `_waiters`): tests never race the threads they start."""
    resource = sess.run(handle)
    _wait_until(lambda: len(getattr(resource, waiting_list)) >= count)


def _check_shapes(tensors, values):
    for t, v in zip(tensors, values):
        assert_static_shape_matches(t, v)


# -- the basic API --------------------------------------------------------------------------------
def test_fifo_queue_properties_and_op_names():
    q = tf.FIFOQueue(3, [tf.int32, tf.float32], shapes=[[], [2]], name="myq")
    assert q.name == "myq" and q.queue_ref.op.type == "FIFOQueueV2"
    assert q.queue_ref.dtype == tf.resource
    assert q.dtypes == [tf.int32, tf.float32]
    assert [s.as_list() for s in q.shapes] == [[], [2]]
    assert q.names is None
    enq = q.enqueue([1, [2.0, 3.0]])
    assert enq.name == "myq_enqueue" and enq.type == "QueueEnqueueV2"
    assert q.enqueue_many([[1], [[2.0, 3.0]]]).type == "QueueEnqueueManyV2"
    deq = q.dequeue()
    assert [t.name for t in deq] == ["myq_Dequeue:0", "myq_Dequeue:1"]
    assert [t.shape.as_list() for t in deq] == [[], [2]]
    assert [t.shape.as_list() for t in q.dequeue_many(4)] == [[4], [4, 2]]
    assert [t.shape.as_list() for t in q.dequeue_up_to(4)] == [[None], [None, 2]]
    assert q.size().name == "myq_Size:0" and q.is_closed().name == "myq_Is_Closed:0"
    assert q.close().name == "myq_Close" and q.close(True).get_attr("cancel_pending_enqueues")


def test_fifo_order_and_values():
    q = tf.FIFOQueue(10, [tf.int32, tf.float32], shapes=[[], [2]])
    x = tf.placeholder(tf.int32, [])
    y = tf.placeholder(tf.float32, [2])
    enq = q.enqueue([x, y])
    deq = q.dequeue()
    with tf.Session() as sess:
        for i in range(5):
            sess.run(enq, {x: i, y: [i, -i]})
        assert sess.run(q.size()) == 5
        for i in range(5):
            a, b = sess.run(deq)
            _check_shapes(deq, (a, b))
            assert a == i and a.dtype == np.int32
            np.testing.assert_array_equal(b, np.array([i, -i], np.float32))
        assert sess.run(q.size()) == 0


def test_single_component_dequeue_returns_a_tensor_and_names_give_dicts():
    q = tf.FIFOQueue(5, tf.string)
    out = q.dequeue()
    assert isinstance(out, tf.Tensor) and out.shape.ndims is None
    named = tf.FIFOQueue(5, [tf.int32, tf.string], shapes=[[], []], names=["n", "s"])
    enq = named.enqueue({"s": "abc", "n": 7})
    deq = named.dequeue()
    assert sorted(deq) == ["n", "s"]
    with tf.Session() as sess:
        sess.run([q.enqueue("hello"), enq])
        assert sess.run(out) == b"hello"
        assert sess.run(deq) == {"n": 7, "s": b"abc"}


def test_enqueue_many_dequeue_many_against_numpy():
    data = np.arange(24, dtype=np.float64).reshape(6, 2, 2)
    labels = np.arange(6, dtype=np.int64) * 10
    q = tf.FIFOQueue(10, [tf.float64, tf.int64], shapes=[[2, 2], []])
    enq = q.enqueue_many([data, labels])
    batch = q.dequeue_many(4)
    rest = q.dequeue_many(2)
    with tf.Session() as sess:
        sess.run(enq)
        got = sess.run(batch)
        _check_shapes(batch, got)
        np.testing.assert_array_equal(got[0], data[:4])
        np.testing.assert_array_equal(got[1], labels[:4])
        got = sess.run(rest)
        np.testing.assert_array_equal(got[0], data[4:])
        np.testing.assert_array_equal(got[1], labels[4:])


def test_dequeue_many_larger_than_capacity_collects_as_elements_arrive():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    x = tf.placeholder(tf.int32, [])
    enq = q.enqueue(x)
    batch = q.dequeue_many(5)
    with tf.Session() as sess:
        consumer = Background(sess.run, batch)
        for i in range(5):
            sess.run(enq, {x: i})
        np.testing.assert_array_equal(consumer.join().result, np.arange(5))


def test_fifo_mixed_batches_against_a_list_model():
    # Batches go in and out in pieces: enqueue_many segments, single elements, dequeue_many
    # spanning and splitting segments; a Python list is the reference.
    rng = np.random.RandomState(0)
    q = tf.FIFOQueue(1000, [tf.int64, tf.float32], shapes=[[], [2]])
    ids, rows = tf.placeholder(tf.int64, [None]), tf.placeholder(tf.float32, [None, 2])
    one_id, one_row = tf.placeholder(tf.int64, []), tf.placeholder(tf.float32, [2])
    enq_many, enq = q.enqueue_many([ids, rows]), q.enqueue([one_id, one_row])
    n = tf.placeholder(tf.int32, [])
    many, single = q.dequeue_many(n), q.dequeue()
    model, next_id = [], 0
    with tf.Session() as sess:
        for _ in range(60):
            action = rng.randint(4)
            if action == 0:
                k = rng.randint(0, 6)
                new = [(next_id + j, rng.rand(2).astype(np.float32)) for j in range(k)]
                sess.run(enq_many, {ids: np.array([i for i, _ in new], np.int64),
                                    rows: np.array([r for _, r in new], np.float32).reshape(k, 2)})
                model += new
                next_id += k
            elif action == 1:
                row = rng.rand(2).astype(np.float32)
                sess.run(enq, {one_id: next_id, one_row: row})
                model.append((next_id, row))
                next_id += 1
            elif action == 2 and model:
                k = rng.randint(0, len(model) + 1)
                got_ids, got_rows = sess.run(many, {n: k})
                assert got_ids.tolist() == [i for i, _ in model[:k]]
                np.testing.assert_array_equal(got_rows, np.array([r for _, r in model[:k]]).reshape(k, 2))
                del model[:k]
            elif action == 3 and model:
                got_id, got_row = sess.run(single)
                assert got_id == model[0][0]
                np.testing.assert_array_equal(got_row, model[0][1])
                del model[0]
            assert sess.run(q.size()) == len(model)


def test_enqueue_many_larger_than_capacity_goes_in_as_room_appears():
    q = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    enq = q.enqueue_many([np.arange(7, dtype=np.int32)])
    pair, rest = q.dequeue_many(2), q.dequeue_up_to(10)
    with tf.Session() as sess:
        producer = Background(sess.run, enq)
        got = [sess.run(pair).tolist() for _ in range(3)]
        assert producer.join().error is None
        sess.run(q.close())
        got.append(sess.run(rest).tolist())
    assert got == [[0, 1], [2, 3], [4, 5], [6]]


def test_dequeue_many_zero_and_negative():
    q = tf.FIFOQueue(3, tf.float32, shapes=[[2]])
    n = tf.placeholder(tf.int32, [])
    batch = q.dequeue_many(n)
    with tf.Session() as sess:
        empty = sess.run(batch, {n: 0})
        assert empty.shape == (0, 2) and empty.dtype == np.float32
        with pytest.raises(tf.errors.InvalidArgumentError, match="< 0"):
            sess.run(batch, {n: -1})


def test_enqueued_values_are_copies():
    q = tf.FIFOQueue(3, tf.float32, shapes=[[3]])
    x = tf.placeholder(tf.float32, [3])
    enq, deq = q.enqueue(x), q.dequeue()
    fed = np.array([1.0, 2.0, 3.0], np.float32)
    with tf.Session() as sess:
        sess.run(enq, {x: fed})
        fed[:] = 0.0
        np.testing.assert_array_equal(sess.run(deq), [1.0, 2.0, 3.0])


# -- closing ---------------------------------------------------------------------------------------
def test_close_then_drain_then_out_of_range():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    enq = q.enqueue_many([[1, 2, 3]])
    deq, up_to = q.dequeue(), q.dequeue_up_to(5)
    with tf.Session() as sess:
        sess.run(enq)
        assert not sess.run(q.is_closed())
        sess.run(q.close())
        assert sess.run(q.is_closed())
        assert sess.run(deq) == 1
        np.testing.assert_array_equal(sess.run(up_to), [2, 3])  # fewer than asked, at close
        with pytest.raises(tf.errors.OutOfRangeError, match=r"is closed and has insufficient elements "
                           r"\(requested 1, current size 0\)"):
            sess.run(deq)
        with pytest.raises(tf.errors.OutOfRangeError, match=r"requested 5, current size 0"):
            sess.run(up_to)
        with pytest.raises(tf.errors.CancelledError, match="is closed"):
            sess.run(enq)
        with pytest.raises(tf.errors.CancelledError, match="already closed"):
            sess.run(q.close())
        sess.run(q.close(cancel_pending_enqueues=True))  # no error, as TF


def test_dequeue_many_fails_at_close_and_keeps_the_elements():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    enq = q.enqueue_many([[7, 8]])
    many = q.dequeue_many(3)
    with tf.Session() as sess:
        sess.run(enq)
        blocked = Background(sess.run, many)
        _wait_until(lambda: sess.run(q.size()) == 0)  # it took both elements and waits for one more
        sess.run(q.close())
        assert isinstance(blocked.join().error, tf.errors.OutOfRangeError)
        np.testing.assert_array_equal(sess.run(q.dequeue_up_to(3)), [7, 8])


def test_blocked_dequeues_fail_when_queue_closes():
    q = tf.FIFOQueue(10, tf.int32, shapes=[[]])
    deq = q.dequeue()
    with tf.Session() as sess:
        waiting = [Background(sess.run, deq) for _ in range(3)]
        wait_for_waiters(sess, q.queue_ref, 3)
        sess.run(q.enqueue(5))
        sess.run(q.close())
        outcomes = [w.join() for w in waiting]
        assert sorted(o.result for o in outcomes if o.error is None) == [5]
        assert sum(isinstance(o.error, tf.errors.OutOfRangeError) for o in outcomes) == 2


def test_close_with_cancel_pending_enqueues():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    e1, e2 = q.enqueue(1), q.enqueue(2)
    with tf.Session() as sess:
        sess.run(e1)
        blocked = Background(sess.run, e2)
        wait_for_waiters(sess, q.queue_ref, 1, "_enqueues")
        assert blocked.thread.is_alive()
        sess.run(q.close(cancel_pending_enqueues=True))
        err = blocked.join().error
        assert isinstance(err, tf.errors.CancelledError) and "cancelled" in str(err)
        assert sess.run(q.dequeue()) == 1
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(q.dequeue())


def test_close_without_cancel_waits_behind_pending_enqueues():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    e1, e2, close, deq = q.enqueue(1), q.enqueue(2), q.close(), q.dequeue()
    with tf.Session() as sess:
        sess.run(e1)
        producer = Background(sess.run, e2)
        wait_for_waiters(sess, q.queue_ref, 1, "_enqueues")
        closer = Background(sess.run, close)
        wait_for_waiters(sess, q.queue_ref, 2, "_enqueues")
        assert not sess.run(q.is_closed())  # the close is queued behind the pending enqueue
        assert sess.run(deq) == 1
        assert producer.join().error is None and closer.join().error is None
        assert sess.run(deq) == 2
        assert sess.run(q.is_closed())
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(deq)


# -- waiting, timeouts, cancellation -----------------------------------------------------------------
def test_producers_and_consumers_on_threads_exact_multiset():
    q = tf.FIFOQueue(4, [tf.int32, tf.int32], shapes=[[], []])
    worker, item = tf.placeholder(tf.int32, []), tf.placeholder(tf.int32, [])
    enq = q.enqueue([worker, item])
    deq = q.dequeue()
    batch = q.dequeue_many(3)
    got = collections.Counter()
    lock = threading.Lock()
    config = tf.ConfigProto(inter_op_parallelism_threads=2)
    with tf.Session(config=config) as sess:
        def produce(w):
            for i in range(30):
                sess.run(enq, {worker: w, item: i})

        def consume_one(n):
            for _ in range(n):
                a, b = sess.run(deq)
                with lock:
                    got[(int(a), int(b))] += 1

        def consume_batches(n):
            for _ in range(n):
                a, b = sess.run(batch)
                with lock:
                    for pair in zip(a.tolist(), b.tolist()):
                        got[pair] += 1

        threads = [Background(produce, w) for w in range(3)]
        threads += [Background(consume_one, 30), Background(consume_batches, 20)]
        for t in threads:
            assert t.join().error is None
        assert sess.run(q.size()) == 0
    assert got == collections.Counter((w, i) for w in range(3) for i in range(30))


def test_timeout_raises_deadline_exceeded_and_queue_stays_usable():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    deq, many = q.dequeue(), q.dequeue_many(3)
    with tf.Session() as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(deq, options=tf.RunOptions(timeout_in_ms=100))
        sess.run(q.enqueue_many([[4, 5]]))
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.enqueue(6), options=tf.RunOptions(timeout_in_ms=100))  # full
        # A timed-out dequeue_many gives back the elements it had taken (TF would lose them).
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(many, options=tf.RunOptions(timeout_in_ms=100))
        assert sess.run(q.size()) == 2
        assert [sess.run(deq), sess.run(deq)] == [4, 5]


def test_operation_timeout_from_config():
    q = tf.FIFOQueue(2, tf.int32, shapes=[[]])
    with tf.Session(config=tf.ConfigProto(operation_timeout_in_ms=100)) as sess:
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(q.dequeue())


def test_session_close_cancels_blocked_steps():
    q = tf.FIFOQueue(1, tf.int32, shapes=[[]])
    deq = q.dequeue()
    sess = tf.Session()
    blocked = [Background(sess.run, deq) for _ in range(3)]
    wait_for_waiters(sess, q.queue_ref, 3)
    sess.close()
    for b in blocked:
        assert isinstance(b.join().error, tf.errors.CancelledError)


def test_fifty_blocked_dequeues_with_two_threads():
    q = tf.FIFOQueue(100, tf.int32, shapes=[[]])
    deq = q.dequeue()
    x = tf.placeholder(tf.int32, [])
    enq = q.enqueue(x)
    config = tf.ConfigProto(inter_op_parallelism_threads=2)
    with tf.Session(config=config) as sess:
        consumers = [Background(sess.run, deq) for _ in range(50)]
        wait_for_waiters(sess, q.queue_ref, 50)  # all 50 blocked at once, holding no pool thread
        assert all(c.thread.is_alive() for c in consumers)
        assert sess.run(q.size()) == 0  # the session still runs other steps
        for i in range(50):
            sess.run(enq, {x: i})
        results = sorted(c.join().result for c in consumers)
        assert all(c.error is None for c in consumers)
    assert results == list(range(50))


def test_blocked_step_cancelled_by_error_elsewhere_in_the_step():
    q = tf.FIFOQueue(2, tf.float32, shapes=[[]])
    bad = tf.placeholder(tf.float32, [None])
    failing = tf.reshape(bad, [3])
    deq = q.dequeue()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run([deq, failing], {bad: [1.0, 2.0]})
        sess.run(q.enqueue(1.5))
        assert sess.run(deq) == 1.5  # the withdrawn dequeue took nothing


# -- bad input ---------------------------------------------------------------------------------------
def test_build_time_errors():
    with pytest.raises(ValueError, match="fully defined"):
        tf.FIFOQueue(3, [tf.int32], shapes=[[None]])
    with pytest.raises(ValueError, match="same length"):
        tf.FIFOQueue(3, [tf.int32], shapes=[[1], [2]])
    with pytest.raises(ValueError, match="same length"):
        tf.FIFOQueue(3, [tf.int32], names=["a", "b"])
    q = tf.FIFOQueue(3, tf.int32, shapes=[[2]])
    with pytest.raises(ValueError, match="incompatible"):
        q.enqueue([[1, 2, 3]])
    with pytest.raises(ValueError, match="1 component"):
        q.enqueue([1, 2])  # a list is the list of components, as in TF
    with pytest.raises(TypeError):
        q.enqueue([[1.5, 2.0]])
    with pytest.raises(ValueError):
        q.enqueue_many([1, 2])  # no batch dimension
    named = tf.FIFOQueue(3, [tf.int32, tf.int32], names=["a", "b"])
    with pytest.raises(ValueError, match="dictionary"):
        named.enqueue([1, 2])
    with pytest.raises(ValueError, match="do not match"):
        named.enqueue({"a": 1})
    pair = tf.FIFOQueue(3, [tf.int32, tf.int32])
    with pytest.raises(ValueError, match="not compatible"):
        pair.enqueue_many([[1, 2], [1, 2, 3]])
    with pytest.raises(ValueError, match="component"):
        pair.enqueue([1])


def test_run_time_shape_errors():
    q = tf.FIFOQueue(3, tf.int32, shapes=[[2]])
    p = tf.placeholder(tf.int32)
    enq, enq_many = q.enqueue(p), q.enqueue_many(p)
    pair = tf.FIFOQueue(3, [tf.int32, tf.int32])
    a, b = tf.placeholder(tf.int32), tf.placeholder(tf.int32)
    pair_many = pair.enqueue_many([a, b])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[2\], got \[3\]"):
            sess.run(enq, {p: [1, 2, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[3,2\], got \[3\]"):
            sess.run(enq_many, {p: [1, 2, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="same size in the 0th dimension"):
            sess.run(pair_many, {a: [1, 2], b: [1, 2, 3]})
        with pytest.raises(tf.errors.InvalidArgumentError, match="batch dimension"):
            sess.run(pair_many, {a: 1, b: 2})
        assert sess.run(q.size()) == 0 and sess.run(pair.size()) == 0


def test_dequeue_many_needs_shapes():
    q = tf.FIFOQueue(3, tf.int32)
    many = q.dequeue_many(2)
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2]]))
        with pytest.raises(tf.errors.InvalidArgumentError, match="require the components to have "
                           "specified shapes"):
            sess.run(many)


# -- the other queue kinds ---------------------------------------------------------------------------
def test_padding_fifo_queue_pads_batches():
    q = tf.PaddingFIFOQueue(10, [tf.int32, tf.string], shapes=[[None], [None, 2]])
    assert q.queue_ref.op.type == "PaddingFIFOQueueV2"
    ints, strs = tf.placeholder(tf.int32), tf.placeholder(tf.string)
    enq = q.enqueue([ints, strs])
    batch, single = q.dequeue_many(2), q.dequeue()
    assert [t.shape.as_list() for t in batch] == [[2, None], [2, None, 2]]
    with tf.Session() as sess:
        sess.run(enq, {ints: [1, 2, 3], strs: [[b"a", b"b"]]})
        sess.run(enq, {ints: [4], strs: [[b"c", b"d"], [b"e", b"f"], [b"g", b"h"]]})
        sess.run(enq, {ints: [5, 6], strs: np.zeros((0, 2), dtype=object)})
        got = sess.run(batch)
        _check_shapes(batch, got)
        np.testing.assert_array_equal(got[0], [[1, 2, 3], [4, 0, 0]])
        expected = np.full((2, 3, 2), b"", dtype=object)
        expected[0, :1] = [[b"a", b"b"]]
        expected[1] = [[b"c", b"d"], [b"e", b"f"], [b"g", b"h"]]
        np.testing.assert_array_equal(got[1], expected)
        one = sess.run(single)  # a single element is not padded
        np.testing.assert_array_equal(one[0], [5, 6])
        assert one[1].shape == (0, 2)
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[\?\], got \[1,1\]"):
            sess.run(enq, {ints: [[1]], strs: [[b"a", b"b"]]})


def test_padding_fifo_queue_requires_shapes():
    with pytest.raises(TypeError):
        tf.PaddingFIFOQueue(10, [tf.int32])  # pylint: disable=no-value-for-parameter
    with pytest.raises(ValueError, match="partial shapes"):
        tf.PaddingFIFOQueue(10, [tf.int32], shapes=None)
    with pytest.raises(ValueError, match="defined rank"):
        tf.PaddingFIFOQueue(10, [tf.int32], shapes=[tf.TensorShape(None)])


def test_random_shuffle_queue_min_after_dequeue_and_permutation():
    q = tf.RandomShuffleQueue(20, 5, tf.int32, shapes=[[]], seed=7)
    attrs = q.queue_ref.op
    assert attrs.type == "RandomShuffleQueueV2" and attrs.get_attr("min_after_dequeue") == 5
    enq = q.enqueue_many([np.arange(8, dtype=np.int32)])
    deq = q.dequeue()
    with tf.Session() as sess:
        sess.run(enq)
        got = [sess.run(deq) for _ in range(3)]  # 8 elements: 3 may leave, 5 stay behind
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(deq, options=tf.RunOptions(timeout_in_ms=100))
        sess.run(q.close())  # once closed, the rest drains
        got += [sess.run(deq) for _ in range(5)]
        with pytest.raises(tf.errors.OutOfRangeError, match="RandomShuffleQueue '.*' is closed"):
            sess.run(deq)
    assert sorted(got) == list(range(8))


def _shuffled_order(seed, graph_seed=None):
    with tf.Graph().as_default() as g:
        if graph_seed is not None:
            tf.set_random_seed(graph_seed)
        q = tf.RandomShuffleQueue(100, 0, tf.int32, shapes=[[]], seed=seed)
        enq = q.enqueue_many([np.arange(50, dtype=np.int32)])
        batch = q.dequeue_many(50)
        with tf.Session(graph=g) as sess:
            sess.run(enq)
            return sess.run(batch).tolist()


def test_random_shuffle_queue_seeds():
    first = _shuffled_order(3)
    assert sorted(first) == list(range(50)) and first != list(range(50))
    assert _shuffled_order(3) == first  # op seed: the same order in every session
    assert _shuffled_order(4) != first
    assert _shuffled_order(None, graph_seed=11) == _shuffled_order(None, graph_seed=11)


def test_random_shuffle_queue_min_after_dequeue_below_capacity():
    q = tf.RandomShuffleQueue(5, 10, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="min_after_dequeue 10 must be < capacity 5"):
            sess.run(q.size())


def test_random_shuffle_queue_dequeue_many_at_close():
    q = tf.RandomShuffleQueue(10, 2, tf.int32, shapes=[[]])
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2, 3]]))
        sess.run(q.close())
        with pytest.raises(tf.errors.OutOfRangeError):
            sess.run(q.dequeue_many(4))
        assert sorted(sess.run(q.dequeue_up_to(4)).tolist()) == [1, 2, 3]


def test_priority_queue_smallest_first():
    q = tf.PriorityQueue(10, [tf.string, tf.int32], shapes=[[], []])
    assert q.dtypes == [tf.int64, tf.string, tf.int32]
    assert [s.as_list() for s in q.shapes] == [[], [], []]
    e = q.enqueue([tf.constant(5, tf.int64), "a", 1])
    em = q.enqueue_many([tf.constant([3, 9, 1], tf.int64), ["b", "c", "d"], [2, 3, 4]])
    one, many = q.dequeue(), q.dequeue_many(3)
    with tf.Session() as sess:
        sess.run(e)
        sess.run(em)
        assert sess.run(one) == [1, b"d", 4]
        got = sess.run(many)
        _check_shapes(many, got)
        np.testing.assert_array_equal(got[0], [3, 5, 9])
        np.testing.assert_array_equal(got[1], np.array([b"b", b"a", b"c"], dtype=object))
        np.testing.assert_array_equal(got[2], [2, 1, 3])
    with pytest.raises(TypeError):
        q.enqueue(["x", "a", 1])  # the priority must be an int64
    with pytest.raises(TypeError, match="shapes"):
        tf.PriorityQueue(5, [tf.int32])  # TF's PriorityQueue op requires shapes
    p = tf.placeholder(tf.int64)
    scalar_priority = tf.PriorityQueue(5, [tf.int32], shapes=[[]]).enqueue([p, 3])
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"Expected \[\], got \[2\]"):
            sess.run(scalar_priority, {p: [1, 2]})
    with pytest.raises(ValueError, match="3 component"):
        q.enqueue(["a", 1])


# -- sharing and containers --------------------------------------------------------------------------
def test_shared_name_shares_one_queue():
    q1 = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="shared_q")
    q2 = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="shared_q")
    other = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="shared_q_other")
    with tf.Session() as sess:
        sess.run(q1.enqueue(42))
        assert sess.run([q2.size(), other.size()]) == [1, 0]
        assert sess.run(q2.dequeue()) == 42
    mismatch = tf.FIFOQueue(4, tf.int32, shapes=[[]], shared_name="shared_q")
    wrong_types = tf.FIFOQueue(5, tf.float32, shapes=[[]], shared_name="shared_q")
    with tf.Session() as sess:
        sess.run(q1.size())
        with pytest.raises(tf.errors.InvalidArgumentError,
                           match="has capacity 5 but requested capacity was 4"):
            sess.run(mismatch.size())
        with pytest.raises(tf.errors.InvalidArgumentError, match="component types int32 but requested "
                           "component types were float32"):
            sess.run(wrong_types.size())


def test_shared_name_is_shared_within_a_session_never_between_local_sessions():
    """TF's local session owns its devices and resource managers: a shared_name queue is shared
    by the graphs a session runs, and a later session (even of a new graph, the "fresh graph and
    session per experiment" program) gets a fresh queue, not the previous session's closed one
    (TF 2.21: size 0, enqueue works)."""
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="across_sessions_q")
    same = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="across_sessions_q")
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2, 3]]))
        assert sess.run(same.size()) == 3  # one queue for both ops in this session
        sess.run(q.close())
    with tf.Session() as sess:
        assert sess.run(q.size()) == 0
        sess.run(q.enqueue(5))
        assert sess.run(same.dequeue()) == 5
    with tf.Graph().as_default():
        again = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="across_sessions_q")
        with tf.Session() as sess:
            assert sess.run(again.size()) == 0
            sess.run(again.enqueue(7))


def test_shared_name_variable_is_per_session():
    v = tf.get_variable("shared_v", initializer=2.0)
    assert v.op.get_attr("shared_name") in (b"", b"shared_v")
    with tf.Session() as first, tf.Session() as second:
        first.run(v.initializer)
        with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value shared_v"):
            second.run(v)


def test_session_reset_closes_every_local_session():
    """tf.Session.reset("") closes the sessions connected to the local target (TF's direct
    session factory): running steps end with CancelledError, later runs too."""
    q = tf.FIFOQueue(5, tf.int32, shapes=[[]], shared_name="reset_q")
    sess = tf.Session()
    sess.run(q.enqueue(1))
    blocked = Background(sess.run, q.dequeue_many(3))
    wait_for_waiters(sess, q.queue_ref, 1)
    tf.Session.reset("")
    assert isinstance(blocked.join().error, tf.errors.CancelledError)
    with pytest.raises(tf.errors.CancelledError, match="Session has been closed"):
        sess.run(q.size())
    with tf.Session() as fresh:
        assert fresh.run(q.size()) == 0
    sess.close()  # closing it again from Python is harmless


def test_variables_without_shared_name_stay_with_their_session():
    v = tf.Variable(3.0)
    with tf.Session() as first:
        first.run(v.initializer)
        with tf.Session() as second:
            with pytest.raises(tf.errors.FailedPreconditionError, match="uninitialized value Variable"):
                second.run(v)
            second.run(v.assign(7.0))
        assert first.run(v) == 3.0


def test_container_reset_gives_a_fresh_queue():
    with tf.container("queues"):
        q = tf.FIFOQueue(5, tf.int32, shapes=[[]])
    assert q.queue_ref.op.get_attr("container") == b"queues"
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[1, 2]]))
        blocked = Background(sess.run, q.dequeue_many(5))
        wait_for_waiters(sess, q.queue_ref, 1)
        tf.Session.reset("", ["queues"])  # TF: resets the container and closes the session
        assert isinstance(blocked.join().error, tf.errors.CancelledError)
        with pytest.raises(tf.errors.CancelledError, match="Session has been closed"):
            sess.run(q.size())
    with tf.Session() as sess:
        assert sess.run(q.size()) == 0 and not sess.run(q.is_closed())


def test_from_list_selects_a_queue_per_step():
    q1 = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    q2 = tf.FIFOQueue(3, tf.int32, shapes=[[]])
    index = tf.placeholder(tf.int32, [])
    q = tf.QueueBase.from_list(index, [q1, q2])
    assert [s.as_list() for s in q.shapes] == [[]]
    enq = q.enqueue(5)
    with tf.Session() as sess:
        sess.run(enq, {index: 1})
        sess.run(enq, {index: 1})
        sess.run(enq, {index: 0})
        assert sess.run([q1.size(), q2.size()]) == [1, 2]
    with pytest.raises(TypeError, match="matching component dtypes"):
        tf.QueueBase.from_list(index, [q1, tf.FIFOQueue(3, tf.float32)])


def test_state_op_shapes_and_namespaces():
    q = tf.RandomShuffleQueue(5, 0, [tf.int32], shapes=[[2]])
    others = [tf.FIFOQueue(2, tf.int32), tf.PaddingFIFOQueue(2, [tf.int32], shapes=[[None]]),
              tf.PriorityQueue(2, [tf.int32], shapes=[[]])]
    up_to = q.dequeue_up_to(3)
    tensors = [q.queue_ref, q.size(), q.is_closed()] + [o.queue_ref for o in others]
    with tf.Session() as sess:
        sess.run(q.enqueue_many([[[1, 2], [3, 4]]]))
        values = sess.run(tensors)
        sess.run(q.close())
        got = sess.run(up_to)
    for t, v in zip(tensors + [up_to], values + [got]):
        assert_static_shape_matches(t, v)
    assert values[1:3] == [2, False]
    assert sorted(got.tolist()) == [[1, 2], [3, 4]]
    assert tf.queue.FIFOQueue is tf.FIFOQueue and tf.queue.QueueBase is tf.QueueBase
    assert tf.io.PaddingFIFOQueue is tf.PaddingFIFOQueue and tf.io.PriorityQueue is tf.PriorityQueue
