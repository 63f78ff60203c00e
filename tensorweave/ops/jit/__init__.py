"""JIT-compiled clusters (XLA's role): `_XlaRun`, the one node a cluster of element-wise ops
(and a reduction at its end) becomes, made by the JIT clustering pass (grappler/jit/) only.

Tier 1 (declares ops): xla_run. No public names, no gradients (clusters are formed on a step's
graph after its gradients were built).
"""
from tensorweave.ops.jit.xla_run import XlaRun  # noqa: F401  (registers the op)
