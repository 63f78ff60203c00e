"""GraphDef export (Graph.as_graph_def, write_graph), TensorProto encodings and
tf.import_graph_def, including a GraphDef written by real TensorFlow."""
import os

import numpy as np
import pytest
from google.protobuf import text_format

import tensorweave as tf
from tensorweave.framework import graph_def as gd

DATA = os.path.join(os.path.dirname(os.path.dirname(__file__)), "data")


# -- TensorProto ------------------------------------------------------------------------------------
@pytest.mark.parametrize("value", [
    np.arange(6, dtype=np.float32).reshape(2, 3), np.float32(2.5), np.array([7], np.int64),
    np.array([[1.5, -2.0]], np.float16), np.float16(3.0), np.array([1 + 2j, 3j], np.complex64),
    np.complex128(1 - 1j), np.array([True, False]), np.bool_(True), np.uint8(200),
    np.array([2 ** 63 - 1], np.uint64), np.zeros((0, 3), np.int32), np.array(-3, np.int16),
    np.array([b"a", b"", "é".encode()], dtype=object), np.array(b"scalar", dtype=object),
])
def test_tensor_proto_roundtrip(value):
    proto = tf.make_tensor_proto(value)
    back = tf.make_ndarray(proto)
    assert back.shape == np.shape(value)
    if back.dtype == object:
        assert back.tolist() == np.asarray(value).tolist()
    else:
        assert back.dtype == np.asarray(value).dtype
        np.testing.assert_array_equal(back, value)


def test_tensor_proto_encodings_follow_tf():
    multi = tf.make_tensor_proto(np.ones((2, 2), np.float32))
    assert multi.tensor_content == np.ones(4, np.float32).tobytes() and not multi.float_val
    single = tf.make_tensor_proto(np.float32(4.0))
    assert list(single.float_val) == [4.0] and not single.tensor_content
    # A short typed field repeats its last value (how TF stores tf.fill-like constants).
    proto = tf.make_tensor_proto(np.int32(0))
    proto.tensor_shape.dim.add(size=3)
    del proto.int_val[:]
    proto.int_val.extend([5, 6])
    np.testing.assert_array_equal(tf.make_ndarray(proto), [5, 6, 6])
    broadcast = tf.make_tensor_proto(1.0, shape=[2, 2])
    np.testing.assert_array_equal(tf.make_ndarray(broadcast), np.ones((2, 2), np.float32))
    with pytest.raises(TypeError):
        tf.make_tensor_proto([1.0, 2.0], shape=[3], verify_shape=True)


# -- attrs -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind,value", [
    ("type", tf.float64), ("int", -7), ("float", 0.25), ("bool", True), ("string", "SAME"),
    ("shape", tf.TensorShape([None, 3])), ("shape", tf.TensorShape(None)), ("list(int)", [1, 2, 3]),
    ("list(type)", [tf.int32, tf.string]), ("list(string)", ["loc:@a", "b"]),
    ("list(shape)", [tf.TensorShape([2]), tf.TensorShape(None)]), ("list(float)", []),
    ("list(bool)", [False, True]),
])
def test_attr_roundtrip(kind, value):
    def norm(v):
        return [norm(x) for x in v] if isinstance(v, list) else str(v) if isinstance(v, tf.TensorShape) else v

    proto = gd.attr_to_proto(value, kind)
    assert norm(gd.attr_from_proto(proto, kind)) == norm(value)
    assert norm(gd.attr_from_proto(proto)) == norm(value)  # read back by the field it sets


# -- export --------------------------------------------------------------------------------------------
def _model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    with tf.device("/device:CPU:0"):
        w = tf.Variable(np.ones((3, 2), np.float32), name="w")
    y = tf.matmul(x, w, name="y")
    with tf.control_dependencies([y.op]):
        z = tf.identity(y, name="z")
    parts = tf.split(z, 2, axis=1, name="split")
    out = tf.add(parts[1], 1.0, name="out")
    return x, w, out


def test_as_graph_def_nodes_inputs_attrs_and_devices():
    x, w, out = _model()
    graph = tf.get_default_graph()
    graph_def = graph.as_graph_def()
    assert isinstance(graph_def, tf.GraphDef)
    assert [n.name for n in graph_def.node] == [op.name for op in graph.get_operations()]
    nodes = {n.name: n for n in graph_def.node}
    assert list(nodes["y"].input) == ["x", "w/read"]
    assert list(nodes["z"].input) == ["y"]  # a control input on an op already an input is dropped
    assert nodes["out"].input[0] == "split:1" and nodes[nodes["out"].input[1]].op == "Const"
    assert nodes["w"].device == "/device:CPU:0"
    assert nodes["y"].attr["T"].type == tf.float32.as_datatype_enum
    assert nodes["y"].attr["transpose_a"].b is False
    assert nodes["x"].attr["shape"].shape.dim[1].size == 3 and nodes["x"].attr["shape"].shape.dim[0].size == -1
    assert nodes["split"].attr["num_split"].i == 2
    assert list(nodes["w/read"].attr["_class"].list.s) == [b"loc:@w"]
    assert graph_def.versions.producer == gd.GRAPH_DEF_VERSION
    assert x.op.node_def == nodes["x"]
    with tf.Session() as sess:
        assert sess.graph_def == graph_def


