"""tf.xla.experimental (re-exports only)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.compiler.xla.jit import experimental_jit_scope as jit_scope

__all__ = ["jit_scope"]
__getattr__ = _module_getattr("xla.experimental", __name__)
