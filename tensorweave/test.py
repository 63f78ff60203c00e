"""`tf.test`: the numeric gradient checker (re-exports only)."""
from tensorweave.testing.gradient_checker import compute_gradient, compute_gradient_error  # noqa: F401
from tensorweave._api.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("test", __name__)
