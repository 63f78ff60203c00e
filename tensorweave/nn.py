"""`tf.nn`: neural-network ops, losses, convolution and pooling, embeddings and RNNs
(re-exports only; the ops live in tensorweave/ops/)."""
from tensorweave.ops.math_ops import sigmoid, tanh  # noqa: F401
from tensorweave.ops.embedding_ops import embedding_lookup, embedding_lookup_sparse  # noqa: F401
from tensorweave.ops.rnn import bidirectional_dynamic_rnn, dynamic_rnn, static_rnn  # noqa: F401
from tensorweave.ops import rnn_cell  # noqa: F401
from tensorweave.ops.nn_ops import (  # noqa: F401
    batch_normalization, bias_add, dropout, elu, fused_batch_norm, in_top_k, l2_loss, l2_normalize,
    leaky_relu, local_response_normalization, log_softmax, lrn, moments, relu, relu6, selu,
    sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2, softplus, softsign, sparse_softmax_cross_entropy_with_logits,
    relu_layer, top_k, weighted_cross_entropy_with_logits, xw_plus_b, zero_fraction)
from tensorweave.ops.conv_ops import (  # noqa: F401
    atrous_conv2d, conv1d, conv2d, conv2d_backprop_filter, conv2d_backprop_input, conv2d_transpose,
    convolution)
from tensorweave.ops.depthwise_conv_ops import (  # noqa: F401
    depthwise_conv2d, depthwise_conv2d_native, depthwise_conv2d_native_backprop_filter,
    depthwise_conv2d_native_backprop_input, separable_conv2d)
from tensorweave.ops.pooling_ops import avg_pool, avg_pool2d, max_pool, max_pool2d, max_pool_v2  # noqa: F401
