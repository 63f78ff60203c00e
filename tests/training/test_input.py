"""Queue runners, input producers and batching: exact multisets of values over the epochs,
then OutOfRangeError; errors reported through the coordinator. Every wait is bounded (step
timeouts and join grace periods), so a broken pipeline fails instead of hanging."""
import collections
import os
import threading

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.testing.op_test import assert_static_shape_matches

STEP_TIMEOUT = tf.RunOptions(timeout_in_ms=30000)


class Pipeline:
    """A session with its queue runners started under a coordinator; stops and joins them on
    exit (re-raising a thread's error)."""

    def __init__(self, init_local=True):
        self.init_local = init_local

    def __enter__(self):
        self.sess = tf.Session()
        self.sess.run(tf.global_variables_initializer())
        if self.init_local:
            self.sess.run(tf.local_variables_initializer())
        self.coord = tf.train.Coordinator()
        self.threads = tf.train.start_queue_runners(self.sess, coord=self.coord)
        return self

    def run(self, fetches, feed_dict=None):
        return self.sess.run(fetches, feed_dict, options=STEP_TIMEOUT)

    def drain(self, fetches):
        """Runs `fetches` until OutOfRangeError; returns every result."""
        results = []
        with pytest.raises(tf.errors.OutOfRangeError):
            for _ in range(10000):
                results.append(self.run(fetches))
        return results

    def __exit__(self, *exc):
        self.coord.request_stop()
        try:
            self.coord.join(self.threads, stop_grace_period_secs=10)
        finally:
            self.sess.close()
        return False


# -- limit_epochs ----------------------------------------------------------------------------------
def test_limit_epochs_counts_in_a_local_variable():
    value = tf.train.limit_epochs(tf.constant([1, 2]), num_epochs=3)
    epochs = [v for v in tf.local_variables() if v.op.name.endswith("epochs")]
    assert len(epochs) == 1 and epochs[0].dtype.base_dtype == tf.int64
    assert epochs[0] not in tf.global_variables()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError):
            sess.run(value)  # the counter must be initialized first, as in TF
        sess.run(tf.local_variables_initializer())
        for _ in range(3):
            np.testing.assert_array_equal(sess.run(value), [1, 2])
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 3"):
            sess.run(value)
        assert sess.run(epochs[0]) == 3


def test_count_up_to():
    counter = tf.Variable(np.int32(2), trainable=False)
    step = tf.count_up_to(counter, 4)
    assert step.dtype == tf.int32 and step.shape.as_list() == []
    with tf.Session() as sess:
        sess.run(counter.initializer)
        values = [sess.run(step), sess.run(step)]
        assert_static_shape_matches(step, values[0])
        with pytest.raises(tf.errors.OutOfRangeError, match="Reached limit of 4"):
            sess.run(step)
        assert values == [2, 3] and sess.run(counter) == 4
    with pytest.raises(TypeError):
        tf.count_up_to(tf.Variable(1.0), 3)


def test_limit_epochs_none_and_invalid():
    t = tf.constant(5)
    assert tf.train.limit_epochs(t) is t
    with pytest.raises(ValueError, match="num_epochs must be > 0"):
        tf.train.limit_epochs(t, num_epochs=0)


# -- producers -------------------------------------------------------------------------------------
def test_string_input_producer_in_order_then_out_of_range():
    names = [b"a", b"b", b"c"]
    queue = tf.train.string_input_producer(names, num_epochs=2, shuffle=False, capacity=4)
    element = queue.dequeue()
    with Pipeline() as p:
        got = p.drain(element)
    assert got == names * 2


def test_string_input_producer_shuffles_within_each_epoch():
    names = [f"file{i}".encode() for i in range(10)]
    queue = tf.train.string_input_producer(names, num_epochs=3, shuffle=True, seed=11)
    element = queue.dequeue()
    with Pipeline() as p:
        got = p.drain(element)
    assert len(got) == 30
    epochs = [got[i * 10:(i + 1) * 10] for i in range(3)]
    assert all(sorted(e) == sorted(names) for e in epochs)
    assert any(e != names for e in epochs)  # 10! orders: an unshuffled epoch 3 times is no chance


def test_string_input_producer_rejects_empty_input():
    with pytest.raises(ValueError, match="non-null"):
        tf.train.string_input_producer([])
    names = tf.placeholder(tf.string, [None])
    queue = tf.train.string_input_producer(names, num_epochs=1)
    assert queue.dtypes == [tf.string] and queue.shapes[0].as_list() == []


