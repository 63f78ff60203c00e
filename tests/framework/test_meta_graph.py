"""MetaGraphDef export/import: collections, variables, the saver, scopes; and a model rebuilt
from its files alone in a fresh process trains on exactly as the original would."""
import json
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework import meta_graph

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _build_model():
    x = tf.placeholder(tf.float32, [None, 3], name="x")
    labels = tf.placeholder(tf.float32, [None, 1], name="labels")
    with tf.variable_scope("dense"):
        w = tf.get_variable("kernel", initializer=np.array([[0.1], [-0.2], [0.3]], np.float32))
        b = tf.get_variable("bias", initializer=np.zeros([1], np.float32))
    pred = tf.add(tf.matmul(x, w), b, name="pred")
    loss = tf.reduce_mean(tf.square(pred - labels), name="loss")
    step = tf.train.get_or_create_global_step()
    train_op = tf.train.MomentumOptimizer(0.1, 0.9).minimize(loss, global_step=step)
    tf.add_to_collection("my_tensors", pred)
    tf.add_to_collection("my_strings", "hello")
    tf.add_to_collection("my_ints", 42)
    tf.add_to_collection("my_floats", 0.5)
    tf.add_to_collection("python_objects", object())  # not serializable: skipped with a warning
    return x, labels, loss, train_op


FEED_X = np.array([[1.0, 2.0, 3.0], [0.5, -1.0, 2.0]], np.float32)
FEED_Y = np.array([[1.0], [-1.0]], np.float32)


def test_meta_graph_contents_and_collections():
    _build_model()
    saver = tf.train.Saver()
    mgd = saver.export_meta_graph()
    assert isinstance(mgd, tf.MetaGraphDef)
    assert mgd.saver_def.restore_op_name == "save/restore_all"
    assert mgd.meta_info_def.tensorflow_version == meta_graph.TF_API_VERSION
    op_names = {op.name for op in mgd.meta_info_def.stripped_op_list.op}
    assert {"MatMul", "VariableV2", "ApplyMomentum", "SaveV2", "RestoreV2"} <= op_names
    matmul = next(op for op in mgd.meta_info_def.stripped_op_list.op if op.name == "MatMul")
    assert [a.name for a in matmul.input_arg] == ["a", "b"]
    cols = mgd.collection_def
    assert list(cols["my_tensors"].node_list.value) == ["pred:0"]
    assert list(cols["my_strings"].bytes_list.value) == [b"hello"]
    assert list(cols["my_ints"].int64_list.value) == [42]
    assert list(cols["my_floats"].float_list.value) == [0.5]
    assert "python_objects" not in cols
    assert len(cols["trainable_variables"].bytes_list.value) == 2
    assert len(cols["variables"].bytes_list.value) == 5  # kernel, bias, global_step, 2 momenta
    assert cols["train_op"].node_list.value[0].startswith("Momentum")
    assert any(n.attr["_output_shapes"].list.shape for n in mgd.graph_def.node)


def test_import_into_fresh_graph_restores_collections(tmp_path):
    x, labels, loss, train_op = _build_model()
    path = str(tmp_path / "model.meta")
    tf.train.export_meta_graph(path, clear_devices=True)
    with tf.Graph().as_default() as g:
        saver = tf.train.import_meta_graph(path)
        assert saver is None or isinstance(saver, tf.train.Saver)
        assert sorted(v.name for v in tf.trainable_variables()) == ["dense/bias:0", "dense/kernel:0"]
        assert [v.name for v in tf.global_variables()][:2] == ["dense/kernel:0", "dense/bias:0"]
        assert tf.get_collection("train_op")[0].type == "AssignAdd"  # minimize with a global step
        assert g.get_collection("my_tensors")[0] is g.get_tensor_by_name("pred:0")
        assert g.get_collection("my_strings") == [b"hello"] and g.get_collection("my_ints") == [42]
        kernel = tf.trainable_variables()[0]
        assert kernel.initializer.name == "dense/kernel/Assign" and kernel.trainable
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            before = sess.run("loss:0", {"x:0": FEED_X, "labels:0": FEED_Y})
            sess.run(tf.get_collection("train_op"), {"x:0": FEED_X, "labels:0": FEED_Y})
            after = sess.run("loss:0", {"x:0": FEED_X, "labels:0": FEED_Y})
        assert after < before


