"""`tf.math`: the element-wise, reduction, segment and scan functions under their TF1.13+
namespace (re-exports only; the same functions are also at the top level)."""
from tensorweave.ops.math import (
    abs, acos, acosh, add, asin, asinh, atan, atan2, atanh, ceil, cos, cosh, divide, equal, exp, expm1,
    floor, floordiv, floormod, greater, greater_equal, is_finite, is_inf, is_nan, less, less_equal, log,
    log1p, logical_and, logical_not, logical_or, logical_xor, maximum, minimum, mod, multiply, negative,
    not_equal, pow, reciprocal, rint, round, rsqrt, scalar_mul, sigmoid, sign, sin, sinh, sqrt, square,
    squared_difference, subtract, tan, tanh, truediv)
from tensorweave.ops.math import (
    add_n, argmax, argmin, count_nonzero, reduce_all, reduce_any, reduce_logsumexp, reduce_max,
    reduce_mean, reduce_min, reduce_prod, reduce_sum, unsorted_segment_sum)
from tensorweave.ops.math import div_no_nan as divide_no_nan  # noqa: F401
from tensorweave.ops.math import cumprod, cumsum  # noqa: F401
from tensorweave.ops.math import (
    segment_max, segment_mean, segment_min, segment_prod, segment_sum, unsorted_segment_max,
    unsorted_segment_min, unsorted_segment_prod)
from tensorweave.nn import in_top_k, l2_normalize, log_softmax, softmax, softplus, top_k  # noqa: F401
from tensorweave.ops.math.confusion_matrix import confusion_matrix  # noqa: F401
from tensorweave.ops.math import conj  # noqa: F401,E402
from tensorweave.ops.array import invert_permutation  # noqa: F401,E402
from tensorweave.ops.nn import softsign, zero_fraction  # noqa: F401,E402
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("math", __name__)
