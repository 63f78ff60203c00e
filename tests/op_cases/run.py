"""Running an OpCase in graph mode (a Session) and eagerly, and comparing the two.

Graph mode feeds the inputs through placeholders (with their static shapes unless the case says
otherwise), initialises variables and tables, runs the outputs once, and checks each output's
inferred static shape against its real value. Eager mode runs the same build function on
constants in a fresh eager context that records the op types it ran (an EagerGraph, as
`context.eager_mode()` makes, noting each op it executes)."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

import tensorweave as tf
from tensorweave.eager.execute import EagerGraph
from tensorweave.framework.graph import Operation
from tensorweave.testing.op_test import assert_static_shape_matches
from tests.op_cases import EXACT, SEEDED, SHAPES, OpCase

SEED = 87654
# Ops drawing variables' random initial values: a case whose variables use them can only
# compare dtypes and shapes (graph mode and eager mode draw different numbers, as in TF).
_INITIAL_DRAWS = {"RandomUniform", "RandomStandardNormal", "TruncatedNormal", "RandomUniformInt"}


class RecordingEagerGraph(EagerGraph):
    """An eager context that notes the type of every op it runs."""

    def __init__(self) -> None:
        super().__init__()
        self.ran: set[str] = set()

    def _create_op_internal(self, op_def: Any, *args: Any, **kwargs: Any) -> Any:
        self.ran.add(op_def.name)
        return super()._create_op_internal(op_def, *args, **kwargs)

    def _apply_op(self, op_def: Any, *args: Any, **kwargs: Any) -> Any:
        # the wrappers' way in: planned calls and array constants never reach _create_op_internal
        self.ran.add(op_def.name)
        return super()._apply_op(op_def, *args, **kwargs)


def case_inputs(case: OpCase) -> list[np.ndarray]:
    return [np.asarray(v) for v in case.inputs(np.random.RandomState(7))]


def flatten(structure: Any) -> list[Any]:
    """The tensors of a case's result, in a fixed order (a SparseTensor or IndexedSlices as its
    components, a variable as its value; ops and None have no value)."""
    if structure is None or isinstance(structure, Operation):
        return []
    if isinstance(structure, dict):
        return [t for k in sorted(structure) for t in flatten(structure[k])]
    if isinstance(structure, (list, tuple)):
        return [t for item in structure for t in flatten(item)]
    if hasattr(structure, "dense_shape") and hasattr(structure, "indices"):
        return flatten([structure.indices, structure.values, structure.dense_shape])
    t = tf.convert_to_tensor(structure)
    if t.dtype.is_ref_dtype:
        t = tf.identity(t)
    return [t]


def _placeholder(value: np.ndarray, with_shape: bool) -> Any:
    dtype = tf.string if value.dtype.kind in "OSU" else tf.as_dtype(value.dtype)
    return tf.placeholder(dtype, list(value.shape) if with_shape else None)


def _eager_input(value: np.ndarray) -> Any:
    return tf.constant(value.astype(object) if value.dtype.kind in "SU" else value)


def run_graph(case: OpCase, values: Sequence[np.ndarray]) -> tuple[list[Any], list[Any], str]:
    """(dtypes, values, how to compare them with eager mode) of the case's outputs run in a
    Session."""
    with tf.Graph().as_default() as graph:
        if case.compare == SEEDED:
            tf.set_random_seed(SEED)
        xs = [_placeholder(v, case.feed_shapes) for v in values]
        outputs = flatten(case.build(*xs))
        inits = []
        compare = case.compare
        if tf.global_variables() or tf.local_variables():
            inits = [tf.global_variables_initializer(), tf.local_variables_initializer()]
            if compare == EXACT and any(op.type in _INITIAL_DRAWS for op in graph.get_operations()):
                compare = SHAPES
        if graph.get_collection(tf.GraphKeys.TABLE_INITIALIZERS):
            inits.append(tf.tables_initializer())
        with tf.Session() as sess:
            if inits:
                sess.run(inits)
            got = sess.run(outputs, dict(zip(xs, values)))
    for t, v in zip(outputs, got):
        assert_static_shape_matches(t, v)
    return [t.dtype.base_dtype for t in outputs], got, compare


def run_eager(case: OpCase, values: Sequence[np.ndarray]) -> tuple[list[Any], list[Any], set[str]]:
    """(dtypes, values, op types run) of the case run eagerly."""
    context = RecordingEagerGraph()
    with context.as_default():
        if case.compare == SEEDED:
            tf.set_random_seed(SEED)
        outputs = flatten(case.build(*[_eager_input(v) for v in values]))
        got = [t.numpy() for t in outputs]
    return [t.dtype.base_dtype for t in outputs], got, context.ran


def _same(graph_value: Any, eager_value: Any, exact: bool) -> Optional[str]:
    g, e = np.asarray(graph_value), np.asarray(eager_value)
    if g.dtype != e.dtype:
        return f"dtype {e.dtype} eagerly, {g.dtype} in graph mode"
    if g.shape != e.shape:
        return f"shape {e.shape} eagerly, {g.shape} in graph mode"
    if not exact:
        return None
    if g.dtype.kind == "O":
        same = g.tolist() == e.tolist()
    else:
        same = np.array_equal(g, e, equal_nan=g.dtype.kind in "fc")
    return None if same else f"values differ:\n eager {e!r}\n graph {g!r}"


def compare(graph: tuple[list[Any], list[Any], str], eager: tuple[list[Any], list[Any]]) -> Optional[str]:
    """Why the eager result is not the graph-mode one (None when it is)."""
    g_dtypes, g_values, how = graph
    e_dtypes, e_values = eager
    if len(g_values) != len(e_values):
        return f"{len(e_values)} outputs eagerly, {len(g_values)} in graph mode"
    for i, (gd, ed) in enumerate(zip(g_dtypes, e_dtypes)):
        if gd != ed:
            return f"output {i}: dtype {ed.name} eagerly, {gd.name} in graph mode"
    exact = how in (EXACT, SEEDED)
    for i, (gv, ev) in enumerate(zip(g_values, e_values)):
        problem = _same(gv, ev, exact)
        if problem is not None:
            return f"output {i}: {problem}"
    return None


def check_expected(case: OpCase, values: Sequence[np.ndarray], got: Sequence[Any]) -> Optional[str]:
    """The graph-mode values against the case's NumPy reference, when it has one."""
    if case.expected is None:
        return None
    want = case.expected(*values)
    if len(want) != len(got):
        return f"{len(got)} outputs, the NumPy reference has {len(want)}"
    for i, (w, g) in enumerate(zip(want, got)):
        w, g = np.asarray(w), np.asarray(g)
        if g.dtype.kind == "O" or w.dtype.kind in "OSU":
            ok = g.shape == w.shape and g.tolist() == np.asarray(w, dtype=object).tolist()
        elif g.dtype.kind in "fc":
            ok = g.shape == w.shape and bool(np.allclose(g, w, rtol=1e-5, atol=1e-6, equal_nan=True))
        else:
            ok = g.shape == w.shape and np.array_equal(g, w)
        if not ok:
            return f"output {i}: {g!r}, the NumPy reference gives {w!r}"
    return None
