"""The global step: an int64 scalar variable in GLOBAL_STEP and GLOBAL_VARIABLES."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.ops import init_ops
from tensorweave.ops.variable_scope import get_variable


def get_global_step(graph: Optional[_graph.Graph] = None) -> Any:
    graph = graph or _graph.get_default_graph()
    found = graph.get_collection(GraphKeys.GLOBAL_STEP)
    if len(found) > 1:
        raise TypeError("There are multiple global steps")
    if found:
        return found[0]
    try:
        return graph.get_tensor_by_name("global_step:0")
    except KeyError:
        return None


def create_global_step(graph: Optional[_graph.Graph] = None) -> Any:
    graph = graph or _graph.get_default_graph()
    if get_global_step(graph) is not None:
        raise ValueError("'global_step' already exists.")
    with graph.as_default(), _graph.name_scope(None):
        return get_variable("global_step", shape=[], dtype=_dtypes.int64,
                            initializer=init_ops.zeros_initializer(), trainable=False,
                            collections=[GraphKeys.GLOBAL_VARIABLES, GraphKeys.GLOBAL_STEP])


def get_or_create_global_step(graph: Optional[_graph.Graph] = None) -> Any:
    return get_global_step(graph) or create_global_step(graph)


def global_step(sess: Any, global_step_tensor: Any) -> int:
    return int(sess.run(global_step_tensor))
