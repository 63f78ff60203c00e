"""tf.layers pooling: MaxPooling1D/2D/3D, AveragePooling1D/2D/3D and their functional forms
(TF 1.15's tensorflow/python/layers/pooling.py over Keras' semantics). 1-D pooling runs as 2-D
pooling over a width of 1; channels_first 3-D inputs are moved to channels_last and back, as
Keras does."""
from __future__ import annotations

from typing import Any, Callable, Optional

from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.layers import utils
from tensorweave.layers.base import InputSpec, Layer
from tensorweave.ops.array import expand_dims, squeeze, transpose
from tensorweave.ops.nn import avg_pool, max_pool
from tensorweave.ops.nn.pooling3d import avg_pool3d, max_pool3d

__all__ = ["MaxPooling1D", "MaxPooling2D", "MaxPooling3D", "AveragePooling1D", "AveragePooling2D",
           "AveragePooling3D", "max_pooling1d", "max_pooling2d", "max_pooling3d", "average_pooling1d",
           "average_pooling2d", "average_pooling3d", "MaxPool1D", "MaxPool2D", "MaxPool3D", "AvgPool1D",
           "AvgPool2D", "AvgPool3D"]


class _Pooling(Layer):
    _rank = 2
    _pool: Callable[..., Any] = staticmethod(max_pool)

    def __init__(self, pool_size: Any, strides: Any, padding: str = "valid", data_format: str = "channels_last",
                 name: Optional[str] = None, **kwargs: Any) -> None:
        super().__init__(name=name, **kwargs)
        rank = self._rank
        self.pool_size = utils.normalize_tuple(pool_size, rank, "pool_size")
        self.strides = utils.normalize_tuple(strides if strides is not None else pool_size, rank, "strides")
        self.padding = utils.normalize_padding(padding)
        self.data_format = utils.normalize_data_format(data_format)
        self.input_spec = InputSpec(ndim=rank + 2)

    def _full(self, values: tuple[int, ...]) -> list[int]:
        if self.data_format == "channels_first":
            return [1, 1] + list(values)
        return [1] + list(values) + [1]

    def call(self, inputs: Any) -> Any:
        fmt = "NCHW" if self.data_format == "channels_first" else "NHWC"
        return type(self)._pool(inputs, self._full(self.pool_size), self._full(self.strides), self.padding.upper(),
                                data_format=fmt)

    def compute_output_shape(self, input_shape: Any) -> TensorShape:
        dims = TensorShape(input_shape).as_list()
        first = self.data_format == "channels_first"
        spatial = dims[2:] if first else dims[1:-1]
        out = [utils.conv_output_length(d, k, self.padding, s) for d, k, s in
               zip(spatial, self.pool_size, self.strides)]
        return TensorShape([dims[0], dims[1]] + out if first else [dims[0]] + out + [dims[-1]])


class _Pooling1D(_Pooling):
    _rank = 1

    def call(self, inputs: Any) -> Any:
        first = self.data_format == "channels_first"
        axis = 3 if first else 2
        fmt = "NCHW" if first else "NHWC"
        ksize = [1, 1, self.pool_size[0], 1] if first else [1, self.pool_size[0], 1, 1]
        strides = [1, 1, self.strides[0], 1] if first else [1, self.strides[0], 1, 1]
        outputs = type(self)._pool(expand_dims(inputs, axis), ksize, strides, self.padding.upper(), data_format=fmt)
        return squeeze(outputs, [axis])


class _Pooling3D(_Pooling):
    _rank = 3

    def call(self, inputs: Any) -> Any:
        first = self.data_format == "channels_first"
        if first:
            inputs = transpose(inputs, [0, 2, 3, 4, 1])
        outputs = type(self)._pool(inputs, [1] + list(self.pool_size) + [1], [1] + list(self.strides) + [1],
                                   self.padding.upper())
        return transpose(outputs, [0, 4, 1, 2, 3]) if first else outputs


class MaxPooling1D(_Pooling1D):
    """Max pooling over the steps of [batch, steps, channels] inputs."""
    _pool = staticmethod(max_pool)


class AveragePooling1D(_Pooling1D):
    """Average pooling over the steps of [batch, steps, channels] inputs."""
    _pool = staticmethod(avg_pool)


class MaxPooling2D(_Pooling):
    """Max pooling over height and width."""
    _pool = staticmethod(max_pool)


class AveragePooling2D(_Pooling):
    """Average pooling over height and width (padding not counted)."""
    _pool = staticmethod(avg_pool)


class MaxPooling3D(_Pooling3D):
    """Max pooling over depth, height and width."""
    _pool = staticmethod(max_pool3d)


class AveragePooling3D(_Pooling3D):
    """Average pooling over depth, height and width (padding not counted)."""
    _pool = staticmethod(avg_pool3d)


def _functional(cls: type) -> Callable[..., Any]:
    def pool(inputs: Any, pool_size: Any, strides: Any, padding: str = "valid",
             data_format: str = "channels_last", name: Optional[str] = None) -> Any:
        return cls(pool_size=pool_size, strides=strides, padding=padding, data_format=data_format,
                   name=name)(inputs)
    pool.__doc__ = f"Functional interface for `{cls.__name__}`."
    return pool


max_pooling1d = _functional(MaxPooling1D)
max_pooling2d = _functional(MaxPooling2D)
max_pooling3d = _functional(MaxPooling3D)
average_pooling1d = _functional(AveragePooling1D)
average_pooling2d = _functional(AveragePooling2D)
average_pooling3d = _functional(AveragePooling3D)
for _fn, _name in ((max_pooling1d, "max_pooling1d"), (max_pooling2d, "max_pooling2d"),
                   (max_pooling3d, "max_pooling3d"), (average_pooling1d, "average_pooling1d"),
                   (average_pooling2d, "average_pooling2d"), (average_pooling3d, "average_pooling3d")):
    _fn.__name__ = _fn.__qualname__ = _name

# TF's aliases.
MaxPool1D, MaxPool2D, MaxPool3D = MaxPooling1D, MaxPooling2D, MaxPooling3D
AvgPool1D, AvgPool2D, AvgPool3D = AveragePooling1D, AveragePooling2D, AveragePooling3D
