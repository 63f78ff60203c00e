"""tf.layers convolutions: Conv1D/2D/3D, Conv2DTranspose/Conv3DTranspose, SeparableConv1D/2D
and their functional forms (TF 1.15's tensorflow/python/layers/convolutional.py over Keras'
semantics). Kernels are [*kernel_size, in, filters] ([*kernel_size, filters, in] for the
transposed ones); channels_last and channels_first, 'valid' and 'same' padding, strides and
dilation_rate."""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.layers import utils
from tensorweave.layers.base import InputSpec, Layer
from tensorweave.ops.array import expand_dims, pad, shape as _shape, squeeze
from tensorweave.ops.array.joining import stack
from tensorweave.ops import nn as nn_ops
from tensorweave.ops.nn import bias_add
from tensorweave.ops.state import init_ops

__all__ = ["Conv1D", "Conv2D", "Conv3D", "Conv2DTranspose", "Conv3DTranspose", "SeparableConv1D",
           "SeparableConv2D", "conv1d", "conv2d", "conv3d", "conv2d_transpose", "conv3d_transpose",
           "separable_conv1d", "separable_conv2d", "Convolution1D", "Convolution2D", "Convolution3D",
           "Convolution2DTranspose", "Convolution3DTranspose", "SeparableConvolution2D",
           "convolution1d", "convolution2d", "convolution3d", "convolution2d_transpose",
           "convolution3d_transpose"]

_ZEROS = init_ops.zeros_initializer()


