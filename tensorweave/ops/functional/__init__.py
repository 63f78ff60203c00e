"""Graph functions: TF1's Defun, the functional call ops (PartitionedCall, SymbolicGradient) and
functional control flow (If, While)."""
from tensorweave.ops.functional.call_ops import partitioned_call, symbolic_gradient
from tensorweave.ops.functional.control_ops import If, While
from tensorweave.ops.functional.defun import Defun

__all__ = ["Defun", "If", "While", "partitioned_call", "symbolic_gradient"]
