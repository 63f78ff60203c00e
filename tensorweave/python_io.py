"""`tf.python_io`: TFRecord files (re-exports only)."""
from tensorweave.lib.tf_record import (  # noqa: F401
    TFRecordCompressionType, TFRecordOptions, TFRecordWriter, tf_record_iterator)
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("python_io", __name__)