def test_range_input_producer():
    queue = tf.train.range_input_producer(7, num_epochs=2, shuffle=True, seed=3)
    element = queue.dequeue()
    with Pipeline() as p:
        got = p.drain(element)
    assert sorted(got) == sorted(list(range(7)) * 2)


def test_slice_input_producer_keeps_rows_together():
    features = np.arange(12, dtype=np.float32).reshape(6, 2)
    labels = np.array([b"r%d" % i for i in range(6)], dtype=object)
    row, label = tf.train.slice_input_producer([features, labels], num_epochs=2, shuffle=True, seed=5)
    assert row.shape.as_list() == [2] and label.shape.as_list() == []
    with Pipeline() as p:
        got = p.drain([row, label])
    assert len(got) == 12
    for r, lab in got:
        i = int(r[0]) // 2
        np.testing.assert_array_equal(r, features[i])
        assert lab == labels[i]
    counts = collections.Counter(lab for _, lab in got)
    assert set(counts.values()) == {2}


def test_input_producer_needs_a_known_element_shape():
    with pytest.raises(ValueError, match="fully defined shape"):
        tf.train.input_producer(tf.placeholder(tf.float32, [None, None]))
    queue = tf.train.input_producer(tf.placeholder(tf.float32, [None, None]), element_shape=[3])
    assert queue.shapes[0].as_list() == [3]
    assert len(tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)) == 1


def test_match_filenames_once(tmp_path):
    for name in ("b.csv", "a.csv", "c.txt"):
        (tmp_path / name).write_text("x")
    files = tf.train.match_filenames_once(str(tmp_path / "*.csv"))
    assert files in tf.local_variables()
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        got = sess.run(files)
    assert got.tolist() == [str(tmp_path / "a.csv").encode(), str(tmp_path / "b.csv").encode()]
    matched = tf.matching_files([str(tmp_path / "c.*"), str(tmp_path / "nothing*")])
    with tf.Session() as sess:
        got = sess.run(matched)
    assert_static_shape_matches(matched, got)
    assert got.tolist() == [str(tmp_path / "c.txt").encode()]


# -- batching --------------------------------------------------------------------------------------
def _counter_producer(n, num_epochs=1):
    """A scalar int32 stream 0..n-1 (in order) for `num_epochs` epochs."""
    return tf.train.range_input_producer(n, num_epochs=num_epochs, shuffle=False).dequeue()


def test_batch_keeps_order_and_drops_the_remainder():
    x = _counter_producer(10)
    batched = tf.train.batch([x, x * 2], batch_size=4)
    assert [t.shape.as_list() for t in batched] == [[4], [4]]
    with Pipeline() as p:
        got = p.drain(batched)
    assert [b[0].tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert all((b[1] == 2 * b[0]).all() for b in got)


def test_batch_allow_smaller_final_batch_and_single_tensor():
    x = _counter_producer(10)
    batched = tf.train.batch([x], batch_size=4, allow_smaller_final_batch=True)
    assert isinstance(batched, tf.Tensor) and batched.shape.as_list() == [None]
    with Pipeline() as p:
        got = p.drain(batched)
    assert [b.tolist() for b in got] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]


def test_batch_enqueue_many_dict_and_threads():
    rows = tf.train.limit_epochs(tf.constant(np.arange(6, dtype=np.int64).reshape(3, 2)), num_epochs=4)
    names = tf.train.limit_epochs(tf.constant(["p", "q", "r"]), num_epochs=4)
    batched = tf.train.batch({"row": rows, "name": names}, batch_size=5, num_threads=2, enqueue_many=True,
                             allow_smaller_final_batch=True, capacity=8)
    assert set(batched) == {"row", "name"} and batched["row"].shape.as_list() == [None, 2]
    with Pipeline() as p:
        got = p.drain(batched)
    pairs = [(tuple(r), n) for b in got for r, n in zip(b["row"].tolist(), b["name"].tolist())]
    # Two threads each enqueue (3 rows) until the epochs run out: 4 epochs in total.
    assert collections.Counter(pairs) == collections.Counter(
        {((0, 1), b"p"): 4, ((2, 3), b"q"): 4, ((4, 5), b"r"): 4})


def test_batch_dynamic_pad():
    lengths = _counter_producer(4)
    vector = tf.fill([lengths + 1], lengths + 1)
    batched = tf.train.batch([vector], batch_size=4, dynamic_pad=True)
    assert batched.shape.as_list() == [4, None]
    with Pipeline() as p:
        (got,) = p.drain(batched)
    np.testing.assert_array_equal(got, [[1, 0, 0, 0], [2, 2, 0, 0], [3, 3, 3, 0], [4, 4, 4, 4]])


