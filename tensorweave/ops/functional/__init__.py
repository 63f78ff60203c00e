"""Graph functions: TF1's Defun and the functional call ops (PartitionedCall, SymbolicGradient)."""
from tensorweave.ops.functional.call_ops import partitioned_call, symbolic_gradient
from tensorweave.ops.functional.defun import Defun

__all__ = ["Defun", "partitioned_call", "symbolic_gradient"]
