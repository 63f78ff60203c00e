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