def test_batch_join_and_shuffle_batch_join_cover_every_input():
    a = _counter_producer(5)
    b = _counter_producer(5) + 100
    joined = tf.train.batch_join([[a], [b]], batch_size=3, allow_smaller_final_batch=True)
    with Pipeline() as p:
        got = [v for batch in p.drain(joined) for v in batch.tolist()]
    assert sorted(got) == list(range(5)) + list(range(100, 105))
    tf.reset_default_graph()
    a = _counter_producer(5)
    b = _counter_producer(5) + 100
    shuffled = tf.train.shuffle_batch_join([[a], [b]], batch_size=3, capacity=12, min_after_dequeue=2,
                                           seed=1, allow_smaller_final_batch=True)
    with Pipeline() as p:
        got = [v for batch in p.drain(shuffled) for v in batch.tolist()]
    assert sorted(got) == list(range(5)) + list(range(100, 105))


def test_shuffle_batch_mixes_and_validates():
    x = _counter_producer(40, num_epochs=2)
    batched = tf.train.shuffle_batch([x], batch_size=8, capacity=30, min_after_dequeue=10, seed=7,
                                     num_threads=2)
    assert batched.shape.as_list() == [8]
    with Pipeline() as p:
        got = [v for batch in p.drain(batched) for v in batch.tolist()]
    assert len(got) == 80 and collections.Counter(got) == collections.Counter(list(range(40)) * 2)
    assert got != sorted(got)
    with pytest.raises(ValueError, match="must be bigger than min_after_dequeue"):
        tf.train.shuffle_batch([x], batch_size=2, capacity=10, min_after_dequeue=10)


def test_batch_input_validation():
    x = tf.constant(1)
    with pytest.raises(ValueError):
        tf.train.batch([], batch_size=2)
    with pytest.raises(TypeError):
        tf.train.batch(x, batch_size=2)
    with pytest.raises(TypeError, match="consistent"):
        tf.train.batch_join([[x], [tf.constant(1.0)]], batch_size=2)
    with pytest.raises(ValueError, match="rank"):
        tf.train.batch([tf.placeholder(tf.float32)], batch_size=2)
    with pytest.raises(ValueError):
        tf.train.batch_join([{"a": x}, {"b": x}], batch_size=2)


# -- QueueRunner -----------------------------------------------------------------------------------
def test_queue_runner_closes_the_queue_when_the_last_thread_ends():
    source = tf.train.limit_epochs(tf.constant([1, 2, 3]), num_epochs=2)
    queue = tf.FIFOQueue(2, [tf.int32], shapes=[[]])  # small: the threads block until consumed
    runner = tf.train.QueueRunner(queue, [queue.enqueue_many([source])] * 3)
    with tf.Session() as sess:
        sess.run(tf.local_variables_initializer())
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, start=True)
        assert len(threads) == 4  # three enqueue threads and the close-on-stop thread
        while sess.run(queue.size(), options=STEP_TIMEOUT) < 2:
            coord.wait_for_stop(0.01)
        assert runner.create_threads(sess, coord=coord) == []  # already running in this session
        got = []
        with pytest.raises(tf.errors.OutOfRangeError):
            for _ in range(100):
                got.append(sess.run(queue.dequeue(), options=STEP_TIMEOUT))
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)
    assert sorted(got) == [1, 1, 2, 2, 3, 3]


def test_queue_runner_reports_errors_to_the_coordinator():
    bad = tf.placeholder(tf.float32, [])  # never fed: InvalidArgumentError in the thread
    queue = tf.FIFOQueue(10, [tf.float32])
    runner = tf.train.QueueRunner(queue, [queue.enqueue([bad])])
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, daemon=True, start=True)
        assert coord.wait_for_stop(30)
        with pytest.raises(tf.errors.InvalidArgumentError):
            coord.join(threads, stop_grace_period_secs=10)


def test_queue_runner_without_coordinator_records_exceptions():
    bad = tf.placeholder(tf.float32, [])
    queue = tf.FIFOQueue(10, [tf.float32])
    runner = tf.train.QueueRunner(queue, [queue.enqueue([bad])])
    with tf.Session() as sess:
        hook, threading.excepthook = threading.excepthook, lambda args: None  # expected traceback
        try:
            threads = runner.create_threads(sess, start=True)
            for t in threads:
                t.join(30)
        finally:
            threading.excepthook = hook
    assert len(runner.exceptions_raised) == 1
    assert isinstance(runner.exceptions_raised[0], tf.errors.InvalidArgumentError)


