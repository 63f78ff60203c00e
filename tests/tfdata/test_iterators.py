"""Iterator kinds (one-shot, initializable with feeds, reinitializable, feedable), the end of
the data, errors, cancellation of a blocked get_next, and datasets in GraphDef round trips."""
import threading
import time

import numpy as np
import pytest

import tensorweave as tf


def test_initializable_iterator_with_feeds_restarts_on_each_initialization():
    limit = tf.placeholder(tf.int64, [])
    it = tf.data.Dataset.range(limit).map(lambda x: x + 100).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        for n in (3, 5):
            sess.run(it.initializer, {limit: n})
            assert [int(sess.run(nxt)) for _ in range(n)] == [100 + i for i in range(n)]
            with pytest.raises(tf.errors.OutOfRangeError, match="End of sequence"):
                sess.run(nxt)
            with pytest.raises(tf.errors.OutOfRangeError):  # stays at its end
                sess.run(nxt)


def test_get_next_before_initialization_fails_with_tfs_error():
    it = tf.data.Dataset.range(3).make_initializable_iterator()
    with tf.Session() as sess:
        with pytest.raises(tf.errors.FailedPreconditionError, match="iterator has not been initialized"):
            sess.run(it.get_next())


def test_reinitializable_iterator_switches_datasets():
    train = tf.data.Dataset.range(10).batch(4)
    valid = tf.data.Dataset.range(100, 103).batch(4)
    it = tf.data.Iterator.from_structure(train.output_types, train.output_shapes)
    nxt = it.get_next()
    assert nxt.shape.as_list() == [None]
    init_train, init_valid = it.make_initializer(train), it.make_initializer(valid)
    with tf.Session() as sess:
        sess.run(init_train)
        assert sess.run(nxt).tolist() == [0, 1, 2, 3]
        sess.run(init_valid)
        assert sess.run(nxt).tolist() == [100, 101, 102]
        sess.run(init_train)
        assert sess.run(nxt).tolist() == [0, 1, 2, 3]


def test_make_initializer_rejects_another_structure():
    it = tf.data.Iterator.from_structure(tf.int64, tf.TensorShape([]))
    with pytest.raises(TypeError):
        it.make_initializer(tf.data.Dataset.from_tensors(1.0))


def test_feedable_iterator_through_string_handles():
    a = tf.data.Dataset.range(5).make_one_shot_iterator()
    b = tf.data.Dataset.range(50, 55).make_initializable_iterator()
    handle = tf.placeholder(tf.string, [])
    it = tf.data.Iterator.from_string_handle(handle, a.output_types, a.output_shapes)
    nxt = it.get_next()
    with tf.Session() as sess:
        ha, hb = sess.run([a.string_handle(), b.string_handle()])
        sess.run(b.initializer)
        got = [int(sess.run(nxt, {handle: h})) for h in (ha, hb, ha, hb)]
        assert got == [0, 50, 1, 51]
        with pytest.raises(tf.errors.InvalidArgumentError):
            sess.run(nxt, {handle: b"nothing"})


def test_one_shot_iterator_cannot_capture_a_placeholder():
    x = tf.placeholder(tf.int64, [])
    with pytest.raises(ValueError, match="make_initializable_iterator"):
        tf.data.Dataset.range(x).make_one_shot_iterator()


def test_one_shot_iterator_copies_constants_and_map_captures():
    scale = tf.constant(3, tf.int64)
    ds = tf.data.Dataset.from_tensor_slices(np.arange(4)).map(lambda x: x * scale)
    assert ints_of(ds) == [0, 3, 6, 9]


def ints_of(ds):
    nxt = ds.make_one_shot_iterator().get_next()
    out = []
    with tf.Session() as sess:
        try:
            while True:
                out.append(int(sess.run(nxt)))
        except tf.errors.OutOfRangeError:
            return out


def test_map_captures_a_variable_read_and_a_placeholder():
    offset = tf.placeholder(tf.int64, [])
    it = tf.data.Dataset.range(3).map(lambda x: x + offset).make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer, {offset: 10})
        assert [int(sess.run(nxt)) for _ in range(3)] == [10, 11, 12]


def test_nested_structures_and_static_properties():
    ds = tf.data.Dataset.from_tensor_slices(
        {"x": np.zeros([6, 2], np.float32), "y": (np.arange(6), np.array([b"s"] * 6))})
    assert ds.output_types == {"x": tf.float32, "y": (tf.int64, tf.string)}
    assert ds.output_shapes["x"].as_list() == [2]
    assert ds.output_classes == {"x": tf.Tensor, "y": (tf.Tensor, tf.Tensor)}
    batched = ds.batch(4, drop_remainder=True)
    assert batched.output_shapes["y"][0].as_list() == [4]
    assert ds.batch(4).output_shapes["x"].as_list() == [None, 2]
    assert tf.data.get_output_types(batched) == batched.output_types
    assert tf.compat.v1.data.get_output_shapes(batched)["x"].as_list() == [4, 2]
    it = batched.make_one_shot_iterator()
    assert tf.data.get_output_classes(it) == batched.output_classes
    nxt = it.get_next()
    assert nxt["x"].shape.as_list() == [4, 2]
    with tf.Session() as sess:
        value = sess.run(nxt)
    assert value["y"][0].tolist() == [0, 1, 2, 3] and value["y"][1].tolist() == [b"s"] * 4
    with pytest.raises(tf.errors.OutOfRangeError):
        with tf.Session() as sess:
            sess.run(nxt)
            sess.run(nxt)


