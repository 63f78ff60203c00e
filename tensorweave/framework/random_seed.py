"""Graph-level and op-level seeds (`tf.set_random_seed`), with TF1's combination rules."""
from __future__ import annotations

import threading
import weakref
from typing import Optional

from tensorweave.framework import graph as _graph

DEFAULT_GRAPH_SEED = 87654321
_MAXINT32 = 2**31 - 1
# Per graph, how many op seeds it has handed out (TF's _graph_to_seed_dict).
_SEEDS_GIVEN: "weakref.WeakKeyDictionary[object, int]" = weakref.WeakKeyDictionary()
_SEEDS_LOCK = threading.Lock()


def get_seed(op_seed: Optional[int]) -> tuple[Optional[int], Optional[int]]:
    """(graph_seed, op_seed) for a new random op, as TF derives them (TF 2.x graph mode):
    graph seed set and op seed unset -> the op seed counts the calls of this kind on the
    graph (0, 1, 2, ...: not the op count, which TF1 used); only the op seed set -> the
    default graph seed; neither -> nondeterministic."""
    graph = _graph.get_default_graph()
    graph_seed = graph.seed
    if graph_seed is not None:
        if op_seed is None:
            with _SEEDS_LOCK:
                op_seed = _SEEDS_GIVEN.setdefault(graph, 0)
                _SEEDS_GIVEN[graph] = op_seed + 1
        seeds = (_truncate(graph_seed), _truncate(op_seed))
    elif op_seed is not None:
        seeds = (DEFAULT_GRAPH_SEED, _truncate(op_seed))
    else:
        return None, None
    if seeds == (0, 0):  # (0, 0) means "random" to the kernels, so avoid it
        return 0, _MAXINT32
    return seeds


def _truncate(seed: int) -> int:
    """Seeds are kept in [0, 2**31 - 1), as TF does (the kernels' seed attrs are int64, but
    TF folds larger Python ints into that range)."""
    return int(seed) % _MAXINT32


def set_random_seed(seed: Optional[int]) -> None:
    """Sets the graph-level seed of the default graph (TF1's tf.set_random_seed)."""
    _graph.get_default_graph().seed = seed