def test_stop_request_cancels_enqueues_blocked_on_a_full_queue():
    queue = tf.FIFOQueue(2, [tf.int32], shapes=[[]])
    runner = tf.train.QueueRunner(queue, [queue.enqueue([tf.constant(1)])] * 2)
    with tf.Session() as sess:
        coord = tf.train.Coordinator()
        threads = runner.create_threads(sess, coord=coord, daemon=True, start=True)
        while sess.run(queue.size(), options=STEP_TIMEOUT) < 2:
            coord.wait_for_stop(0.01)
        coord.request_stop()
        coord.join(threads, stop_grace_period_secs=10)  # the blocked enqueues were woken
        assert not any(t.is_alive() for t in threads)
        assert sess.run(queue.is_closed())


def test_queue_runner_arguments_and_collection():
    queue = tf.FIFOQueue(10, [tf.float32])
    with pytest.raises(ValueError):
        tf.train.QueueRunner(queue, [])
    with pytest.raises(TypeError):
        tf.train.QueueRunner(queue, [queue.enqueue([1.0])], queue_closed_exception_types=(ValueError,))
    runner = tf.train.QueueRunner(queue, [queue.enqueue([1.0])])
    assert runner.queue is queue and runner.name == queue.name
    assert runner.queue_closed_exception_types == (tf.errors.OutOfRangeError,)
    tf.train.add_queue_runner(runner)
    assert tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS) == [runner]
    assert tf.train.queue_runner.add_queue_runner is tf.train.add_queue_runner
    with pytest.raises(ValueError, match="No default session"):
        tf.train.start_queue_runners()
    with tf.Session() as sess:
        with sess.as_default():
            threads = tf.train.start_queue_runners(start=False)
        assert len(threads) == 1 and not threads[0].is_alive()


# -- end to end ------------------------------------------------------------------------------------
def _write_csv_files(directory, n_files, rows_per_file):
    """CSV files `id,value,label` with ids unique across files; returns (paths, rows)."""
    paths, rows = [], []
    for f in range(n_files):
        path = os.path.join(directory, f"part-{f}.csv")
        lines = []
        for r in range(rows_per_file):
            i = f * rows_per_file + r
            row = (i, i * 0.25, f"label{i % 3}")
            rows.append(row)
            lines.append(f"{row[0]},{row[1]},{row[2]}")
        with open(path, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        paths.append(path)
    return paths, rows


def _check_epochs(batches, rows, num_epochs):
    got = [(int(i), float(v), lab.decode()) for b in batches for i, v, lab in zip(*b)]
    assert collections.Counter(got) == collections.Counter(rows * num_epochs)


def test_end_to_end_files_to_shuffled_batches(tmp_path):
    """Files -> string_input_producer -> ReadFile -> split lines -> decode_csv (enqueue_many)
    -> shuffle_batch with 2 threads: every row exactly num_epochs times, then OutOfRangeError."""
    paths, rows = _write_csv_files(str(tmp_path), n_files=3, rows_per_file=7)
    filename = tf.train.string_input_producer(paths, num_epochs=2, shuffle=True, seed=4).dequeue()
    lines = tf.string_split([tf.read_file(filename)], delimiter="\n").values
    ids, values, labels = tf.decode_csv(lines, record_defaults=[[0], [0.0], [""]])
    batch = tf.train.shuffle_batch([ids, values, labels], batch_size=4, capacity=20, min_after_dequeue=3,
                                   num_threads=2, enqueue_many=True, seed=9, allow_smaller_final_batch=True)
    with Pipeline() as p:
        batches = p.drain(batch)
    _check_epochs(batches, rows, num_epochs=2)


def test_end_to_end_text_line_reader(tmp_path):
    """Files -> string_input_producer -> TextLineReader -> decode_csv -> shuffle_batch with 2
    threads: the exact multiset of rows over the epochs, then OutOfRangeError."""
    paths, rows = _write_csv_files(str(tmp_path), n_files=3, rows_per_file=5)
    filenames = tf.train.string_input_producer(paths, num_epochs=3, shuffle=True, seed=2)
    reader = tf.TextLineReader()
    _, line = reader.read(filenames)
    ids, values, labels = tf.decode_csv(line, record_defaults=[[0], [0.0], [""]])
    batch = tf.train.shuffle_batch([ids, values, labels], batch_size=4, capacity=16, min_after_dequeue=4,
                                   num_threads=2, seed=3, allow_smaller_final_batch=True)
    with Pipeline() as p:
        batches = p.drain(batch)
    _check_epochs(batches, rows, num_epochs=3)
