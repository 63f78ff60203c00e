"""The float-operation counts tf.profiler reports, registered per op type as TensorFlow registers
them (its nn_ops/math_ops and profiler/internal/flops_registry.py): a MatMul is 2*m*k*n, a
convolution 2*filter_h*filter_w*in_depth per output element, element-wise ops one per output
element, reductions one per input element (plus one per output for Mean). Counts come from static
shapes: an op whose shapes are not fully known raises ValueError and is counted as unknown."""
from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework.op_stats import OpStats, RegisterStatistics


def _shape(graph: Any, name: str) -> Any:
    """The static shape of the tensor a NodeDef input (or node name) names, fully defined."""
    name = name.lstrip("^")
    shape = graph.get_tensor_by_name(name if ":" in name else name + ":0").shape
    if not shape.is_fully_defined():
        raise ValueError(f"Shape {shape} of {name} is not fully defined")
    return shape


def _count(shape: Any) -> int:
    return int(np.prod(shape.as_list(), dtype=np.int64))


def _flops(value: Any) -> OpStats:
    return OpStats("flops", int(value))


def _register(*op_types: str) -> Any:
    def decorate(fn: Any) -> Any:
        for op_type in op_types:
            RegisterStatistics(op_type, "flops")(fn)
        return fn
    return decorate


def _per_input_element(ops_per_element: int) -> Any:
    return lambda graph, node: _flops(_count(_shape(graph, node.input[0])) * ops_per_element)


def _per_output_element(ops_per_element: int) -> Any:
    return lambda graph, node: _flops(_count(_shape(graph, node.name)) * ops_per_element)


def _reduction(reduce_flops: int, finalize_flops: int) -> Any:
    def flops(graph: Any, node: Any) -> OpStats:
        inputs, outputs = _count(_shape(graph, node.input[0])), _count(_shape(graph, node.name))
        return _flops(inputs * reduce_flops + outputs * (finalize_flops - reduce_flops))
    return flops


for _op_types, _fn in (
        (("Reciprocal", "Square", "Log", "Neg", "AssignSub", "AssignAdd"), _per_input_element(1)),
        (("Rsqrt",), _per_input_element(2)),
        (("Softmax",), _per_input_element(5)),
        (("Add", "AddV2", "Sub", "Mul", "RealDiv", "Maximum", "Minimum", "Pow", "GreaterEqual", "Greater",
          "LessEqual", "Less", "Equal", "NotEqual"), _per_output_element(1)),
        (("SquaredDifference",), _per_output_element(2)),
        (("RsqrtGrad",), _per_output_element(4)),
        (("Mean",), _reduction(1, 1)),
        (("Sum", "ArgMax", "ArgMin", "BiasAddGrad"), _reduction(1, 0)),
        (("BiasAdd",), _per_input_element(1))):
    _register(*_op_types)(_fn)


@_register("L2Loss")
def _l2_loss_flops(graph: Any, node: Any) -> OpStats:
    return _flops(_count(_shape(graph, node.input[0])) * 3 - 1)  # square, sum, halve


def _check_nhwc(node: Any) -> None:
    if node.attr["data_format"].s not in (b"NHWC", b""):
        raise ValueError("Only NHWC format is supported in flops computations")


def _product(values: Any) -> int:
    return int(np.prod(list(values), dtype=np.int64))


@_register("AvgPool", "MaxPool")
def _pool_flops(graph: Any, node: Any) -> OpStats:
    _check_nhwc(node)
    return _flops(_product(node.attr["ksize"].list.i) * _count(_shape(graph, node.name)))


@_register("AvgPoolGrad")
def _avg_pool_grad_flops(graph: Any, node: Any) -> OpStats:
    _check_nhwc(node)
    return _flops(_product(node.attr["ksize"].list.i) * _count(_shape(graph, node.input[1])) * 2)


@_register("MaxPoolGrad")
def _max_pool_grad_flops(graph: Any, node: Any) -> OpStats:
    _check_nhwc(node)
    pooled = _count(_shape(graph, node.input[1]))
    return _flops(_product(node.attr["ksize"].list.i) * pooled + pooled)


@_register("Conv2D")
def _conv_2d_flops(graph: Any, node: Any) -> OpStats:
    _check_nhwc(node)
    _shape(graph, node.input[0])
    filter_h, filter_w, in_depth, _ = _shape(graph, node.input[1]).as_list()
    return _flops(2 * filter_h * filter_w * in_depth * _count(_shape(graph, node.name)))


@_register("Conv2DBackpropInput")
def _conv_2d_backprop_input_flops(graph: Any, node: Any) -> OpStats:
    _check_nhwc(node)
    out = _shape(graph, node.name)
    kernel = _count(_shape(graph, node.input[1]))
    strides = node.attr["strides"].list.i
    return _flops(2 * _count(out) * kernel / (out.as_list()[-1] * strides[1] * strides[2]))


@_register("Conv2DBackpropFilter")
def _conv_2d_backprop_filter_flops(graph: Any, node: Any) -> OpStats:
    _check_nhwc(node)
    image = _shape(graph, node.input[0])
    kernel = _count(_shape(graph, node.name))
    strides = node.attr["strides"].list.i
    return _flops(2 * _count(image) * kernel / (image.as_list()[-1] * strides[1] * strides[2]))


@_register("AddN")
def _add_n_flops(graph: Any, node: Any) -> OpStats:
    inputs = [name for name in node.input if not name.startswith("^")]
    if not inputs:
        return _flops(0)
    return _flops(_count(_shape(graph, inputs[0])) * (len(inputs) - 1))


@_register("MatMul")
def _mat_mul_flops(graph: Any, node: Any) -> OpStats:
    a = _shape(graph, node.input[0]).as_list()
    k = a[0] if node.attr["transpose_a"].b else a[1]
    return _flops(2 * k * _count(_shape(graph, node.name)))


@_register("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
def _batch_mat_mul_flops(graph: Any, node: Any) -> OpStats:
    # TF reads a `transpose_a` attr these ops do not have, so k is always the last dimension;
    # the same count keeps reports comparable with TF's.
    k = _shape(graph, node.input[0]).as_list()[-1]
    return _flops(2 * k * _count(_shape(graph, node.name)))
