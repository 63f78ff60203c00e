"""The `checkpoint` state file and checkpoint files on disk (TF1's checkpoint_management).

The state file is a text CheckpointState protobuf, as TF writes it:

    model_checkpoint_path: "model.ckpt-2000"
    all_model_checkpoint_paths: "model.ckpt-1000"
    all_model_checkpoint_paths: "model.ckpt-2000"

It is replaced atomically (temporary file, fsync, rename), and only after the checkpoint it
names is committed, so it always points at a complete checkpoint. Paths relative to the
directory are stored relative and returned joined with it.
"""
from __future__ import annotations

import glob
import logging
import os
from typing import Any, Optional, Sequence

from google.protobuf import text_format
from tensorboard.compat.proto import saver_pb2

from tensorweave.framework import errors
from tensorweave.lib import tensor_bundle
from tensorweave.lib.atomic_write import atomic_write, remove_stale_temps
from tensorweave.lib.checkpoint_protos import CheckpointState
from tensorweave.lib.file_io import as_path

__all__ = ["CheckpointState", "generate_checkpoint_state_proto", "update_checkpoint_state",
           "get_checkpoint_state", "latest_checkpoint", "checkpoint_exists", "get_checkpoint_mtimes",
           "remove_checkpoint", "meta_graph_filename"]

_log = logging.getLogger("tensorweave")


def _state_filename(save_dir: str, latest_filename: Optional[str]) -> str:
    return os.path.join(save_dir, latest_filename or "checkpoint")


def generate_checkpoint_state_proto(save_dir: str, model_checkpoint_path: str,
                                    all_model_checkpoint_paths: Optional[Sequence[str]] = None,
                                    all_model_checkpoint_timestamps: Optional[Sequence[float]] = None,
                                    last_preserved_timestamp: Optional[float] = None) -> Any:
    """A CheckpointState whose newest checkpoint is `model_checkpoint_path` (appended to the list
    of all checkpoints if it is not its last entry); with a relative `save_dir`, relative paths
    are made relative to it."""
    paths = list(all_model_checkpoint_paths or [])
    if not paths or paths[-1] != model_checkpoint_path:
        paths.append(model_checkpoint_path)
    if all_model_checkpoint_timestamps and len(all_model_checkpoint_timestamps) != len(paths):
        raise ValueError(f"Checkpoint timestamps, if provided, must match checkpoint paths (got paths "
                         f"{paths} and timestamps {list(all_model_checkpoint_timestamps)})")
    if not os.path.isabs(save_dir):
        if not os.path.isabs(model_checkpoint_path):
            model_checkpoint_path = os.path.relpath(model_checkpoint_path, save_dir)
        paths = [p if os.path.isabs(p) else os.path.relpath(p, save_dir) for p in paths]
    state = CheckpointState(model_checkpoint_path=model_checkpoint_path, all_model_checkpoint_paths=paths)
    if all_model_checkpoint_timestamps:
        state.all_model_checkpoint_timestamps.extend(all_model_checkpoint_timestamps)
    if last_preserved_timestamp is not None:
        state.last_preserved_timestamp = last_preserved_timestamp
    return state


def update_checkpoint_state(save_dir: str, model_checkpoint_path: str,
                            all_model_checkpoint_paths: Optional[Sequence[str]] = None,
                            latest_filename: Optional[str] = None,
                            all_model_checkpoint_timestamps: Optional[Sequence[float]] = None,
                            last_preserved_timestamp: Optional[float] = None,
                            save_relative_paths: bool = False) -> None:
    """Writes the `checkpoint` state file of `save_dir` (atomically)."""
    save_dir = as_path(save_dir)
    state_file = _state_filename(save_dir, latest_filename)
    paths = list(all_model_checkpoint_paths or [])
    if save_relative_paths:
        def relative(p: str) -> str:
            return os.path.relpath(p, save_dir) if os.path.isabs(p) else p
        model_checkpoint_path = relative(model_checkpoint_path)
        paths = [relative(p) for p in paths]
    state = generate_checkpoint_state_proto(save_dir, model_checkpoint_path, paths,
                                            all_model_checkpoint_timestamps, last_preserved_timestamp)
    if os.path.abspath(state_file) == os.path.abspath(os.path.join(save_dir, state.model_checkpoint_path)):
        raise RuntimeError(f"Save path '{model_checkpoint_path}' conflicts with path used for checkpoint "
                           "state.  Please use a different save path.")
    if save_dir:
        os.makedirs(save_dir, exist_ok=True)
    remove_stale_temps(state_file)
    atomic_write(state_file, text_format.MessageToString(state).encode("utf-8"))


