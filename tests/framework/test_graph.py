import pytest

import tensorweave as tf


def test_unique_names_and_scopes():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    c = tf.add(a, b)
    d = tf.add(a, b)
    assert (a.op.name, b.op.name) == ("Const", "Const_1")
    assert (c.op.name, d.op.name) == ("Add", "Add_1")
    assert c.name == "Add:0"
    with tf.name_scope("outer"):
        e = tf.constant(3.0, name="e")
        with tf.name_scope("inner") as scope:
            f = tf.identity(e)
            assert scope == "outer/inner/"
    with tf.name_scope("outer"):
        g = tf.constant(1.0, name="e")
    assert e.op.name == "outer/e" and f.op.name == "outer/inner/Identity"
    assert g.op.name == "outer_1/e"
    with tf.name_scope("abs/"):
        h = tf.constant(1.0, name="x")
    assert h.op.name == "abs/x"
    x1 = tf.constant(1.0, name="x")
    x2 = tf.constant(1.0, name="x")
    x3 = tf.constant(1.0, name="x_1")
    assert (x1.op.name, x2.op.name, x3.op.name) == ("x", "x_1", "x_1_1")


def test_graph_lookup_and_errors():
    g = tf.get_default_graph()
    c = tf.constant([1, 2], name="c")
    assert g.get_tensor_by_name("c:0") is c
    assert g.get_operation_by_name("c") is c.op
    assert g.as_graph_element("c:0") is c
    with pytest.raises(KeyError):
        g.get_tensor_by_name("missing:0")
    with pytest.raises(KeyError):
        g.get_tensor_by_name("c:3")
    with pytest.raises(ValueError):
        g.get_tensor_by_name("c")
    with pytest.raises(TypeError):
        g.get_operation_by_name(3)
    assert c.op.outputs == [c] and c.op.type == "Const"
    assert c.op.get_attr("dtype") == tf.int32
    with pytest.raises(ValueError):
        c.op.get_attr("nope")


def test_graph_as_default_and_separate_graphs():
    g1 = tf.Graph()
    with g1.as_default():
        a = tf.constant(1.0)
        assert tf.get_default_graph() is g1
    assert a.graph is g1 and tf.get_default_graph() is not g1
    b = tf.constant(2.0)
    with pytest.raises(ValueError):
        tf.add(a, b)


def test_control_dependencies_and_consumers():
    a = tf.constant(1.0)
    b = tf.constant(2.0)
    with tf.control_dependencies([a]):
        c = tf.identity(b)
        with tf.control_dependencies(None):
            d = tf.identity(b)
        e = tf.identity(a)  # data input already: no duplicated control edge
    assert c.op.control_inputs == [a.op]
    assert d.op.control_inputs == []
    assert e.op.control_inputs == []
    assert set(b.consumers()) == {c.op, d.op}


def test_collections():
    tf.add_to_collection("stuff", 1)
    tf.add_to_collections(["stuff", "other"], 2)
    assert tf.get_collection("stuff") == [1, 2]
    assert tf.get_collection("other") == [2]
    tf.get_collection_ref("stuff").append(3)
    assert tf.get_collection("stuff") == [1, 2, 3]
    v1 = tf.Variable(1.0, name="scope_a/v")
    v2 = tf.Variable(1.0, name="scope_b/v")
    assert tf.get_collection(tf.GraphKeys.GLOBAL_VARIABLES, scope="scope_a") == [v1]
    assert tf.trainable_variables() == [v1, v2]
    assert "stuff" in tf.get_default_graph().get_all_collection_keys()


def test_finalize_blocks_new_ops():
    g = tf.Graph()
    with g.as_default():
        tf.constant(1.0)
        g.finalize()
        assert g.finalized
        with pytest.raises(RuntimeError):
            tf.constant(2.0)


def test_device_scopes_merge():
    with tf.device("/job:worker/task:1"):
        with tf.device("/device:CPU:0"):
            a = tf.constant(1.0)
        b = tf.constant(1.0)
        with tf.device(None):
            c = tf.constant(1.0)
    with tf.device(lambda op: "/device:CPU:0" if op.type == "Const" else ""):
        d = tf.constant(1.0)
    assert a.device == "/job:worker/task:1/device:CPU:0"
    assert b.device == "/job:worker/task:1"
    assert c.device == ""
    assert d.device == "/device:CPU:0"


def test_set_shape_and_tensor_protocol():
    p = tf.placeholder(tf.float32, [None, 3])
    p.set_shape([4, None])
    assert p.shape.as_list() == [4, 3]
    with pytest.raises(ValueError):
        p.set_shape([5, 3])
    with pytest.raises(TypeError):
        bool(p)
    assert {p: 1}[p] == 1
    assert "Placeholder" in repr(p)


def test_creation_site_names_user_line():
    c = tf.constant(1.0)
    site = c.op.traceback
    assert site is not None and site[0].endswith("test_graph.py")


def test_graph_version_increases():
    g = tf.get_default_graph()
    v0 = g.version
    tf.constant(1.0)
    assert g.version == v0 + 1


def test_no_op_group_and_tuple_order_work():
    v = tf.Variable(0)
    add_one = tf.assign_add(v, 1)
    add_ten = tf.assign_add(v, 10)
    both = tf.group(add_one, [add_ten], name="both")
    assert both.type == "NoOp" and both.name == "both" and both.outputs == []
    assert set(both.control_inputs) == {add_one.op, add_ten.op}
    assert tf.group().type == "NoOp" and tf.no_op(name="nothing").name == "nothing"
    a, none, b = tf.tuple([tf.constant(5), None, tf.constant(6)], control_inputs=[add_one])
    assert none is None and a.op.type == "Identity" and a.op.name.startswith("tuple/")
    gate = a.op.control_inputs[0]
    assert gate.type == "NoOp" and add_one.op in gate.control_inputs
    with tf.Session() as sess:
        sess.run(v.initializer)
        assert sess.run(both) is None
        assert sess.run(v) == 11
        assert sess.run([a, b]) == [5, 6] and sess.run(v) == 12   # the tuple waited for add_one
        sess.run(tf.no_op())
        assert sess.run(v) == 12


def test_control_dependencies_skip_ops_already_dominated_by_the_block():
    # Expected edges as TensorFlow 2.21 (compat.v1) builds them for the same program.
    a = tf.constant(1.0, name="a")
    b = tf.constant(2.0, name="b")
    with tf.control_dependencies([a]):
        c = tf.identity(b, name="c")
        d = tf.add(c, b, name="d")
        e = tf.add(b, b, name="e")
        with tf.control_dependencies([b]):
            f = tf.identity(c, name="f")
            g = tf.identity(a, name="g")
    controls = {t.op.name: sorted(o.name for o in t.op.control_inputs) for t in (c, d, e, f, g)}
    assert controls == {"c": ["a"], "d": [], "e": ["a"], "f": ["b"], "g": ["b"]}
