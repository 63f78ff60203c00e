"""tf.saved_model.builder: SavedModelBuilder writes TensorFlow's SavedModel layout —
saved_model.pb (or .pbtxt) holding one MetaGraphDef per tag set, variables/variables.{index,
data-*} (a V2 checkpoint, written once, shared by all meta graphs) and assets/ (copies of the
files named by the assets collection, which the loader feeds back as paths).

An asset is recorded twice: as an AssetFileDef packed in the "saved_model_assets" collection
(where TF 1.x loaders look) and in MetaGraphDef.asset_file_def (where TF 2 looks first)."""
from __future__ import annotations

import logging
import os
import shutil
from typing import Any, Optional, Sequence

from google.protobuf import any_pb2, text_format
from tensorboard.compat.proto import meta_graph_pb2, saver_pb2, types_pb2

from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.lib.atomic_write import atomic_write
from tensorweave.saved_model import constants
from tensorweave.saved_model import utils as _utils
from tensorweave.saved_model.saved_model_proto import SavedModel
from tensorweave.training.saver import Saver, _saveable_objects

__all__ = ["SavedModelBuilder"]

_log = logging.getLogger("tensorweave")
# Any.type_url of an AssetFileDef as TensorFlow writes it (tensorboard's copy of the message
# lives in another proto package, and TF's Any.Unpack checks the name).
_ASSET_TYPE_URL = "type.googleapis.com/tensorflow.AssetFileDef"


def _asset_path_from_tensor(path_tensor: Any) -> str:
    if not isinstance(path_tensor, _graph.Tensor):
        raise TypeError("Asset path tensor must be a Tensor.")
    if path_tensor.op.type != "Const":
        raise TypeError("Asset path tensor must be of type constant.")
    if path_tensor.dtype.base_dtype.name != "string":
        raise TypeError("Asset path tensor must be of dtype string.")
    value = tensor_util.constant_value(path_tensor)
    if value is None or getattr(value, "ndim", 1) != 0:
        raise TypeError("Asset path tensor must be a scalar.")
    value = value.item() if hasattr(value, "item") else value
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def _asset_filename(source: str, taken: dict[str, str]) -> str:
    """The name an asset gets in assets/: its basename, made unique when another file of the
    same basename is already there."""
    base = os.path.basename(source)
    name, ext = os.path.splitext(base)
    candidate, n = base, 1
    while candidate in taken and taken[candidate] != source:
        candidate = f"{name}_{n}{ext}"
        n += 1
    return candidate


def _pack_asset(asset: Any) -> Any:
    packed = any_pb2.Any()
    packed.type_url = _ASSET_TYPE_URL
    packed.value = asset.SerializeToString()
    return packed


