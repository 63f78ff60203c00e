"""Huge and malformed graph inputs give TensorFlow 2.21's error classes (issue 10): every case of
tests/data/tf_malformed_expected.json (written by make_tf_malformed_fixtures.py under real
TensorFlow) runs here under tensorweave and must fail at the same stage with the same class, or
compute the same value."""
import json
import os

import numpy as np
import pytest
from google.protobuf import text_format

import tensorweave as tf

_FIXTURE = os.path.join(os.path.dirname(__file__), os.pardir, "data", "tf_malformed_expected.json")
with open(_FIXTURE) as _f:
    CASES = json.load(_f)["cases"]

# TF 2.21 fails the direct fetch of a 4 TiB Const with a RuntimeError from its own C++ string
# handling, after the Const kernel has failed; the kernel's own class (recorded when the Const
# feeds a reduction, case constant_huge_reduce_sum) is the one to match.
_EXPECTED_OVERRIDE = {"constant_huge": "constant_huge_reduce_sum"}


def _outcome(stage, err):
    return {"stage": stage, "error": type(err).__name__, "message": str(err)}


def _run(graph, fetch, init):
    with tf.Session(graph=graph) as sess:
        try:
            if init is not None:
                sess.run(init)
            value = sess.run(fetch)
        except Exception as err:  # noqa: BLE001 (the class is what is checked)
            return _outcome("run", err)
    return {"stage": "ok", "value": np.asarray(value)}


def _tensorweave_outcome(case):
    with tf.Graph().as_default() as g:
        if "graph_def" in case:
            graph_def = text_format.Parse(case["graph_def"], tf.GraphDef())
            try:
                tf.import_graph_def(graph_def, name="")
            except Exception as err:  # noqa: BLE001
                return _outcome("import", err)
            if case["fetch"] is None:
                return {"stage": "ok" if case["stage"] == "ok" else "import"}
            return _run(g, g.get_tensor_by_name(case["fetch"] + ":0"), None)
        scope = {"tf": tf}
        try:
            exec(case["program"], scope)
        except Exception as err:  # noqa: BLE001
            return _outcome("build", err)
        return _run(g, scope["fetch"], scope.get("init"))


@pytest.mark.parametrize("name", sorted(CASES))
def test_matches_tensorflow(name):
    case = CASES[name]
    expected = CASES[_EXPECTED_OVERRIDE.get(name, name)]
    got = _tensorweave_outcome(case)
    if expected["stage"] == "ok":
        assert got["stage"] == "ok", f"{name}: TF computed a value, tensorweave raised {got}"
        if "value" in expected:
            np.testing.assert_array_equal(got["value"], np.array(expected["value"]))
        return
    assert (got["stage"], got.get("error")) == (expected["stage"], expected["error"]), (
        f"{name}: TF raised {expected['error']} at {expected['stage']} ({expected['message']}); "
        f"tensorweave: {got}")


def test_import_rejects_a_hostile_list_length_before_building_anything():
    # found by tests/reliability's field-level fuzzing: N = 2**40 once built a 2**40-item list
    g = tf.Graph()
    with g.as_default():
        a = tf.constant(1.0, name="a")
        tf.add_n([a, a], name="sum")
    graph_def = g.as_graph_def()
    for node in graph_def.node:
        if node.name == "sum":
            node.attr["N"].i = 1 << 40
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="inputs but 2 were given; node 'sum'"):
            tf.import_graph_def(graph_def, name="")


def test_import_keeps_a_string_attr_that_is_not_utf8():
    # TF's string attrs are bytes; found by the fuzz suite (was UnicodeDecodeError)
    g = tf.Graph()
    with g.as_default():
        tf.string_join([tf.constant("a"), tf.constant("b")], separator="-", name="j")
    graph_def = g.as_graph_def()
    for node in graph_def.node:
        if node.name == "j":
            node.attr["separator"].s = b"\xff"
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(graph_def, name="")
        joined = g2.get_operation_by_name("j")
        assert joined.get_attr("separator") == b"\xff"
        assert g2.as_graph_def().node[-1].attr["separator"].s == b"\xff"
