"""`tf.train.Saver` (white paper 3.3 "Fault tolerance"; OSDI 4.3): saves variables to checkpoints
and restores them, keeps the newest `max_to_keep` checkpoints (plus one per
`keep_checkpoint_every_n_hours`), and exports / imports the meta graph so a model can be rebuilt
from its files alone.

A save runs the SaveV2 subgraph (the checkpoint commits when its index is renamed into place),
then writes the `.meta` file, then replaces the `checkpoint` state file, then deletes
checkpoints beyond `max_to_keep`: a process killed at any point leaves the state file naming a
complete checkpoint.
"""
from __future__ import annotations

import logging
import os
import time
from typing import Any, Optional, Sequence

import numpy as np
from tensorboard.compat.proto import saver_pb2

from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework import meta_graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.lib import tensor_bundle
from tensorweave.lib.atomic_write import remove_stale_temps
from tensorweave.training import checkpoint_management
from tensorweave.training.saver_builder import BulkSaverBuilder, saveables_from_dict

__all__ = ["Saver", "SaverDef", "export_meta_graph", "import_meta_graph"]

SaverDef = saver_pb2.SaverDef
_log = logging.getLogger("tensorweave")


def _saveable_objects(scope: Optional[str] = None) -> list[Any]:
    """What a Saver without var_list saves: global variables and the saveable-objects collection."""
    graph = _graph.get_default_graph()
    return graph.get_collection(GraphKeys.GLOBAL_VARIABLES, scope) + \
        graph.get_collection(GraphKeys.SAVEABLE_OBJECTS, scope)


