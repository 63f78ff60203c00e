"""`tf.graph_util`: GraphDef utilities (re-exports only)."""
from tensorweave._api.missing import module_getattr as _module_getattr
from tensorweave.framework.importer import import_graph_def  # noqa: F401

__getattr__ = _module_getattr("graph_util", __name__)
