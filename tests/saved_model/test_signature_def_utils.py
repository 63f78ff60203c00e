"""signature_def_utils and utils: SignatureDefs and TensorInfos as TF builds and checks them."""
import pytest
from tensorboard.compat.proto import types_pb2

import tensorweave as tf
from tensorweave.saved_model import signature_constants as sc
from tensorweave.saved_model import signature_def_utils as sdu
from tensorweave.saved_model import utils


def test_build_tensor_info_dense_and_sparse_and_back():
    with tf.Graph().as_default() as graph:
        x = tf.placeholder(tf.float32, [None, 3], name="x")
        info = utils.build_tensor_info(x)
        assert (info.name, info.dtype) == ("x:0", types_pb2.DT_FLOAT)
        assert [d.size for d in info.tensor_shape.dim] == [-1, 3]
        assert utils.get_tensor_from_tensor_info(info) is x
        sp = tf.sparse_placeholder(tf.int64, name="sp")
        sparse_info = utils.build_tensor_info(sp)
        assert sparse_info.WhichOneof("encoding") == "coo_sparse"
        assert sparse_info.coo_sparse.values_tensor_name == sp.values.name
        back = utils.get_tensor_from_tensor_info(sparse_info, graph)
        assert (back.indices, back.values, back.dense_shape) == (sp.indices, sp.values, sp.dense_shape)
        unknown = tf.placeholder(tf.string, None, name="u")
        assert utils.build_tensor_info(unknown).tensor_shape.unknown_rank
        with pytest.raises(ValueError, match="Invalid TensorInfo.encoding"):
            utils.get_tensor_from_tensor_info(type(info)())
    with tf.Graph().as_default() as g2:
        tf.import_graph_def(graph.as_graph_def(), name="scope")
        assert utils.get_tensor_from_tensor_info(info, g2, import_scope="scope").name == "scope/x:0"
    assert tf.saved_model.build_tensor_info is utils.build_tensor_info


def test_predict_signature():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2], name="x")
        y = tf.identity(x, name="y")
        sig = sdu.predict_signature_def({"x": x}, {"y": y})
        assert sig.method_name == sc.PREDICT_METHOD_NAME
        assert (sig.inputs["x"].name, sig.outputs["y"].name) == ("x:0", "y:0")
        assert sdu.is_valid_signature(sig)
        with pytest.raises(ValueError, match="Prediction inputs cannot be None or empty."):
            sdu.predict_signature_def({}, {"y": y})
        with pytest.raises(ValueError, match="Prediction outputs cannot be None or empty."):
            sdu.predict_signature_def({"x": x}, None)


def test_classification_and_regression_signatures():
    with tf.Graph().as_default():
        examples = tf.placeholder(tf.string, [None], name="examples")
        classes = tf.placeholder(tf.string, [None, 2], name="classes")
        scores = tf.placeholder(tf.float32, [None, 2], name="scores")
        floats = tf.placeholder(tf.float32, [None], name="f")
        sig = sdu.classification_signature_def(examples, classes, scores)
        assert sig.method_name == sc.CLASSIFY_METHOD_NAME
        assert set(sig.outputs) == {"classes", "scores"} and set(sig.inputs) == {"inputs"}
        assert sdu.is_valid_signature(sig)
        assert sdu.is_valid_signature(sdu.classification_signature_def(examples, None, scores))
        reg = sdu.regression_signature_def(examples, floats)
        assert (reg.method_name, set(reg.outputs)) == (sc.REGRESS_METHOD_NAME, {"outputs"})
        assert sdu.is_valid_signature(reg)
        with pytest.raises(ValueError, match="Classification examples cannot be None."):
            sdu.classification_signature_def(None, classes, scores)
        with pytest.raises(ValueError, match="Classification examples must be a string Tensor."):
            sdu.classification_signature_def(floats, classes, scores)
        with pytest.raises(ValueError, match="cannot both be None"):
            sdu.classification_signature_def(examples, None, None)
        with pytest.raises(ValueError, match="classes must be a string Tensor"):
            sdu.classification_signature_def(examples, scores, None)
        with pytest.raises(ValueError, match="scores must be a float Tensor"):
            sdu.classification_signature_def(examples, None, classes)
        with pytest.raises(ValueError, match="Regression examples must be a string Tensor."):
            sdu.regression_signature_def(floats, floats)
        with pytest.raises(ValueError, match="Regression predictions cannot be None."):
            sdu.regression_signature_def(examples, None)
        with pytest.raises(ValueError, match="Regression output must be a float Tensor."):
            sdu.regression_signature_def(examples, classes)