class Saver:
    """Saves and restores variables (TF1's tf.train.Saver).

    `var_list` is a list of variables (saved under their op names) or a dict {name: variable};
    by default all global variables. `sharded` writes one data shard per device.
    """

    def __init__(self, var_list: Any = None, reshape: bool = False, sharded: bool = False,
                 max_to_keep: int = 5, keep_checkpoint_every_n_hours: float = 10000.0,
                 name: Optional[str] = None, restore_sequentially: bool = False, saver_def: Any = None,
                 builder: Any = None, defer_build: bool = False, allow_empty: bool = False,
                 write_version: int = saver_pb2.SaverDef.V2, pad_step_number: bool = False,
                 save_relative_paths: bool = False, filename: Optional[str] = None) -> None:
        if var_list is not None and not isinstance(var_list, (list, tuple, set, dict)):
            raise TypeError(f"Variables to save should be passed in a dict or a list: {var_list}")
        if defer_build and var_list:
            raise ValueError("If `var_list` is provided then build cannot be deferred. Either set "
                             "defer_build=False or var_list=None.")
        self._var_list = var_list
        self._reshape = reshape
        self._sharded = sharded
        self._max_to_keep = max_to_keep
        self._keep_checkpoint_every_n_hours = keep_checkpoint_every_n_hours
        self._name = name
        self._restore_sequentially = restore_sequentially
        self.saver_def = saver_def
        self._builder = builder
        self._is_built = False
        self._allow_empty = allow_empty
        self._is_empty: Optional[bool] = None
        self._write_version = write_version
        self._pad_step_number = pad_step_number
        self._filename = filename
        self._last_checkpoints: list[tuple[str, float]] = []
        self._checkpoints_to_be_deleted: list[tuple[str, float]] = []
        self._next_checkpoint_time = 0.0
        self._save_relative_paths = save_relative_paths
        if not defer_build:
            self.build()
        if self.saver_def:
            self._check_saver_def()
            self._write_version = self.saver_def.version

    # -- building -------------------------------------------------------------------------------
    def build(self) -> None:
        """Adds the save and restore nodes (done by the constructor unless defer_build)."""
        if self._is_built:
            return
        self._is_built = True
        if not self.saver_def:
            if self._builder is None:
                self._builder = BulkSaverBuilder(self._write_version)
            if self._var_list is None:
                self._var_list = _saveable_objects()
            if not self._var_list:
                if self._allow_empty:
                    self._is_empty = True
                    return
                raise ValueError("No variables to save")
            self._is_empty = False
            self.saver_def = self._builder._build_internal(
                self._var_list, reshape=self._reshape, sharded=self._sharded, max_to_keep=self._max_to_keep,
                keep_checkpoint_every_n_hours=self._keep_checkpoint_every_n_hours, name=self._name,
                restore_sequentially=self._restore_sequentially, filename=self._filename)
        elif self._name:
            # A saver_def with a name: the name is the scope the graph was imported under.
            for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
                setattr(self.saver_def, field,
                        meta_graph.prepend_name_scope(getattr(self.saver_def, field), self._name))
        self._is_empty = False
        self._check_saver_def()
        self._next_checkpoint_time = time.time() + self.saver_def.keep_checkpoint_every_n_hours * 3600

    def _check_saver_def(self) -> None:
        if not isinstance(self.saver_def, saver_pb2.SaverDef):
            raise ValueError(f"saver_def must be a saver_pb2.SaverDef: {self.saver_def}")
        if not self.saver_def.save_tensor_name:
            raise ValueError(f"saver_def must specify the save_tensor_name: {self.saver_def}")
        if not self.saver_def.restore_op_name:
            raise ValueError(f"saver_def must specify the restore_op_name: {self.saver_def}")

    def as_saver_def(self) -> Any:
        """The SaverDef naming this saver's nodes."""
        return self.saver_def

    def to_proto(self, export_scope: Optional[str] = None) -> Any:
        """The SaverDef with names relative to `export_scope` (None if outside it)."""
        if export_scope is None:
            return self.saver_def
        if not (self.saver_def.filename_tensor_name.startswith(export_scope) and
                self.saver_def.save_tensor_name.startswith(export_scope) and
                self.saver_def.restore_op_name.startswith(export_scope)):
            return None
        proto = saver_pb2.SaverDef()
        proto.CopyFrom(self.saver_def)
        for field in ("filename_tensor_name", "save_tensor_name", "restore_op_name"):
            setattr(proto, field, meta_graph.strip_name_scope(getattr(proto, field), export_scope))
        return proto

    @staticmethod
    def from_proto(saver_def: Any, import_scope: Optional[str] = None) -> "Saver":
        return Saver(saver_def=saver_def, name=import_scope)

    # -- bookkeeping of recent checkpoints ----------------------------------------------------------
    @property
    def last_checkpoints(self) -> list[str]:
        """The checkpoints this saver keeps, oldest first."""
        return [path for path, _ in self._last_checkpoints]

    def set_last_checkpoints(self, last_checkpoints: Sequence[str]) -> None:
        if not isinstance(last_checkpoints, list):
            raise TypeError("last_checkpoints must be a list of paths")
        self._last_checkpoints = [(p, time.time()) for p in last_checkpoints]

    def set_last_checkpoints_with_time(self, last_checkpoints_with_time: Sequence[tuple[str, float]]) -> None:
        """Sets the kept checkpoints as (path, timestamp) pairs, e.g. after a restart."""
        if not isinstance(last_checkpoints_with_time, list):
            raise TypeError("last_checkpoints_with_time must be a list of (path, time) pairs")
        self._last_checkpoints = [(str(p), float(t)) for p, t in last_checkpoints_with_time]

    def recover_last_checkpoints(self, checkpoint_paths: Sequence[str]) -> None:
        """Takes over `checkpoint_paths` (those that exist) with their file times, so a restarted
        job keeps deleting the oldest ones."""
        existing = [p for p in checkpoint_paths if checkpoint_management.checkpoint_exists(p)]
        mtimes = checkpoint_management.get_checkpoint_mtimes(existing)
        self.set_last_checkpoints_with_time(list(zip(existing, mtimes)))

    def _record_last_checkpoint(self, path: str) -> None:
        if not self.saver_def.max_to_keep:
            return
        self._last_checkpoints = [p for p in self._last_checkpoints if p[0] != path]
        self._last_checkpoints.append((path, time.time()))
        while len(self._last_checkpoints) > self.saver_def.max_to_keep:
            self._checkpoints_to_be_deleted.append(self._last_checkpoints.pop(0))

    def _maybe_delete_old_checkpoints(self, meta_graph_suffix: str) -> None:
        while self._checkpoints_to_be_deleted:
            path, stamp = self._checkpoints_to_be_deleted.pop(0)
            if stamp > self._next_checkpoint_time:
                # One checkpoint per keep_checkpoint_every_n_hours is kept for good.
                self._next_checkpoint_time += self.saver_def.keep_checkpoint_every_n_hours * 3600
                continue
            try:
                # In the background: the files of a 100 MB checkpoint take ~20 ms to free.
                checkpoint_management.remove_checkpoint(path, self.saver_def.version, meta_graph_suffix,
                                                        background=True)
            except (OSError, errors.OpError) as err:
                _log.warning("Ignoring: %s", err)

    # -- save / restore -------------------------------------------------------------------------------
    def save(self, sess: Any, save_path: str, global_step: Any = None, latest_filename: Optional[str] = None,
             meta_graph_suffix: str = "meta", write_meta_graph: bool = True, write_state: bool = True,
             strip_default_attrs: bool = False, save_debug_info: bool = False) -> Optional[str]:
        """Saves the variables to `save_path` (`save_path-<global_step>` with a global step);
        returns the checkpoint prefix (None for an empty saver)."""
        if not self._is_built:
            raise RuntimeError("`build()` should be called before save if defer_build==True")
        latest_filename = latest_filename or "checkpoint"
        if os.path.split(latest_filename)[0]:
            raise ValueError("'latest_filename' must not contain path components")
        if not hasattr(sess, "run") or not hasattr(sess, "graph"):
            raise TypeError(f"'sess' must be a Session; {sess}")
        save_path = os.fspath(save_path)
        checkpoint_file = self._checkpoint_file(sess, save_path, global_step, latest_filename)
        model_checkpoint_path = None
        if not self._is_empty:
            result = sess.run(self.saver_def.save_tensor_name,
                              {self.saver_def.filename_tensor_name: checkpoint_file})
            model_checkpoint_path = result.decode("utf-8") if isinstance(result, bytes) else str(result)
        if write_meta_graph:
            # Before the state file: the checkpoint it will name already has its meta graph.
            meta_file = checkpoint_management.meta_graph_filename(checkpoint_file, meta_graph_suffix)
            remove_stale_temps(meta_file)
            with sess.graph.as_default():
                self.export_meta_graph(meta_file, strip_default_attrs=strip_default_attrs)
        if model_checkpoint_path is not None and write_state:
            self._record_last_checkpoint(model_checkpoint_path)
            checkpoint_management.update_checkpoint_state(
                os.path.dirname(save_path), model_checkpoint_path, self.last_checkpoints, latest_filename,
                save_relative_paths=self._save_relative_paths)
            self._maybe_delete_old_checkpoints(meta_graph_suffix)
        return model_checkpoint_path

    def _checkpoint_file(self, sess: Any, save_path: str, global_step: Any, latest_filename: str) -> str:
        if global_step is not None:
            if not isinstance(global_step, (int, np.integer)):
                global_step = int(sess.run(global_step))
            return f"{save_path}-{global_step:08d}" if self._pad_step_number else f"{save_path}-{global_step}"
        if os.path.basename(save_path) == latest_filename and not self._sharded:
            raise ValueError(f"'latest_filename' collides with 'save_path': '{latest_filename}' and "
                             f"'{save_path}'")
        return save_path

    def restore(self, sess: Any, save_path: Optional[str]) -> None:
        """Restores the variables from checkpoint `save_path`. A variable missing from the
        checkpoint raises NotFoundError, a shape or dtype mismatch InvalidArgumentError, both
        naming the variable; corrupted data raises DataLossError."""
        if self._is_empty:
            return
        if save_path is None:
            raise ValueError("Can't load save_path when it is None.")
        save_path = os.fspath(save_path)
        if not checkpoint_management.checkpoint_exists(save_path):
            raise ValueError(f"The passed save_path is not a valid checkpoint: {save_path}")
        _log.info("Restoring parameters from %s", save_path)
        try:
            sess.run(self.saver_def.restore_op_name, {self.saver_def.filename_tensor_name: save_path})
        except errors.NotFoundError as err:
            raise _wrap_restore_error(err, "a Variable name or other graph key that is missing") from None
        except errors.InvalidArgumentError as err:
            raise _wrap_restore_error(err, "a mismatch between the current graph and the graph",
                                      self._mismatches(save_path) or _failed_variable(err)) from None

    def _mismatches(self, save_path: str) -> str:
        """Which variables differ in shape or dtype from the checkpoint, for the error message."""
        if self._var_list is None:
            return ""
        try:
            reader = tensor_bundle.BundleReader(save_path)
            saveables = saveables_from_dict(self._var_list)
        except (errors.OpError, TypeError, ValueError):
            return ""
        lines = []
        for saveable in saveables:
            for spec in saveable.specs:
                if not reader.contains(spec.name) or spec.slice_spec:
                    continue
                shape, dtype = reader.shape(spec.name), reader.dtype(spec.name)
                graph_shape = spec.tensor.get_shape()
                if dtype != spec.dtype or not graph_shape.is_compatible_with(shape):
                    lines.append(f"Variable {spec.name}: the graph has {spec.dtype.name} {graph_shape}, "
                                 f"the checkpoint has {dtype.name} {shape}")
        return "\n".join(lines)

    # -- meta graph -----------------------------------------------------------------------------------
    def export_meta_graph(self, filename: Optional[str] = None, collection_list: Optional[Sequence[str]] = None,
                          as_text: bool = False, export_scope: Optional[str] = None, clear_devices: bool = False,
                          clear_extraneous_savers: bool = False, strip_default_attrs: bool = False,
                          save_debug_info: bool = False) -> Any:
        """Writes (and returns) the MetaGraphDef of the default graph with this saver's SaverDef."""
        return export_meta_graph(filename=filename, graph_def=None, saver_def=self.saver_def,
                                 collection_list=collection_list, as_text=as_text, export_scope=export_scope,
                                 clear_devices=clear_devices, clear_extraneous_savers=clear_extraneous_savers,
                                 strip_default_attrs=strip_default_attrs)


