"""`tf.test`: the numeric gradient checker (re-exports only)."""
from tensorweave.testing.gradient_checker import compute_gradient, compute_gradient_error  # noqa: F401
