"""Gradients of TensorArray ops (OSDI 4.1): each forward TensorArray gets a gradient TensorArray
(TensorArrayGradV3, one per tf.gradients call, told apart by the call's name scope, the
"source"). A read's gradient is a write into the gradient array and the reverse; gather and
scatter, concat and split pair the same way. The flow tensors carry the ordering: a gradient
array is read only after every write into it that the forward pass implies."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.graph import get_default_graph
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.control_flow import tensor_array as ta_ops


def _grad_source(grad: Any) -> str:
    """The name scope of the tf.gradients call that made `grad` ("gradients", "gradients_1",
    "train/gradients", ...): the last name component starting with "gradients"."""
    for name in (getattr(grad, "name", ""), get_default_graph().get_name_scope()):
        tokens = name.split("/")
        positions = [i for i, token in enumerate(tokens) if token.startswith("gradients")]
        if positions:
            return "/".join(tokens[:positions[-1] + 1])
    raise ValueError(f"Expected op/tensor name to start with gradients (excluding scope), got: {grad.name}")


def _gradient_array(op: Any, dtype_attr: str, flow: Any, source_of: Any, element_shape: Any = None) -> Any:
    """The gradient TensorArray of the array `op` works on (its handle is op.inputs[0])."""
    forward = ta_ops.TensorArray(op.get_attr(dtype_attr), handle=op.inputs[0], flow=flow,
                                 element_shape=element_shape)
    return forward.grad(source=_grad_source(source_of), flow=flow)


def _reading_grad(op: Any, grad: Any, put: Any) -> list[Any]:
    """Read and gather: the gradient is put into the gradient array where the values came from
    (op.inputs: handle, index or indices, flow)."""
    from tensorweave.ops._util import dense
    g = _gradient_array(op, "dtype", op.inputs[2], grad, op.get_attr("element_shape"))
    return [None, None, put(g, op.inputs[1], dense(grad)).flow]


def _writing_grad(op: Any, flow_grad: Any, take: Any, element_shape: Any) -> list[Any]:
    """Write and scatter: the value's gradient is taken from the gradient array (op.inputs:
    handle, index or indices, value, flow)."""
    g = _gradient_array(op, "T", flow_grad, flow_grad, element_shape)
    return [None, None, take(g, op.inputs[1]), flow_grad]


ta_ops.TensorArrayReadV3.gradient(lambda op, grad: _reading_grad(op, grad, ta_ops.TensorArray.write))
ta_ops.TensorArrayGatherV3.gradient(lambda op, grad: _reading_grad(op, grad, ta_ops.TensorArray.scatter))
ta_ops.TensorArrayWriteV3.gradient(
    lambda op, flow_grad: _writing_grad(op, flow_grad, ta_ops.TensorArray.read, op.inputs[2].shape))
ta_ops.TensorArrayScatterV3.gradient(
    lambda op, flow_grad: _writing_grad(op, flow_grad, ta_ops.TensorArray.gather,
                                        op.inputs[2].shape[1:] if op.inputs[2].shape.ndims else None))


@ta_ops.TensorArrayConcatV3.gradient
def _concat_grad(op: Any, grad: Any, _lengths_grad: Any) -> list[Any]:
    from tensorweave.ops._util import dense
    g = _gradient_array(op, "dtype", op.inputs[1], grad)
    return [None, g.split(dense(grad), op.outputs[1]).flow]


@ta_ops.TensorArraySplitV3.gradient
def _split_grad(op: Any, flow_grad: Any) -> list[Any]:
    value = op.inputs[1]
    element_shape = TensorShape([None]).concatenate(value.shape[1:]) if value.shape.ndims else None
    g = _gradient_array(op, "T", flow_grad, flow_grad, element_shape)
    return [None, g.concat(), None, flow_grad]
