"""tf.saved_model.simple_save: a SavedModel for serving in one call."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.graph import GraphKeys, get_default_graph
from tensorweave.saved_model import signature_constants, signature_def_utils, tag_constants
from tensorweave.saved_model.builder import SavedModelBuilder

__all__ = ["simple_save"]


def simple_save(session: Any, export_dir: str, inputs: dict[str, Any], outputs: dict[str, Any],
                legacy_init_op: Any = None) -> None:
    """Saves the session's graph and variables under the "serve" tag with one predict signature
    ("serving_default") from `inputs` to `outputs`, with the graph's asset files and devices
    cleared."""
    signature_def_map = {signature_constants.DEFAULT_SERVING_SIGNATURE_DEF_KEY:
                         signature_def_utils.predict_signature_def(inputs, outputs)}
    builder = SavedModelBuilder(export_dir)
    builder.add_meta_graph_and_variables(
        session, tags=[tag_constants.SERVING], signature_def_map=signature_def_map,
        assets_collection=get_default_graph().get_collection(GraphKeys.ASSET_FILEPATHS),
        main_op=legacy_init_op, clear_devices=True)
    builder.save()
