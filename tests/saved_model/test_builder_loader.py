"""SavedModelBuilder and the loader: several meta graphs sharing one variables checkpoint,
text and binary saved_model files, main ops, assets, import scopes, simple_save and the errors
TF raises."""
import os

import numpy as np
import pytest
from google.protobuf import text_format

import tensorweave as tf
from tensorweave.saved_model import constants, loader


def _model():
    x = tf.placeholder(tf.float32, [None, 2], name="x")
    w = tf.Variable(np.array([[1.0, 2.0], [3.0, 4.0]], np.float32), name="w")
    counter = tf.Variable(0, name="counter", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
    y = tf.matmul(x, w, name="y")
    return x, w, counter, y


def test_builder_two_meta_graphs_share_variables_and_load_by_tags(tmp_path):
    export_dir = str(tmp_path / "model")
    xv = np.array([[1.0, 1.0]], np.float32)
    with tf.Graph().as_default(), tf.Session() as sess:
        x, w, _, y = _model()
        sess.run(tf.global_variables_initializer())
        sess.run(tf.assign(w, w * 10))  # the trained value, not the initial one
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        sig = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
        builder.add_meta_graph_and_variables(sess, [tf.saved_model.tag_constants.TRAINING],
                                             signature_def_map={"train_sig": sig})
        builder.add_meta_graph([tf.saved_model.tag_constants.SERVING, tf.saved_model.tag_constants.GPU],
                               signature_def_map={"serving_default": sig}, strip_default_attrs=True)
        path = builder.save(as_text=True)
    assert path == os.path.join(export_dir, "saved_model.pbtxt")
    assert tf.saved_model.loader.maybe_saved_model_directory(export_dir)
    assert not tf.saved_model.loader.maybe_saved_model_directory(str(tmp_path))
    saved = loader.parse_saved_model(export_dir)
    assert [sorted(m.meta_info_def.tags) for m in saved.meta_graphs] == [["train"], ["gpu", "serve"]]
    for tags in (["train"], ["gpu", "serve"], ["serve", "gpu"]):
        with tf.Graph().as_default(), tf.Session() as sess:
            meta = tf.saved_model.loader.load(sess, tags, export_dir)
            key = "train_sig" if tags == ["train"] else "serving_default"
            out = sess.run(meta.signature_def[key].outputs["y"].name, {"x:0": xv})
            np.testing.assert_array_equal(out, [[40.0, 60.0]])
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(RuntimeError, match="could not be found in SavedModel"):
            tf.saved_model.loader.load(sess, ["serve"], export_dir)


def test_binary_save_is_tensorflows_message(tmp_path):
    export_dir = str(tmp_path / "m")
    with tf.Graph().as_default(), tf.Session() as sess:
        x, _, _, y = _model()
        sess.run(tf.global_variables_initializer())
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    with open(os.path.join(export_dir, "saved_model.pb"), "rb") as f:
        data = f.read()
    saved = tf.saved_model.loader.parse_saved_model(export_dir)
    assert saved.SerializeToString(deterministic=True) == data
    # field 1 is the schema version (varint 1), field 2 the meta graphs: TF's wire layout
    assert data[:2] == b"\x08\x01" and data[2] == 0x12
    text = text_format.MessageToString(saved)
    assert text.startswith("saved_model_schema_version: 1\nmeta_graphs {")


def test_main_op_runs_after_restore_with_assets_fed(tmp_path):
    source = tmp_path / "words.txt"
    source.write_text("one two")
    export_dir = str(tmp_path / "m")
    with tf.Graph().as_default(), tf.Session() as sess:
        x, w, counter, y = _model()
        asset = tf.constant(str(source), name="asset_path")
        tf.add_to_collection(tf.GraphKeys.ASSET_FILEPATHS, asset)
        text = tf.Variable("", name="text", trainable=False, collections=[tf.GraphKeys.LOCAL_VARIABLES])
        with tf.control_dependencies([tf.saved_model.main_op.main_op()]):
            main = tf.group(tf.assign(text, tf.read_file(asset)), tf.assign(counter, 7), name="main")
        sess.run(tf.global_variables_initializer())
        builder = tf.saved_model.Builder(export_dir)
        builder.add_meta_graph_and_variables(sess, ["serve"], main_op=main,
                                             assets_collection=tf.get_collection(tf.GraphKeys.ASSET_FILEPATHS))
        builder.save()
    assert (tmp_path / "m" / "assets" / "words.txt").read_text() == "one two"
    source.unlink()  # the loaded model reads its own copy
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir, import_scope="scope")
        assert sess.run(graph.get_tensor_by_name("scope/text:0")) == b"one two"
        assert sess.run(graph.get_tensor_by_name("scope/counter:0")) == 7
        np.testing.assert_array_equal(sess.run(graph.get_tensor_by_name("scope/w:0")), [[1, 2], [3, 4]])


def test_legacy_init_op_is_the_main_op(tmp_path):
    export_dir = str(tmp_path / "m")
    with tf.Graph().as_default(), tf.Session() as sess:
        _, _, counter, _ = _model()
        sess.run(tf.global_variables_initializer())
        init = tf.group(tf.assign(counter, 3), name="legacy")
        builder = tf.saved_model.builder.SavedModelBuilder(export_dir)
        builder.add_meta_graph_and_variables(sess, ["serve"], legacy_init_op=init)
        builder.save()
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        tf.saved_model.loader.load(sess, ["serve"], export_dir)
        assert sess.run(graph.get_tensor_by_name("counter:0")) == 3


