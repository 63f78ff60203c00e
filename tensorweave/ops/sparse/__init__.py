"""Sparse-to-dense conversion (TF1's sparse_ops)."""
