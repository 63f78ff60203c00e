"""What running every op family eagerly turned up (issue 18), each as TensorFlow 2.21 behaves
(tf.compat.v1 with eager execution; the expected bytes and messages are TF's):
names are not made unique eagerly, TF1 readers, summary merging and initializable iterators
raise, `iter(dataset)` iterates, and a file written in a step is seen by MatchingFiles later in
the same step."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.eager import context
from tests.op_cases import raw


def test_name_scopes_and_summary_tags_are_not_made_unique():
    with context.eager_mode():
        scopes = []
        for _ in range(2):
            with tf.name_scope("x") as scope:
                with tf.name_scope("y") as inner:
                    scopes.append((scope, inner))
        assert scopes == [("x/", "x/y/")] * 2
        first, second = tf.summary.scalar("a", 1.0), tf.summary.scalar("a", 1.0)
        assert first.numpy() == second.numpy() == b"\n\x08\n\x01a\x15\x00\x00\x80?"
        with tf.name_scope("outer"):
            assert tf.summary.scalar("a", 1.0).numpy() == b"\n\x0e\n\x07outer/a\x15\x00\x00\x80?"


def test_graph_mode_names_are_still_unique():
    with tf.Graph().as_default():
        with tf.name_scope("x") as first:
            pass
        with tf.name_scope("x") as second:
            pass
        assert (first, second) == ("x/", "x_1/")


def test_graph_only_apis_raise_eagerly():
    with context.eager_mode():
        with pytest.raises(RuntimeError, match="Readers are not supported when eager execution is enabled"):
            tf.TextLineReader()
        with pytest.raises(RuntimeError, match="Merging tf.summary.* ops is not compatible with eager execution"):
            tf.summary.merge([tf.summary.scalar("a", 1.0)])
        with pytest.raises(RuntimeError, match="Merging tf.summary.* ops is not compatible with eager execution"):
            tf.summary.merge_all()
        with pytest.raises(RuntimeError, match="make_initializable_iterator"):
            tf.data.make_initializable_iterator(tf.data.Dataset.range(3))


def test_iterating_a_dataset_eagerly():
    with context.eager_mode():
        dataset = tf.data.Dataset.range(5).map(lambda x: x * 2).batch(2)
        batches = [b.numpy().tolist() for b in dataset]
        assert batches == [[0, 2], [4, 6], [8]]
        assert [b.numpy().tolist() for b in dataset] == batches  # each iter() starts again
        iterator = iter(tf.data.Dataset.from_tensor_slices({"a": [1.0, 2.0]}))
        assert float(next(iterator)["a"]) == 1.0
        assert float(iterator.get_next()["a"]) == 2.0
        with pytest.raises(StopIteration):
            next(iterator)
    with pytest.raises(RuntimeError, match="only supported when eager execution is enabled"):
        iter(tf.data.Dataset.range(2))


def test_matching_files_sees_a_file_written_earlier_in_the_step(tmp_path):
    name = os.path.join(str(tmp_path), "a.txt")
    with tf.Graph().as_default():
        written = tf.write_file(name, tf.constant("x"))
        with tf.control_dependencies([written]):
            found = tf.io.matching_files(os.path.join(str(tmp_path), "*.txt"))
            content = tf.read_file(name)
        with tf.Session() as sess:
            got, text = sess.run([found, content])
    assert got.tolist() == [name.encode()] and text == b"x"


def test_accumulator_reference_handles_run_eagerly():
    with context.eager_mode():
        handle = raw("ConditionalAccumulator", dtype=tf.float32, shape=[2])
        raw("AccumulatorApplyGradient", handle, tf.constant(0, tf.int64), tf.constant([1.0, 3.0]))
        raw("AccumulatorApplyGradient", handle, tf.constant(0, tf.int64), tf.constant([3.0, 5.0]))
        assert int(raw("AccumulatorNumAccumulated", handle)) == 2
        mean = raw("AccumulatorTakeGradient", handle, tf.constant(2), dtype=tf.float32)
        np.testing.assert_array_equal(mean.numpy(), [2.0, 4.0])


def test_an_update_ops_result_reads_the_variable_as_tf_unread_variable_does():
    # TF 2.21: tf.compat.v1.scatter_add / assign_add on an eager variable return an
    # _UnreadVariable, whose numpy() reads the variable's value at that moment.
    with context.eager_mode():
        v = tf.Variable([1.0, 2.0, 3.0])
        scattered = tf.scatter_add(v, [0, 2], [10.0, 20.0])
        np.testing.assert_array_equal(scattered.numpy(), [11.0, 2.0, 23.0])
        np.testing.assert_array_equal(np.asarray(scattered), [11.0, 2.0, 23.0])
        added = tf.assign_add(v, [1.0, 1.0, 1.0])
        np.testing.assert_array_equal(added.numpy(), [12.0, 3.0, 24.0])
        np.testing.assert_array_equal(scattered.numpy(), [12.0, 3.0, 24.0])
        assert isinstance(added.numpy(), np.ndarray)