class _Conv(Layer):
    """N-D convolution over `rank` spatial dimensions, plus bias and activation."""

    def __init__(self, rank: int, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = 1,
                 activation: Optional[Callable] = None, use_bias: bool = True, kernel_initializer: Any = None,
                 bias_initializer: Any = _ZEROS, kernel_regularizer: Optional[Callable] = None,
                 bias_regularizer: Optional[Callable] = None, activity_regularizer: Optional[Callable] = None,
                 kernel_constraint: Optional[Callable] = None, bias_constraint: Optional[Callable] = None,
                 trainable: bool = True, name: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(trainable=trainable, name=name, activity_regularizer=activity_regularizer, **kwargs)
        self.rank = rank
        self.filters = int(filters)
        if self.filters <= 0:
            raise ValueError(f"Invalid value for argument `filters`. Expected a strictly positive value. "
                             f"Received filters={filters}.")
        self.kernel_size = utils.normalize_tuple(kernel_size, rank, "kernel_size")
        self.strides = utils.normalize_tuple(strides, rank, "strides")
        self.padding = utils.normalize_padding(padding, allow_causal=rank == 1)
        self.data_format = utils.normalize_data_format(data_format)
        self.dilation_rate = utils.normalize_tuple(dilation_rate, rank, "dilation_rate")
        if max(self.strides) > 1 and max(self.dilation_rate) > 1:
            raise ValueError(f"`strides > 1` not supported in conjunction with `dilation_rate > 1`. Received: "
                             f"strides={self.strides} and dilation_rate={self.dilation_rate}")
        self.activation = utils.activation(activation)
        self.use_bias = use_bias
        self.kernel_initializer = utils.initializer(kernel_initializer)
        self.bias_initializer = utils.initializer(bias_initializer)
        self.kernel_regularizer, self.bias_regularizer = kernel_regularizer, bias_regularizer
        self.kernel_constraint, self.bias_constraint = kernel_constraint, bias_constraint
        self.input_spec = InputSpec(min_ndim=rank + 2)

    @property
    def _channel_axis(self) -> int:
        return 1 if self.data_format == "channels_first" else -1

    def _input_channels(self, input_shape: Any) -> int:
        shape = TensorShape(input_shape)
        channels = shape.dims[self._channel_axis].value if shape.ndims else None
        if channels is None:
            raise ValueError("The channel dimension of the inputs should be defined. The input_shape received "
                             f"is {shape}, where axis {self._channel_axis} (0-based) is the channel "
                             "dimension, which found to be `None`.")
        self.input_spec = InputSpec(min_ndim=self.rank + 2, axes={self._channel_axis: channels})
        return channels

    def _kernel_shape(self, channels: int) -> tuple[int, ...]:
        return self.kernel_size + (channels, self.filters)

    def build(self, input_shape: Any) -> None:
        channels = self._input_channels(input_shape)
        self.kernel = self.add_weight("kernel", shape=self._kernel_shape(channels),
                                      initializer=self.kernel_initializer, regularizer=self.kernel_regularizer,
                                      constraint=self.kernel_constraint, trainable=True, dtype=self._dtype)
        self._build_bias()
        self.built = True

    def _build_bias(self) -> None:
        self.bias = None
        if self.use_bias:
            self.bias = self.add_weight("bias", shape=(self.filters,), initializer=self.bias_initializer,
                                        regularizer=self.bias_regularizer, constraint=self.bias_constraint,
                                        trainable=True, dtype=self._dtype)

    def _causal(self, inputs: Any) -> Any:
        """'causal' padding (1-D only): pad the steps on the left, then convolve 'valid', so an
        output never depends on later inputs."""
        left = self.dilation_rate[0] * (self.kernel_size[0] - 1)
        pads = [[0, 0], [0, 0], [left, 0]] if self.data_format == "channels_first" else [[0, 0], [left, 0], [0, 0]]
        return pad(inputs, pads)

    def _padding_and_inputs(self, inputs: Any) -> tuple[str, Any]:
        if self.padding == "causal":
            return "VALID", self._causal(inputs)
        return self.padding.upper(), inputs

    def _convolve(self, inputs: Any) -> Any:
        fmt = utils.convert_data_format(self.data_format, self.rank + 2)
        padding, inputs = self._padding_and_inputs(inputs)
        if self.rank == 1:
            return nn_ops.conv1d(inputs, self.kernel, list(self.strides), padding, data_format=fmt,
                          dilations=list(self.dilation_rate))
        if self.rank == 2:
            return nn_ops.conv2d(inputs, self.kernel, list(self.strides), padding, data_format=fmt,
                          dilations=list(self.dilation_rate))
        return nn_ops.conv3d(inputs, self.kernel, list(self.strides), padding, data_format=fmt,
                      dilations=list(self.dilation_rate))

    def _finish(self, outputs: Any) -> Any:
        if self.use_bias:
            outputs = bias_add(outputs, self.bias, data_format="NCHW" if self.data_format == "channels_first"
                               else "NHWC")
        if self.activation is not None:
            return self.activation(outputs)
        return outputs

    def call(self, inputs: Any) -> Any:
        return self._finish(self._convolve(inputs))

    def _spatial(self, dims: list[Any]) -> list[Any]:
        return dims[2:] if self.data_format == "channels_first" else dims[1:-1]

    def _with_spatial(self, batch: Any, spatial: list[Any], channels: Any) -> list[Any]:
        if self.data_format == "channels_first":
            return [batch, channels] + spatial
        return [batch] + spatial + [channels]

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        spatial = [utils.conv_output_length(d, k, self.padding, s, r) for d, k, s, r in
                   zip(self._spatial(dims), self.kernel_size, self.strides, self.dilation_rate)]
        return TensorShape(self._with_spatial(dims[0], spatial, self.filters))


class Conv1D(_Conv):
    """1-D convolution (temporal): inputs [batch, length, channels] (channels_last); padding
    'valid', 'same' or 'causal'."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = 1, *args: Any, **kwargs: Any) -> None:
        super().__init__(1, filters, kernel_size, strides, padding, data_format, dilation_rate, *args, **kwargs)


class Conv2D(_Conv):
    """2-D convolution (spatial): inputs [batch, height, width, channels] (channels_last)."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = (1, 1), *args: Any,
                 **kwargs: Any) -> None:
        super().__init__(2, filters, kernel_size, strides, padding, data_format, dilation_rate, *args, **kwargs)


