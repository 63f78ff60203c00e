"""tf.xla (re-exports only)."""
from tensorweave.xla import experimental

__all__ = ["experimental"]
