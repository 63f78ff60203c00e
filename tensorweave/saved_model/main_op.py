"""tf.saved_model.main_op: the op a loader runs after restoring variables."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.graph import control_dependencies, get_default_graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops.control_flow import group
from tensorweave.ops.state.variables import global_variables_initializer, local_variables_initializer

__all__ = ["main_op", "main_op_with_restore"]


def main_op() -> Any:
    """Initializes global and local variables and tables, in one op."""
    tables = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    init_tables = group(*tables, name="init_all_tables")
    return group(global_variables_initializer(), local_variables_initializer(), init_tables)


def main_op_with_restore(restore_op_name: Any) -> Any:
    """main_op, then the restore op named `restore_op_name`."""
    restore = restore_op_name
    if isinstance(restore, (str, bytes)):  # a Saver's saver_def.restore_op_name
        restore = get_default_graph().as_graph_element(
            restore.decode() if isinstance(restore, bytes) else restore)
    with control_dependencies([main_op()]):
        return group(restore, name="main_op_with_restore")

from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("saved_model.main_op", __name__)