class Conv3D(_Conv):
    """3-D convolution (volumes): inputs [batch, depth, height, width, channels] (channels_last)."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1, 1), padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = (1, 1, 1), *args: Any,
                 **kwargs: Any) -> None:
        super().__init__(3, filters, kernel_size, strides, padding, data_format, dilation_rate, *args, **kwargs)


class _ConvTranspose(_Conv):
    """The transpose of a convolution (its input gradient), with a [*kernel, filters, in] kernel."""

    def _kernel_shape(self, channels: int) -> tuple[int, ...]:
        return self.kernel_size + (self.filters, channels)

    def _output_spatial(self, inputs: Any) -> list[Any]:
        static = self._spatial(inputs.shape.as_list())
        dynamic = _shape(inputs)
        offset = 2 if self.data_format == "channels_first" else 1
        out = []
        for i, (size, k, s, r) in enumerate(zip(static, self.kernel_size, self.strides, self.dilation_rate)):
            if size is None:  # as Keras: the size from the input's run-time shape
                size = dynamic[offset + i]
            out.append(utils.deconv_output_length(size, k, self.padding, s, r))
        return out

    def call(self, inputs: Any) -> Any:
        batch = _shape(inputs)[0]
        output_shape = stack(self._with_spatial(batch, self._output_spatial(inputs), self.filters))
        fmt = utils.convert_data_format(self.data_format, self.rank + 2)
        strides = self._with_spatial(1, list(self.strides), 1)
        if self.rank == 2:
            outputs = nn_ops.conv2d_transpose(inputs, self.kernel, output_shape, strides, padding=self.padding.upper(),
                                       data_format=fmt, dilations=self._with_spatial(1, list(self.dilation_rate), 1))
        else:
            outputs = nn_ops.conv3d_transpose(inputs, self.kernel, output_shape, strides, padding=self.padding.upper(),
                                       data_format=fmt)
        outputs.set_shape(self.compute_output_shape(inputs.shape))
        return self._finish(outputs)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        spatial = [utils.deconv_output_length(d, k, self.padding, s, r) for d, k, s, r in
                   zip(self._spatial(dims), self.kernel_size, self.strides, self.dilation_rate)]
        return TensorShape(self._with_spatial(dims[0], spatial, self.filters))


class Conv2DTranspose(_ConvTranspose):
    """Transposed 2-D convolution ("deconvolution"); `dilation_rate` may be given by keyword."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 data_format: str = "channels_last", *args: Any, **kwargs: Any) -> None:
        dilation_rate = kwargs.pop("dilation_rate", (1, 1))
        super().__init__(2, filters, kernel_size, strides, padding, data_format, dilation_rate, *args, **kwargs)


