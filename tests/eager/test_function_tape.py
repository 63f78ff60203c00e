"""GradientTape with tf.function (issue 18's bugs): stop_recording inside a traced body, and
gradients of functions that assign variables, against TensorFlow 2.21's numbers
(tests/data/function_tape_fixtures.json, written by make_tf_function_tape_fixtures.py)."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.eager import context
from tests.data import function_tape_cases

with open(os.path.join(os.path.dirname(function_tape_cases.__file__), "function_tape_fixtures.json")) as f:
    FIXTURES = json.load(f)["scenarios"]


@pytest.mark.parametrize("scenario", function_tape_cases.SCENARIOS, ids=lambda s: s.__name__)
def test_scenario_matches_tensorflow(scenario):
    with context.eager_mode():
        got = scenario(tf)
    want = FIXTURES[scenario.__name__]
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        if value is None or isinstance(value, bool):
            assert got[key] == value, key
        else:
            np.testing.assert_allclose(got[key], value, rtol=1e-6, err_msg=key)


def test_plain_call_of_an_assigning_function_still_assigns_once_per_call():
    with context.eager_mode():
        v = tf.Variable(0.0)

        @tf.function
        def bump(x):
            v.assign_add(x)
            return v.read_value() * x

        x = tf.constant(2.0)
        bump(x)  # no tape: the plain function
        with tf.GradientTape() as tape:
            tape.watch(x)
            y = bump(x)  # under a tape: the forward function with intermediates
        assert float(tape.gradient(y, x)) == 4.0  # d(v*x)/dx with v read after the assignment
        assert float(v.numpy()) == 4.0  # two calls, the backward pass assigned nothing


def test_stop_recording_in_graph_mode_tape():
    x = tf.placeholder(tf.float32, [])
    with tf.GradientTape() as tape:
        tape.watch(x)
        with tape.stop_recording():
            held = x * x
        out = held + 3.0 * x
    grad = tape.gradient(out, x)
    with tf.Session() as sess:
        assert sess.run(grad, {x: 5.0}) == 3.0