def test_import_scope_and_export_scope():
    with tf.variable_scope("tower"):
        v = tf.Variable(3.0, name="v")
        out = tf.multiply(v, 2.0, name="out")
    outside = tf.constant(1.0, name="outside")
    tf.add(out, outside, name="total")
    mgd, var_list = meta_graph.export_scoped_meta_graph(export_scope="tower")
    assert sorted(var_list) == ["v:0"]
    names = {n.name for n in mgd.graph_def.node}
    assert {"v", "v/read", "out"} <= names and not any(n.startswith("tower/") for n in names)
    assert "total" not in names and "outside" not in names
    with tf.Graph().as_default() as g:
        imported = meta_graph.import_scoped_meta_graph(mgd, import_scope="copy")
        assert sorted(imported) == ["v:0"]
        assert g.get_operation_by_name("copy/out").inputs[0].op.name == "copy/v/read"
        with tf.Session() as sess:
            sess.run(tf.global_variables_initializer())
            assert sess.run("copy/out:0") == 6.0


def test_unbound_inputs_must_be_mapped():
    feed = tf.placeholder(tf.float32, [], name="feed")
    with tf.name_scope("part"):
        tf.add(feed, 1.0, name="plus")
    mgd, _ = meta_graph.export_scoped_meta_graph(export_scope="part")
    assert list(mgd.collection_def["unbound_inputs"].bytes_list.value) == [b"feed"]
    with tf.Graph().as_default():
        with pytest.raises(ValueError, match="unbound inputs"):
            meta_graph.import_scoped_meta_graph(mgd)
        source = tf.constant(41.0)
        meta_graph.import_scoped_meta_graph(mgd, input_map={"feed:0": source}, import_scope="p")
        with tf.Session() as sess:
            assert sess.run("p/plus:0") == 42.0


def test_strip_default_attrs_and_clear_devices():
    with tf.device("/device:CPU:0"):
        tf.matmul(tf.ones([2, 2]), tf.ones([2, 2]), name="mm")
    mgd = tf.train.export_meta_graph(strip_default_attrs=True, clear_devices=True)
    node = next(n for n in mgd.graph_def.node if n.name == "mm")
    assert "transpose_a" not in node.attr and "T" in node.attr and node.device == ""
    assert mgd.meta_info_def.stripped_default_attrs
    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(mgd)
        assert g.get_operation_by_name("mm").get_attr("transpose_a") is False


def test_read_meta_graph_file_text_and_errors(tmp_path):
    tf.constant(1.0, name="c")
    path = str(tmp_path / "g.meta.txt")
    tf.train.export_meta_graph(path, as_text=True)
    assert meta_graph.read_meta_graph_file(path).graph_def.node[0].name == "c"
    with pytest.raises(IOError, match="does not exist"):
        meta_graph.read_meta_graph_file(str(tmp_path / "missing.meta"))
    bad = tmp_path / "bad.meta"
    bad.write_bytes(b"\xff\xfe not a proto")
    with pytest.raises(IOError, match="Cannot parse"):
        meta_graph.read_meta_graph_file(str(bad))


FRESH_PROCESS = textwrap.dedent("""
    import json, sys
    import numpy as np
    import tensorweave as tf
    prefix = sys.argv[1]
    saver = tf.train.import_meta_graph(prefix + ".meta")
    feed = {"x:0": np.array(json.loads(sys.argv[2]), np.float32),
            "labels:0": np.array(json.loads(sys.argv[3]), np.float32)}
    with tf.Session() as sess:
        saver.restore(sess, prefix)
        sess.run(tf.get_collection("train_op"), feed)
        names = sorted(v.op.name for v in tf.global_variables())
        values = sess.run({n: n + ":0" for n in names})
    print(json.dumps({k: np.asarray(v).tolist() for k, v in values.items()}))
""")