class Conv3DTranspose(_ConvTranspose):
    """Transposed 3-D convolution ("deconvolution")."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1, 1), padding: str = "valid",
                 data_format: str = "channels_last", *args: Any, **kwargs: Any) -> None:
        super().__init__(3, filters, kernel_size, strides, padding, data_format, 1, *args, **kwargs)


class _SeparableConv(_Conv):
    """A depthwise convolution (depth_multiplier filters per input channel) followed by a 1x1
    convolution to `filters` channels: weights depthwise_kernel, pointwise_kernel, bias."""

    def __init__(self, rank: int, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = 1, depth_multiplier: int = 1,
                 activation: Optional[Callable] = None, use_bias: bool = True, depthwise_initializer: Any = None,
                 pointwise_initializer: Any = None, bias_initializer: Any = _ZEROS,
                 depthwise_regularizer: Optional[Callable] = None, pointwise_regularizer: Optional[Callable] = None,
                 bias_regularizer: Optional[Callable] = None, activity_regularizer: Optional[Callable] = None,
                 depthwise_constraint: Optional[Callable] = None, pointwise_constraint: Optional[Callable] = None,
                 bias_constraint: Optional[Callable] = None, trainable: bool = True, name: Optional[str] = None,
                 **kwargs: Any) -> None:
        super().__init__(rank, filters, kernel_size, strides, padding, data_format, dilation_rate,
                         activation=activation, use_bias=use_bias, bias_initializer=bias_initializer,
                         bias_regularizer=bias_regularizer, activity_regularizer=activity_regularizer,
                         bias_constraint=bias_constraint, trainable=trainable, name=name, **kwargs)
        self.depth_multiplier = int(depth_multiplier)
        self.depthwise_initializer = utils.initializer(depthwise_initializer)
        self.pointwise_initializer = utils.initializer(pointwise_initializer)
        self.depthwise_regularizer, self.pointwise_regularizer = depthwise_regularizer, pointwise_regularizer
        self.depthwise_constraint, self.pointwise_constraint = depthwise_constraint, pointwise_constraint

    def build(self, input_shape: Any) -> None:
        channels = self._input_channels(input_shape)
        self.depthwise_kernel = self.add_weight(
            "depthwise_kernel", shape=self.kernel_size + (channels, self.depth_multiplier),
            initializer=self.depthwise_initializer, regularizer=self.depthwise_regularizer,
            constraint=self.depthwise_constraint, trainable=True, dtype=self._dtype)
        self.pointwise_kernel = self.add_weight(
            "pointwise_kernel", shape=(1,) * self.rank + (self.depth_multiplier * channels, self.filters),
            initializer=self.pointwise_initializer, regularizer=self.pointwise_regularizer,
            constraint=self.pointwise_constraint, trainable=True, dtype=self._dtype)
        self._build_bias()
        self.built = True

    def _separable(self, inputs: Any, depthwise: Any, pointwise: Any, strides: tuple[int, ...],
                   rates: tuple[int, ...], padding: str) -> Any:
        fmt = "NCHW" if self.data_format == "channels_first" else "NHWC"
        return nn_ops.separable_conv2d(inputs, depthwise, pointwise, strides=self._with_spatial(1, list(strides), 1),
                                       padding=padding, rate=list(rates), data_format=fmt)


class SeparableConv1D(_SeparableConv):
    """Depthwise separable 1-D convolution (computed as a 2-D one over a height of 1)."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = 1, depth_multiplier: int = 1,
                 *args: Any, **kwargs: Any) -> None:
        super().__init__(1, filters, kernel_size, strides, padding, data_format, dilation_rate,
                         depth_multiplier, *args, **kwargs)

    def call(self, inputs: Any) -> Any:
        axis = 2 if self.data_format == "channels_first" else 1
        padding, inputs = self._padding_and_inputs(inputs)
        outputs = self._separable(expand_dims(inputs, axis), expand_dims(self.depthwise_kernel, 0),
                                  expand_dims(self.pointwise_kernel, 0), self.strides * 2,
                                  (1,) + self.dilation_rate, padding)
        return self._finish(squeeze(outputs, [axis]))


class SeparableConv2D(_SeparableConv):
    """Depthwise separable 2-D convolution."""

    def __init__(self, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                 data_format: str = "channels_last", dilation_rate: Any = (1, 1), depth_multiplier: int = 1,
                 *args: Any, **kwargs: Any) -> None:
        super().__init__(2, filters, kernel_size, strides, padding, data_format, dilation_rate,
                         depth_multiplier, *args, **kwargs)

    def call(self, inputs: Any) -> Any:
        return self._finish(self._separable(inputs, self.depthwise_kernel, self.pointwise_kernel, self.strides,
                                            self.dilation_rate, self.padding.upper()))


# ---------------------------------------------------------------------------------------------
# Functional forms: a new layer named (and scoped) `name`, reusing its variables when `reuse`
# ---------------------------------------------------------------------------------------------
_CONV_TAIL = ("activation", "use_bias", "kernel_initializer", "bias_initializer", "kernel_regularizer",
              "bias_regularizer", "activity_regularizer", "kernel_constraint", "bias_constraint", "trainable",
              "name", "reuse")
_SEPARABLE_TAIL = ("activation", "use_bias", "depthwise_initializer", "pointwise_initializer", "bias_initializer",
                   "depthwise_regularizer", "pointwise_regularizer", "bias_regularizer", "activity_regularizer",
                   "depthwise_constraint", "pointwise_constraint", "bias_constraint", "trainable", "name", "reuse")