def test_as_graph_def_control_inputs_from_version_and_shapes():
    a = tf.constant(1.0, name="a")
    version = tf.get_default_graph().version
    with tf.control_dependencies([a]):
        b = tf.constant(2.0, name="b")
    graph_def = tf.get_default_graph().as_graph_def(from_version=version, add_shapes=True)
    assert [n.name for n in graph_def.node] == ["b"]
    assert list(graph_def.node[0].input) == ["^a"]
    shapes = graph_def.node[0].attr["_output_shapes"].list.shape
    assert len(shapes) == 1 and len(shapes[0].dim) == 0 and not shapes[0].unknown_rank
    del b


def test_write_graph_text_and_binary(tmp_path):
    _model()
    graph = tf.get_default_graph()
    text_path = tf.train.write_graph(graph, str(tmp_path / "logs"), "g.pbtxt")
    bin_path = tf.train.write_graph(graph.as_graph_def(), str(tmp_path / "logs"), "g.pb", as_text=False)
    assert text_path == str(tmp_path / "logs" / "g.pbtxt")
    from_text = text_format.Parse(open(text_path).read(), tf.GraphDef())
    from_bin = tf.GraphDef.FromString(open(bin_path, "rb").read())
    assert from_text == from_bin == graph.as_graph_def()
    assert sorted(os.listdir(tmp_path / "logs")) == ["g.pb", "g.pbtxt"]  # no temporary files left
    with pytest.raises(TypeError):
        tf.train.write_graph(42, str(tmp_path), "x")


# -- import ----------------------------------------------------------------------------------------------
def test_import_roundtrip_runs_the_same():
    x, w, out = _model()
    with tf.Session() as sess:
        sess.run(w.initializer)
        expected = sess.run(out, {x: np.arange(6, dtype=np.float32).reshape(2, 3)})
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(graph_def)
        assert g2.get_operation_by_name("import/w").device == "/device:CPU:0"
        assert g2.get_operation_by_name("import/w/read").get_attr("_class") == [b"loc:@import/w"]
        again = g2.get_tensor_by_name("import/out:0")
        with tf.Session() as sess:
            sess.run("import/w/Assign")
            got = sess.run(again, {"import/x:0": np.arange(6, dtype=np.float32).reshape(2, 3)})
        np.testing.assert_array_equal(got, expected)
        assert again.shape.as_list() == [None, 1]
        tf.import_graph_def(graph_def)  # a second import gets a fresh scope
        assert g2.get_operation_by_name("import_1/out").type == "AddV2" or \
            g2.get_operation_by_name("import_1/out").type == "Add"
        assert g2.as_graph_def().node[0].name == "import/x"


def test_import_input_map_return_elements_and_empty_name():
    _model()
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        feed = tf.constant(np.ones((4, 3), np.float32), name="feed")
        y, split_op, init = tf.import_graph_def(graph_def, input_map={"x:0": feed},
                                                return_elements=["y:0", "split", "w/Assign"], name="")
        assert y.name == "y:0" and split_op.name == "split"
        assert y.op.inputs[0] is feed
        with tf.Session() as sess:
            sess.run(init)
            np.testing.assert_array_equal(sess.run(y), np.full((4, 2), 3.0, np.float32))
        with pytest.raises(ValueError, match="Duplicate node name"):
            tf.import_graph_def(graph_def, name="")


def test_import_control_dependency_context_and_device_scope():
    a = tf.constant(1.0, name="a")
    tf.add(a, 1.0, name="b")
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default() as g:
        gate = tf.no_op(name="gate")
        with tf.control_dependencies([gate]), tf.device("/job:worker/task:1"):
            tf.import_graph_def(graph_def, name="imp")
        assert g.get_operation_by_name("imp/a").control_inputs == [gate]
        assert g.get_operation_by_name("imp/b").control_inputs == []
        assert g.get_operation_by_name("imp/b").device == "/job:worker/task:1"


