"""`tf.contrib.layers` layers: fully_connected, conv2d (convolution), flatten, layer_norm and
embed_sequence, with TF 1.15's variable names (`fully_connected/weights`, `Conv/biases`,
`LayerNorm/gamma`, `EmbedSequence/embeddings`) and defaults. Every layer is arg_scope-able."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework import graph as _graph
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops.array import reshape, shape as array_shape
from tensorweave.ops.linalg import matmul, tensordot
from tensorweave.ops.nn import batch_normalization, bias_add, conv1d, embedding_lookup, moments, relu
from tensorweave.ops.nn import conv2d as _nn_conv2d
from tensorweave.ops.state import ones_initializer, variable_scope, zeros_initializer
from tensorweave.contrib.framework.arg_scope import add_arg_scope
from tensorweave.contrib.framework.variables import model_variable
from tensorweave.contrib.layers.initializers import xavier_initializer
from tensorweave.contrib.layers.utils import collect_named_outputs, get_variable_collections

__all__ = ["fully_connected", "convolution", "convolution2d", "conv2d", "flatten", "layer_norm",
           "embed_sequence", "linear", "repeat", "stack"]


def _weights_and_biases(in_shape: list[int], num_outputs: int, dtype: Any, use_bias: bool,
                        weights_initializer: Any, weights_regularizer: Any, biases_initializer: Any,
                        biases_regularizer: Any, variables_collections: Any, trainable: bool) -> tuple[Any, Any]:
    weights = model_variable("weights", shape=in_shape + [num_outputs], dtype=dtype,
                             initializer=weights_initializer, regularizer=weights_regularizer,
                             collections=get_variable_collections(variables_collections, "weights"),
                             trainable=trainable)
    biases = None
    if use_bias:
        biases = model_variable("biases", shape=[num_outputs], dtype=dtype, initializer=biases_initializer,
                                regularizer=biases_regularizer,
                                collections=get_variable_collections(variables_collections, "biases"),
                                trainable=trainable)
    return weights, biases


def _finish(outputs: Any, normalizer_fn: Any, normalizer_params: Any, activation_fn: Any) -> Any:
    if normalizer_fn is not None:
        outputs = normalizer_fn(outputs, **(normalizer_params or {}))
    if activation_fn is not None:
        outputs = activation_fn(outputs)
    return outputs


@add_arg_scope
def fully_connected(inputs: Any, num_outputs: int, activation_fn: Any = relu, normalizer_fn: Any = None,
                    normalizer_params: Optional[dict] = None, weights_initializer: Any = xavier_initializer(),
                    weights_regularizer: Any = None, biases_initializer: Any = zeros_initializer(),
                    biases_regularizer: Any = None, reuse: Any = None, variables_collections: Any = None,
                    outputs_collections: Any = None, trainable: bool = True, scope: Any = None) -> Any:
    """activation_fn(normalizer_fn(inputs . weights) or inputs . weights + biases): a dense
    layer on the last dimension of `inputs` (rank 2 or more). Biases are left out when a
    normalizer_fn is given or biases_initializer is None."""
    if isinstance(num_outputs, bool) or not isinstance(num_outputs, (int, np.integer)):
        raise ValueError(f"num_outputs type should be one of [<class 'int'>], got {type(num_outputs)}.")
    with variable_scope(scope, "fully_connected", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        in_shape = inputs.get_shape()
        if in_shape.ndims is None or in_shape.ndims < 2:
            raise ValueError(f"Input {inputs.name} must have rank at least 2, got shape {in_shape}.")
        depth = in_shape[-1].value
        if depth is None:
            raise ValueError("The last dimension of the inputs to `Dense` should be defined. Found `None`.")
        use_bias = normalizer_fn is None and biases_initializer is not None
        weights, biases = _weights_and_biases(
            [depth], int(num_outputs), inputs.dtype.base_dtype, use_bias, weights_initializer,
            weights_regularizer, biases_initializer, biases_regularizer, variables_collections, trainable)
        if in_shape.ndims == 2:
            outputs = matmul(inputs, weights)
        else:
            outputs = tensordot(inputs, weights, [[in_shape.ndims - 1], [0]])
            outputs.set_shape(in_shape[:-1].concatenate([int(num_outputs)]))
        if biases is not None:
            outputs = bias_add(outputs, biases)
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


def _pair(value: Any, what: str, n: int) -> list[int]:
    values = [int(value)] * n if isinstance(value, (int, np.integer)) else [int(v) for v in value]
    if len(values) != n:
        raise ValueError(f"The `{what}` argument must be a tuple of {n} integers. Received: {value}")
    return values


def convolution(inputs: Any, num_outputs: int, kernel_size: Any, stride: Any = 1, padding: str = "SAME",
                data_format: Optional[str] = None, rate: Any = 1, activation_fn: Any = relu,
                normalizer_fn: Any = None, normalizer_params: Optional[dict] = None,
                weights_initializer: Any = xavier_initializer(), weights_regularizer: Any = None,
                biases_initializer: Any = zeros_initializer(), biases_regularizer: Any = None,
                reuse: Any = None, variables_collections: Any = None, outputs_collections: Any = None,
                trainable: bool = True, scope: Any = None, conv_dims: Optional[int] = None) -> Any:
    """A 1-D or 2-D convolution layer (inputs of rank 3 or 4) with `weights`
    [*kernel_size, in_channels, num_outputs] and `biases` in scope 'Conv'; `rate` dilates,
    `data_format` 'NHWC'/'NWC' (default) or 'NCHW'/'NCW'."""
    if data_format not in (None, "NWC", "NCW", "NHWC", "NCHW", "NDHWC", "NCDHW"):
        raise ValueError(f"Invalid data_format: {data_format!r}")
    with variable_scope(scope, "Conv", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        rank = inputs.get_shape().ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        if conv_dims is not None and conv_dims + 2 != rank:
            raise ValueError(f"Convolution expects input with rank {conv_dims + 2}, got {rank}")
        if rank not in (3, 4):
            raise ValueError(f"Convolution not supported for input with rank {rank} (tensorweave's "
                             "tf.contrib.layers.convolution covers 1-D and 2-D convolutions)")
        spatial = rank - 2
        channels_first = bool(data_format) and data_format.startswith("NC")  # type: ignore[union-attr]
        in_channels = inputs.get_shape()[1 if channels_first else -1].value
        if in_channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. Found `None`.")
        kernel = _pair(kernel_size, "kernel_size", spatial)
        strides = _pair(stride, "strides", spatial)
        rates = _pair(rate, "dilation_rate", spatial)
        if max(rates) > 1 and max(strides) > 1:
            raise ValueError(f"strides > 1 not supported in conjunction with dilation_rate > 1; received: "
                             f"strides={strides}, dilation_rate={rates}")
        use_bias = normalizer_fn is None and biases_initializer is not None
        weights, biases = _weights_and_biases(
            kernel + [in_channels], int(num_outputs), inputs.dtype.base_dtype, use_bias, weights_initializer,
            weights_regularizer, biases_initializer, biases_regularizer, variables_collections, trainable)
        padding = padding.upper()
        if spatial == 2:
            fmt = "NCHW" if channels_first else "NHWC"
            full = ([1, 1] + strides) if channels_first else ([1] + strides + [1])
            dil = ([1, 1] + rates) if channels_first else ([1] + rates + [1])
            outputs = _nn_conv2d(inputs, weights, full, padding, data_format=fmt, dilations=dil, name="Conv2D")
        else:
            fmt = "NCW" if channels_first else "NWC"
            outputs = conv1d(inputs, weights, strides[0], padding, data_format=fmt, dilations=rates[0],
                             name="conv1d")
        if biases is not None:
            outputs = bias_add(outputs, biases, data_format="NCHW" if channels_first else "NHWC")
        outputs = _finish(outputs, normalizer_fn, normalizer_params, activation_fn)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


_convolution = convolution  # convolution2d calls it without the arg_scope of convolution
convolution = add_arg_scope(convolution)


@add_arg_scope
def convolution2d(inputs: Any, num_outputs: int, kernel_size: Any, stride: Any = 1, padding: str = "SAME",
                  data_format: Optional[str] = None, rate: Any = 1, activation_fn: Any = relu,
                  normalizer_fn: Any = None, normalizer_params: Optional[dict] = None,
                  weights_initializer: Any = xavier_initializer(), weights_regularizer: Any = None,
                  biases_initializer: Any = zeros_initializer(), biases_regularizer: Any = None,
                  reuse: Any = None, variables_collections: Any = None, outputs_collections: Any = None,
                  trainable: bool = True, scope: Any = None) -> Any:
    """convolution() on 4-D inputs (NHWC or NCHW)."""
    return _convolution(inputs, num_outputs, kernel_size, stride, padding, data_format, rate, activation_fn,
                       normalizer_fn, normalizer_params, weights_initializer, weights_regularizer,
                       biases_initializer, biases_regularizer, reuse, variables_collections,
                       outputs_collections, trainable, scope, conv_dims=2)


conv2d = convolution2d


@add_arg_scope
def flatten(inputs: Any, outputs_collections: Any = None, scope: Any = None) -> Any:
    """Reshapes `inputs` to [batch_size, k], keeping the first dimension."""
    with _graph.name_scope(scope, "Flatten", [inputs]) as sc:
        inputs = convert_to_tensor(inputs)
        in_shape = inputs.get_shape()
        if in_shape.ndims is None:
            outputs = reshape(inputs, [array_shape(inputs)[0], -1])
        else:
            rest = in_shape[1:]
            if rest.is_fully_defined():
                outputs = reshape(inputs, [-1, int(np.prod(rest.as_list(), dtype=np.int64))])
            else:
                outputs = reshape(inputs, [array_shape(inputs)[0], -1])
            outputs.set_shape(TensorShape([in_shape[0].value, rest.num_elements()]))
        return collect_named_outputs(outputs_collections, sc, outputs)


@add_arg_scope
def layer_norm(inputs: Any, center: bool = True, scale: bool = True, activation_fn: Any = None,
               reuse: Any = None, variables_collections: Any = None, outputs_collections: Any = None,
               trainable: bool = True, begin_norm_axis: int = 1, begin_params_axis: int = -1,
               scope: Any = None) -> Any:
    """Layer normalization (Ba et al.): normalizes over dimensions begin_norm_axis.. with the
    moments of each example, then scales by `gamma` and shifts by `beta`, both of shape
    inputs.shape[begin_params_axis:]."""
    with variable_scope(scope, "LayerNorm", [inputs], reuse=reuse) as sc:
        inputs = convert_to_tensor(inputs)
        in_shape = inputs.get_shape()
        rank = in_shape.ndims
        if rank is None:
            raise ValueError(f"Inputs {inputs.name} has undefined rank.")
        dtype = inputs.dtype.base_dtype
        if begin_norm_axis < 0:
            begin_norm_axis = rank + begin_norm_axis
        if begin_params_axis >= rank or begin_norm_axis >= rank:
            raise ValueError(f"begin_params_axis ({begin_params_axis}) and begin_norm_axis ({begin_norm_axis}) "
                             f"must be < rank(inputs) ({rank})")
        params_shape = in_shape[begin_params_axis:]
        if not params_shape.is_fully_defined():
            raise ValueError(f"Inputs {inputs.name}: shape(inputs)[{begin_params_axis}:] is not fully defined: "
                             f"{in_shape}")
        beta = gamma = None
        if center:
            beta = model_variable("beta", shape=params_shape, dtype=dtype, initializer=zeros_initializer(),
                                  collections=get_variable_collections(variables_collections, "beta"),
                                  trainable=trainable)
        if scale:
            gamma = model_variable("gamma", shape=params_shape, dtype=dtype, initializer=ones_initializer(),
                                   collections=get_variable_collections(variables_collections, "gamma"),
                                   trainable=trainable)
        mean, variance = moments(inputs, list(range(begin_norm_axis, rank)), keep_dims=True)
        # TF's layer_norm uses a fixed, tiny epsilon (1e-12), not a parameter.
        outputs = batch_normalization(inputs, mean, variance, offset=beta, scale=gamma, variance_epsilon=1e-12)
        outputs.set_shape(in_shape)
        if activation_fn is not None:
            outputs = activation_fn(outputs)
        return collect_named_outputs(outputs_collections, sc.name, outputs)


def embed_sequence(ids: Any, vocab_size: Optional[int] = None, embed_dim: Optional[int] = None,
                   unique: bool = False, initializer: Any = None, regularizer: Any = None,
                   trainable: bool = True, scope: Any = None, reuse: Any = None) -> Any:
    """Embeds a [batch, doc_length] tensor of symbol ids into [batch, doc_length, embed_dim]
    through the model variable `EmbedSequence/embeddings` [vocab_size, embed_dim]."""
    if not (reuse or (vocab_size and embed_dim)):
        raise ValueError("Must specify vocab size and embedding dimension when not reusing. Got vocab_size="
                         f"{vocab_size} and embed_dim={embed_dim}")
    with variable_scope(scope, "EmbedSequence", [ids], reuse=reuse):
        shape = [vocab_size, embed_dim] if vocab_size and embed_dim else None
        embeddings = model_variable("embeddings", shape=shape, initializer=initializer,
                                    regularizer=regularizer, trainable=trainable)
        # `unique` only saves work (each distinct id looked up once); the result is the same.
        return embedding_lookup(embeddings, ids)


def linear(inputs: Any, num_outputs: int, **kwargs: Any) -> Any:
    """fully_connected without an activation."""
    return fully_connected(inputs, num_outputs, activation_fn=None, **kwargs)


def _layer_name(layer: Any, fallback: str) -> str:
    if hasattr(layer, "__name__"):
        return layer.__name__
    if hasattr(layer, "func") and hasattr(layer.func, "__name__"):
        return layer.func.__name__  # a functools.partial
    return fallback


def repeat(inputs: Any, repetitions: int, layer: Any, *args: Any, **kwargs: Any) -> Any:
    """Applies `layer` with the same arguments `repetitions` times, in scopes
    `<scope>/<scope>_1`, `<scope>/<scope>_2`, ... (scope defaults to the layer's name)."""
    scope = kwargs.pop("scope", None)
    with variable_scope(scope, "Repeat", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _layer_name(layer, "repeat")
        for i in range(repetitions):
            kwargs["scope"] = f"{scope}_{i + 1}"
            outputs = layer(outputs, *args, **kwargs)
        return outputs


def stack(inputs: Any, layer: Any, stack_args: Any, **kwargs: Any) -> Any:
    """Applies `layer` once per entry of `stack_args` (its extra positional arguments), each in
    its own numbered scope, feeding each output to the next."""
    scope = kwargs.pop("scope", None)
    if not isinstance(stack_args, (list, tuple)):
        raise ValueError("stack_args need to be a list or tuple")
    with variable_scope(scope, "Stack", [inputs]):
        outputs = convert_to_tensor(inputs)
        scope = scope or _layer_name(layer, "stack")
        for i, layer_args in enumerate(stack_args):
            kwargs["scope"] = f"{scope}_{i + 1}"
            if not isinstance(layer_args, (list, tuple)):
                layer_args = [layer_args]
            outputs = layer(outputs, *layer_args, **kwargs)
        return outputs
