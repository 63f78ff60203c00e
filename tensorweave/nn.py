"""`tf.nn`: neural-network ops, losses, convolution and pooling, embeddings and RNNs
(re-exports only; the ops live in tensorweave/ops/)."""
from tensorweave.ops.math import sigmoid, tanh  # noqa: F401
from tensorweave.ops.nn.embedding import embedding_lookup, embedding_lookup_sparse  # noqa: F401
from tensorweave.ops.nn.rnn import bidirectional_dynamic_rnn, dynamic_rnn, static_rnn  # noqa: F401
from tensorweave.ops.nn import rnn_cell  # noqa: F401
from tensorweave.ops.nn.normalization import (
    batch_normalization, fused_batch_norm, l2_normalize, local_response_normalization, lrn, moments)
from tensorweave.ops.nn.nn_ops import (
    bias_add, dropout, elu, in_top_k, l2_loss, leaky_relu, log_softmax, relu, relu6, relu_layer, selu,
    softmax, softplus, softsign, top_k, xw_plus_b, zero_fraction)
from tensorweave.ops.nn.cross_entropy import (
    sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2, sparse_softmax_cross_entropy_with_logits,
    weighted_cross_entropy_with_logits)
from tensorweave.ops.nn.conv import (
    atrous_conv2d, conv1d, conv2d, conv2d_backprop_filter, conv2d_backprop_input, conv2d_transpose,
    convolution)
from tensorweave.ops.nn.depthwise_conv import (
    depthwise_conv2d, depthwise_conv2d_native, depthwise_conv2d_native_backprop_filter,
    depthwise_conv2d_native_backprop_input, separable_conv2d)
from tensorweave.ops.nn.pooling import avg_pool, avg_pool2d, max_pool, max_pool2d, max_pool_v2  # noqa: F401
