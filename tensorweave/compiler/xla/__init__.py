"""XLA's Python side: `jit_scope` (jit.py). The compiling itself is grappler/jit/ and
ops/kernels/jit/ (numba)."""
