"""`tf.contrib.layers.batch_norm` (Ioffe & Szegedy) with TF 1.15's variables
(`BatchNorm/beta`, `BatchNorm/gamma` only with scale=True, `BatchNorm/moving_mean`,
`BatchNorm/moving_variance`) and defaults (decay 0.999, epsilon 0.001, center, no scale).

Inputs of rank 2 and 4 go through one FusedBatchNorm op (the default, fused=None), whose batch
variance for the moving average is the unbiased one; other ranks, or fused=False, use moments
(the biased variance), as TF does. In training the moving averages are updated by ops put in
`updates_collections` (UPDATE_OPS), or, with updates_collections=None, before the output is
returned (in place)."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array import constant, identity, reshape, shape as array_shape
from tensorweave.ops.nn import batch_normalization, fused_batch_norm, moments
from tensorweave.ops.state import ones_initializer, variable_scope, zeros_initializer
from tensorweave.training.moving_averages import assign_moving_average
from tensorweave.contrib.framework.arg_scope import add_arg_scope
from tensorweave.contrib.framework.variables import model_variable
from tensorweave.contrib.layers.utils import collect_named_outputs, constant_value, get_variable_collections, \
    smart_cond

__all__ = ["batch_norm"]

_FORMATS = ("NHWC", "NCHW")


def _params(params_shape: Any, dtype: Any, center: bool, scale: bool, initializers: dict, regularizers: dict,
            variables_collections: Any, trainable: bool) -> tuple[Any, Any, Any, Any]:
    """beta, gamma (constants when not centred / scaled), moving_mean, moving_variance."""
    def make(name: str, default_init: Any, train: bool, regularizer: Any = None) -> Any:
        return model_variable(name, shape=params_shape, dtype=dtype,
                              initializer=initializers.get(name, default_init), regularizer=regularizer,
                              collections=get_variable_collections(variables_collections, name),
                              trainable=train)
    beta = make("beta", zeros_initializer(), trainable, regularizers.get("beta")) if center else None
    gamma = make("gamma", ones_initializer(), trainable, regularizers.get("gamma")) if scale else None
    moving_mean = make("moving_mean", zeros_initializer(), False)
    moving_variance = make("moving_variance", ones_initializer(), False)
    return beta, gamma, moving_mean, moving_variance


def _updates(moving_mean: Any, moving_variance: Any, mean: Any, variance: Any, decay: float,
             zero_debias_moving_mean: bool) -> tuple[Any, Any]:
    return (assign_moving_average(moving_mean, mean, decay, zero_debias=zero_debias_moving_mean),
            assign_moving_average(moving_variance, variance, decay, zero_debias=False))


def _fused(inputs: Any, data_format: str, beta: Any, gamma: Any, moving_mean: Any, moving_variance: Any,
           epsilon: float, is_training: Any, params_shape: Any, dtype: Any) -> tuple[Any, Any, Any]:
    beta = beta if beta is not None else constant(0.0, dtype=dtype, shape=params_shape)
    gamma = gamma if gamma is not None else constant(1.0, dtype=dtype, shape=params_shape)
    return smart_cond(
        is_training,
        lambda: fused_batch_norm(inputs, gamma, beta, epsilon=epsilon, data_format=data_format),
        lambda: fused_batch_norm(inputs, gamma, beta, mean=moving_mean, variance=moving_variance,
                                 epsilon=epsilon, is_training=False, data_format=data_format))


@add_arg_scope
def batch_norm(inputs: Any, decay: float = 0.999, center: bool = True, scale: bool = False,
               epsilon: float = 0.001, activation_fn: Any = None, param_initializers: Optional[dict] = None,
               param_regularizers: Optional[dict] = None, updates_collections: Any = GraphKeys.UPDATE_OPS,
               is_training: Any = True, reuse: Any = None, variables_collections: Any = None,
               outputs_collections: Any = None, trainable: bool = True, batch_weights: Any = None,
               fused: Optional[bool] = None, data_format: str = "NHWC", zero_debias_moving_mean: bool = False,
               scope: Any = None, renorm: bool = False, renorm_clipping: Any = None, renorm_decay: float = 0.99,
               adjustment: Any = None) -> Any:
    """Batch normalization over all but the channel dimension (the last for NHWC, the second
    for NCHW): (x - mean) / sqrt(var + epsilon) * gamma + beta, with the batch's moments in
    training and the moving averages otherwise. Usable as a normalizer_fn."""
    if data_format not in _FORMATS:
        raise ValueError("data_format has to be either NCHW or NHWC.")
    if batch_weights is not None or renorm or adjustment is not None:
        raise ValueError("tensorweave's batch_norm does not support batch_weights, renorm or adjustment")
    fused = True if fused is None else fused
    with variable_scope(scope, "BatchNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        original_shape = inputs.get_shape()
        rank = original_shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        use_fused = fused and rank in (2, 4)
        original = inputs
        if use_fused and rank == 2:
            channels = original_shape[-1].value
            if channels is None:
                raise ValueError("`C` dimension must be known but is None")
            inputs = reshape(inputs, [-1, channels, 1, 1] if data_format == "NCHW" else [-1, 1, 1, channels])
        in_shape = inputs.get_shape()
        params_shape = in_shape[1:2] if data_format == "NCHW" else in_shape[-1:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name} has undefined `C` dimension {params_shape}.")
        dtype = _dtypes.float32 if use_fused else inputs.dtype.base_dtype
        beta, gamma, moving_mean, moving_variance = _params(
            params_shape, dtype, center, scale, param_initializers or {}, param_regularizers or {},
            variables_collections, trainable)
        if use_fused:
            outputs, mean, variance = _fused(inputs, data_format, beta, gamma, moving_mean, moving_variance,
                                             epsilon, is_training, params_shape, dtype)
        else:
            mean, variance = _batch_moments(inputs, data_format, rank, is_training, moving_mean, moving_variance)
        training = constant_value(is_training)
        if training is None or training:
            if updates_collections is None:
                def force() -> Any:
                    with _graph.control_dependencies(list(_updates(moving_mean, moving_variance, mean, variance,
                                                                   decay, zero_debias_moving_mean))):
                        return identity(outputs) if use_fused else (identity(mean), identity(variance))
                keep = (lambda: outputs) if use_fused else (lambda: (moving_mean, moving_variance))
                forced = smart_cond(is_training, force, keep)
                if use_fused:
                    outputs = forced
                else:
                    mean, variance = forced
            else:
                update_mean, update_variance = smart_cond(
                    is_training,
                    lambda: _updates(moving_mean, moving_variance, mean, variance, decay, zero_debias_moving_mean),
                    lambda: (moving_mean, moving_variance))
                _graph.add_to_collections(updates_collections, update_mean)
                _graph.add_to_collections(updates_collections, update_variance)
                if not use_fused:
                    mean, variance = smart_cond(is_training, lambda: (mean, variance),
                                                lambda: (moving_mean, moving_variance))
        if not use_fused:
            outputs = _normalize(inputs, data_format, rank, mean, variance, beta, gamma, epsilon)
        outputs.set_shape(in_shape)
        if use_fused and rank == 2:
            outputs = reshape(outputs, _static_target(original) or array_shape(original))
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


def _batch_moments(inputs: Any, data_format: str, rank: int, is_training: Any, moving_mean: Any,
                   moving_variance: Any) -> tuple[Any, Any]:
    training = constant_value(is_training)
    if training is False:
        return moving_mean, moving_variance
    if data_format == "NCHW":
        mean, variance = moments(inputs, [0] + list(range(2, rank)), keep_dims=True)
        return reshape(mean, [-1]), reshape(variance, [-1])
    return moments(inputs, list(range(rank - 1)))


def _normalize(inputs: Any, data_format: str, rank: int, mean: Any, variance: Any, beta: Any, gamma: Any,
               epsilon: float) -> Any:
    if data_format == "NCHW":
        broadcast = [1, inputs.get_shape()[1].value] + [1] * (rank - 2)
        mean, variance = reshape(mean, broadcast), reshape(variance, broadcast)
        beta = reshape(beta, broadcast) if beta is not None else None
        gamma = reshape(gamma, broadcast) if gamma is not None else None
    return batch_normalization(inputs, mean, variance, beta, gamma, epsilon)


def _static_target(t: Any) -> Optional[list[int]]:
    """t's static shape as a reshape target (-1 for one unknown dimension), else None."""
    if t.get_shape().ndims is None:
        return None
    dims = [-1 if d is None else d for d in t.get_shape().as_list()]
    return dims if dims.count(-1) <= 1 else None