class SavedModelBuilder:
    """Builds a SavedModel in `export_dir` (which must not exist or be empty): first
    add_meta_graph_and_variables (saves the variables), then any add_meta_graph, then save."""

    def __init__(self, export_dir: str) -> None:
        self._export_dir = os.fspath(export_dir)
        self._saved_model = SavedModel()
        self._saved_model.saved_model_schema_version = constants.SAVED_MODEL_SCHEMA_VERSION
        self._has_saved_variables = False
        self._pending_assets: dict[str, str] = {}
        if os.path.exists(self._export_dir):
            if os.listdir(self._export_dir):
                raise AssertionError(
                    "Export directory already exists, and isn't empty. Please choose a different export "
                    f"directory, or delete all the contents of the specified directory: {self._export_dir}")
        else:
            os.makedirs(self._export_dir)

    # -- validation ------------------------------------------------------------------------------
    @staticmethod
    def _validate_tensor_info(tensor_info: Any) -> None:
        if tensor_info is None:
            raise AssertionError("All TensorInfo protos used in the SignatureDefs must have the name "
                                 "and dtype fields set.")
        if tensor_info.WhichOneof("encoding") is None:
            raise AssertionError("All TensorInfo protos used in the SignatureDefs must have one of the "
                                 f"'encoding' fields (e.g., name or coo_sparse) set: {tensor_info}")
        if tensor_info.dtype == types_pb2.DT_INVALID:
            raise AssertionError("All TensorInfo protos used in the SignatureDefs must have the dtype "
                                 f"field set: {tensor_info}")

    def _validate_signature_def_map(self, signature_def_map: dict[str, Any]) -> None:
        for key, signature in signature_def_map.items():
            if key in (constants.INIT_OP_SIGNATURE_KEY, constants.TRAIN_OP_SIGNATURE_KEY):
                raise KeyError(f'SignatureDef map key "{key}" is reserved for initialization. '
                               "Please use a different key.")
            for info in list(signature.inputs.values()) + list(signature.outputs.values()):
                self._validate_tensor_info(info)

    # -- collections -----------------------------------------------------------------------------
    def _add_assets(self, assets_collection: Optional[Sequence[Any]]) -> list[Any]:
        """Records each asset tensor in the assets collection; returns the AssetFileDefs."""
        if assets_collection is None:
            return []
        if not isinstance(assets_collection, (list, tuple)):
            raise ValueError("Assets to add must be a list")
        graph = _graph.get_default_graph()
        recorded = []
        for tensor in assets_collection:
            source = _asset_path_from_tensor(tensor)
            if not source:
                raise ValueError(f"Invalid asset filepath tensor {tensor}")
            filename = _asset_filename(source, self._pending_assets)
            self._pending_assets[filename] = source
            asset = meta_graph_pb2.AssetFileDef(filename=filename)
            asset.tensor_info.name = tensor.name
            if not any(a.value == _pack_asset(asset).value for a in graph.get_collection(constants.ASSETS_KEY)):
                graph.add_to_collection(constants.ASSETS_KEY, _pack_asset(asset))
            recorded.append(asset)
        return recorded

    def _copy_assets(self) -> None:
        if not self._pending_assets:
            return
        assets_dir = _utils.get_assets_dir(self._export_dir)
        os.makedirs(assets_dir, exist_ok=True)
        for filename, source in self._pending_assets.items():
            destination = os.path.join(assets_dir, filename)
            if not os.path.exists(destination):
                shutil.copyfile(source, destination)

    @staticmethod
    def _add_main_op(main_op: Any) -> None:
        if main_op is None:
            return
        if not isinstance(main_op, _graph.Operation):
            raise TypeError(f"main_op needs to be an Operation: {main_op!r}")
        graph = _graph.get_default_graph()
        if graph.get_collection(constants.MAIN_OP_KEY):
            raise ValueError("Graph already contains one or more main ops under the collection "
                             f"{constants.MAIN_OP_KEY}.")
        graph.add_to_collection(constants.MAIN_OP_KEY, main_op)

    @staticmethod
    def _maybe_create_saver(saver: Optional[Saver]) -> Saver:
        if saver is not None:
            return saver
        return Saver(_saveable_objects(), sharded=True, write_version=saver_pb2.SaverDef.V2, allow_empty=True)

    def _tag_and_add_meta_graph(self, meta_graph_def: Any, tags: Sequence[str],
                                signature_def_map: dict[str, Any], assets: list[Any]) -> None:
        meta_graph_def.meta_info_def.tags.extend(tags)
        for key, signature in signature_def_map.items():
            meta_graph_def.signature_def[key].CopyFrom(signature)
        meta_graph_def.asset_file_def.extend(assets)
        self._saved_model.meta_graphs.add().CopyFrom(meta_graph_def)

    def _add(self, sess: Any, tags: Sequence[str], signature_def_map: Optional[dict[str, Any]],
             assets_collection: Optional[Sequence[Any]], legacy_init_op: Any, clear_devices: bool,
             main_op: Any, strip_default_attrs: bool, saver: Optional[Saver]) -> None:
        if isinstance(tags, str):
            tags = [tags]
        signature_def_map = signature_def_map or {}
        self._validate_signature_def_map(signature_def_map)
        # legacy_init_op is the older name of the same op: the loader runs either after restoring.
        assets = self._add_assets(assets_collection)
        self._add_main_op(main_op if main_op is not None else legacy_init_op)
        saver = self._maybe_create_saver(saver)
        if sess is not None:
            _utils.get_or_create_variables_dir(self._export_dir)
            # No checkpoint state file: a SavedModel can be moved, and loading never reads one.
            saver.save(sess, _utils.get_variables_path(self._export_dir), write_meta_graph=False,
                       write_state=False)
        meta_graph_def = saver.export_meta_graph(clear_devices=clear_devices,
                                                 strip_default_attrs=strip_default_attrs)
        self._tag_and_add_meta_graph(meta_graph_def, tags, signature_def_map, assets)

    def add_meta_graph_and_variables(self, sess: Any, tags: Sequence[str],
                                     signature_def_map: Optional[dict[str, Any]] = None,
                                     assets_collection: Optional[Sequence[Any]] = None,
                                     legacy_init_op: Any = None, clear_devices: bool = False,
                                     main_op: Any = None, strip_default_attrs: bool = False,
                                     saver: Optional[Saver] = None) -> None:
        """Saves the session's variables and adds the current graph's MetaGraphDef under `tags`."""
        if self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has already been saved. "
                                 "Please invoke `add_meta_graph()` instead.")
        self._add(sess, tags, signature_def_map, assets_collection, legacy_init_op, clear_devices,
                  main_op, strip_default_attrs, saver)
        self._has_saved_variables = True

    def add_meta_graph(self, tags: Sequence[str], signature_def_map: Optional[dict[str, Any]] = None,
                       assets_collection: Optional[Sequence[Any]] = None, legacy_init_op: Any = None,
                       clear_devices: bool = False, main_op: Any = None, strip_default_attrs: bool = False,
                       saver: Optional[Saver] = None) -> None:
        """Adds another MetaGraphDef (of the current graph) under `tags`, sharing the variables
        saved by add_meta_graph_and_variables."""
        if not self._has_saved_variables:
            raise AssertionError("Graph state including variables and assets has not been saved yet. "
                                 "Please invoke `add_meta_graph_and_variables()` first.")
        self._add(None, tags, signature_def_map, assets_collection, legacy_init_op, clear_devices,
                  main_op, strip_default_attrs, saver)

    def save(self, as_text: bool = False) -> str:
        """Writes saved_model.pb (or saved_model.pbtxt when `as_text`) and copies the assets;
        returns the path written."""
        os.makedirs(self._export_dir, exist_ok=True)
        self._copy_assets()
        if as_text:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PBTXT)
            data = text_format.MessageToString(self._saved_model).encode("utf-8")
        else:
            path = os.path.join(self._export_dir, constants.SAVED_MODEL_FILENAME_PB)
            data = self._saved_model.SerializeToString(deterministic=True)
        atomic_write(path, data)
        _log.info("SavedModel written to: %s", path)
        return path


# TF1 exports it under both names.
Builder = SavedModelBuilder

from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("saved_model.builder", __name__)