def _apply(cls: type, inputs: Any, args: tuple, extra: tuple, tail: tuple[str, ...],
           kwargs: dict[str, Any]) -> Any:
    """Builds `cls(*args, ...)` (the further positional arguments `extra` named by `tail`, in
    TF's order) scoped by its `name`, and calls it on `inputs`."""
    if len(extra) > len(tail):
        raise TypeError(f"{cls.__name__}: too many positional arguments")
    for key, value in zip(tail, extra):
        if key in kwargs:
            raise TypeError(f"{cls.__name__}: got multiple values for argument '{key}'")
        kwargs[key] = value
    name = kwargs.get("name")
    reuse = kwargs.pop("reuse", None)
    layer = cls(*args, _scope=name, _reuse=reuse, **kwargs)
    return layer(inputs)


def conv1d(inputs: Any, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
           data_format: str = "channels_last", dilation_rate: Any = 1, *extra: Any, **kwargs: Any) -> Any:
    """Functional interface for `Conv1D` (the other arguments as the class's, plus `reuse`)."""
    return _apply(Conv1D, inputs, (filters, kernel_size, strides, padding, data_format, dilation_rate), extra,
                  _CONV_TAIL, kwargs)


def conv2d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
           data_format: str = "channels_last", dilation_rate: Any = (1, 1), *extra: Any, **kwargs: Any) -> Any:
    """Functional interface for `Conv2D` (the other arguments as the class's, plus `reuse`)."""
    return _apply(Conv2D, inputs, (filters, kernel_size, strides, padding, data_format, dilation_rate), extra,
                  _CONV_TAIL, kwargs)


def conv3d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1, 1), padding: str = "valid",
           data_format: str = "channels_last", dilation_rate: Any = (1, 1, 1), *extra: Any, **kwargs: Any) -> Any:
    """Functional interface for `Conv3D` (the other arguments as the class's, plus `reuse`)."""
    return _apply(Conv3D, inputs, (filters, kernel_size, strides, padding, data_format, dilation_rate), extra,
                  _CONV_TAIL, kwargs)


def conv2d_transpose(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                     data_format: str = "channels_last", *extra: Any, **kwargs: Any) -> Any:
    """Functional interface for `Conv2DTranspose` (the other arguments as the class's, plus `reuse`)."""
    return _apply(Conv2DTranspose, inputs, (filters, kernel_size, strides, padding, data_format), extra, _CONV_TAIL,
                  kwargs)


def conv3d_transpose(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1, 1),
                     padding: str = "valid", data_format: str = "channels_last", *extra: Any, **kwargs: Any) -> Any:
    """Functional interface for `Conv3DTranspose` (the other arguments as the class's, plus `reuse`)."""
    return _apply(Conv3DTranspose, inputs, (filters, kernel_size, strides, padding, data_format), extra, _CONV_TAIL,
                  kwargs)


def separable_conv1d(inputs: Any, filters: int, kernel_size: Any, strides: Any = 1, padding: str = "valid",
                     data_format: str = "channels_last", dilation_rate: Any = 1, depth_multiplier: int = 1,
                     *extra: Any, **kwargs: Any) -> Any:
    """Functional interface for `SeparableConv1D` (the other arguments as the class's, plus `reuse`)."""
    return _apply(SeparableConv1D, inputs, (filters, kernel_size, strides, padding, data_format, dilation_rate,
                                            depth_multiplier), extra, _SEPARABLE_TAIL, kwargs)


def separable_conv2d(inputs: Any, filters: int, kernel_size: Any, strides: Any = (1, 1), padding: str = "valid",
                     data_format: str = "channels_last", dilation_rate: Any = (1, 1), depth_multiplier: int = 1,
                     *extra: Any, **kwargs: Any) -> Any:
    """Functional interface for `SeparableConv2D` (the other arguments as the class's, plus `reuse`)."""
    return _apply(SeparableConv2D, inputs, (filters, kernel_size, strides, padding, data_format, dilation_rate,
                                            depth_multiplier), extra, _SEPARABLE_TAIL, kwargs)


# TF's aliases.
Convolution1D, Convolution2D, Convolution3D = Conv1D, Conv2D, Conv3D
Convolution2DTranspose, Convolution3DTranspose = Conv2DTranspose, Conv3DTranspose
SeparableConvolution2D = SeparableConv2D
convolution1d, convolution2d, convolution3d = conv1d, conv2d, conv3d
convolution2d_transpose, convolution3d_transpose = conv2d_transpose, conv3d_transpose
