"""`tf.python_io`: TFRecord files (re-exports only)."""
from tensorweave.lib.tf_record import (  # noqa: F401
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator)
