"""tf.layers core layers: Dense, Dropout, Flatten and their functional forms (TF 1.15's
tensorflow/python/layers/core.py over Keras' semantics)."""
from __future__ import annotations

import numbers
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.layers import utils
from tensorweave.layers.base import InputSpec, Layer
from tensorweave.ops.array import expand_dims, identity, reshape, shape as _shape, transpose
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.joining import stack
from tensorweave.ops.linalg import matmul, tensordot
from tensorweave.ops.math import cast
from tensorweave.ops.nn import bias_add, dropout as nn_dropout
from tensorweave.ops.state import init_ops

__all__ = ["Dense", "dense", "Dropout", "dropout", "Flatten", "flatten"]


class Dense(Layer):
    """outputs = activation(inputs . kernel + bias): `kernel` is [input depth, units]; inputs of
    rank > 2 are contracted over their last axis."""

    def __init__(self, units: int, activation: Optional[Callable] = None, use_bias: bool = True,
                 kernel_initializer: Any = None, bias_initializer: Any = init_ops.zeros_initializer(),
                 kernel_regularizer: Optional[Callable] = None, bias_regularizer: Optional[Callable] = None,
                 activity_regularizer: Optional[Callable] = None, kernel_constraint: Optional[Callable] = None,
                 bias_constraint: Optional[Callable] = None, trainable: bool = True, name: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.units = int(units)
        if self.units <= 0:
            raise ValueError(f"Received an invalid value for `units`, expected a positive integer. "
                             f"Received: units={units}")
        self.activation = utils.activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = utils.initializer(kernel_initializer)
        self.bias_initializer = utils.initializer(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(min_ndim=2)

    def build(self, input_shape: Any) -> None:
        input_shape = TensorShape(input_shape)
        last = input_shape.dims[-1].value if input_shape.ndims else None
        if last is None:
            raise ValueError("The last dimension of the inputs to a Dense layer should be defined. "
                             "Found None. Full input shape received: " + str(input_shape))
        self.input_spec = InputSpec(min_ndim=2, axes={-1: last})
        self.kernel = self.add_weight("kernel", shape=[last, self.units], initializer=self.kernel_initializer,
                                      regularizer=self.kernel_regularizer, constraint=self.kernel_constraint,
                                      dtype=self._dtype, trainable=True)
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=[self.units], initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        dtype=self._dtype, trainable=True)
        self.built = True

    def call(self, inputs: Any) -> Any:
        if inputs.dtype.base_dtype != self.kernel.dtype.base_dtype:
            inputs = cast(inputs, self.kernel.dtype.base_dtype)
        rank = inputs.shape.ndims
        if rank == 2 or rank is None:
            outputs = matmul(inputs, self.kernel)
        else:
            outputs = tensordot(inputs, self.kernel, [[rank - 1], [0]])
            outputs.set_shape(inputs.shape.as_list()[:-1] + [self.units])
        if self.use_bias:
            outputs = bias_add(outputs, self.bias)
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        input_shape = TensorShape(input_shape)
        return TensorShape(input_shape.as_list()[:-1] + [self.units])


def dense(inputs: Any, units: int, activation: Optional[Callable] = None, use_bias: bool = True,
          kernel_initializer: Any = None, bias_initializer: Any = init_ops.zeros_initializer(),
          kernel_regularizer: Optional[Callable] = None, bias_regularizer: Optional[Callable] = None,
          activity_regularizer: Optional[Callable] = None, kernel_constraint: Optional[Callable] = None,
          bias_constraint: Optional[Callable] = None, trainable: bool = True, name: Optional[str] = None,
          reuse: Any = None) -> Any:
    """Functional interface for the densely-connected layer (`Dense`)."""
    layer = Dense(units, activation=activation, use_bias=use_bias, kernel_initializer=kernel_initializer,
                  bias_initializer=bias_initializer, kernel_regularizer=kernel_regularizer,
                  bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                  kernel_constraint=kernel_constraint, bias_constraint=bias_constraint, trainable=trainable,
                  name=name, _scope=name, _reuse=reuse)
    return layer(inputs)


class Dropout(Layer):
    """Sets a fraction `rate` of the inputs to 0 (scaling the rest by 1 / (1 - rate)) when
    `training` (a Python bool or a boolean tensor) is true; the identity otherwise. A `seed`
    is used by the first call and increased by one for each later call, as Keras' legacy
    random generator does."""

    def __init__(self, rate: float = 0.5, noise_shape: Any = None, seed: Optional[int] = None,
                 name: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        if isinstance(rate, (int, float)) and not 0 <= rate <= 1:
            raise ValueError(f"Invalid value {rate} received for `rate`, expected a value between 0 and 1.")
        self.rate = rate
        self.noise_shape = noise_shape
        self.seed = seed
        self._next_seed = seed

    def _noise_shape(self, inputs: Any) -> Any:
        if self.noise_shape is None:
            return None
        concrete = _shape(inputs)
        dims = [concrete[i] if d is None else d for i, d in enumerate(self.noise_shape)]
        return stack([convert_to_tensor(d) for d in dims])

    def _take_seed(self) -> Optional[int]:
        seed = self._next_seed
        if seed is not None:
            self._next_seed = seed + 1
        return seed

    def call(self, inputs: Any, training: Any = False) -> Any:
        if isinstance(self.rate, numbers.Real) and self.rate == 0:
            return identity(inputs)
        return utils.smart_cond(
            training,
            lambda: nn_dropout(inputs, noise_shape=self._noise_shape(inputs), seed=self._take_seed(),
                               rate=self.rate),
            lambda: identity(inputs))

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)


def dropout(inputs: Any, rate: float = 0.5, noise_shape: Any = None, seed: Optional[int] = None,
            training: Any = False, name: Optional[str] = None) -> Any:
    """Functional interface for `Dropout`: applied only when `training` is true."""
    layer = Dropout(rate, noise_shape=noise_shape, seed=seed, name=name)
    return layer(inputs, training=training)


class Flatten(Layer):
    """Flattens every dimension but the batch: [batch, ...] -> [batch, product of the rest];
    channels_first inputs are first moved to channels_last, as Keras does."""

    def __init__(self, data_format: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.data_format = utils.normalize_data_format(data_format)
        self.input_spec = InputSpec(min_ndim=1)

    def call(self, inputs: Any) -> Any:
        rank = inputs.shape.ndims
        if self.data_format == "channels_first" and rank is not None and rank > 1:
            inputs = transpose(inputs, [0] + list(range(2, rank)) + [1])
        if rank == 1:
            return expand_dims(inputs, 1)
        dims = inputs.shape.as_list() if rank is not None else None
        if dims is not None and all(d is not None for d in dims[1:]):
            target: Any = constant(np.array([-1, int(np.prod(dims[1:], dtype=np.int64))], np.int32))
        elif dims is not None and dims[0] is not None:
            target = constant(np.array([dims[0], -1], np.int32))
        else:
            target = stack([_shape(inputs)[0], constant(-1)])
        return reshape(inputs, target)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        rest = None if any(d is None for d in dims[1:]) else int(np.prod(dims[1:], dtype=np.int64))
        return TensorShape([dims[0], rest])


def flatten(inputs: Any, name: Optional[str] = None, data_format: str = "channels_last") -> Any:
    """Functional interface for `Flatten`."""
    return Flatten(name=name, data_format=data_format)(inputs)
