"""`tf.train.summary_iterator`: the Event protos of an event file.

An event file is a TFRecord file whose records are serialized `Event` messages (TensorFlow's
own schema, shipped in `tensorboard.compat.proto`), so reading one is the record reader plus a
parse. Damage the record framing's checksums catch is DataLossError, as TF; a record that passes
its checksums but is not an Event raises the protobuf DecodeError, as TF's parse does."""
from __future__ import annotations

from typing import Any, Iterator

from tensorboard.compat.proto import event_pb2

from tensorweave.lib.tf_record import tf_record_iterator


def summary_iterator(path: Any) -> Iterator[Any]:
    """Yields the `tf.Event` protos of the event file `path`, in the order they were written."""
    for record in tf_record_iterator(path):
        yield event_pb2.Event.FromString(record)
