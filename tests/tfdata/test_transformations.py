"""Transformations against plain-Python models of their semantics (random sizes and counts),
and the behaviours a fixture cannot show: shuffle's reshuffling, prefetch's worker stopping,
parallel map keeping the input order, cache, list_files, tf.data.experimental."""
import os
import random
import threading
import time

import numpy as np
import pytest

import tensorweave as tf
from tests.tfdata.helpers import ints, run_all


def model_batches(items, size, drop):
    out = [items[i:i + size] for i in range(0, len(items), size)]
    return [b for b in out if len(b) == size] if drop else out


@pytest.mark.parametrize("seed", range(6))
def test_random_pipelines_match_the_python_model(seed):
    rnd = random.Random(seed)
    n, skip, take, reps = rnd.randint(0, 15), rnd.randint(0, 5), rnd.randint(-1, 12), rnd.randint(0, 3)
    size, drop, shards, index = rnd.randint(1, 4), rnd.random() < 0.5, rnd.randint(1, 3), 0
    items = list(range(n))[skip:]
    items = items if take < 0 else items[:take]
    items = items * reps
    items = [x * 3 for x in items if x % 2 == 0]
    items = items[index::shards]
    expected = model_batches(items, size, drop)
    got = run_all(lambda: tf.data.Dataset.range(n).skip(skip).take(take).repeat(reps).filter(
        lambda x: tf.equal(x % 2, 0)).map(lambda x: x * 3).shard(shards, index).batch(size, drop_remainder=drop))
    assert [g.tolist() for g in got] == expected


def test_repeat_forever_and_empty_inputs():
    assert ints(run_all(lambda: tf.data.Dataset.range(2).repeat(), limit=7)) == [0, 1, 0, 1, 0, 1, 0]
    assert run_all(lambda: tf.data.Dataset.range(0).repeat()) == []  # an empty pass ends it
    assert ints(run_all(lambda: tf.data.Dataset.range(3).skip(-1).concatenate(tf.data.Dataset.range(2)))) == [0, 1]
    assert ints(run_all(lambda: tf.data.Dataset.range(3).take(0))) == []


def test_zip_stops_at_the_shortest_and_nests():
    got = run_all(lambda: tf.data.Dataset.zip((tf.data.Dataset.range(3), (tf.data.Dataset.range(10, 20),
                                                                           tf.data.Dataset.range(5)))))
    assert [(int(a), (int(b), int(c))) for a, (b, c) in got] == [(0, (10, 0)), (1, (11, 1)), (2, (12, 2))]


def test_batch_of_different_shapes_fails_and_padded_batch_checks_sizes():
    ds = lambda: tf.data.Dataset.range(1, 4).map(lambda x: tf.fill([x], x))  # noqa: E731
    with pytest.raises(tf.errors.InvalidArgumentError, match="Cannot batch tensors with different shapes"):
        run_all(lambda: ds().batch(2))
    with pytest.raises(tf.errors.InvalidArgumentError, match="pad to a smaller size"):
        run_all(lambda: ds().padded_batch(3, [2]))
    got = run_all(lambda: ds().padded_batch(2, [4], drop_remainder=True))
    assert [g.tolist() for g in got] == [[[1, 0, 0, 0], [2, 2, 0, 0]]]


def test_shuffle_reshuffles_each_iteration_unless_asked_not_to():
    def epochs(reshuffle):
        ds = lambda: tf.data.Dataset.range(30).shuffle(30, seed=7, reshuffle_each_iteration=reshuffle).repeat(3)  # noqa: E731,E501
        values = ints(run_all(ds))
        return [values[i:i + 30] for i in range(0, 90, 30)]
    a, b, c = epochs(True)
    assert sorted(a) == sorted(b) == sorted(c) == list(range(30))
    assert a != b or b != c
    assert epochs(True) == [a, b, c]  # seeded: the same sequence of orders each run
    x, y, z = epochs(False)
    assert x == y == z and sorted(x) == list(range(30))


def test_shuffle_moves_elements_uniformly():
    # with a buffer as large as the data every position is equally likely: first elements
    # over many unseeded runs cover the range roughly evenly
    firsts = []
    with tf.Graph().as_default():
        it = tf.data.Dataset.range(4).shuffle(4).make_initializable_iterator()
        nxt = it.get_next()
        with tf.Session() as sess:
            for _ in range(400):
                sess.run(it.initializer)
                firsts.append(int(sess.run(nxt)))
    counts = np.bincount(firsts, minlength=4)
    assert counts.min() > 60, counts


def test_parallel_map_keeps_input_order_with_uneven_work():
    def slow(x):
        time.sleep(0.002 * (5 - x % 5))
        return x
    ds = lambda: tf.data.Dataset.range(15).map(  # noqa: E731
        lambda x: tf.py_func(slow, [x], tf.int64), num_parallel_calls=4)
    assert ints(run_all(ds)) == list(range(15))
    assert ints(run_all(lambda: tf.data.Dataset.range(6).map(lambda x: x + 1, tf.data.experimental.AUTOTUNE))) == \
        [1, 2, 3, 4, 5, 6]


