"""Checks and printing as graph nodes: Assert, Print and PrintV2 (logging_ops), CheckNumerics
(numerics), and tier 2: `tf.print` (printing) and the tf.debugging assert_* family (check_ops).

The family's public names (TF's logging_ops, numerics and check_ops namespaces) are re-exported
here."""
from tensorweave.ops.debugging.check_ops import (
    assert_equal, assert_greater, assert_greater_equal, assert_less, assert_less_equal, assert_negative,
    assert_non_negative, assert_non_positive, assert_none_equal, assert_positive, assert_rank, assert_type,
    verify_tensor_all_finite)
from tensorweave.ops.debugging.check_ops import add_check_numerics_ops
from tensorweave.ops.debugging.logging_ops import Assert, Print
from tensorweave.ops.debugging.numerics import check_numerics
from tensorweave.ops.debugging.printing import print  # noqa: A004 (TF's name)

__all__ = ["Assert", "Print", "print", "check_numerics", "verify_tensor_all_finite", "assert_equal",
           "assert_none_equal", "assert_less", "assert_less_equal", "assert_greater", "assert_greater_equal",
           "assert_positive", "assert_negative", "assert_non_negative", "assert_non_positive", "assert_rank",
           "assert_type", "add_check_numerics_ops"]
