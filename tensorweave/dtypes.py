"""`tf.dtypes`: the element types and their helpers (re-exports only)."""
from tensorweave.framework.dtypes import (  # noqa: F401
    DType, as_dtype, bool, complex64, complex128, double, float16, float32, float64, half, int8, int16, int32,
    int64, resource, string, uint8, uint16, uint32, uint64, variant)
from tensorweave.ops.math import cast  # noqa: F401
from tensorweave.ops.math import saturate_cast  # noqa: F401
from tensorweave.ops.strings import as_string  # noqa: F401,E402
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("dtypes", __name__)
