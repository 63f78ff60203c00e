"""tf.xla.experimental (re-exports only)."""
from tensorweave.compiler.xla.jit import experimental_jit_scope as jit_scope

__all__ = ["jit_scope"]