def test_model_without_variables(tmp_path):
    export_dir = str(tmp_path / "m")
    with tf.Graph().as_default(), tf.Session() as sess:
        x = tf.placeholder(tf.float32, [3], name="x")
        y = tf.square(x, name="y")
        tf.saved_model.simple_save(sess, export_dir, {"x": x}, {"y": y})
    with tf.Graph().as_default(), tf.Session() as sess:
        meta = tf.saved_model.load(sess, ["serve"], export_dir)
        out = sess.run(meta.signature_def["serving_default"].outputs["y"].name, {"x:0": [1, 2, 3]})
        np.testing.assert_array_equal(out, [1, 4, 9])


def test_builder_errors(tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "file").write_text("x")
    with pytest.raises(AssertionError, match="isn't empty"):
        tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "full"))
    with tf.Graph().as_default(), tf.Session() as sess:
        x, _, _, y = _model()
        sess.run(tf.global_variables_initializer())
        builder = tf.saved_model.builder.SavedModelBuilder(str(tmp_path / "a"))
        with pytest.raises(AssertionError, match="has not been saved yet"):
            builder.add_meta_graph(["serve"])
        with pytest.raises(TypeError, match="main_op needs to be an Operation"):
            builder.add_meta_graph_and_variables(sess, ["serve"], main_op=y)
        bad = tf.saved_model.signature_def_utils.build_signature_def(
            {"x": tf.saved_model.utils.build_tensor_info(x)}, {}, "m")
        bad.inputs["x"].dtype = 0
        with pytest.raises(AssertionError, match="dtype field set"):
            builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"s": bad})
        good = tf.saved_model.signature_def_utils.predict_signature_def({"x": x}, {"y": y})
        with pytest.raises(KeyError, match="reserved"):
            builder.add_meta_graph_and_variables(sess, ["serve"],
                                                 signature_def_map={constants.INIT_OP_SIGNATURE_KEY: good})
        with pytest.raises(TypeError, match="must be of type constant"):
            builder.add_meta_graph_and_variables(sess, ["serve"], assets_collection=[y])
        builder.add_meta_graph_and_variables(sess, ["serve"], signature_def_map={"s": good})
        with pytest.raises(AssertionError, match="already been saved"):
            builder.add_meta_graph_and_variables(sess, ["train"])


def test_loader_errors(tmp_path):
    with pytest.raises(IOError, match="SavedModel file does not exist"):
        loader.parse_saved_model(str(tmp_path))
    (tmp_path / "saved_model.pb").write_bytes(b"\xff\xff\xff")
    with pytest.raises(IOError, match="Cannot parse file"):
        loader.parse_saved_model(str(tmp_path))


def test_main_op_initializes_and_main_op_with_restore(tmp_path):
    with tf.Graph().as_default(), tf.Session() as sess:
        _, w, counter, _ = _model()
        sess.run(tf.saved_model.main_op.main_op())
        np.testing.assert_array_equal(sess.run(w), [[1, 2], [3, 4]])
        assert sess.run(counter) == 0
        saver = tf.train.Saver([w])
        prefix = saver.save(sess, str(tmp_path / "ckpt"))
        sess.run(tf.assign_add(counter, 5))
        op = tf.saved_model.main_op_with_restore(saver.saver_def.restore_op_name)
        # one op that needs both the initializers and the restore (TF orders neither before the other)
        restore = tf.get_default_graph().get_operation_by_name(saver.saver_def.restore_op_name)
        assert restore in op.control_inputs
        assert any(c.type == "NoOp" and c is not restore for c in op.control_inputs)
        sess.run(op, {saver.saver_def.filename_tensor_name: prefix})
        assert sess.run(counter) == 0  # the local variable was initialized again
        np.testing.assert_array_equal(sess.run(w), [[1, 2], [3, 4]])


def test_constants_are_tensorflows():
    sm = tf.saved_model
    assert (sm.tag_constants.SERVING, sm.tag_constants.TRAINING, sm.tag_constants.GPU, sm.tag_constants.TPU) == \
        ("serve", "train", "gpu", "tpu")
    sc = sm.signature_constants
    assert sc.DEFAULT_SERVING_SIGNATURE_DEF_KEY == "serving_default"
    assert (sc.PREDICT_INPUTS, sc.PREDICT_OUTPUTS, sc.PREDICT_METHOD_NAME) == \
        ("inputs", "outputs", "tensorflow/serving/predict")
    assert (sc.CLASSIFY_INPUTS, sc.CLASSIFY_OUTPUT_CLASSES, sc.CLASSIFY_OUTPUT_SCORES, sc.CLASSIFY_METHOD_NAME) == \
        ("inputs", "classes", "scores", "tensorflow/serving/classify")
    assert (sc.REGRESS_INPUTS, sc.REGRESS_OUTPUTS, sc.REGRESS_METHOD_NAME) == \
        ("inputs", "outputs", "tensorflow/serving/regress")
    assert (sm.constants.ASSETS_KEY, sm.constants.MAIN_OP_KEY, sm.constants.LEGACY_INIT_OP_KEY) == \
        ("saved_model_assets", "saved_model_main_op", "legacy_init_op")
    assert (sm.SAVED_MODEL_FILENAME_PB, sm.VARIABLES_DIRECTORY, sm.ASSETS_DIRECTORY) == \
        ("saved_model.pb", "variables", "assets")
