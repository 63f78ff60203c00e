"""`tf.layers`: TF1's layers, as classes (`tf.layers.Dense`) and functions (`tf.layers.dense`)
(re-exports only; each kind of layer lives in its own module of this package). The names are
tf.compat.v1.layers' (the modules also hold TF's aliases, e.g. convolutional.Convolution2D)."""
from tensorweave.layers.base import InputSpec, Layer  # noqa: F401
from tensorweave.layers.convolutional import (  # noqa: F401
    Conv1D, conv1d, Conv2D, conv2d, conv2d_transpose, Conv2DTranspose, Conv3D, conv3d, conv3d_transpose,
    Conv3DTranspose, separable_conv1d, separable_conv2d, SeparableConv1D, SeparableConv2D)
from tensorweave.layers.core import Dense, dense, Dropout, dropout, Flatten, flatten  # noqa: F401
from tensorweave.layers.normalization import batch_normalization, BatchNormalization  # noqa: F401
from tensorweave.layers.pooling import (  # noqa: F401
    average_pooling1d, average_pooling2d, average_pooling3d, AveragePooling1D, AveragePooling2D,
    AveragePooling3D, max_pooling1d, max_pooling2d, max_pooling3d, MaxPooling1D, MaxPooling2D, MaxPooling3D)
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("layers", __name__)
