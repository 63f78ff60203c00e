"""tf.saved_model.loader: loads a SavedModel (TensorFlow's or ours) into a session — imports
the MetaGraphDef whose tags match, restores the variables from variables/, then runs the main
(or legacy init) op with each asset tensor fed the path of its copy under assets/."""
from __future__ import annotations

import logging
import os
from typing import Any, Optional, Sequence

from google.protobuf import message, text_format
from tensorboard.compat.proto import meta_graph_pb2

from tensorweave.framework import graph as _graph
from tensorweave.framework.meta_graph import prepend_name_scope
from tensorweave.saved_model import constants
from tensorweave.saved_model import utils as _utils
from tensorweave.saved_model.saved_model_proto import SavedModel
from tensorweave.training.saver import Saver, _saveable_objects, import_meta_graph

__all__ = ["load", "maybe_saved_model_directory"]  # tf.saved_model.loader's public names

_log = logging.getLogger("tensorweave")


def _model_paths(export_dir: str) -> tuple[str, str]:
    export_dir = os.fspath(export_dir)
    return (os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PB),
            os.path.join(export_dir, constants.SAVED_MODEL_FILENAME_PBTXT))


def maybe_saved_model_directory(export_dir: str) -> bool:
    """Whether `export_dir` holds a saved_model.pb or saved_model.pbtxt."""
    return any(os.path.isfile(p) for p in _model_paths(export_dir))


contains_saved_model = maybe_saved_model_directory


def parse_saved_model(export_dir: str) -> Any:
    """The SavedModel proto of `export_dir` (binary preferred, as TF reads it)."""
    pb_path, pbtxt_path = _model_paths(export_dir)
    saved_model = SavedModel()
    if os.path.isfile(pb_path):
        with open(pb_path, "rb") as f:
            data = f.read()
        try:
            saved_model.ParseFromString(data)
        except message.DecodeError as err:
            raise IOError(f"Cannot parse file {pb_path}: {err}.") from err
    elif os.path.isfile(pbtxt_path):
        with open(pbtxt_path, "r", encoding="utf-8") as f:
            try:
                text_format.Merge(f.read(), saved_model)
            except text_format.ParseError as err:
                raise IOError(f"Cannot parse file {pbtxt_path}: {err}.") from err
    else:
        raise IOError(f"SavedModel file does not exist at: {os.fspath(export_dir)}/"
                      f"{{{constants.SAVED_MODEL_FILENAME_PBTXT}|{constants.SAVED_MODEL_FILENAME_PB}}}")
    return saved_model


def _asset_file_defs(meta_graph_def: Any) -> list[Any]:
    """The AssetFileDefs of a MetaGraphDef: TF 2's field, else TF 1's packed collection."""
    if meta_graph_def.asset_file_def:
        return list(meta_graph_def.asset_file_def)
    assets = []
    collection = meta_graph_def.collection_def.get(constants.ASSETS_KEY)
    if collection is not None:
        for packed in collection.any_list.value:
            assets.append(meta_graph_pb2.AssetFileDef.FromString(packed.value))
    return assets


def get_asset_tensors(export_dir: str, meta_graph_def: Any, import_scope: Optional[str] = None) -> dict[str, str]:
    """Asset tensor name -> the absolute path of its file in export_dir/assets."""
    assets_dir = _utils.get_assets_dir(export_dir)
    return {prepend_name_scope(asset.tensor_info.name, import_scope): os.path.join(assets_dir, asset.filename)
            for asset in _asset_file_defs(meta_graph_def)}


def get_init_op(meta_graph_def: Any, import_scope: Optional[str] = None) -> Any:
    """The op to run after restoring: the main op, else the legacy init op, else TF 2's
    init-op signature; None when the model has none."""
    graph = _graph.get_default_graph()
    for key in (constants.MAIN_OP_KEY, constants.LEGACY_INIT_OP_KEY):
        collection = meta_graph_def.collection_def.get(key)
        if collection is None:
            continue
        names = list(collection.node_list.value)
        if len(names) != 1:
            raise RuntimeError(f"Expected exactly one SavedModel init op. Found: {names}")
        return graph.as_graph_element(prepend_name_scope(names[0], import_scope))
    signature = meta_graph_def.signature_def.get(constants.INIT_OP_SIGNATURE_KEY)
    if signature is not None and constants.INIT_OP_SIGNATURE_KEY in signature.outputs:
        name = signature.outputs[constants.INIT_OP_SIGNATURE_KEY].name
        return graph.as_graph_element(prepend_name_scope(name, import_scope))
    return None


