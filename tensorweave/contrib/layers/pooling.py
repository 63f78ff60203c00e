"""`tf.contrib.layers` pooling and dropout layers (max_pool2d, avg_pool2d, dropout), with TF
1.15's defaults: 2x2 windows of stride 2 and VALID padding; dropout keeps half the units and
is the identity when not training."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework import graph as _graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array import identity
from tensorweave.ops.nn import avg_pool, dropout as _nn_dropout, max_pool
from tensorweave.ops.state import variable_scope
from tensorweave.contrib.framework.arg_scope import add_arg_scope
from tensorweave.contrib.layers.utils import collect_named_outputs, smart_cond

__all__ = ["max_pool2d", "avg_pool2d", "dropout"]


def _window(value: Any, what: str) -> list[int]:
    values = [int(value)] * 2 if isinstance(value, (int, np.integer)) else [int(v) for v in value]
    if len(values) != 2:
        raise ValueError(f"The `{what}` argument must be a tuple of 2 integers. Received: {value}")
    return values


def _pool(pool_fn: Any, default_name: str, inputs: Any, kernel_size: Any, stride: Any, padding: str,
          data_format: str, outputs_collections: Any, scope: Any) -> Any:
    if data_format not in ("NCHW", "NHWC"):
        raise ValueError("data_format has to be either NCHW or NHWC.")
    with _graph.name_scope(scope, default_name, [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        if inputs.get_shape().ndims not in (None, 4):
            raise ValueError(f"Inputs should have rank 4. Received input shape: {inputs.get_shape()}")
        k, s = _window(kernel_size, "pool_size"), _window(stride, "strides")
        if data_format == "NCHW":
            ksize, strides = [1, 1] + k, [1, 1] + s
        else:
            ksize, strides = [1] + k + [1], [1] + s + [1]
        outputs = pool_fn(inputs, ksize, strides, padding.upper(), data_format=data_format)
        return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def max_pool2d(inputs: Any, kernel_size: Any, stride: Any = 2, padding: str = "VALID", data_format: str = "NHWC",
               outputs_collections: Any = None, scope: Any = None) -> Any:
    """2-D max pooling of a 4-D tensor (per image and channel)."""
    return _pool(max_pool, "MaxPool2D", inputs, kernel_size, stride, padding, data_format, outputs_collections,
                 scope)


@add_arg_scope
def avg_pool2d(inputs: Any, kernel_size: Any, stride: Any = 2, padding: str = "VALID", data_format: str = "NHWC",
               outputs_collections: Any = None, scope: Any = None) -> Any:
    """2-D average pooling of a 4-D tensor (padding is not counted in the average)."""
    return _pool(avg_pool, "AvgPool2D", inputs, kernel_size, stride, padding, data_format, outputs_collections,
                 scope)


@add_arg_scope
def dropout(inputs: Any, keep_prob: Any = 0.5, noise_shape: Any = None, is_training: Any = True,
            outputs_collections: Any = None, scope: Any = None, seed: Optional[int] = None) -> Any:
    """With probability keep_prob each element is kept and scaled by 1 / keep_prob, otherwise
    zeroed, while `is_training` (a bool or a bool tensor); the identity otherwise."""
    with variable_scope(scope, "Dropout", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        outputs = smart_cond(is_training,
                             lambda: _nn_dropout(inputs, noise_shape=noise_shape, seed=seed, rate=1 - keep_prob),
                             lambda: identity(inputs))
        return collect_named_outputs(outputs_collections, sc.name, outputs)
