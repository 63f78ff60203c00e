"""SavedModels travel both ways with TensorFlow 2.21: the one TF wrote (simple_save, an asset
read by its main op) loads here and its signature computes TF's numbers; the one we wrote
(tests/data/tw_saved_model) was loaded by TF (tf.compat.v1.saved_model.loader.load), which
recorded its outputs in tw_checked_by_tf.json."""
import json
import os

import numpy as np
import pytest

import tensorweave as tf

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
TF_DIR = os.path.join(DATA, "tf_saved_model")
TW_DIR = os.path.join(DATA, "tw_saved_model")


def _run_signature(export_dir, feeds, import_scope=None, key="serving_default"):
    with tf.Graph().as_default() as graph, tf.Session() as sess:
        meta = tf.saved_model.loader.load(sess, [tf.saved_model.tag_constants.SERVING], export_dir,
                                          import_scope=import_scope)
        signature = meta.signature_def[key]
        fetches = {k: tf.saved_model.utils.get_tensor_from_tensor_info(v, graph, import_scope)
                   for k, v in signature.outputs.items()}
        feed_dict = {tf.saved_model.utils.get_tensor_from_tensor_info(signature.inputs[k], graph, import_scope): v
                     for k, v in feeds.items()}
        return meta, sess.run(fetches, feed_dict)


@pytest.mark.parametrize("import_scope", [None, "imported"])
def test_tensorflow_saved_model_loads_and_runs_with_tf_numbers(import_scope):
    expected = np.load(os.path.join(DATA, "tf_saved_model_expected.npz"))
    meta, out = _run_signature(TF_DIR, {"x": expected["x"]}, import_scope)
    np.testing.assert_allclose(out["probs"], expected["probs"], rtol=1e-5)
    # the main op read the asset through the path the loader fed: the copy under assets/
    assert out["vocab"] == b"alpha\nbeta\ngamma\n"
    assert list(meta.meta_info_def.tags) == ["serve"]
    assert meta.signature_def["serving_default"].method_name == "tensorflow/serving/predict"
    assert tf.saved_model.signature_def_utils.is_valid_signature(meta.signature_def["serving_default"])


def test_tensorflow_loaded_our_saved_model_with_our_numbers():
    with open(os.path.join(DATA, "tw_checked_by_tf.json")) as f:
        report = json.load(f)["saved_model"]
    ours = np.load(os.path.join(DATA, "tw_saved_model_expected.npz"))
    np.testing.assert_allclose(np.array(report["outputs"]["probs"], np.float32), ours["probs"], rtol=1e-5)
    assert report["outputs"]["labels"] == "cat\ndog\nbird\n"  # TF fed our asset to our main op
    assert report["tags"] == ["serve"] and report["method_name"] == "tensorflow/serving/predict"
    # and it loads here too, to the same numbers
    _, out = _run_signature(TW_DIR, {"x": ours["x"]})
    np.testing.assert_allclose(out["probs"], ours["probs"], rtol=1e-5)
    assert out["labels"] == b"cat\ndog\nbird\n"


def test_our_saved_model_has_tensorflows_layout():
    assert sorted(os.listdir(TW_DIR)) == ["assets", "saved_model.pb", "variables"]
    assert sorted(os.listdir(os.path.join(TW_DIR, "variables"))) == [
        "variables.data-00000-of-00001", "variables.index"]
    assert os.listdir(os.path.join(TW_DIR, "assets")) == ["labels.txt"]
    saved = tf.saved_model.loader.parse_saved_model(TW_DIR)
    assert saved.saved_model_schema_version == 1
    meta = saved.meta_graphs[0]
    # the asset is recorded where TF 1 looks (a packed collection) and where TF 2 looks
    assert meta.asset_file_def[0].filename == "labels.txt"
    packed = meta.collection_def["saved_model_assets"].any_list.value[0]
    assert packed.type_url == "type.googleapis.com/tensorflow.AssetFileDef"
    assert list(meta.collection_def["saved_model_main_op"].node_list.value) == ["init_labels"]
    # no device strings (clear_devices) and a sharded V2 saver
    assert all(not n.device for n in meta.graph_def.node)
    assert meta.saver_def.sharded and meta.saver_def.version == 2
