"""Whole-file I/O ops: ReadFile and WriteFile (`tf.read_file`, `tf.write_file`).

Missing files, directories and denied access fail with TF's error classes (NotFoundError,
FailedPreconditionError, PermissionDeniedError), naming the file.
"""
from __future__ import annotations

import glob
import os
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.lib.atomic_write import atomic_write
from tensorweave.lib.file_io import open_file, os_error_to_tf
from tensorweave.ops._util import shape_error

__all__ = ["read_file", "write_file", "matching_files"]


def _scalar_inputs_shape(op: Operation) -> list[TensorShape]:
    for t in op.inputs:
        if t.shape.ndims not in (None, 0):
            raise shape_error(op, f"Shape must be rank 0 but is rank {t.shape.ndims}")
    return [TensorShape([])] * len(op.outputs)


def _scalar_name(value: Any, what: str = "filename") -> str:
    if value.ndim != 0:
        raise errors.InvalidArgumentError(None, None, f"Input {what} tensor must be scalar, but had "
                                          f"shape: {list(value.shape)}")
    return value.item().decode("utf-8")


ReadFile = define_op("ReadFile", inputs=["filename: string"], outputs=["contents: string"],
                     shape_fn=_scalar_inputs_shape)
ReadFile.not_differentiable()


@ReadFile.kernel()
def _read_file_kernel(ctx: KernelContext) -> Callable:
    def compute(filename: Any) -> Any:
        name = _scalar_name(filename)
        with open_file(name, "rb") as f:
            try:
                data = f.read()
            except OSError as err:
                raise os_error_to_tf(err, name) from None
        out = np.empty((), dtype=object)
        out[()] = data
        return out

    return compute


def read_file(filename: Any, name: Optional[str] = None) -> Any:
    """The entire contents of the file `filename` as a scalar string tensor."""
    return apply_op(ReadFile, name=name, filename=filename)


# Stateful: a write is a side effect, never folded away or shared between identical nodes.
WriteFile = define_op("WriteFile", inputs=["filename: string", "contents: string"],
                      shape_fn=_scalar_inputs_shape, is_stateful=True)
WriteFile.not_differentiable()


def _write_file(name: str, data: bytes) -> None:
    """Replaces `name` by `data` atomically (a failed write leaves no truncated file),
    creating missing parent directories first, as TF's WriteFile does."""
    try:
        os.makedirs(os.path.dirname(os.path.abspath(name)), exist_ok=True)
    except OSError as err:
        raise os_error_to_tf(err, name) from None
    atomic_write(name, data, sync_dir=False)


@WriteFile.kernel()
def _write_file_kernel(ctx: KernelContext) -> Callable:
    def compute(filename: Any, contents: Any) -> None:
        name = _scalar_name(filename)
        if contents.ndim != 0:
            raise errors.InvalidArgumentError(None, None, f"Contents tensor must be scalar, but had "
                                              f"shape: {list(contents.shape)}")
        _write_file(name, contents.item())
        return None

    return compute


def write_file(filename: Any, contents: Any, name: Optional[str] = None) -> Any:
    """An op writing the scalar string `contents` to the file `filename` (replacing it;
    missing parent directories are created)."""
    return apply_op(WriteFile, name=name, filename=filename, contents=contents)


# ---------------------------------------------------------------------------------------------
# MatchingFiles
# ---------------------------------------------------------------------------------------------
def _matching_files_shape(op: Operation) -> list[TensorShape]:
    rank = op.inputs[0].shape.ndims
    if rank is not None and rank > 1:
        raise shape_error(op, f"Shape must be at most rank 1 but is rank {rank}")
    return [TensorShape([None])]


MatchingFiles = define_op("MatchingFiles", inputs=["pattern: string"], outputs=["filenames: string"],
                          shape_fn=_matching_files_shape)
MatchingFiles.not_differentiable()


@MatchingFiles.kernel()
def _matching_files_kernel(ctx: KernelContext) -> Callable:
    def compute(pattern: Any) -> Any:
        if pattern.ndim > 1:
            raise errors.InvalidArgumentError(None, None, f"Input patterns tensor must be scalar or "
                                              f"vector, but had shape: {list(pattern.shape)}")
        found: list[bytes] = []
        for p in pattern.reshape(-1).tolist():
            found.extend(sorted(os.fsencode(m) for m in glob.glob(p.decode("utf-8"), include_hidden=True)))
        out = np.empty(len(found), dtype=object)
        out[:] = found
        return out

    return compute


def matching_files(pattern: Any, name: Optional[str] = None) -> Any:
    """The sorted names of the files matching the glob `pattern` (a string, or a vector of
    patterns whose matches are concatenated)."""
    return apply_op(MatchingFiles, name=name, pattern=pattern)
