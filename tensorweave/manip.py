"""`tf.manip`: TF 1.x's namespace for tensor manipulation ops (re-exports only)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.ops.array import gather_nd, reshape, reverse, scatter_nd, tile  # noqa: F401

__getattr__ = _module_getattr("manip", __name__)
