"""Every differentiable op passes a float64 central-difference gradient check, and every op
registers a gradient or an explicit not-differentiable mark."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import op_def
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE
from tensorweave.testing import gradient_checker
from tests.gradient_cases import all_cases

CASES = all_cases()


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_numeric_gradient(case):
    rng = np.random.RandomState(7)
    values = list(case.init(rng)) if case.init else [rng.uniform(case.low, case.high, s) for s in case.shapes]
    xs = [tf.placeholder(tf.float64, list(v.shape)) for v in values]
    y = case.build(*xs)
    assert y.dtype.base_dtype == tf.float64, f"{case.name} must stay float64"
    if case.directional:
        err = gradient_checker.directional_gradient_error(xs, values, y)
        assert err < case.tol * 100, f"{case.name}: directional error {err}"
        return
    # Cases built on layers with variables (RNN cells) start from their initial values.
    init = tf.global_variables_initializer() if tf.global_variables() else None
    with tf.Session() as sess:
        if init is not None:
            sess.run(init)
        y_shape = np.shape(sess.run(y, dict(zip(xs, values))))
    for i, (x, v) in enumerate(zip(xs, values)):
        others = {xj: vj for j, (xj, vj) in enumerate(zip(xs, values)) if j != i}
        theoretical, numeric = gradient_checker.compute_gradient(
            x, v.shape, y, y_shape, x_init_value=v, delta=case.delta, init_targets=init, extra_feed_dict=others)
        scale = max(1.0, float(np.max(np.abs(numeric))) if numeric.size else 1.0)
        err = float(np.max(np.abs(theoretical - numeric))) if numeric.size else 0.0
        assert err <= case.tol * scale, f"{case.name} input {i}: max error {err}"


def test_every_op_has_gradient_or_mark_and_every_gradient_is_checked():
    covered = {name for case in CASES for name in case.ops}
    unmarked, unchecked = [], []
    for name, definition in op_def.registered_ops().items():
        if name.startswith("Test"):
            continue  # ops defined by tests themselves
        fn = definition.gradient_fn
        if fn is None:
            unmarked.append(name)
        elif fn is not NOT_DIFFERENTIABLE and name not in covered:
            unchecked.append(name)
    assert not unmarked, f"ops with neither a gradient nor a not-differentiable mark: {sorted(unmarked)}"
    assert not unchecked, f"differentiable ops missing from the gradient-check table: {sorted(unchecked)}"
