"""`tf.data.experimental` (the names built): re-exports only."""
from tensorweave.data.dataset_ops import AUTOTUNE  # noqa: F401
from tensorweave.data.transformations import map_and_batch, shuffle_and_repeat, unbatch  # noqa: F401
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("data.experimental", __name__)
