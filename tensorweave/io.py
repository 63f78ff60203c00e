"""`tf.io`: file formats, file contents and parsing (re-exports only)."""
from tensorweave.lib.tf_record import (  # noqa: F401
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator)
from tensorweave.ops.io_ops import matching_files, read_file, write_file  # noqa: F401
from tensorweave.ops.parsing_ops import decode_csv, decode_raw  # noqa: F401
from tensorweave.framework.graph_def import write_graph  # noqa: F401
from tensorweave.ops.queue_ops import (  # noqa: F401,E402  (TF1's tf.io aliases)
    PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue)
