"""tf.layers batch normalization: BatchNormalization and batch_normalization (TF 1.15's
tensorflow/python/layers/normalization.py over Keras' V1 BatchNormalization semantics).

Weights gamma, beta (trainable), moving_mean, moving_variance (not trainable). With `training`
true the batch's statistics normalize and the moving ones are updated by
`moving -= (moving - batch) * (1 - momentum)`; these update ops are the layer's `updates` and go
to UPDATE_OPS, so they run only when the program depends on them, as in TF. The fused kernel is
used (fused=None or True) for rank-4/5 inputs normalized over axis 1 or the last axis, as TF:
it updates the moving variance with the unbiased batch variance, the unfused path with the
biased one. Renormalization, virtual batches and `adjustment` are not supported.
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.layers import utils
from tensorweave.layers.base import InputSpec, Layer
from tensorweave.ops.array import identity, reshape, shape as _shape
from tensorweave.ops.array.constant_op import constant
from tensorweave.ops.array.joining import concat
from tensorweave.ops.math import cast, multiply, subtract
from tensorweave.ops.nn import batch_normalization as nn_batch_normalization, fused_batch_norm, moments
from tensorweave.ops.state import init_ops
from tensorweave.ops.state.variable_ops import assign_sub

__all__ = ["BatchNormalization", "batch_normalization", "BatchNorm", "batch_norm"]


class BatchNormalization(Layer):
    """Batch normalization (Ioffe and Szegedy, 2015) over the `axis` (the channels)."""

    def __init__(self, axis: Any = -1, momentum: float = 0.99, epsilon: float = 1e-3, center: bool = True,
                 scale: bool = True, beta_initializer: Any = init_ops.zeros_initializer(),
                 gamma_initializer: Any = init_ops.ones_initializer(),
                 moving_mean_initializer: Any = init_ops.zeros_initializer(),
                 moving_variance_initializer: Any = init_ops.ones_initializer(),
                 beta_regularizer: Optional[Callable] = None, gamma_regularizer: Optional[Callable] = None,
                 beta_constraint: Optional[Callable] = None, gamma_constraint: Optional[Callable] = None,
                 renorm: bool = False, renorm_clipping: Any = None, renorm_momentum: float = 0.99,
                 fused: Optional[bool] = None, trainable: bool = True, virtual_batch_size: Optional[int] = None,
                 adjustment: Optional[Callable] = None, name: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(trainable=trainable, name=name, **kwargs)
        if renorm or virtual_batch_size is not None or adjustment is not None:
            raise ValueError("BatchNormalization here supports neither renorm, virtual_batch_size nor "
                             "adjustment (use the defaults: renorm=False, virtual_batch_size=None, "
                             "adjustment=None)")
        self.axis = list(axis) if isinstance(axis, (list, tuple)) else axis
        self.momentum, self.epsilon = momentum, epsilon
        self.center, self.scale = center, scale
        self.beta_initializer = utils.initializer(beta_initializer)
        self.gamma_initializer = utils.initializer(gamma_initializer)
        self.moving_mean_initializer = utils.initializer(moving_mean_initializer)
        self.moving_variance_initializer = utils.initializer(moving_variance_initializer)
        self.beta_regularizer, self.gamma_regularizer = beta_regularizer, gamma_regularizer
        self.beta_constraint, self.gamma_constraint = beta_constraint, gamma_constraint
        self.renorm = False
        if fused and isinstance(self.axis, list) and len(self.axis) > 1:
            raise ValueError("Passing `fused=True` is only supported when axis is 1 or 3 for input rank = 4 "
                             f"or 1 or 4 for input rank = 5. Got axis {self.axis}")
        self.fused = True if fused is None else fused  # TF1: decided for the input's rank in build
        self._fused_requested = fused

    @property
    def _param_dtype(self) -> Any:
        dtype = self._dtype
        if dtype is None or dtype == _dtypes.float16:
            return _dtypes.float32
        return dtype

    def build(self, input_shape: Any) -> None:
        input_shape = TensorShape(input_shape)
        rank = input_shape.ndims
        if rank is None:
            raise ValueError(f"Input has undefined rank. Received: input_shape={input_shape}")
        axes = self.axis if isinstance(self.axis, list) else [self.axis]
        for a in axes:
            if not -rank <= a < rank:
                raise ValueError(f"Invalid axis: {a}, input_shape={input_shape}")
        self.axis = sorted({a % rank for a in axes})
        if self.fused:
            fusable = (len(self.axis) == 1 and self._param_dtype == _dtypes.float32
                       and (self._dtype in (None, _dtypes.float32, _dtypes.float16)))
            self.fused = rank in (4, 5) and fusable and self.axis[0] in (1, rank - 1)
            if self._fused_requested and not self.fused:
                raise ValueError(f"Batch normalization with `fused=True` only supports 4D or 5D float32 inputs "
                                 f"normalized over axis 1 or the last axis; got shape {input_shape}, axis "
                                 f"{self.axis}")
        dims = {a: input_shape.dims[a].value for a in self.axis}
        for a, d in dims.items():
            if d is None:
                raise ValueError(f"Input has undefined `axis` dimension. Received input with shape "
                                 f"{tuple(input_shape.as_list())} and axis={tuple(self.axis)}")
        self.input_spec = InputSpec(ndim=rank, axes=dims)
        param_shape = [dims[self.axis[0]]] if len(dims) == 1 else [dims.get(i, 1) for i in range(rank)]
        weight = self._weight
        self.gamma = weight("gamma", param_shape, self.gamma_initializer, self.gamma_regularizer,
                            self.gamma_constraint, True) if self.scale else None
        self.beta = weight("beta", param_shape, self.beta_initializer, self.beta_regularizer,
                           self.beta_constraint, True) if self.center else None
        self.moving_mean = weight("moving_mean", param_shape, self.moving_mean_initializer, None, None, False)
        self.moving_variance = weight("moving_variance", param_shape, self.moving_variance_initializer,
                                      None, None, False)
        self.built = True

    def _weight(self, name: str, shape: list[int], initializer: Any, regularizer: Any, constraint: Any,
                trainable: bool) -> Any:
        # The moving statistics are never partitioned (TF clears the scope's partitioner).
        scope = self._scope
        partitioner = scope.partitioner if scope is not None else None
        if scope is not None and not trainable:
            scope.partitioner = None
        try:
            return self.add_weight(name, shape=shape, dtype=self._param_dtype, initializer=initializer,
                                   regularizer=regularizer, constraint=constraint, trainable=trainable)
        finally:
            if scope is not None:
                scope.partitioner = partitioner

    # -- updates -----------------------------------------------------------------------------
    def _assign_moving_average(self, variable: Any, value: Any, momentum: Any) -> Any:
        with _graph.name_scope("AssignMovingAvg") as scope:
            with _graph.get_default_graph().colocate_with(variable.op):
                decay = convert_to_tensor(1.0 - momentum, name="decay")
                if decay.dtype.base_dtype != variable.dtype.base_dtype:
                    decay = cast(decay, variable.dtype.base_dtype)
                delta = multiply(subtract(variable, cast(value, variable.dtype.base_dtype)), decay)
                return assign_sub(variable, delta, name=scope)

    # -- computation -------------------------------------------------------------------------
    def _constant_param(self, value: float) -> Any:
        return constant(np.full(self.moving_mean.shape.as_list(), value, self._param_dtype.as_numpy_dtype))

    def _fused(self, inputs: Any, training: Any) -> Any:
        gamma = self.gamma if self.scale else self._constant_param(1.0)
        beta = self.beta if self.center else self._constant_param(0.0)
        rank = inputs.shape.ndims
        fmt = "NCHW" if self.axis[0] == 1 else "NHWC"
        x = inputs
        if rank == 5:  # merge depth into height: the per-channel statistics are unchanged
            dims = _shape(inputs)
            merged = [dims[0], dims[1], dims[2] * dims[3], dims[4]] if fmt == "NCHW" else \
                [dims[0], dims[1] * dims[2], dims[3], dims[4]]
            from_parts = concat([reshape(d, [1]) for d in merged], 0)
            x = reshape(inputs, from_parts)

        def train() -> Any:
            return fused_batch_norm(x, gamma, beta, mean=self.moving_mean, variance=self.moving_variance,
                                    epsilon=self.epsilon, is_training=True, data_format=fmt)

        def infer() -> Any:
            return fused_batch_norm(x, gamma, beta, mean=self.moving_mean, variance=self.moving_variance,
                                    epsilon=self.epsilon, is_training=False, data_format=fmt)

        output, mean, variance = utils.smart_cond(training, train, infer)
        if rank == 5:
            output = reshape(output, _shape(inputs))
        output.set_shape(inputs.shape)
        training_value = utils.constant_value(training)
        if training_value or training_value is None:
            if training_value is None:
                momentum = utils.smart_cond(training, lambda: constant(self.momentum, _dtypes.float32),
                                            lambda: constant(1.0, _dtypes.float32))
            else:
                momentum = convert_to_tensor(self.momentum)
            self.add_update(self._assign_moving_average(self.moving_mean, mean, momentum))
            self.add_update(self._assign_moving_average(self.moving_variance, variance, momentum))
        return output

    def _unfused(self, inputs: Any, training: Any) -> Any:
        rank = inputs.shape.ndims
        reduction_axes = [i for i in range(rank) if i not in self.axis]
        broadcast_shape = [1] * rank
        broadcast_shape[self.axis[0]] = inputs.shape.dims[self.axis[0]].value

        def broadcast(v: Any) -> Any:
            if v is not None and v.shape.ndims != rank and reduction_axes != list(range(rank - 1)):
                return reshape(v, broadcast_shape)
            return v

        scale, offset = broadcast(self.gamma), broadcast(self.beta)
        training_value = utils.constant_value(training)
        if training_value is False:
            mean, variance = self.moving_mean, self.moving_variance
        else:
            keep_dims = len(self.axis) > 1
            batch_mean, batch_variance = moments(cast(inputs, self._param_dtype), reduction_axes,
                                                 keep_dims=keep_dims)
            mean = utils.smart_cond(training, lambda: batch_mean,
                                    lambda: convert_to_tensor(self.moving_mean))
            variance = utils.smart_cond(training, lambda: batch_variance,
                                        lambda: convert_to_tensor(self.moving_variance))
            for var, value in ((self.moving_mean, mean), (self.moving_variance, variance)):
                # both branches give the variable's value (not its reference) out of the cond
                self.add_update(utils.smart_cond(
                    training,
                    lambda var=var, value=value: identity(self._assign_moving_average(var, value, self.momentum)),
                    lambda var=var: identity(var)))
        dtype = inputs.dtype.base_dtype
        mean, variance = cast(mean, dtype), cast(variance, dtype)
        offset = None if offset is None else cast(offset, dtype)
        scale = None if scale is None else cast(scale, dtype)
        outputs = nn_batch_normalization(inputs, broadcast(mean), broadcast(variance), offset, scale, self.epsilon)
        outputs.set_shape(inputs.shape)
        return outputs

    def call(self, inputs: Any, training: Any = False) -> Any:
        if self.fused:
            return self._fused(inputs, training)
        return self._unfused(inputs, training)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        return TensorShape(input_shape)


def batch_normalization(inputs: Any, axis: Any = -1, momentum: float = 0.99, epsilon: float = 1e-3,
                        center: bool = True, scale: bool = True,
                        beta_initializer: Any = init_ops.zeros_initializer(),
                        gamma_initializer: Any = init_ops.ones_initializer(),
                        moving_mean_initializer: Any = init_ops.zeros_initializer(),
                        moving_variance_initializer: Any = init_ops.ones_initializer(),
                        beta_regularizer: Optional[Callable] = None, gamma_regularizer: Optional[Callable] = None,
                        beta_constraint: Optional[Callable] = None, gamma_constraint: Optional[Callable] = None,
                        training: Any = False, trainable: bool = True, name: Optional[str] = None,
                        reuse: Any = None, renorm: bool = False, renorm_clipping: Any = None,
                        renorm_momentum: float = 0.99, fused: Optional[bool] = None,
                        virtual_batch_size: Optional[int] = None, adjustment: Optional[Callable] = None) -> Any:
    """Functional interface for `BatchNormalization`. When training, the moving statistics are
    updated by ops in tf.GraphKeys.UPDATE_OPS, which the train op must depend on."""
    layer = BatchNormalization(
        axis=axis, momentum=momentum, epsilon=epsilon, center=center, scale=scale,
        beta_initializer=beta_initializer, gamma_initializer=gamma_initializer,
        moving_mean_initializer=moving_mean_initializer, moving_variance_initializer=moving_variance_initializer,
        beta_regularizer=beta_regularizer, gamma_regularizer=gamma_regularizer, beta_constraint=beta_constraint,
        gamma_constraint=gamma_constraint, renorm=renorm, renorm_clipping=renorm_clipping,
        renorm_momentum=renorm_momentum, fused=fused, trainable=trainable,
        virtual_batch_size=virtual_batch_size, adjustment=adjustment, name=name, _reuse=reuse, _scope=name)
    return layer(inputs, training=training)


BatchNorm = BatchNormalization
batch_norm = batch_normalization