class SavedModelLoader:
    """Loads the MetaGraphDefs of the SavedModel in `export_dir`, one step at a time or all
    together with `load`."""

    def __init__(self, export_dir: str) -> None:
        self._export_dir = os.fspath(export_dir)
        self._variables_path = _utils.get_variables_path(self._export_dir)
        self._saved_model = parse_saved_model(self._export_dir)

    @property
    def export_dir(self) -> str:
        return self._export_dir

    @property
    def variables_path(self) -> str:
        return self._variables_path

    @property
    def saved_model(self) -> Any:
        return self._saved_model

    def get_meta_graph_def_from_tags(self, tags: Sequence[str]) -> Any:
        """The MetaGraphDef whose tag set equals `tags`."""
        wanted = {tags} if isinstance(tags, str) else set(tags)
        for meta_graph_def in self._saved_model.meta_graphs:
            if set(meta_graph_def.meta_info_def.tags) == wanted:
                return meta_graph_def
        available = [sorted(m.meta_info_def.tags) for m in self._saved_model.meta_graphs]
        raise RuntimeError(f"MetaGraphDef associated with tags {str(list(tags)).strip('[]')} could not be "
                           f"found in SavedModel. Available tag sets: {available}. To inspect available "
                           "tag-sets in the SavedModel, please use the SavedModel CLI: `tensorweave show`")

    def load_graph(self, graph: _graph.Graph, tags: Sequence[str], import_scope: Optional[str] = None,
                   **saver_kwargs: Any) -> tuple[Optional[Saver], Any]:
        """Imports the tagged MetaGraphDef into `graph`; returns (its Saver, None)."""
        meta_graph_def = self.get_meta_graph_def_from_tags(tags)
        with graph.as_default():
            saver = import_meta_graph(meta_graph_def, import_scope=import_scope, **saver_kwargs)
        return saver, None

    def restore_variables(self, sess: Any, saver: Optional[Saver], import_scope: Optional[str] = None) -> None:
        with sess.graph.as_default():
            if saver is None and not _saveable_objects(import_scope):
                _log.info("The specified SavedModel has no variables; no checkpoints were restored.")
            elif isinstance(saver, Saver):
                saver.restore(sess, self._variables_path)
            else:
                raise ValueError("No tf.train.Saver object was passed to the function "
                                 "`SavedModelLoader.restore_variables`. Since there are variables in the "
                                 "graph, a saver is required.")

    def run_init_ops(self, sess: Any, tags: Sequence[str], import_scope: Optional[str] = None) -> None:
        meta_graph_def = self.get_meta_graph_def_from_tags(tags)
        with sess.graph.as_default():
            feeds = get_asset_tensors(self._export_dir, meta_graph_def, import_scope)
            init_op = get_init_op(meta_graph_def, import_scope)
            if init_op is not None:
                sess.run([init_op], feed_dict=feeds)

    def load(self, sess: Any, tags: Sequence[str], import_scope: Optional[str] = None,
             **saver_kwargs: Any) -> Any:
        with sess.graph.as_default():
            saver, _ = self.load_graph(sess.graph, tags, import_scope, **saver_kwargs)
            self.restore_variables(sess, saver, import_scope)
            self.run_init_ops(sess, tags, import_scope)
        return self.get_meta_graph_def_from_tags(tags)


def load(sess: Any, tags: Sequence[str], export_dir: str, import_scope: Optional[str] = None,
         **saver_kwargs: Any) -> Any:
    """Loads the SavedModel in `export_dir` tagged `tags` into `sess` (graph, variables, main
    op) and returns its MetaGraphDef, whose signature_def names the tensors to feed and fetch."""
    return SavedModelLoader(export_dir).load(sess, tags, import_scope, **saver_kwargs)

from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("saved_model.loader", __name__)
