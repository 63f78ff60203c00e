"""Neural-network ops (`tf.nn`): activations, softmax and cross-entropy, normalization, convolution and pooling, and the libraries built on them (embedding lookup, RNNs and cells, `tf.losses`).

The family's public names (TF's nn_ops namespace) are re-exported here."""
from tensorweave.ops.nn.nn_ops import (
    bias_add, BiasAdd, BiasAddGrad, dropout, Elu, elu, EluGrad, in_top_k, InTopK, InTopKV2, l2_loss,
    L2Loss, leaky_relu, LeakyRelu, LeakyReluGrad, log_softmax, LogSoftmax, Relu, relu, Relu6, relu6,
    Relu6Grad, relu_layer, ReluGrad, selu, Selu, SeluGrad, Softmax, softmax, Softplus, softplus,
    SoftplusGrad, Softsign, softsign, SoftsignGrad, top_k, TopKV2, xw_plus_b)
from tensorweave.ops.math.elementwise import sigmoid, tanh

from tensorweave.ops.nn.cross_entropy import (sigmoid_cross_entropy_with_logits, softmax_cross_entropy_with_logits, softmax_cross_entropy_with_logits_v2, sparse_softmax_cross_entropy_with_logits, weighted_cross_entropy_with_logits)
from tensorweave.ops.nn.normalization import (batch_normalization, fused_batch_norm, l2_normalize, local_response_normalization, lrn, moments)

__all__ = [
    "relu", "relu6", "elu", "selu", "softplus", "softsign", "leaky_relu", "sigmoid", "tanh", "softmax",
    "log_softmax", "bias_add", "xw_plus_b", "relu_layer", "l2_loss", "top_k", "in_top_k", "dropout",
    "softmax_cross_entropy_with_logits", "softmax_cross_entropy_with_logits_v2",
    "sparse_softmax_cross_entropy_with_logits", "sigmoid_cross_entropy_with_logits",
    "weighted_cross_entropy_with_logits", "fused_batch_norm", "batch_normalization", "moments",
    "l2_normalize", "local_response_normalization", "lrn",
]
