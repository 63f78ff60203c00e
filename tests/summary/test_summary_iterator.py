"""tf.train.summary_iterator reads event files written by TensorFlow 2.21 (tests/data/tf_events,
written by make_tf_event_fixtures.py) as TF's own summary_iterator does."""
import json
import os

import pytest
from google.protobuf.message import DecodeError

import tensorweave as tf

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
with open(os.path.join(DATA, "tf_events_expected.json")) as _f:
    EXPECTED = json.load(_f)
PATH = os.path.join(DATA, EXPECTED["file"])


def describe(event):
    kind = event.WhichOneof("what")
    entry = {"wall_time": event.wall_time, "step": event.step, "what": kind}
    if kind == "summary":
        entry["tags"] = [v.tag for v in event.summary.value]
        entry["values"] = [v.WhichOneof("value") for v in event.summary.value]
    elif kind == "file_version":
        entry["file_version"] = event.file_version
    elif kind == "session_log":
        entry["status"] = int(event.session_log.status)
    return entry


def test_reads_tensorflows_event_file_as_tensorflow_does():
    events = list(tf.train.summary_iterator(PATH))
    assert [describe(e) for e in events] == EXPECTED["events"]
    scalars = [v.simple_value for e in events if e.HasField("summary") for v in e.summary.value
               if v.tag == "loss_1"]
    assert scalars == [14.0, 28.0, 42.0]  # mean of x @ ones([4, 2]) for x = arange(8) * (step + 1)
    graph = tf.GraphDef.FromString(events[1].graph_def)
    assert {"x", "w", "y", "loss"} <= {n.name for n in graph.node}


def test_damaged_and_missing_event_files_raise_tensorflows_errors(tmp_path):
    with open(PATH, "rb") as f:
        data = bytearray(f.read())
    data[40] ^= 0x01  # inside the first record's payload: its data CRC no longer matches
    damaged = tmp_path / "events.out.tfevents.damaged"
    damaged.write_bytes(bytes(data))
    with pytest.raises(tf.errors.DataLossError):
        list(tf.train.summary_iterator(str(damaged)))
    not_an_event = tmp_path / "events.out.tfevents.other"
    with tf.python_io.TFRecordWriter(str(not_an_event)) as writer:
        writer.write(b"\xff\xff\xff")
    with pytest.raises(DecodeError):
        list(tf.train.summary_iterator(str(not_an_event)))
    with pytest.raises(tf.errors.NotFoundError):
        list(tf.train.summary_iterator(str(tmp_path / "missing")))
