"""tf.xla (re-exports only)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.xla import experimental

__all__ = ["experimental"]
__getattr__ = _module_getattr("xla", __name__)
