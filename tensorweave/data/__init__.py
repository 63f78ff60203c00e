"""tf.data (TF 1.15's tf.compat.v1.data): datasets, iterators, readers and tf.data.experimental
(DESIGN.md "tf.data"). Re-exports only."""
from tensorweave.data import experimental  # noqa: F401
from tensorweave.data.dataset_ops import (  # noqa: F401
    AUTOTUNE, Dataset, DatasetV1, get_output_classes, get_output_shapes, get_output_types)
from tensorweave.data.iterator_ops import Iterator  # noqa: F401
from tensorweave.data.readers import (  # noqa: F401
    FixedLengthRecordDataset, TextLineDataset, TFRecordDataset)
