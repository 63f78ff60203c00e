"""tf.summary.FileWriter: event files that TensorBoard's own loader reads (event_accumulator),
written by a background thread; flush/close/reopen; FileWriterCache."""
import os
import threading
import time

import numpy as np
import pytest
from tensorboard.backend.event_processing import event_accumulator

import tensorweave as tf


def training_logdir(logdir, steps=5, run_metadata=True):
    """A small model with every kind of summary, trained `steps` steps into `logdir`."""
    with tf.Graph().as_default() as graph:
        tf.set_random_seed(3)
        with tf.name_scope("input"):
            x = tf.placeholder(tf.float32, [None, 4], name="x")
        with tf.name_scope("layer"):
            w = tf.Variable(tf.random_normal([4, 1]), name="w")
            y = tf.matmul(x, w)
        loss = tf.reduce_mean(tf.square(y - 1.0))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        tf.summary.scalar("loss", loss)
        tf.summary.histogram("w", w)
        tf.summary.image("x", tf.reshape(x, [-1, 2, 2, 1]), max_outputs=1)
        tf.summary.audio("wave", tf.tanh(x), 4000, max_outputs=1)
        tf.summary.text("note", tf.constant("hello tensorboard"))
        merged = tf.summary.merge_all()
        feed = {x: np.linspace(0, 1, 8, dtype=np.float32).reshape(2, 4)}
        losses = []
        with tf.Session() as sess, tf.summary.FileWriter(logdir, graph) as writer:
            sess.run(tf.global_variables_initializer())
            for step in range(steps):
                if run_metadata and step == 1:
                    meta = tf.RunMetadata()
                    summary, value, _ = sess.run([merged, loss, train], feed,
                                                 options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE),
                                                 run_metadata=meta)
                    writer.add_run_metadata(meta, "step1", step)
                else:
                    summary, value, _ = sess.run([merged, loss, train], feed)
                writer.add_summary(summary, step)
                losses.append(float(value))
            writer.add_session_log(tf.SessionLog(status=tf.SessionLog.STOP), steps)
    return losses


def test_tensorboard_reads_every_kind_of_summary(tmp_path):
    losses = training_logdir(str(tmp_path))
    (name,) = os.listdir(tmp_path)
    assert name.startswith("events.out.tfevents.")
    acc = event_accumulator.EventAccumulator(str(tmp_path), size_guidance={"tensors": 0, "images": 0})
    acc.Reload()
    tags = acc.Tags()
    assert tags["scalars"] == ["loss"] and tags["histograms"] == ["w"]
    assert tags["images"] == ["x/image"] and tags["audio"] == ["wave/audio"] and tags["tensors"] == ["note"]
    assert tags["graph"] and tags["meta_graph"] and tags["run_metadata"] == ["step1"]
    scalars = acc.Scalars("loss")
    assert [s.step for s in scalars] == list(range(5))
    np.testing.assert_allclose([s.value for s in scalars], losses, rtol=1e-6)
    histo = acc.Histograms("w")[0].histogram_value
    assert histo.num == 4 and histo.min <= histo.max
    image = acc.Images("x/image")[0]
    assert (image.width, image.height) == (2, 2)
    assert acc.Audio("wave/audio")[0].sample_rate == 4000
    text = acc.Tensors("note")[0].tensor_proto
    assert text.string_val == [b"hello tensorboard"]
    graph = acc.Graph()
    assert {"input/x", "layer/w", "loss"} <= {n.name for n in graph.node}
    shapes = {n.name: n.attr["_output_shapes"] for n in graph.node}
    assert shapes["input/x"].list.shape[0].dim[1].size == 4  # add_shapes=True, as TF's writer
    stats = acc.RunMetadata("step1").step_stats
    assert stats.dev_stats and any(n.all_end_rel_micros >= 0 for d in stats.dev_stats for n in d.node_stats)


def test_flush_close_reopen_and_the_background_thread(tmp_path):
    writer = tf.summary.FileWriter(str(tmp_path), max_queue=2, flush_secs=1000, filename_suffix=".x")
    assert writer.get_logdir() == str(tmp_path)
    threads = {t.name for t in threading.enumerate()}
    assert "EventLoggerThread" in threads
    for step in range(10):
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=step)]), step)
    writer.flush()
    (first,) = os.listdir(tmp_path)
    assert first.endswith(".x")
    events = list(tf.train.summary_iterator(os.path.join(tmp_path, first)))
    assert events[0].file_version == "brain.Event:2"
    assert [e.summary.value[0].simple_value for e in events[1:]] == list(range(10))
    writer.close()
    writer.close()  # twice is fine
    time.sleep(1.1)  # the next file's name has another second in it
    writer.reopen()
    writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=99)]), 0)
    writer.close()
    assert len(os.listdir(tmp_path)) == 2


def test_plugin_metadata_is_written_once_per_tag_and_run_metadata_tags_are_unique(tmp_path):
    with tf.summary.FileWriter(str(tmp_path)) as writer:
        t = tf.summary.text("note", tf.constant("a"))
        with tf.Session() as sess:
            for step in range(2):
                writer.add_summary(sess.run(t), step)
        writer.add_run_metadata(tf.RunMetadata(), "r")
        with pytest.raises(ValueError, match="already used"):
            writer.add_run_metadata(tf.RunMetadata(), "r")
    (name,) = os.listdir(tmp_path)
    summaries = [e.summary for e in tf.train.summary_iterator(os.path.join(tmp_path, name)) if e.HasField("summary")]
    assert summaries[0].value[0].HasField("metadata") and not summaries[1].value[0].HasField("metadata")


def test_file_writer_cache(tmp_path):
    a = tf.summary.FileWriterCache.get(str(tmp_path))
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is a
    tf.summary.FileWriterCache.clear()
    assert tf.summary.FileWriterCache.get(str(tmp_path)) is not a
    tf.summary.FileWriterCache.clear()


def test_a_step_never_waits_on_the_disk(tmp_path, monkeypatch):
    """Events are written by the writer thread: add_summary returns while the disk is slow."""
    writer = tf.summary.FileWriter(str(tmp_path), max_queue=100)
    slow = threading.Event()
    real_write = writer.event_writer._writer.write

    def write(record):
        slow.wait(5)
        real_write(record)

    monkeypatch.setattr(writer.event_writer._writer, "write", write)
    start = time.monotonic()
    for step in range(20):
        writer.add_summary(tf.Summary(value=[tf.Summary.Value(tag="a", simple_value=step)]), step)
    assert time.monotonic() - start < 1.0
    slow.set()
    writer.close()
