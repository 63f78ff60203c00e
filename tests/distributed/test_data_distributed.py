"""tf.data in a distributed session (issue 15): a dataset and its iterator placed on another
task (a real process) run there; the worker's step pulls elements over the wire; the end of the
data is OutOfRangeError at the client; an initializable iterator is reinitialized with feeds;
a TFRecord file is read by the task the reader is placed on; map functions run remotely."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.distributed.cluster_util import task_processes


@pytest.fixture(scope="module")
def cluster():
    with task_processes(worker=1, data=1) as spec:
        yield spec


def _target(spec):
    return "grpc://" + spec["worker"][0]


def test_pipeline_on_another_task_feeds_the_workers_step(cluster):
    with tf.Graph().as_default():
        with tf.device("/job:data/task:0"):
            limit = tf.placeholder(tf.int64, [])
            dataset = (tf.data.Dataset.range(limit).map(lambda x: tf.cast(x, tf.float32) * 2.0)
                       .filter(lambda x: x < 15.0).batch(3))
            iterator = dataset.make_initializable_iterator()
            batch = iterator.get_next()
        with tf.device("/job:worker/task:0"):
            total = tf.reduce_sum(batch * 10.0)
        options = tf.RunOptions(timeout_in_ms=20000)
        with tf.Session(_target(cluster)) as sess:
            for n in (10, 4):
                sess.run(iterator.initializer, {limit: n}, options=options)
                got = []
                with pytest.raises(tf.errors.OutOfRangeError):
                    while True:
                        got.append(sess.run(total, options=options))
                values = [2.0 * x for x in range(n) if 2.0 * x < 15.0]
                want = [10.0 * sum(values[i:i + 3]) for i in range(0, len(values), 3)]
                np.testing.assert_allclose(got, want)
            # the iterator ran on the data task, the reduction on the worker
            sess.run(iterator.initializer, {limit: 4})
            meta = tf.RunMetadata()
            sess.run(total, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=meta)
            where = {node.node_name.split("/")[-1].split("_")[0]: dev.device
                     for dev in meta.step_stats.dev_stats for node in dev.node_stats}
            assert "/job:data/" in where["IteratorGetNext"]
            assert "/job:worker/" in where["Sum"]


def test_one_shot_iterator_keeps_its_place_across_steps_on_the_remote_task(cluster):
    with tf.Graph().as_default():
        with tf.device("/job:data/task:0"):
            element = tf.data.Dataset.from_tensor_slices(
                {"a": np.arange(6, dtype=np.int32), "b": np.arange(6, dtype=np.float32) ** 2}
            ).shuffle(6, seed=3).repeat(2).make_one_shot_iterator().get_next()
        with tf.device("/job:worker/task:0"):
            out = element["b"] - tf.cast(element["a"] * element["a"], tf.float32)
        with tf.Session(_target(cluster)) as sess:
            seen = [sess.run([element["a"], out]) for _ in range(12)]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(out, options=tf.RunOptions(timeout_in_ms=20000))
    assert all(d == 0.0 for _, d in seen)
    firsts, seconds = [a for a, _ in seen[:6]], [a for a, _ in seen[6:]]
    assert sorted(firsts) == sorted(seconds) == list(range(6))


def test_tfrecord_dataset_read_by_the_task_it_is_placed_on(cluster, tmp_path):
    path = os.path.join(str(tmp_path), "records.tfrecord")
    with tf.python_io.TFRecordWriter(path) as writer:
        for i in range(5):
            writer.write(np.full(4, i, np.uint8).tobytes())
    with tf.Graph().as_default():
        with tf.device("/job:data/task:0"):
            records = tf.data.TFRecordDataset([path]).map(lambda r: tf.decode_raw(r, tf.uint8)).batch(2)
            rows = records.make_one_shot_iterator().get_next()
        with tf.device("/job:worker/task:0"):
            sums = tf.reduce_sum(tf.cast(rows, tf.int32), axis=1)
        with tf.Session(_target(cluster)) as sess:
            got = [sess.run(sums).tolist() for _ in range(3)]
            with pytest.raises(tf.errors.OutOfRangeError):
                sess.run(sums)
    assert got == [[0, 4], [8, 12], [16]]
