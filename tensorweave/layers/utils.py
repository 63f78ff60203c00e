"""Helpers the layers share: argument normalization (tuples, padding, data formats, as Keras'
conv_utils), activations and initializers given by name, and `smart_cond` (a branch picked at
graph construction when the predicate is a Python bool or a constant)."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import graph as _graph
from tensorweave.framework import tensor_util
from tensorweave.ops import nn as nn_ops
from tensorweave.ops.array import identity
from tensorweave.ops.control_flow.cond import cond
from tensorweave.ops.state import init_ops

__all__ = ["normalize_tuple", "normalize_padding", "normalize_data_format", "convert_data_format",
           "smart_cond", "constant_value", "conv_output_length", "deconv_output_length", "initializer",
           "activation"]


def normalize_tuple(value: Any, n: int, name: str) -> tuple[int, ...]:
    """An int or an n-sequence of ints as an n-tuple."""
    if isinstance(value, (int, np.integer)):
        return (int(value),) * n
    try:
        values = tuple(value)
    except TypeError:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}") from None
    if len(values) != n:
        raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value}")
    for v in values:
        if not isinstance(v, (int, np.integer)):
            raise ValueError(f"The `{name}` argument must be a tuple of {n} integers. Received: {value} "
                             f"including element {v} of type {type(v)}")
    return tuple(int(v) for v in values)


def normalize_padding(value: Any, allow_causal: bool = False) -> str:
    padding = value.lower() if isinstance(value, str) else value
    if padding == "causal" and not allow_causal:
        raise ValueError("Causal padding is only supported for `Conv1D` and `SeparableConv1D`.")
    if padding not in ("valid", "same", "causal"):
        raise ValueError(f"The `padding` argument must be a list/tuple or one of \"valid\", \"same\". "
                         f"Received: {value}")
    return padding


def normalize_data_format(value: Optional[str]) -> str:
    data_format = "channels_last" if value is None else value.lower()
    if data_format not in ("channels_first", "channels_last"):
        raise ValueError(f"The `data_format` argument must be one of \"channels_first\", \"channels_last\". "
                         f"Received: {value}")
    return data_format


def convert_data_format(data_format: str, ndim: int) -> str:
    """channels_last / channels_first as the op's data_format for inputs of rank `ndim`."""
    last = data_format == "channels_last"
    return {3: "NWC" if last else "NCW", 4: "NHWC" if last else "NCHW",
            5: "NDHWC" if last else "NCDHW"}[ndim]


def constant_value(pred: Any) -> Optional[bool]:
    """A predicate's value when known at graph construction, else None."""
    if isinstance(pred, (bool, np.bool_, int)):
        return bool(pred)
    if _graph.is_tensor_like(pred):
        value = tensor_util.constant_value(pred)
        return None if value is None else bool(value)
    raise TypeError(f"`training` must be a Python bool or a boolean Tensor, got {pred!r}")


def smart_cond(pred: Any, true_fn: Callable[[], Any], false_fn: Callable[[], Any],
               name: Optional[str] = None) -> Any:
    """true_fn() or false_fn() when `pred` is known now, else tf.cond(pred, true_fn, false_fn)."""
    value = constant_value(pred)
    if value is None:
        return cond(pred, true_fn, false_fn, name=name)
    return true_fn() if value else false_fn()


def conv_output_length(length: Optional[int], filter_size: int, padding: str, stride: int,
                       dilation: int = 1) -> Optional[int]:
    if length is None:
        return None
    dilated = filter_size + (filter_size - 1) * (dilation - 1)
    out = length if padding in ("same", "causal") else length - dilated + 1
    return (out + stride - 1) // stride


def deconv_output_length(length: Optional[int], filter_size: int, padding: str, stride: int,
                         dilation: int = 1) -> Optional[int]:
    """The spatial size of a transposed convolution's output (no output_padding)."""
    if length is None:
        return None
    filter_size = filter_size + (filter_size - 1) * (dilation - 1)
    if padding == "valid":
        return length * stride + max(filter_size - stride, 0)
    return length * stride


def spatial_sizes(shape: Sequence[Any]) -> list[Optional[int]]:
    return [None if d is None else int(d) for d in shape]


_INITIALIZERS = {
    "zeros": init_ops.zeros_initializer, "ones": init_ops.ones_initializer,
    "glorot_uniform": init_ops.glorot_uniform_initializer, "glorot_normal": init_ops.glorot_normal_initializer,
}


def initializer(value: Any) -> Any:
    """An initializer object, or one named as Keras names them ("zeros", "glorot_uniform")."""
    if isinstance(value, str):
        if value not in _INITIALIZERS:
            raise ValueError(f"Unknown initializer: {value}")
        return _INITIALIZERS[value]()
    return value


_ACTIVATIONS: dict[str, Callable[..., Any]] = {
    "relu": nn_ops.relu, "relu6": nn_ops.relu6, "elu": nn_ops.elu, "selu": nn_ops.selu, "tanh": nn_ops.tanh,
    "sigmoid": nn_ops.sigmoid, "softplus": nn_ops.softplus, "softsign": nn_ops.softsign,
    "softmax": nn_ops.softmax, "linear": identity,
}


def activation(value: Any) -> Optional[Callable[..., Any]]:
    """A callable activation, or one named as Keras names them ("relu", "softmax", ...)."""
    if value is None or callable(value):
        return value
    if isinstance(value, str) and value in _ACTIVATIONS:
        return _ACTIVATIONS[value]
    raise ValueError(f"Unknown activation function: {value!r}")
