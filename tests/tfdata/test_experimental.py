"""tf.data.experimental's datasets and functions, and Dataset.reduce, against plain-Python
models of their semantics."""
import collections

import numpy as np
import pytest

import tensorweave as tf
from tests.tfdata.helpers import ints, run_all

exp = tf.data.experimental


def test_choose_from_datasets_follows_the_choices_and_skips_exhausted_inputs():
    def make():
        inputs = [tf.data.Dataset.range(0, 3), tf.data.Dataset.range(10, 20), tf.data.Dataset.range(100, 101)]
        choice = tf.data.Dataset.from_tensor_slices(np.array([0, 1, 2, 2, 0, 0, 0, 1], np.int64))
        return exp.choose_from_datasets(inputs, choice)
    # model: an exhausted input's turns are skipped
    assert ints(run_all(make)) == [0, 10, 100, 1, 2, 11]


def test_sample_from_datasets_draws_by_weight_and_drains_every_input():
    def make():
        return exp.sample_from_datasets([tf.data.Dataset.from_tensors(np.int64(0)).repeat(600),
                                         tf.data.Dataset.from_tensors(np.int64(1)).repeat(600)],
                                        weights=[0.8, 0.2], seed=5)
    values = ints(run_all(make))
    assert collections.Counter(values) == {0: 600, 1: 600}
    head = values[:600]  # before either input runs out the draws follow the weights
    assert 0.72 < head.count(0) / len(head) < 0.88
    assert values == ints(run_all(make))  # seeded: reproducible


def test_counter_counts_without_end():
    assert ints(run_all(lambda: exp.Counter(5, 3), limit=4)) == [5, 8, 11, 14]
    got = run_all(lambda: exp.Counter(dtype=tf.int32), limit=3)
    assert [v.dtype for v in got] == [np.int32] * 3 and ints(got) == [0, 1, 2]


def test_get_single_element():
    x = exp.get_single_element(tf.data.Dataset.from_tensors((1, [2.0, 3.0])).map(lambda a, b: (a + 1, b * 2)))
    assert x[1].shape.as_list() == [2]
    with tf.Session() as sess:
        a, b = sess.run(x)
        assert a == 2 and b.tolist() == [4.0, 6.0]
        with pytest.raises(tf.errors.InvalidArgumentError, match="more than one element"):
            sess.run(exp.get_single_element(tf.data.Dataset.range(2)))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Dataset was empty"):
            sess.run(exp.get_single_element(tf.data.Dataset.range(0)))


def test_ignore_errors_drops_failing_elements():
    ds = lambda: tf.data.Dataset.from_tensor_slices(np.array([1.0, 0.0, 2.0, -1.0, 4.0], np.float32)).map(  # noqa: E731
        lambda x: tf.debugging.check_numerics(1.0 / x, "inf") * 0 + x).filter(
        lambda x: tf.greater(x, -5.0)).apply(exp.ignore_errors())
    assert [float(v) for v in run_all(ds)] == [1.0, 2.0, -1.0, 4.0]


def test_reduce_folds_the_elements():
    total = tf.data.Dataset.range(5).reduce(np.int64(0), lambda state, x: state + x)
    pair = tf.data.Dataset.from_tensor_slices(np.arange(4, dtype=np.float32)).reduce(
        (np.float32(0), np.int64(0)), lambda s, x: (s[0] + x * x, s[1] + 1))
    with tf.Session() as sess:
        assert sess.run(total) == 10
        assert sess.run(pair) == (14.0, 4)


def test_reduce_and_get_single_element_over_prefetch_leave_the_step_alive():
    total = tf.data.Dataset.range(50).prefetch(4).reduce(np.int64(0), lambda s, x: s + x)
    single = exp.get_single_element(tf.data.Dataset.range(7, 8).prefetch(1))
    with tf.Session() as sess:
        assert sess.run([total, single]) == [1225, 7]
