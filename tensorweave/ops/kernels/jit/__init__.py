"""The JIT compiler behind `_XlaRun` (XLA's role, white paper 10): a cluster's element-wise
program becomes generated Python source for one numba ufunc, compiled once and cached in memory
and on disk (scalar_ops.py: what each op computes on one element; codegen.py: the source;
compiler.py: numba, the caches, and the note when numba is missing)."""