def test_model_rebuilt_from_files_alone_in_a_fresh_process(tmp_path):
    """Train one step, save; the original trains one more step. A fresh process that only has the
    files imports the meta graph, restores, trains one step: every variable (including the
    momentum slots and the global step) matches."""
    x, labels, loss, train_op = _build_model()
    saver = tf.train.Saver()
    feed = {x: FEED_X, labels: FEED_Y}
    with tf.Session() as sess:
        sess.run(tf.global_variables_initializer())
        sess.run(train_op, feed)
        prefix = saver.save(sess, str(tmp_path / "model.ckpt"), global_step=tf.train.get_global_step())
        sess.run(train_op, feed)
        expected = {v.op.name: sess.run(v) for v in tf.global_variables()}
    assert prefix.endswith("model.ckpt-1") and os.path.exists(prefix + ".meta")
    env = dict(os.environ, PYTHONPATH=ROOT)
    proc = subprocess.run([sys.executable, "-c", FRESH_PROCESS, prefix, json.dumps(FEED_X.tolist()),
                           json.dumps(FEED_Y.tolist())], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert sorted(got) == sorted(expected)
    for name, value in expected.items():
        np.testing.assert_array_equal(np.asarray(got[name], dtype=np.asarray(value).dtype), value, err_msg=name)


def test_queue_runners_travel_in_the_meta_graph_and_start_again(tmp_path):
    """An input pipeline rebuilt from a meta graph file refills its queue: the QUEUE_RUNNERS
    collection holds QueueRunnerDef protos naming the queue, enqueue, close and cancel ops."""
    with tf.name_scope("input"):
        data = tf.constant([1.0, 2.0, 3.0, 4.0])
        q = tf.FIFOQueue(10, tf.float32, shapes=[[]], name="fifo")
        runner = tf.train.QueueRunner(q, [q.enqueue_many([data])] * 2,
                                      queue_closed_exception_types=(tf.errors.OutOfRangeError,
                                                                    tf.errors.CancelledError))
        tf.train.add_queue_runner(runner)
        tf.identity(q.dequeue_many(4), name="batch")
    path = str(tmp_path / "pipeline.meta")
    exported = tf.train.export_meta_graph(path)
    (raw,) = exported.collection_def[tf.GraphKeys.QUEUE_RUNNERS].bytes_list.value
    proto = meta_graph.get_collection_proto_type(tf.GraphKeys.QUEUE_RUNNERS).FromString(raw)
    assert proto.queue_name == "input/fifo"
    assert list(proto.enqueue_op_name) == [runner.enqueue_ops[0].name] * 2
    assert proto.close_op_name == runner.close_op.name and proto.cancel_op_name == runner.cancel_op.name
    assert list(proto.queue_closed_exception_types) == [11, 1]  # OUT_OF_RANGE, CANCELLED

    scoped = meta_graph.export_scoped_meta_graph(export_scope="input")[0]
    (raw_scoped,) = scoped.collection_def[tf.GraphKeys.QUEUE_RUNNERS].bytes_list.value
    assert proto.FromString(raw_scoped).queue_name == "fifo"
    assert tf.GraphKeys.QUEUE_RUNNERS not in meta_graph.export_scoped_meta_graph(
        export_scope="elsewhere")[0].collection_def

    with tf.Graph().as_default() as g:
        tf.train.import_meta_graph(path, import_scope="again")
        (restored,) = tf.get_collection(tf.GraphKeys.QUEUE_RUNNERS)
        assert restored.name == "again/input/fifo"
        assert [op.name for op in restored.enqueue_ops] == ["again/" + runner.enqueue_ops[0].name] * 2
        assert restored.queue_closed_exception_types == (tf.errors.OutOfRangeError, tf.errors.CancelledError)
        batch = g.get_tensor_by_name("again/input/batch:0")
        with tf.Session() as sess:
            coord = tf.train.Coordinator()
            threads = tf.train.start_queue_runners(sess, coord=coord)
            assert sorted(sess.run(batch)) == [1.0, 2.0, 3.0, 4.0]
            coord.request_stop()
            coord.join(threads, stop_grace_period_secs=10)


def test_queue_runner_def_and_queue_are_exclusive():
    q = tf.FIFOQueue(2, tf.float32)
    proto = tf.train.QueueRunner(q, [q.enqueue(1.0)]).to_proto()
    with pytest.raises(ValueError, match="mutually exclusive"):
        tf.train.QueueRunner(q, [q.enqueue(2.0)], queue_runner_def=proto)