def test_filter_needs_a_scalar_bool_predicate():
    with pytest.raises(ValueError, match="scalar boolean"):
        tf.data.Dataset.range(3).filter(lambda x: x)


def test_an_error_in_the_map_function_fails_the_step_and_names_the_function():
    ds = tf.data.Dataset.from_tensor_slices(np.array([1.0, -1.0, 2.0], np.float32)).map(
        lambda x: tf.debugging.assert_positive(x) and x)
    nxt = ds.make_one_shot_iterator().get_next()
    with tf.Session() as sess:
        assert sess.run(nxt) == 1.0
        with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset_map"):
            sess.run(nxt)


def _blocking_dataset():
    """A dataset whose map function waits on an empty queue."""
    queue = tf.FIFOQueue(10, [tf.int64], shapes=[[]])
    ds = tf.data.Dataset.range(5).map(lambda x: x + queue.dequeue())
    return queue, ds


def test_run_options_timeout_ends_a_blocked_get_next():
    queue, ds = _blocking_dataset()
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    with tf.Session() as sess:
        sess.run(it.initializer)
        start = time.monotonic()
        with pytest.raises(tf.errors.DeadlineExceededError):
            sess.run(nxt, options=tf.RunOptions(timeout_in_ms=200))
        assert time.monotonic() - start < 3
        sess.run(queue.enqueue(40))
        assert int(sess.run(nxt)) in (40, 41)  # the withdrawn request may have consumed element 0


def test_session_close_ends_a_blocked_get_next():
    _, ds = _blocking_dataset()
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    sess = tf.Session()
    sess.run(it.initializer)
    errors = []

    def consume():
        try:
            sess.run(nxt)
        except tf.errors.OpError as err:
            errors.append(err)

    thread = threading.Thread(target=consume)
    thread.start()
    time.sleep(0.2)
    start = time.monotonic()
    sess.close()
    thread.join(5)
    assert not thread.is_alive() and time.monotonic() - start < 3
    assert isinstance(errors[0], tf.errors.CancelledError)


def test_waiting_get_next_holds_no_executor_thread():
    # two steps waiting on one iterator each, both served later: with async get_next the
    # waits cost no thread of the (small) inter-op pool.
    q = tf.FIFOQueue(10, [tf.int64], shapes=[[]])
    ds = tf.data.Dataset.range(4).map(lambda x: x + q.dequeue())
    it = ds.make_initializable_iterator()
    nxt = it.get_next()
    config = tf.ConfigProto(inter_op_parallelism_threads=1)
    with tf.Session(config=config) as sess:
        sess.run(it.initializer)
        results = []
        threads = [threading.Thread(target=lambda: results.append(int(sess.run(nxt)))) for _ in range(2)]
        for t in threads:
            t.start()
        time.sleep(0.2)
        assert sess.run(q.size()) == 0  # the pool still runs other steps
        sess.run(q.enqueue_many([[10, 20]]))
        for t in threads:
            t.join(5)
        assert sorted(results) == [10, 21]


def test_datasets_survive_a_graph_def_round_trip():
    with tf.Graph().as_default() as g:
        ds = tf.data.Dataset.range(8).map(lambda x: x * 10).filter(lambda x: tf.greater(x, 20)).batch(2)
        it = ds.make_initializable_iterator()
        nxt = it.get_next(name="next")
        init_name = it.initializer.name
        graph_def = g.as_graph_def()
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        g2 = tf.get_default_graph()
        nxt2 = g2.get_tensor_by_name("next:0")
        with tf.Session() as sess:
            sess.run(g2.get_operation_by_name(init_name))
            assert sess.run(nxt2).tolist() == [30, 40]
            assert sess.run(nxt2).tolist() == [50, 60]
            assert sess.run(nxt2).tolist() == [70]
    assert nxt.shape.as_list() == [None]


def test_one_shot_iterator_round_trips_through_a_graph_def():
    with tf.Graph().as_default() as g:
        nxt = tf.data.Dataset.from_tensor_slices([1, 2, 3]).map(lambda x: x * 2).make_one_shot_iterator() \
            .get_next(name="next")
        graph_def = g.as_graph_def()
    assert nxt.dtype == tf.int32
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        with tf.Session() as sess:
            assert [int(sess.run("next:0")) for _ in range(3)] == [2, 4, 6]

