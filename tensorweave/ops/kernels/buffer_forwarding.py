"""Buffer forwarding (TF's forward_input_or_allocate_output): a kernel writes its result into
one of its input arrays when no one else can see that array, instead of into a new one. On this
machine an element-wise op over arrays larger than the L2 cache runs about twice as fast in
place (a [400x800] float32 add: 135 us into a new array, 56 us into an input; the new array's
cache lines are fetched and written back on top of the inputs' traffic).

"No one else can see it" is decided with CPython's exact reference counts, as training_ops.py
does for a variable's buffer. Every holder of an array counts: a consumer that has not run yet
(the executor's input slot for it), a fetch (the step's results or the fetch's slot), a feed
(the step's feed list), a Const (its kernel's closure), a variable (its cell), a loop invariant
(its frame), a stack or a TensorArray (their lists), a view (its `base`), a kernel still running
on it (its arguments). The executors drop their own references to a kernel's inputs before
calling it and keep no earlier node's outputs in local variables while it runs (runtime/executor.py,
and runtime/sequential.py's loop bodies); the kernel then holds each input through exactly three
references: the executor's argument list, the call's argument tuple and the kernel's own
parameter. The baseline for that is measured at import by a call of the same form, not assumed,
so the rule holds whatever references the interpreter's calls add. A path holding more (the
tracing executors, the dereferencing wrapper of reference inputs) never forwards, which is safe;
a path holding fewer would make the rule unsound, and tests/ops/test_buffer_forwarding.py fails
on every executor path if it does.

The rule's caller must be the compute function the executor calls, with the input it received,
before binding it to any other name (each extra name is one more reference: the rule then just
says no).
"""
from __future__ import annotations

import sys
from typing import Any

import numpy as np

__all__ = ["MIN_FORWARD_ELEMENTS", "forwardable", "held_only_by", "owns_writeable_buffer"]

_getrefcount = sys.getrefcount
_ndarray = np.ndarray

# Below this many elements (64 KB of float32) a new array costs about as much as the check
# (about 0.3 us): its memory comes from malloc's free lists and stays in cache.
MIN_FORWARD_ELEMENTS = 1 << 14


def owns_writeable_buffer(a: Any) -> bool:
    """A NumPy array that owns its memory (not a view of another buffer) and may be written."""
    return type(a) is _ndarray and a.base is None and a.flags.writeable


def _kernel_argument_refs(a: Any) -> int:
    return _getrefcount(a)


def _measure_kernel_argument_refs() -> int:
    """The count `forwardable` sees for an input held only by the kernel's call: the executors
    call `compute(*args)` with `args` a list of the inputs, as this does."""

    def compute(x: Any) -> int:
        return _kernel_argument_refs(x)

    args = [np.empty(1)]
    return compute(*args)


_SOLE_ARGUMENT_REFS = _measure_kernel_argument_refs()


def forwardable(a: Any, shape: tuple, dtype: Any) -> bool:
    """Whether input `a` of the calling kernel may receive the kernel's output (`shape`, `dtype`):
    a C-contiguous, writeable array owning its memory, of that shape and dtype, that nothing but
    the kernel's call references. Call it from the compute function the executor calls, on an
    argument not yet bound to another name."""
    if type(a) is not _ndarray or a.base is not None or a.shape != shape or a.dtype != dtype:
        return False
    # (a.flags holds a reference to `a`: no flags object may be alive while counting)
    return a.flags.writeable and a.flags.c_contiguous and _getrefcount(a) == _SOLE_ARGUMENT_REFS


class _Holder:
    __slots__ = ("value",)


def _holder_refs(holder: Any) -> int:
    value = holder.value
    return _getrefcount(value)


def _measure_holder_refs() -> int:
    """What `held_only_by` counts for an array held by one object's `value` and nothing else."""
    holder = _Holder()
    holder.value = np.empty(1)
    return _holder_refs(holder)


_SOLE_HOLDER_REFS = _measure_holder_refs()


def held_only_by(holder: Any) -> bool:
    """Whether `holder.value` (a variable's cell, a kernel's spare buffer) may be written in
    place: a writeable array owning its memory that nothing but `holder` references. Call it
    before taking any local reference to the array."""
    if not owns_writeable_buffer(holder.value):
        return False
    return _holder_refs(holder) == _SOLE_HOLDER_REFS
