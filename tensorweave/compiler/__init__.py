"""Compiler front ends (TF's tensorflow/python/compiler/): XLA's jit_scope."""
