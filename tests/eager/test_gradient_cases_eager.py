"""Every case of the gradient-check table (tests/gradient_cases: one or more cases for every
differentiable op) run eagerly: the forward value equals the graph-mode result, and
GradientTape's gradients equal tf.gradients' on the same computation."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.eager import context
from tests.gradient_cases import all_cases
from tests.op_cases import GRAPH_ONLY_GRADIENT_CASES as GRAPH_ONLY
CASES = [c for c in all_cases() if c.name not in GRAPH_ONLY]


def test_graph_only_cases_raise_eagerly():
    case = next(c for c in all_cases() if c.name == "math_tanh_second_derivative")
    with context.eager_mode(), pytest.raises(RuntimeError, match="tf.GradientTape instead"):
        case.build(tf.constant(np.ones(case.shapes[0])))


def _values(case):
    rng = np.random.RandomState(7)
    return list(case.init(rng)) if case.init else [rng.uniform(case.low, case.high, s) for s in case.shapes]


def _graph_results(case, values):
    with tf.Graph().as_default():
        xs = [tf.placeholder(tf.float64, list(v.shape)) for v in values]
        y = case.build(*xs)
        grads = [g if g is None else tf.convert_to_tensor(g) for g in tf.gradients(y, xs)]
        has_variables = bool(tf.global_variables())
        fetch_grads = [g for g in grads if g is not None]
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            out = sess.run([y] + fetch_grads, dict(zip(xs, values)))
    dense = iter(out[1:])
    return out[0], [None if g is None else next(dense) for g in grads], has_variables


def _eager_results(case, values):
    with context.eager_mode():
        xs = [tf.constant(v) for v in values]
        with tf.GradientTape() as tape:
            tape.watch(xs)
            y = case.build(*xs)
        grads = tape.gradient(y, xs)
        return np.asarray(y), [None if g is None else np.asarray(tf.convert_to_tensor(g)) for g in grads]


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_case_eagerly(case):
    values = _values(case)
    y_graph, g_graph, has_variables = _graph_results(case, values)
    y_eager, g_eager = _eager_results(case, values)
    if has_variables:
        # The case builds layers whose variables draw random initial values: the two runs
        # differ in those draws, so compare what does not depend on them.
        assert y_eager.shape == y_graph.shape
        return
    np.testing.assert_allclose(y_eager, y_graph, rtol=1e-10, atol=1e-12, err_msg=case.name)
    for i, (ge, gg) in enumerate(zip(g_eager, g_graph)):
        assert (ge is None) == (gg is None), f"{case.name} input {i}: {ge} vs {gg}"
        if gg is not None:
            np.testing.assert_allclose(ge, gg, rtol=1e-9, atol=1e-11, err_msg=f"{case.name} input {i}")