def _failed_variable(err: errors.OpError) -> str:
    """'Variable w' when the failing node is the Assign that restores variable w."""
    op = err.op
    if op is not None and op.inputs and op.inputs[0].dtype.is_ref_dtype:
        return f"Variable {op.inputs[0].op.name} could not be restored: {err.message.splitlines()[0]}"
    return ""


def _wrap_restore_error(err: errors.OpError, verbiage: str, details: str = "") -> errors.OpError:
    extra = f"\n\n{details}" if details else ""
    message = (f"Restoring from checkpoint failed. This is most likely due to {verbiage} from the "
               f"checkpoint. Please ensure that you have not altered the graph expected based on the "
               f"checkpoint. Original error:\n\n{err.message}{extra}")
    return type(err)(err.node_def, err.op, message)


def _register_saver_collection() -> None:
    meta_graph.register_proto_function(GraphKeys.SAVERS, proto_type=saver_pb2.SaverDef,
                                       to_proto=lambda s, export_scope=None: s.to_proto(export_scope),
                                       from_proto=Saver.from_proto)


_register_saver_collection()


def export_meta_graph(filename: Optional[str] = None, meta_info_def: Any = None, graph_def: Any = None,
                      saver_def: Any = None, collection_list: Optional[Sequence[str]] = None,
                      as_text: bool = False, graph: Optional[_graph.Graph] = None,
                      export_scope: Optional[str] = None, clear_devices: bool = False,
                      clear_extraneous_savers: bool = False, strip_default_attrs: bool = False,
                      save_debug_info: bool = False, **kwargs: Any) -> Any:
    """Returns (and writes to `filename`, atomically) the MetaGraphDef of `graph` (TF1's
    tf.train.export_meta_graph): graph_def, saver_def, collections and op signatures."""
    meta_graph_def, _ = meta_graph.export_scoped_meta_graph(
        filename=filename, meta_info_def=meta_info_def, graph_def=graph_def, saver_def=saver_def,
        collection_list=collection_list, as_text=as_text, graph=graph, export_scope=export_scope,
        clear_devices=clear_devices, clear_extraneous_savers=clear_extraneous_savers,
        strip_default_attrs=strip_default_attrs, **kwargs)
    return meta_graph_def


