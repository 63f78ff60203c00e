"""`tf.compat`: text/bytes conversions and `tf.compat.v1`, which is the tensorweave namespace itself
(re-exports only). The package registers `tensorweave.compat.v1` as a module name too, so
`import tensorweave.compat.v1 as tf` works as `import tensorflow.compat.v1 as tf` does."""
import sys as _sys

from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.framework.tensor_shape import dimension_at_index, dimension_value  # noqa: F401
from tensorweave.lib.compat import (  # noqa: F401
    as_bytes, as_str, as_str_any, as_text, bytes_or_text_types, complex_types, integral_types, path_to_str,
    real_types)

# The package is mid-import when this runs: taking it from sys.modules binds the same object
# without an import cycle.
v1 = _sys.modules[__name__.rpartition(".")[0]]
_sys.modules.setdefault(__name__ + ".v1", v1)

__getattr__ = _module_getattr("compat", __name__)