def test_is_valid_signature_rejects_malformed():
    with tf.Graph().as_default():
        examples = tf.placeholder(tf.string, [None], name="examples")
        floats = tf.placeholder(tf.float32, [None], name="f")
        info_s, info_f = utils.build_tensor_info(examples), utils.build_tensor_info(floats)
    assert not sdu.is_valid_signature(None)
    assert not sdu.is_valid_signature(sdu.build_signature_def({"a": info_f}, {}, sc.PREDICT_METHOD_NAME))
    assert not sdu.is_valid_signature(sdu.build_signature_def({"a": info_f}, {"b": info_f}, "other"))
    assert not sdu.is_valid_signature(sdu.build_signature_def({"inputs": info_f}, {"outputs": info_f},
                                                              sc.REGRESS_METHOD_NAME))
    assert not sdu.is_valid_signature(sdu.build_signature_def({"inputs": info_s}, {"outputs": info_s},
                                                              sc.REGRESS_METHOD_NAME))
    assert not sdu.is_valid_signature(sdu.build_signature_def({"inputs": info_s}, {"extra": info_f},
                                                              sc.CLASSIFY_METHOD_NAME))
    assert sdu.is_valid_signature(sdu.build_signature_def({"inputs": info_s}, {"scores": info_f},
                                                          sc.CLASSIFY_METHOD_NAME))
    built = sdu.build_signature_def(method_name="m")
    assert (built.method_name, len(built.inputs), len(built.outputs)) == ("m", 0, 0)


def test_namespaces_have_tf1s_names():
    # dir(tf.compat.v1.saved_model) and its submodules in TF 2.21, less TF 2's own additions
    # (save, load_v2, Asset, SaveOptions, experimental, MethodNameUpdater)
    expected = {
        "": "ASSETS_DIRECTORY ASSETS_KEY Builder CLASSIFY_INPUTS CLASSIFY_METHOD_NAME CLASSIFY_OUTPUT_CLASSES "
            "CLASSIFY_OUTPUT_SCORES DEBUG_DIRECTORY DEBUG_INFO_FILENAME_PB DEFAULT_SERVING_SIGNATURE_DEF_KEY GPU "
            "LEGACY_INIT_OP_KEY MAIN_OP_KEY PREDICT_INPUTS PREDICT_METHOD_NAME PREDICT_OUTPUTS REGRESS_INPUTS "
            "REGRESS_METHOD_NAME REGRESS_OUTPUTS SAVED_MODEL_FILENAME_PB SAVED_MODEL_FILENAME_PBTXT "
            "SAVED_MODEL_SCHEMA_VERSION SERVING TPU TRAINING VARIABLES_DIRECTORY VARIABLES_FILENAME "
            "build_signature_def build_tensor_info builder classification_signature_def constants "
            "contains_saved_model get_tensor_from_tensor_info is_valid_signature load loader main_op "
            "main_op_with_restore maybe_saved_model_directory predict_signature_def regression_signature_def "
            "signature_constants signature_def_utils simple_save tag_constants utils",
        "builder": "SavedModelBuilder",
        "loader": "load maybe_saved_model_directory",
        "utils": "build_tensor_info get_tensor_from_tensor_info",
        "signature_def_utils": "build_signature_def classification_signature_def is_valid_signature "
                               "predict_signature_def regression_signature_def",
        "tag_constants": "GPU SERVING TPU TRAINING",
        "main_op": "main_op main_op_with_restore",
    }
    for module, names in expected.items():
        namespace = getattr(tf.saved_model, module) if module else tf.saved_model
        missing = [n for n in names.split() if not hasattr(namespace, n)]
        assert not missing, f"tf.saved_model.{module}: {missing}"
    for name in ("convert_variables_to_constants", "extract_sub_graph", "import_graph_def", "must_run_on_cpu",
                 "remove_training_nodes", "tensor_shape_from_node_def_name"):
        assert hasattr(tf.graph_util, name)
    assert tf.graph_util.import_graph_def is tf.import_graph_def
