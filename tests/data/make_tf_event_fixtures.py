"""Writes tf_events/events.out.tfevents.tf: an event file written by TensorFlow 2.21's
tf.summary.FileWriter (TF1 API) holding a graph, scalars, a histogram, an image, a text summary and
a session log, plus tf_events_expected.json: what tf.train.summary_iterator reads back from it
(each event's wall_time, step, which field is set and the summary values' tags). Run under
/opt/tfref only:
    /opt/tfref/bin/python tests/data/make_tf_event_fixtures.py
tests/summary/test_summary_iterator.py and the event_file fuzz target read it."""
import glob
import json
import os
import shutil
import tempfile

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_v2_behavior()
HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tf_events")


def write_events(logdir):
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 4], name="x")
        w = tf.Variable(tf.ones([4, 2]), name="w")
        y = tf.matmul(x, w, name="y")
        loss = tf.reduce_mean(y, name="loss")
        tf.summary.scalar("loss", loss)
        tf.summary.histogram("weights", w)
        tf.summary.image("inputs", tf.reshape(x[:1], [1, 2, 2, 1]))
        tf.summary.text("note", tf.constant("hello"))
        merged = tf.summary.merge_all()
        writer = tf.summary.FileWriter(logdir, graph, filename_suffix=".tf")
        with tf.Session() as sess:
            sess.run(w.initializer)
            for step in range(3):
                feed = {x: np.arange(8, dtype=np.float32).reshape(2, 4) * (step + 1)}
                writer.add_summary(sess.run(merged, feed), global_step=step)
        writer.add_session_log(tf.SessionLog(status=tf.SessionLog.STOP), global_step=3)
        writer.close()


def describe(path):
    out = []
    for event in tf.train.summary_iterator(path):
        kind = event.WhichOneof("what")
        entry = {"wall_time": event.wall_time, "step": event.step, "what": kind}
        if kind == "summary":
            entry["tags"] = [v.tag for v in event.summary.value]
            entry["values"] = [v.WhichOneof("value") for v in event.summary.value]
        elif kind == "file_version":
            entry["file_version"] = event.file_version
        elif kind == "session_log":
            entry["status"] = int(event.session_log.status)
        out.append(entry)
    return out


def main():
    tmp = tempfile.mkdtemp()
    try:
        write_events(tmp)
        (path,) = glob.glob(os.path.join(tmp, "events.out.tfevents.*"))
        shutil.rmtree(OUT, ignore_errors=True)
        os.makedirs(OUT)
        target = os.path.join(OUT, "events.out.tfevents.tf")
        shutil.copy(path, target)
        with open(os.path.join(HERE, "tf_events_expected.json"), "w") as f:
            json.dump({"file": "tf_events/events.out.tfevents.tf", "events": describe(target)}, f, indent=1)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    main()