def import_meta_graph(meta_graph_or_file: Any, clear_devices: bool = False, import_scope: Optional[str] = None,
                      **kwargs: Any) -> Optional[Saver]:
    """Recreates a saved graph and its collections in the default graph; returns a Saver built
    from its SaverDef (or a new one for its variables; None if it has none), so
    `saver.restore(sess, prefix)` restores the trained values."""
    return_elements = kwargs.pop("return_elements", None)
    meta_graph_def = (meta_graph_or_file if isinstance(meta_graph_or_file, meta_graph.MetaGraphDef)
                      else meta_graph.read_meta_graph_file(os.fspath(meta_graph_or_file)))
    imported_vars, returned = meta_graph.import_scoped_meta_graph_with_return_elements(
        meta_graph_def, clear_devices=clear_devices, import_scope=import_scope,
        return_elements=return_elements, **kwargs)
    saver = _saver_for_imported(meta_graph_def, import_scope, imported_vars)
    return (saver, returned) if return_elements is not None else saver


def _saver_for_imported(meta_graph_def: Any, import_scope: Optional[str],
                        imported_vars: dict[str, Any]) -> Optional[Saver]:
    if meta_graph_def.HasField("saver_def"):
        scope = import_scope
        if imported_vars:
            key, var = next(iter(imported_vars.items()))
            scope = var.name[:-len(key)]
        saver_def = saver_pb2.SaverDef()
        saver_def.CopyFrom(meta_graph_def.saver_def)
        return Saver(saver_def=saver_def, name=scope or None)
    if _saveable_objects(import_scope):
        return Saver()
    _log.info("Saver not created because there are no variables in the graph to restore")
    return None
