"""Feeds and fetches checked as TensorFlow 2.21 checks them (issue 10): every case of
tests/data/feed_cases.py against what TF did with it (tests/data/tf_feed_expected.json, written by
make_tf_feed_fixtures.py): the same value bit for bit, or the same error class with TF's message
in ours."""
import json
import os
import warnings

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import errors
from tests.data import feed_cases

with open(os.path.join(os.path.dirname(feed_cases.__file__), "tf_feed_expected.json")) as _f:
    EXPECTED = json.load(_f)

_TF_PREFIX = "Graph execution error:\n\n"  # TF's run-time errors start so; ours name the tensor instead


def _error_classes():
    classes = {name: getattr(errors, name) for name in dir(errors)
               if isinstance(getattr(errors, name), type) and issubclass(getattr(errors, name), Exception)}
    classes.update(TypeError=TypeError, ValueError=ValueError, OverflowError=OverflowError)
    return classes


ERROR_CLASSES = _error_classes()


def assert_same_outcome(got, want):
    if "error" in want:
        assert "error" in got, f"TF raised {want['error']}: {want['message']!r}; we returned {got}"
        assert got["error"] == want["error"], (got, want)
        assert want["message"].removeprefix(_TF_PREFIX) in got["message"], (got["message"], want["message"])
        return
    assert got == want


def _feed_ids():
    return [case[0] for case in feed_cases.FEEDS]


@pytest.mark.parametrize("name, dtype, shape, value", feed_cases.FEEDS, ids=_feed_ids())
def test_feed_converts_as_tensorflow(name, dtype, shape, value):
    with tf.Graph().as_default():
        p = tf.placeholder(tf.as_dtype(dtype), shape, name="p")
        q = tf.identity(p, name="q")
        with tf.Session() as sess, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy's cast warnings, which TF gives too
            got = feed_cases.outcome(lambda: sess.run(q, {p: value}))
    assert_same_outcome(got, EXPECTED["feeds"][name])


def test_every_fixture_case_is_run():
    assert set(EXPECTED["feeds"]) == set(_feed_ids())
    assert set(EXPECTED["scenarios"]) == set(feed_cases.SCENARIOS) | {"flags"}


@pytest.fixture(scope="module")
def scenario_graph():
    g = tf.Graph()
    with g.as_default():
        t = feed_cases.build_graph(tf)
    sess = tf.Session(graph=g)  # not entered: tests run with their own default graph
    yield g, t, sess
    sess.close()


@pytest.mark.parametrize("name", sorted(feed_cases.SCENARIOS))
def test_feed_and_fetch_scenarios(scenario_graph, name):
    g, t, sess = scenario_graph
    fetches, feeds = feed_cases.SCENARIOS[name]
    got = feed_cases.outcome(lambda: sess.run(fetches(g, t), dict(feeds(g, t))))
    assert_same_outcome(got, EXPECTED["scenarios"][name])


def test_feedable_and_fetchable_flags(scenario_graph):
    g, t, _ = scenario_graph
    assert feed_cases.feedable_flags(g, t) == EXPECTED["scenarios"]["flags"]


def test_inaccessible_tensor_error_is_a_value_error():
    assert issubclass(errors.InaccessibleTensorError, ValueError)
    assert ERROR_CLASSES["InaccessibleTensorError"] is errors.InaccessibleTensorError


def test_prevent_feeding_after_a_compiled_run():
    """A signature that ran before prevent_feeding is compiled again, not served from the cache."""
    with tf.Graph().as_default() as g:
        x = tf.placeholder(tf.float32, [], name="x")
        y = x * 2.0
        with tf.Session() as sess:
            assert sess.run(y, {x: 1.0}) == 2.0
            g.prevent_feeding(x)
            with pytest.raises(ValueError, match="Tensor x:0 may not be fed"):
                sess.run(y, {x: 1.0})
            g.prevent_fetching(y.op)
            with pytest.raises(errors.InaccessibleTensorError, match="has been marked as not fetchable"):
                sess.run(y)


def test_loop_body_feed_refused_in_make_callable():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.int32, [], name="x")
        inside = []

        def body(i):
            inside.append(i * 2)
            return inside[0] + 1

        r = tf.while_loop(lambda i: i < 10, body, [x])
        with tf.Session() as sess:
            run = sess.make_callable(r, [x, inside[0]])
            with pytest.raises(ValueError, match="may not be fed"):
                run(1, 3)
            assert sess.make_callable(r, [x])(1) == 15


def test_feed_keeps_callers_string_array():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.string, [2])
        value = np.array(["a", "b"], dtype=object)
        with tf.Session() as sess:
            assert list(sess.run(tf.identity(p), {p: value})) == [b"a", b"b"]
        assert list(value) == ["a", "b"]


def test_fast_path_feed_is_not_copied():
    with tf.Graph().as_default():
        p = tf.placeholder(tf.float32, [None])
        value = np.arange(3, dtype=np.float32)
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run(p * 1.0, {p: value}), value)


def test_feeding_a_variable_and_running_an_op_that_takes_its_reference():
    # TF: InvalidArgumentError "Input 0 of node ... incompatible with expected float_ref"; reading
    # the fed value is fine.
    with tf.Graph().as_default():
        v = tf.Variable(tf.zeros([2]), name="fed_v")
        with tf.Session() as sess:
            with pytest.raises(tf.errors.InvalidArgumentError, match="fed_v/Assign.*expected float32_ref"):
                sess.run(v.initializer, {v: np.ones(2)})
            sess.run(v.initializer)
            np.testing.assert_allclose(sess.run(v * 2.0, {v: np.ones(2)}), [2.0, 2.0])
