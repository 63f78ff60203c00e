"""Control-flow contexts travel in meta graphs (collections "while_context" and
"cond_context", as TF writes them): a model with tf.while_loop, tf.cond or dynamic_rnn rebuilt
by tf.train.import_meta_graph is differentiated again, with the gradients of the original
graph; and a meta graph exported by TensorFlow differentiates here with TensorFlow's values
(tests/data/tf_control_flow.meta, written by make_tf_control_flow_meta_graph.py)."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.ops.control_flow.control_flow_def import WhileContextDef

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "data")
F64 = tf.float64


def _variable(name, value):
    return tf.get_variable(name, initializer=np.array(value, np.float64), dtype=F64)


def _loop():
    w = _variable("w", [0.5, -0.3, 0.8])
    x = tf.constant([0.2, 0.4, -0.1], F64, name="x")  # a loop invariant
    _, a = tf.while_loop(lambda i, a: i < 4, lambda i, a: (i + 1, tf.tanh(a * w) + x), [0, tf.ones([3], F64)])
    return tf.reduce_sum(a, name="loss")


def _nested():
    w = _variable("w", [0.9, 0.7])

    def outer(j, b):
        b = tf.while_loop(lambda k, b: k < 2, lambda k, b: (k + 1, tf.sin(b) * w + 0.1), [0, b])[1]
        return j + 1, b * w

    _, b = tf.while_loop(lambda j, b: j < 3, outer, [0, tf.constant([0.3, -0.2], F64)])
    return tf.reduce_sum(b * b, name="loss")


def _cond():
    w = _variable("w", [1.5, -0.5])
    pred = tf.placeholder_with_default(True, [], name="pred")
    c = tf.cond(pred, lambda: tf.reduce_sum(w * w), lambda: tf.reduce_sum(tf.sin(w)))
    return tf.identity(c, name="loss")


def _rnn():
    rng = np.random.RandomState(5)
    inputs = tf.constant(rng.uniform(-1, 1, [2, 4, 3]), F64)
    cell = tf.nn.rnn_cell.LSTMCell(5, initializer=tf.constant_initializer(rng.uniform(-0.5, 0.5, [8, 20])))
    outputs, state = tf.nn.dynamic_rnn(cell, inputs, dtype=F64, scope="rnn")
    return tf.add(tf.reduce_sum(outputs), tf.reduce_sum(state.h), name="loss")


def _gradients(loss, pred_name):
    """The gradients of `loss` for each variable, with the default feed and, for a model with a
    predicate, with it False."""
    names = {op.name for op in loss.graph.get_operations()}
    feeds = [{}] + ([{pred_name + ":0": False}] if pred_name in names else [])
    variables = tf.trainable_variables()
    grads = tf.gradients(loss, variables)
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        return {v.op.name: [sess.run(g, feed) for feed in feeds] for v, g in zip(variables, grads)}


@pytest.mark.parametrize("build", [_loop, _nested, _cond, _rnn], ids=["loop", "nested", "cond", "rnn"])
@pytest.mark.parametrize("import_scope", [None, "imported"])
def test_imported_graph_differentiates_like_the_original(build, import_scope):
    with tf.Graph().as_default():
        loss = build()
        meta_graph_def = tf.train.export_meta_graph()
        expected = _gradients(loss, "pred")
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta_graph_def, import_scope=import_scope)
        prefix = f"{import_scope}/" if import_scope else ""
        got = _gradients(g.get_tensor_by_name(prefix + "loss:0"), prefix + "pred")
    assert sorted(got) == sorted(prefix + name for name in expected)
    for name, values in expected.items():
        np.testing.assert_allclose(got[prefix + name], values, rtol=1e-12, atol=1e-14)


def test_outermost_contexts_are_collected_and_nested_ones_travel_inside():
    with tf.Graph().as_default() as g:
        _nested()
        with tf.variable_scope("branch"):
            _cond()
        assert len(g.get_collection(tf.GraphKeys.WHILE_CONTEXT)) == 1
        assert [c.branch for c in g.get_collection(tf.GraphKeys.COND_CONTEXT)] == [1, 0]
        meta_graph_def = tf.train.export_meta_graph()
    proto = WhileContextDef.FromString(meta_graph_def.collection_def["while_context"].bytes_list.value[0])
    assert proto.context_name == "while/" and proto.pivot_name == "while/LoopCond:0"
    assert [n.WhichOneof("ctxt") for n in proto.nested_contexts] == ["while_ctxt"]
    inner = proto.nested_contexts[0].while_ctxt
    assert inner.context_name == "while/while/" and "while/while/Exit_1:0" in inner.loop_exit_names
    assert "while/while/Exit_1:0" in proto.values_def.values  # the outer loop sees inner values
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta_graph_def)
        outer = g.get_collection(tf.GraphKeys.WHILE_CONTEXT)[0]
        assert g.get_operation_by_name("while/while/mul")._control_flow_context is outer.nested_contexts[0]
        assert g.get_operation_by_name("while/mul")._control_flow_context is outer
        assert outer.nested_contexts[0].outer_context is outer


def test_minimize_on_imported_loop_matches_the_original():
    def train(loss):
        step = tf.train.GradientDescentOptimizer(0.1).minimize(loss)
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for _ in range(3):
                sess.run(step)
            return sess.run(tf.trainable_variables()[0])

    with tf.Graph().as_default():
        loss = _loop()
        meta_graph_def = tf.train.export_meta_graph()
        expected = train(loss)
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(meta_graph_def, import_scope="m")
        np.testing.assert_allclose(train(g.get_tensor_by_name("m/loss:0")), expected, rtol=1e-12)


def test_export_scope_strips_context_names():
    with tf.Graph().as_default():
        with tf.name_scope("model"):
            loss = _loop()
        meta_graph_def = tf.train.export_meta_graph(export_scope="model")
    proto = WhileContextDef.FromString(meta_graph_def.collection_def["while_context"].bytes_list.value[0])
    assert proto.context_name == "while/" and all(not n.startswith("model/") for n in proto.values_def.values)
    assert loss.name == "model/loss:0"


@pytest.mark.parametrize("import_scope", [None, "tf_model"])
def test_meta_graph_exported_by_tensorflow_differentiates_with_its_gradients(import_scope):
    expected = np.load(os.path.join(DATA, "tf_control_flow_expected.npz"))
    prefix = f"{import_scope}/" if import_scope else ""
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(os.path.join(DATA, "tf_control_flow.meta"), import_scope=import_scope)
        losses = {"loop": "loop/loss_loop:0", "nested": "nested/loss_nested:0", "cond": "cond/loss_cond:0",
                  "rnn": "loss_rnn:0"}
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            for key, loss_name in losses.items():
                loss = g.get_tensor_by_name(prefix + loss_name)
                variables = [v for v in tf.trainable_variables() if v.op.name.startswith(f"{prefix}{key}/")]
                grads = tf.gradients(loss, variables)
                for pred in (True, False):
                    feed = {f"{prefix}nested/pred:0": pred, f"{prefix}cond/pred:0": pred}
                    loss_value, grad_values = sess.run([loss, grads], feed)
                    np.testing.assert_allclose(loss_value, expected[f"{key}/{pred}/loss"], rtol=1e-12)
                    for v, grad in zip(variables, grad_values):
                        np.testing.assert_allclose(grad, expected[f"{key}/{pred}/{v.op.name[len(prefix):]}"],
                                                   rtol=1e-10, atol=1e-12)


def test_a_loop_imported_twice_under_two_scopes_runs_in_two_frames():
    """The importer prefixes an Enter's frame_name with the import scope, as TF's does, so two
    copies of one loop in one step keep their iterations apart."""
    with tf.Graph().as_default() as source:
        i = tf.placeholder(tf.int32, [], name="start")
        tf.identity(tf.while_loop(lambda k: k < 10, lambda k: k + 1, [i]), name="out")
    graph_def = source.as_graph_def()
    with tf.Graph().as_default() as g:
        tf.import_graph_def(graph_def, name="a")
        tf.import_graph_def(graph_def, name="b")
        frames = {op.get_attr("frame_name") for op in g.get_operations() if op.type == "Enter"}
        assert len(frames) == 2 and all(f.startswith((b"a/", b"b/")) for f in frames)
        with tf.Session() as sess:
            out = sess.run(["a/out:0", "b/out:0"], {"a/start:0": 0, "b/start:0": 5})
        assert out == [10, 10]