def test_prefetch_works_ahead_within_its_buffer_and_stops_on_close():
    produced = []

    def record(x):
        produced.append(int(x))
        return x
    with tf.Graph().as_default():
        ds = tf.data.Dataset.range(1000).map(lambda x: tf.py_func(record, [x], tf.int64)).prefetch(3)
        nxt = ds.make_one_shot_iterator().get_next()
        sess = tf.Session()
        assert int(sess.run(nxt)) == 0
        time.sleep(0.2)
        assert 1 <= len(produced) <= 1 + 3 + 1  # the consumed element, a full buffer, one in hand
        before = threading.active_count()
        sess.close()
        deadline = time.monotonic() + 3
        while threading.active_count() >= before and time.monotonic() < deadline:
            time.sleep(0.02)
        assert threading.active_count() < before  # the prefetch worker (and the iterator's) ended
        count = len(produced)
        time.sleep(0.1)
        assert len(produced) == count


def test_cache_replays_the_first_pass():
    calls = []

    def count(x):
        calls.append(int(x))
        return x
    ds = lambda: tf.data.Dataset.range(3).map(lambda x: tf.py_func(count, [x], tf.int64)).cache().repeat(3)  # noqa: E731
    assert ints(run_all(ds)) == [0, 1, 2] * 3
    assert calls == [0, 1, 2]


def test_list_files_and_readers_over_them(tmp_path):
    for i in range(3):
        with tf.python_io.TFRecordWriter(str(tmp_path / f"part-{i}.tfrecord")) as w:
            for j in range(2):
                w.write(b"%d-%d" % (i, j))
    pattern = str(tmp_path / "part-*.tfrecord")
    names = [n.decode() for n in run_all(lambda: tf.data.Dataset.list_files(pattern, shuffle=False))]
    assert names == sorted(os.path.join(str(tmp_path), f"part-{i}.tfrecord") for i in range(3))
    shuffled = run_all(lambda: tf.data.Dataset.list_files(pattern, seed=3))
    assert sorted(shuffled) == sorted(n.encode() for n in names)
    records = run_all(lambda: tf.data.Dataset.list_files(pattern, shuffle=False).interleave(
        tf.data.TFRecordDataset, cycle_length=2))
    assert records == [b"0-0", b"1-0", b"0-1", b"1-1", b"2-0", b"2-1"]


def test_a_missing_file_fails_with_not_found(tmp_path):
    with pytest.raises(tf.errors.NotFoundError):
        run_all(lambda: tf.data.TextLineDataset(str(tmp_path / "absent.txt")))


def test_experimental_transformations():
    exp = tf.data.experimental
    got = ints(run_all(lambda: tf.data.Dataset.range(4).apply(exp.shuffle_and_repeat(4, count=2, seed=1))))
    assert sorted(got) == [0, 0, 1, 1, 2, 2, 3, 3]
    got = run_all(lambda: tf.data.Dataset.range(5).apply(exp.map_and_batch(lambda x: x * 2, 2)))
    assert [g.tolist() for g in got] == [[0, 2], [4, 6], [8]]
    got = run_all(lambda: tf.data.Dataset.from_tensors([[1, 2], [3, 4]]).apply(exp.unbatch()))
    assert [g.tolist() for g in got] == [[1, 2], [3, 4]]
    assert exp.AUTOTUNE == tf.data.experimental.AUTOTUNE == -1


def test_from_generator_with_args_and_a_wrong_shape():
    def gen(n):
        for i in range(n):
            yield [i] * 2
    got = run_all(lambda: tf.data.Dataset.from_generator(gen, tf.int32, tf.TensorShape([2]), args=(3,)))
    assert [g.tolist() for g in got] == [[0, 0], [1, 1], [2, 2]]
    with pytest.raises(tf.errors.InvalidArgumentError, match="shape"):
        run_all(lambda: tf.data.Dataset.from_generator(gen, tf.int32, tf.TensorShape([3]), args=(3,)))


def test_parallel_map_pool_is_bounded_and_stops_on_close():
    def named():
        return [t for t in threading.enumerate() if t.name == "tf.data parallel map"]
    before = len(named())
    with tf.Graph().as_default():
        nxt = tf.data.Dataset.range(100).map(lambda x: x * 2, num_parallel_calls=3).make_one_shot_iterator() \
            .get_next()
        sess = tf.Session()
        assert [int(sess.run(nxt)) for _ in range(20)] == [2 * i for i in range(20)]
        assert len(named()) - before == 3
        sess.close()
    deadline = time.monotonic() + 3
    while len(named()) > before and time.monotonic() < deadline:
        time.sleep(0.02)
    assert len(named()) == before
