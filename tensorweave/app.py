"""`tf.app`: the program entry point and its flags (re-exports only)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.platform import flags  # noqa: F401
from tensorweave.platform.app import run  # noqa: F401

__getattr__ = _module_getattr("app", __name__)
