"""Reading checkpoints without a graph (TF1's checkpoint_utils and NewCheckpointReader):
`tf.train.list_variables`, `load_variable`, `load_checkpoint`, `NewCheckpointReader`."""
from __future__ import annotations

import os
from typing import Any

import numpy as np
from tensorboard.compat.proto import types_pb2

from tensorweave.framework import dtypes as _dtypes
from tensorweave.lib import tensor_bundle
from tensorweave.lib.file_io import as_path
from tensorweave.training import checkpoint_management

__all__ = ["CheckpointReader", "NewCheckpointReader", "load_checkpoint", "load_variable", "list_variables"]


class CheckpointReader:
    """Reads the tensors of one checkpoint by name (TF's py_checkpoint_reader)."""

    def __init__(self, filepattern: Any) -> None:
        self._reader = tensor_bundle.BundleReader(as_path(filepattern))

    def get_tensor(self, tensor_str: str) -> np.ndarray:
        """The value of `tensor_str`; NotFoundError if the checkpoint has no such tensor."""
        return self._reader.read(tensor_str)

    def has_tensor(self, tensor_str: str) -> bool:
        return self._reader.contains(tensor_str)

    def get_variable_to_shape_map(self) -> dict[str, list[int]]:
        return {k: self._reader.shape(k) for k in self._reader.keys()}

    def get_variable_to_dtype_map(self) -> dict[str, _dtypes.DType]:
        return {k: self._reader.dtype(k) for k in self._reader.keys()}

    def debug_string(self) -> bytes:
        """One line per tensor, "name (DT_FLOAT) [2,3]", as TF prints them."""
        lines = []
        for key in sorted(self._reader.keys()):
            dtype = types_pb2.DataType.Name(self._reader.dtype(key).as_datatype_enum)
            shape = ",".join(str(d) for d in self._reader.shape(key))
            lines.append(f"{key} ({dtype}) [{shape}]\n")
        return "".join(lines).encode("utf-8")


def NewCheckpointReader(filepattern: Any) -> CheckpointReader:  # noqa: N802  (TF's name)
    """A CheckpointReader for the checkpoint with prefix `filepattern` (NotFoundError if none)."""
    return CheckpointReader(filepattern)


def _checkpoint_filename(ckpt_dir_or_file: Any) -> Any:
    path = as_path(ckpt_dir_or_file)
    if os.path.isdir(path):
        return checkpoint_management.latest_checkpoint(path)
    return path


def load_checkpoint(ckpt_dir_or_file: Any) -> CheckpointReader:
    """A CheckpointReader for a checkpoint prefix, or for the latest checkpoint of a directory."""
    filename = _checkpoint_filename(ckpt_dir_or_file)
    if filename is None:
        raise ValueError(f"Couldn't find 'checkpoint' file or checkpoints in given directory {ckpt_dir_or_file}")
    return NewCheckpointReader(filename)


def load_variable(ckpt_dir_or_file: Any, name: str) -> np.ndarray:
    """The value of variable `name` ("w" or "w:0") in a checkpoint or a directory's latest one."""
    if name.endswith(":0"):
        name = name[:-2]
    return load_checkpoint(ckpt_dir_or_file).get_tensor(name)


def list_variables(ckpt_dir_or_file: Any) -> list[tuple[str, list[int]]]:
    """Sorted (name, shape) pairs of the tensors in a checkpoint."""
    shapes = load_checkpoint(ckpt_dir_or_file).get_variable_to_shape_map()
    return [(name, shapes[name]) for name in sorted(shapes)]