def test_import_errors():
    graph_def = tf.GraphDef()
    node = graph_def.node.add(name="n", op="NoSuchOp")
    with pytest.raises(tf.errors.NotFoundError, match="Op type not registered 'NoSuchOp'"):
        tf.import_graph_def(graph_def)
    node.op = "Identity"
    node.input.append("missing")
    with pytest.raises(ValueError, match="Unknown input node 'missing'"):
        tf.import_graph_def(graph_def)
    good = tf.Graph()
    with good.as_default():
        tf.constant(1.0, name="c")
        tf.identity(tf.constant(1, name="i"), name="id")
    base = good.as_graph_def()
    extra = tf.GraphDef()
    extra.CopyFrom(base)
    extra.node[0].attr["bogus"].i = 1
    with pytest.raises(ValueError, match="attr 'bogus' not in Op<name=Const>"):
        tf.import_graph_def(extra)
    before = len(tf.get_default_graph().get_operations())
    with pytest.raises(ValueError, match="not found in graph_def"):
        tf.import_graph_def(base, input_map={"nope:0": tf.constant(1.0)})
    assert len(tf.get_default_graph().get_operations()) == before + 1  # only the mapped constant
    with pytest.raises(ValueError, match="incompatible with expected int32"):
        tf.import_graph_def(base, input_map={"i:0": tf.constant(1.0)})
    with pytest.raises(ValueError, match="Requested return tensor 'c:3'"):
        tf.import_graph_def(base, return_elements=["c:3"])
    with pytest.raises(TypeError, match="GraphDef"):
        tf.import_graph_def("not a graph")
    with pytest.raises(TypeError, match="input_map"):
        tf.import_graph_def(base, input_map={1: tf.constant(1.0)})
    newer = tf.GraphDef()
    newer.CopyFrom(base)
    newer.versions.min_consumer = 10 ** 6
    with pytest.raises(ValueError, match="min consumer"):
        tf.import_graph_def(newer)


def test_import_cycle_outside_loops_is_rejected():
    graph_def = tf.GraphDef()
    for name, source in (("a", "b"), ("b", "a")):
        node = graph_def.node.add(name=name, op="Identity", input=[source])
        node.attr["T"].type = tf.float32.as_datatype_enum
    with pytest.raises(ValueError, match="cycle"):
        tf.import_graph_def(graph_def)


def test_import_graph_written_by_tensorflow():
    """A GraphDef from real TF 2.21 (TF1 graph mode) with a cond and a while loop gives TF's
    outputs (tests/data/README.md)."""
    graph_def = tf.GraphDef.FromString(open(os.path.join(DATA, "tf_written_graph.pb"), "rb").read())
    expected = np.load(os.path.join(DATA, "tf_written_graph_expected.npz"))
    with tf.Graph().as_default():
        tf.import_graph_def(graph_def, name="")
        fetches = {"y": "y:0", "c": "c/Merge:0", "loop": "loop/Exit_1:0", "cat_shape": "cat_shape:0",
                   "words": "words_out:0"}
        with tf.Session() as sess:
            for k in (1, 4):
                got = sess.run(fetches, {"x:0": expected["feed_x"], "k:0": k})
                for name, value in got.items():
                    want = expected[f"{name}_k{k}"]
                    if want.dtype.kind == "S":
                        assert [bytes(v) for v in value] == list(want)
                    else:
                        np.testing.assert_allclose(value, want, rtol=1e-6)


def test_while_loop_and_cond_roundtrip():
    k = tf.placeholder(tf.int32, [], name="k")
    _, acc = tf.while_loop(lambda i, a: i < k, lambda i, a: (i + 1, a * 2.0), [tf.constant(0), tf.constant(1.0)])
    c = tf.cond(k > 3, lambda: acc + 1.0, lambda: acc - 1.0)
    graph_def = tf.get_default_graph().as_graph_def()
    with tf.Graph().as_default():
        out, = tf.import_graph_def(graph_def, return_elements=[c.name])
        with tf.Session() as sess:
            assert sess.run(out, {"import/k:0": 5}) == 33.0
            assert sess.run(out, {"import/k:0": 2}) == 3.0


def test_producer_op_list_drops_unknown_default_attrs_and_hints():
    """Attrs a newer producer added: dropped when they hold the producer's default (TF's rule)
    or are known optimisation hints (TF 2.x's MatMul grad_a/grad_b); rejected otherwise."""
    from tensorboard.compat.proto import op_def_pb2
    with tf.Graph().as_default() as g:
        tf.matmul(tf.ones([2, 2], name="a"), tf.ones([2, 2], name="b"), name="mm")
    graph_def = g.as_graph_def()
    mm = next(n for n in graph_def.node if n.name == "mm")
    mm.attr["grad_a"].b = True
    mm.attr["future_flag"].i = 0
    producer = op_def_pb2.OpList()
    future = producer.op.add(name="MatMul").attr.add(name="future_flag", type="int")
    future.default_value.i = 0
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(graph_def, producer_op_list=producer, name="")
        assert "future_flag" not in g2.get_operation_by_name("mm").node_attrs
        with tf.Session() as sess:
            np.testing.assert_array_equal(sess.run("mm:0"), np.full((2, 2), 2.0, np.float32))
    mm.attr["future_flag"].i = 1
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="attr 'future_flag' not in Op<name=MatMul>"):
            tf.import_graph_def(graph_def, producer_op_list=producer, name="")