def get_checkpoint_state(checkpoint_dir: Any, latest_filename: Optional[str] = None) -> Any:
    """The CheckpointState in `checkpoint_dir` (paths joined with the directory), or None when
    there is no state file or it cannot be parsed."""
    checkpoint_dir = as_path(checkpoint_dir)
    state_file = _state_filename(checkpoint_dir, latest_filename)
    if not os.path.exists(state_file):
        return None
    try:
        with open(state_file, "r", encoding="utf-8") as f:
            state = text_format.Parse(f.read(), CheckpointState())
    except (OSError, UnicodeDecodeError, text_format.ParseError) as err:
        _log.warning("%s: %s; checkpoint ignored", state_file, err)
        return None
    if not state.model_checkpoint_path:
        raise ValueError(f"Invalid checkpoint state loaded from {checkpoint_dir}")
    if not os.path.isabs(state.model_checkpoint_path):
        state.model_checkpoint_path = os.path.join(checkpoint_dir, state.model_checkpoint_path)
    for i, p in enumerate(state.all_model_checkpoint_paths):
        if not os.path.isabs(p):
            state.all_model_checkpoint_paths[i] = os.path.join(checkpoint_dir, p)
    return state


def checkpoint_exists(checkpoint_prefix: Any) -> bool:
    """Whether a checkpoint exists at `checkpoint_prefix`: its `.index` file (or, for TF's old
    V1 format, a file matching the prefix itself)."""
    prefix = as_path(checkpoint_prefix)
    if tensor_bundle.bundle_exists(prefix):
        return True
    return bool(glob.glob(prefix)) and not os.path.isdir(prefix)


def latest_checkpoint(checkpoint_dir: Any, latest_filename: Optional[str] = None) -> Optional[str]:
    """The prefix of the newest checkpoint the state file of `checkpoint_dir` names, or None."""
    state = get_checkpoint_state(checkpoint_dir, latest_filename)
    if state is not None and state.model_checkpoint_path:
        if checkpoint_exists(state.model_checkpoint_path):
            return state.model_checkpoint_path
        _log.error("Couldn't match files for checkpoint %s", state.model_checkpoint_path)
    return None


def _existing_file(prefix: str) -> Optional[str]:
    index = tensor_bundle.index_filename(prefix)
    if os.path.exists(index):
        return index
    matches = [m for m in glob.glob(prefix) if os.path.isfile(m)]
    return matches[0] if matches else None


def get_checkpoint_mtimes(checkpoint_prefixes: Sequence[Any]) -> list[float]:
    """The modification times of the given checkpoints (missing ones are skipped)."""
    times = []
    for prefix in checkpoint_prefixes:
        path = _existing_file(as_path(prefix))
        if path is not None:
            times.append(os.stat(path).st_mtime)
    return times


def meta_graph_filename(checkpoint_filename: str, meta_graph_suffix: str = "meta") -> str:
    """`model.ckpt-123` -> `model.ckpt-123.meta` (a sharded V1 pattern's suffix dropped)."""
    basename = checkpoint_filename
    for marker in ("-?????-of-",):
        if marker in basename:
            basename = basename[:basename.index(marker)]
    return f"{basename}.{meta_graph_suffix}"


def remove_checkpoint(checkpoint_prefix: Any, checkpoint_format_version: int = saver_pb2.SaverDef.V2,
                      meta_graph_suffix: str = "meta", background: bool = False) -> None:
    """Deletes checkpoint `checkpoint_prefix` (index first, then data) and its meta graph; with
    `background`, the data files are unlinked by a helper thread (the checkpoint is gone at once)."""
    prefix = as_path(checkpoint_prefix)
    tensor_bundle.delete_bundle(prefix, background)
    if checkpoint_format_version == saver_pb2.SaverDef.V1:
        for path in glob.glob(prefix):
            if os.path.isfile(path):
                os.remove(path)
    meta = meta_graph_filename(prefix, meta_graph_suffix)
    remove_stale_temps(meta)
    try:
        os.remove(meta)
    except FileNotFoundError:
        pass
    except OSError as err:
        raise errors.UnknownError(None, None, f"{meta}; {err.strerror}") from None
