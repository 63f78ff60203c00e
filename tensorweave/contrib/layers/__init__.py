"""`tf.contrib.layers`: layers with TF 1.15's variable names, initializers, regularizers,
batch/layer normalization and optimize_loss (re-exports only)."""
from tensorweave.contrib.layers.initializers import (  # noqa: F401
    variance_scaling_initializer, xavier_initializer, xavier_initializer_conv2d)
from tensorweave.contrib.layers.layers import (  # noqa: F401
    conv2d, convolution, convolution2d, embed_sequence, flatten, fully_connected, layer_norm, linear, repeat, stack)
from tensorweave.contrib.layers.normalization import batch_norm  # noqa: F401
from tensorweave.contrib.layers.pooling import avg_pool2d, dropout, max_pool2d  # noqa: F401
from tensorweave.contrib.layers.optimizers import OPTIMIZER_CLS_NAMES, OPTIMIZER_SUMMARIES, optimize_loss  # noqa: F401
from tensorweave.contrib.layers.regularizers import (  # noqa: F401
    apply_regularization, l1_l2_regularizer, l1_regularizer, l2_regularizer, sum_regularizer)
from tensorweave.contrib.layers import utils  # noqa: F401
from tensorweave.contrib._unprovided import unprovided_getattr

__getattr__ = unprovided_getattr("tf.contrib.layers")
