"""`tf.graph_util`: GraphDef utilities (re-exports only; framework/graph_util_impl.py)."""
from tensorweave._names.missing import module_getattr as _module_getattr
from tensorweave.framework.graph_util_impl import (  # noqa: F401
    convert_variables_to_constants, extract_sub_graph, must_run_on_cpu, remove_training_nodes,
    tensor_shape_from_node_def_name)
from tensorweave.framework.importer import import_graph_def  # noqa: F401

__getattr__ = _module_getattr("graph_util", __name__)
