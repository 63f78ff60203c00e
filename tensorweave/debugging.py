"""`tf.debugging`: run-time checks and numerics checks under their TF1.13+ namespace
(re-exports only; the same functions are also at the top level)."""
from tensorweave.ops.debugging import (  # noqa: F401
    assert_equal, assert_greater, assert_greater_equal, assert_less, assert_less_equal, assert_negative,
    assert_non_negative, assert_non_positive, assert_none_equal, assert_positive, assert_rank, assert_type,
    check_numerics)
from tensorweave.ops.debugging import Assert  # noqa: F401
from tensorweave.ops.math import is_finite, is_inf, is_nan  # noqa: F401
from tensorweave.ops.debugging import verify_tensor_all_finite as assert_all_finite  # noqa: F401,E402
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("debugging", __name__)
