"""`tf.nn`: neural-network ops, losses, convolution and pooling, embeddings and RNNs
(re-exports only; the ops live in tensorweave/ops/nn/)."""
from tensorweave.ops.nn import (  # noqa: F401
    atrous_conv2d, avg_pool, avg_pool2d, batch_normalization, bias_add, bidirectional_dynamic_rnn, conv1d,
    conv2d, conv2d_backprop_filter, conv2d_backprop_input, conv2d_transpose, convolution, depthwise_conv2d,
    depthwise_conv2d_native, depthwise_conv2d_native_backprop_filter, depthwise_conv2d_native_backprop_input,
    dropout, dynamic_rnn, elu, embedding_lookup, embedding_lookup_sparse, fused_batch_norm, in_top_k,
    l2_loss, l2_normalize, leaky_relu, local_response_normalization, log_softmax, lrn, max_pool, max_pool2d,
    max_pool_v2, moments, relu, relu6, relu_layer, rnn_cell, selu, separable_conv2d, sigmoid,
    sigmoid_cross_entropy_with_logits, softmax, softmax_cross_entropy_with_logits,
    softmax_cross_entropy_with_logits_v2, softplus, softsign, sparse_softmax_cross_entropy_with_logits,
    static_rnn, tanh, top_k, weighted_cross_entropy_with_logits, xw_plus_b, zero_fraction)
from tensorweave.ops.nn import static_bidirectional_rnn  # noqa: F401
from tensorweave.ops.nn import nce_loss, sampled_softmax_loss  # noqa: F401
from tensorweave.ops.random import compute_accidental_hits, log_uniform_candidate_sampler  # noqa: F401
from tensorweave._api import nn_rnn_cell as rnn_cell  # noqa: F401,F811,E402
from tensorweave.ops.nn import (  # noqa: F401,E402
    depthwise_conv2d_native_backprop_filter as depthwise_conv2d_backprop_filter,
    depthwise_conv2d_native_backprop_input as depthwise_conv2d_backprop_input)
from tensorweave.ops.nn import (  # noqa: F401
    avg_pool3d, conv3d, conv3d_backprop_filter_v2, conv3d_transpose, max_pool3d)
from tensorweave.ops.nn import (  # noqa: F401,E402
    atrous_conv2d_transpose, crelu, log_poisson_loss, normalize_moments, pool, sufficient_statistics, swish,
    weighted_moments)
from tensorweave.ops.nn import (  # noqa: F401,E402
    avg_pool1d, batch_norm_with_global_normalization, conv1d_transpose, max_pool1d, safe_embedding_lookup_sparse)
from tensorweave.ops.nn import raw_rnn  # noqa: F401,E402
from tensorweave.ops.nn import ctc_loss  # noqa: F401,E402
from tensorweave.ops.random.range_samplers import (  # noqa: F401,E402
    all_candidate_sampler, fixed_unigram_candidate_sampler, learned_unigram_candidate_sampler,
    uniform_candidate_sampler)
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("nn", __name__)
