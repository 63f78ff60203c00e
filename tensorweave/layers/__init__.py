"""`tf.layers`: TF1's layers, as classes (`tf.layers.Dense`) and functions (`tf.layers.dense`)
(re-exports only; each kind of layer lives in its own module of this package)."""
from tensorweave.layers.base import InputSpec, Layer  # noqa: F401
from tensorweave.layers.convolutional import (  # noqa: F401
    Conv1D, conv1d, Conv2D, conv2d, conv2d_transpose, Conv2DTranspose, Conv3D, conv3d, conv3d_transpose,
    Conv3DTranspose, Convolution1D, convolution1d, Convolution2D, convolution2d, convolution2d_transpose,
    Convolution2DTranspose, Convolution3D, convolution3d, convolution3d_transpose, Convolution3DTranspose,
    separable_conv1d, separable_conv2d, SeparableConv1D, SeparableConv2D, SeparableConvolution2D)
from tensorweave.layers.core import Dense, dense, Dropout, dropout, Flatten, flatten  # noqa: F401
from tensorweave.layers.normalization import (  # noqa: F401
    batch_norm, BatchNorm, batch_normalization, BatchNormalization)
from tensorweave.layers.pooling import (  # noqa: F401
    average_pooling1d, average_pooling2d, average_pooling3d, AveragePooling1D, AveragePooling2D,
    AveragePooling3D, AvgPool1D, AvgPool2D, AvgPool3D, max_pooling1d, max_pooling2d, max_pooling3d, MaxPool1D,
    MaxPool2D, MaxPool3D, MaxPooling1D, MaxPooling2D, MaxPooling3D)
