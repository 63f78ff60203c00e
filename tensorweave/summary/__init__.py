"""`tf.summary` (TF 1.x): summary ops, FileWriter and the Summary protos (re-exports only; the
ops are in ops/summary/, event files in event_file_writer.py and writer.py)."""
from tensorboard.compat.proto.event_pb2 import Event, SessionLog, TaggedRunMetadata  # noqa: F401
from tensorboard.compat.proto.summary_pb2 import Summary, SummaryDescription  # noqa: F401

from tensorweave.ops.summary import (  # noqa: F401
    audio, get_summary_description, histogram, image, merge, merge_all, scalar, tensor_summary, text)
from tensorweave.summary.writer import FileWriter, FileWriterCache  # noqa: F401
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("summary", __name__)
