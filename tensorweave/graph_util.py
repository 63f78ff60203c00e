"""tf.graph_util: re-exports (TF1's graph_util)."""
from tensorweave.framework.graph_util_impl import (convert_variables_to_constants, extract_sub_graph,  # noqa: F401
                                                   must_run_on_cpu, remove_training_nodes,
                                                   tensor_shape_from_node_def_name)
from tensorweave.framework.importer import import_graph_def  # noqa: F401
