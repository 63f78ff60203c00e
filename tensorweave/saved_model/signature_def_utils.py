"""tf.saved_model.signature_def_utils: SignatureDefs, the named inputs and outputs (and method)
a served model exposes, in the shapes TensorFlow Serving's predict, classify and regress APIs
expect."""
from __future__ import annotations

from typing import Any, Optional

from tensorboard.compat.proto import meta_graph_pb2, types_pb2

from tensorweave.framework import graph as _graph
from tensorweave.saved_model import signature_constants as sc
from tensorweave.saved_model.utils import build_tensor_info

__all__ = ["build_signature_def", "predict_signature_def", "classification_signature_def",
           "regression_signature_def", "is_valid_signature"]


def build_signature_def(inputs: Optional[dict[str, Any]] = None, outputs: Optional[dict[str, Any]] = None,
                        method_name: Optional[str] = None) -> Any:
    """A SignatureDef from TensorInfo maps and a method name."""
    signature = meta_graph_pb2.SignatureDef()
    for key, info in (inputs or {}).items():
        signature.inputs[key].CopyFrom(info)
    for key, info in (outputs or {}).items():
        signature.outputs[key].CopyFrom(info)
    if method_name is not None:
        signature.method_name = method_name
    return signature


def predict_signature_def(inputs: dict[str, Any], outputs: dict[str, Any]) -> Any:
    """A predict SignatureDef: any named input tensors to any named output tensors."""
    if not inputs:
        raise ValueError("Prediction inputs cannot be None or empty.")
    if not outputs:
        raise ValueError("Prediction outputs cannot be None or empty.")
    return build_signature_def({k: build_tensor_info(t) for k, t in inputs.items()},
                               {k: build_tensor_info(t) for k, t in outputs.items()},
                               sc.PREDICT_METHOD_NAME)


def _string_examples(examples: Any, what: str) -> Any:
    if examples is None:
        raise ValueError(f"{what} examples cannot be None.")
    if not isinstance(examples, _graph.Tensor):
        raise ValueError(f"{what} examples must be a string Tensor.")
    info = build_tensor_info(examples)
    if info.dtype != types_pb2.DT_STRING:
        raise ValueError(f"{what} examples must be a string Tensor.")
    return info


def regression_signature_def(examples: Any, predictions: Any) -> Any:
    """A regress SignatureDef: serialized tf.Examples (string) to float predictions."""
    inputs = _string_examples(examples, "Regression")
    if predictions is None:
        raise ValueError("Regression predictions cannot be None.")
    outputs = build_tensor_info(predictions)
    if outputs.dtype != types_pb2.DT_FLOAT:
        raise ValueError("Regression output must be a float Tensor.")
    return build_signature_def({sc.REGRESS_INPUTS: inputs}, {sc.REGRESS_OUTPUTS: outputs},
                               sc.REGRESS_METHOD_NAME)


def classification_signature_def(examples: Any, classes: Any, scores: Any) -> Any:
    """A classify SignatureDef: serialized tf.Examples to string classes and/or float scores."""
    inputs = _string_examples(examples, "Classification")
    if classes is None and scores is None:
        raise ValueError("Classification classes and scores cannot both be None.")
    outputs = {}
    if classes is not None:
        info = build_tensor_info(classes)
        if info.dtype != types_pb2.DT_STRING:
            raise ValueError("Classification classes must be a string Tensor.")
        outputs[sc.CLASSIFY_OUTPUT_CLASSES] = info
    if scores is not None:
        info = build_tensor_info(scores)
        if info.dtype != types_pb2.DT_FLOAT:
            raise ValueError("Classification scores must be a float Tensor.")
        outputs[sc.CLASSIFY_OUTPUT_SCORES] = info
    return build_signature_def({sc.CLASSIFY_INPUTS: inputs}, outputs, sc.CLASSIFY_METHOD_NAME)


def _valid_predict(signature: Any) -> bool:
    return (signature.method_name == sc.PREDICT_METHOD_NAME and bool(signature.inputs)
            and bool(signature.outputs))


def _valid_regression(signature: Any) -> bool:
    return (signature.method_name == sc.REGRESS_METHOD_NAME
            and set(signature.inputs) == {sc.REGRESS_INPUTS}
            and signature.inputs[sc.REGRESS_INPUTS].dtype == types_pb2.DT_STRING
            and set(signature.outputs) == {sc.REGRESS_OUTPUTS}
            and signature.outputs[sc.REGRESS_OUTPUTS].dtype == types_pb2.DT_FLOAT)


def _valid_classification(signature: Any) -> bool:
    outputs = signature.outputs
    if (signature.method_name != sc.CLASSIFY_METHOD_NAME or set(signature.inputs) != {sc.CLASSIFY_INPUTS}
            or signature.inputs[sc.CLASSIFY_INPUTS].dtype != types_pb2.DT_STRING or not outputs):
        return False
    if set(outputs) - {sc.CLASSIFY_OUTPUT_CLASSES, sc.CLASSIFY_OUTPUT_SCORES}:
        return False
    if sc.CLASSIFY_OUTPUT_CLASSES in outputs and outputs[sc.CLASSIFY_OUTPUT_CLASSES].dtype != types_pb2.DT_STRING:
        return False
    return not (sc.CLASSIFY_OUTPUT_SCORES in outputs
                and outputs[sc.CLASSIFY_OUTPUT_SCORES].dtype != types_pb2.DT_FLOAT)


def is_valid_signature(signature_def: Any) -> bool:
    """Whether `signature_def` is a well-formed classify, regress or predict signature."""
    if signature_def is None:
        return False
    return (_valid_classification(signature_def) or _valid_regression(signature_def)
            or _valid_predict(signature_def))

from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("saved_model.signature_def_utils", __name__)
