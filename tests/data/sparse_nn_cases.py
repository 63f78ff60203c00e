"""Sparse and tf.nn programs written once for both libraries (issue 11):
make_tf_sparse_nn_fixtures.py runs them under TensorFlow 2.21 (tf.compat.v1, graph mode) to record
what it computes (TF215_VALUES: make_tf215_birnn_fixtures.py, under TensorFlow 2.15);
tests/ops/sparse/test_sparse_fixtures.py and tests/ops/nn/test_nn_fixtures.py run them under
tensorweave to compare. `tf` is either module.

VALUES: name -> fn(tf) returning what to fetch (a tensor, SparseTensor, or a list of them).
ERRORS: name -> fn(tf) returning a fetch whose run fails (TF's error class and message recorded).
"""
import numpy as np

_RNG = np.random.RandomState(11)
X34 = _RNG.uniform(-2, 2, (3, 4)).astype(np.float32)
B42 = _RNG.uniform(-1, 1, (4, 2)).astype(np.float32)
B32 = _RNG.uniform(-1, 1, (3, 2)).astype(np.float32)
D35 = _RNG.uniform(-1, 1, (3, 5)).astype(np.float32)
IMG = _RNG.uniform(-1, 1, (2, 6, 7, 3)).astype(np.float32)
SEQ = _RNG.uniform(-1, 1, (2, 9, 3)).astype(np.float32)
W1D = _RNG.uniform(-1, 1, (3, 3, 4)).astype(np.float32)
WT = _RNG.uniform(-1, 1, (3, 3, 2, 3)).astype(np.float32)  # conv2d_transpose: [h, w, out, in]
EMB = _RNG.uniform(-1, 1, (10, 4)).astype(np.float32)
INPUTS = _RNG.uniform(-1, 1, (3, 4)).astype(np.float32)
STEPS = [_RNG.uniform(-1, 1, (2, 3)).astype(np.float32) for _ in range(4)]


def _sp(tf):
    """A 3x4 float SparseTensor in canonical order."""
    return tf.SparseTensor([[0, 1], [0, 3], [1, 0], [2, 2], [2, 3]], [1.5, -2.0, 3.0, 0.5, 4.0], [3, 4])


def _sp_b(tf):
    return tf.SparseTensor([[0, 1], [1, 1], [2, 3]], [-1.5, 2.0, 1.0], [3, 4])


def _sp3(tf):
    return tf.SparseTensor([[0, 0, 1], [0, 2, 0], [1, 1, 1], [1, 2, 0], [1, 2, 1]], [1., 2., 3., 4., 5.], [2, 3, 2])


def _oob(tf):
    """Index [5, 0] lies outside the dense shape [3, 4]."""
    return tf.SparseTensor([[0, 1], [5, 0]], [1., 2.], [3, 4])


def _unordered(tf):
    return tf.SparseTensor([[2, 2], [0, 3], [1, 0], [0, 1]], [0.5, -2.0, 3.0, 1.5], [3, 4])


VALUES = {
    # --- sparse -----------------------------------------------------------------------------
    "sparse_to_dense": lambda tf: tf.sparse.to_dense(_sp(tf), default_value=-1.0),
    "sparse_reorder": lambda tf: tf.sparse.reorder(_unordered(tf)),
    "sparse_reorder_v1": lambda tf: tf.sparse_reorder(_unordered(tf)),
    "sparse_reshape": lambda tf: tf.sparse.reshape(_sp(tf), [2, -1, 3]),
    "sparse_reshape_v1": lambda tf: tf.sparse_reshape(_sp3(tf), [6, 2]),
    "sparse_concat_axis1": lambda tf: tf.sparse_concat(1, [_sp(tf), _sp_b(tf)]),
    "sparse_concat_axis0": lambda tf: tf.sparse.concat(0, [_sp(tf), _sp_b(tf)]),
    "sparse_concat_expand": lambda tf: tf.sparse_concat(
        1, [_sp(tf), tf.SparseTensor([[0, 0], [4, 1]], [7., 8.], [5, 2])], expand_nonconcat_dim=True),
    "sparse_add_sparse": lambda tf: tf.sparse_add(_sp(tf), _sp_b(tf)),
    "sparse_add_thresh": lambda tf: tf.sparse_add(_sp(tf), _sp_b(tf), thresh=0.6),
    "sparse_add_threshold": lambda tf: tf.sparse.add(_sp(tf), _sp_b(tf), threshold=1.6),
    "sparse_add_dense": lambda tf: tf.sparse_add(_sp(tf), tf.constant(X34)),
    "sparse_add_dense_first": lambda tf: tf.sparse.add(tf.constant(X34), _sp(tf)),
    "sparse_slice": lambda tf: tf.sparse_slice(_sp(tf), [0, 1], [2, 5]),
    "sparse_slice_3d": lambda tf: tf.sparse.slice(_sp3(tf), [1, 1, 0], [1, 2, 2]),
    "sparse_split_axis1": lambda tf: tf.sparse_split(sp_input=_sp(tf), num_split=3, axis=1),
    "sparse_split_axis0": lambda tf: tf.sparse.split(sp_input=_sp(tf), num_split=2, axis=0),
    "sparse_retain": lambda tf: tf.sparse_retain(_sp(tf), [True, False, True, False, True]),
    "sparse_fill_empty_rows": lambda tf: list(tf.sparse_fill_empty_rows(
        tf.SparseTensor([[0, 1], [2, 0], [2, 3], [4, 1]], [1., 2., 3., 4.], [6, 4]), -7.0)),
    "sparse_reduce_sum_all": lambda tf: tf.sparse_reduce_sum(_sp(tf)),
    "sparse_reduce_sum_axis1": lambda tf: tf.sparse.reduce_sum(_sp(tf), axis=1),
    "sparse_reduce_sum_keep": lambda tf: tf.sparse_reduce_sum(_sp3(tf), [0, 2], keep_dims=True),
    "sparse_reduce_sum_neg": lambda tf: tf.sparse.reduce_sum(_sp3(tf), -1),
    "sparse_reduce_sum_sparse": lambda tf: tf.sparse_reduce_sum_sparse(_sp3(tf), 1),
    "sparse_reduce_sum_sparse_keep": lambda tf: tf.sparse.reduce_sum_sparse(_sp3(tf), 1, keepdims=True),
    "sparse_reduce_max": lambda tf: tf.sparse_reduce_max(_sp(tf), 1),
    "sparse_reduce_max_all": lambda tf: tf.sparse.reduce_max(_sp(tf)),
    "sparse_reduce_max_sparse": lambda tf: tf.sparse_reduce_max_sparse(_sp3(tf), [2]),
    "sparse_dense_matmul": lambda tf: tf.sparse_tensor_dense_matmul(_sp(tf), tf.constant(B42)),
    "sparse_dense_matmul_adj_a": lambda tf: tf.sparse.matmul(_sp(tf), tf.constant(B32), adjoint_a=True),
    "sparse_dense_matmul_adj_b": lambda tf: tf.sparse.sparse_dense_matmul(
        _sp(tf), tf.constant(B42.T.copy()), adjoint_b=True),
    "sparse_dense_matmul_adj_both": lambda tf: tf.sparse_tensor_dense_matmul(
        _sp(tf), tf.constant(B32.T.copy()), adjoint_a=True, adjoint_b=True),
    "sparse_matmul": lambda tf: tf.sparse_matmul(tf.constant(X34), tf.constant(B42), a_is_sparse=True),
    "sparse_matmul_t": lambda tf: tf.sparse_matmul(tf.constant(X34), tf.constant(X34), transpose_b=True),
    "sparse_to_indicator": lambda tf: tf.sparse_to_indicator(
        tf.SparseTensor([[0, 0], [0, 1], [1, 0], [1, 2], [2, 0]], tf.constant([2, 0, 4, 4, 1], tf.int64),
                        [3, 3]), 5),
    "sparse_transpose": lambda tf: tf.sparse_transpose(_sp(tf)),
    "sparse_transpose_perm": lambda tf: tf.sparse.transpose(_sp3(tf), [2, 0, 1]),
    "sparse_softmax": lambda tf: tf.sparse_softmax(_sp(tf)),
    "sparse_softmax_3d": lambda tf: tf.sparse.softmax(_sp3(tf)),
    "sparse_maximum": lambda tf: tf.sparse_maximum(_sp(tf), _sp_b(tf)),
    "sparse_minimum": lambda tf: tf.sparse.minimum(_sp(tf), _sp_b(tf)),
    "sparse_reset_shape": lambda tf: tf.sparse_reset_shape(_sp(tf), [5, 6]),
    "sparse_reset_shape_tight": lambda tf: tf.sparse.reset_shape(_sp_b(tf)),
    "sparse_from_dense": lambda tf: tf.sparse.from_dense(tf.constant([[0., 1.5, 0.], [2., 0., -1.]])),
    "sparse_eye": lambda tf: tf.sparse.eye(3, 4),
    "sparse_eye_square": lambda tf: tf.sparse.eye(2, dtype=tf.int32),
    "sparse_mask": lambda tf: _parts(tf.sparse_mask(
        tf.IndexedSlices(tf.constant(D35), tf.constant([4, 7, 9]), tf.constant([12, 5])), [7])),
    "sparse_segment_sum": lambda tf: tf.sparse_segment_sum(tf.constant(D35), [0, 2, 1, 1], [0, 0, 2, 2]),
    "sparse_segment_sum_n": lambda tf: tf.sparse.segment_sum(tf.constant(D35), [0, 2, 1], [0, 1, 1],
                                                             num_segments=4),
    "sparse_segment_mean": lambda tf: tf.sparse_segment_mean(tf.constant(D35), [0, 2, 1, 1], [0, 0, 2, 2]),
    "sparse_segment_sqrt_n": lambda tf: tf.sparse_segment_sqrt_n(tf.constant(D35), [0, 2, 1], [0, 0, 0]),
    "sparse_segment_mean_n": lambda tf: tf.sparse.segment_mean(tf.constant(D35), [2, 0], [1, 1],
                                                               num_segments=3),
    "sparse_reshape_oob_unchecked": lambda tf: tf.sparse.reshape(_oob(tf), [12]),
    "sparse_reduce_sum_sparse_oob": lambda tf: tf.sparse.reduce_sum_sparse(_oob(tf), 1),
    "sparse_merge": lambda tf: tf.sparse_merge(
        tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]], tf.constant([5, 1, 3, 0], tf.int64), [3, 2]),
        tf.SparseTensor([[0, 0], [0, 1], [1, 0], [2, 0]], [0.5, 1.5, -1.0, 2.0], [3, 2]), 6),
    "sparse_merge_two_ids": lambda tf: tf.sparse.merge(
        [tf.SparseTensor([[0, 0], [1, 0]], tf.constant([2, 1], tf.int64), [2, 1]),
         tf.SparseTensor([[0, 0], [1, 0]], tf.constant([0, 3], tf.int64), [2, 1])],
        tf.SparseTensor([[0, 0], [1, 0]], [7.0, 8.0], [2, 1]), [3, 4]),
    "sparse_expand_dims": lambda tf: tf.sparse.expand_dims(_sp3(tf), 1),
    "sparse_expand_dims_last": lambda tf: tf.sparse.expand_dims(_sp(tf)),
    "sparse_grad_matmul": lambda tf: _grads(tf, lambda sp, b: tf.sparse_tensor_dense_matmul(sp, b) ** 2,
                                            B42),
    "sparse_grad_matmul_adj": lambda tf: _grads(
        tf, lambda sp, b: tf.sparse_tensor_dense_matmul(sp, b, adjoint_a=True, adjoint_b=True) ** 2,
        B32.T.copy()),
    "sparse_grad_softmax": lambda tf: _grads(
        tf, lambda sp, b: tf.sparse.softmax(sp).values * tf.reshape(b, [-1])[:5], B42),
    "sparse_grad_reduce_sum": lambda tf: _grads(
        tf, lambda sp, b: tf.sparse.reduce_sum(sp, 1) * b[:3, 0], B42),
    "sparse_grad_add": lambda tf: _grads(
        tf, lambda sp, b: tf.sparse_add(sp, _sp_b(tf), thresh=0.6).values ** 2, B42),
    "sparse_grad_dense_add": lambda tf: _grads(tf, lambda sp, b: tf.sparse_add(sp, b[:3, :] * 2.0) ** 2, X34),
    "sparse_grad_fill": lambda tf: _grads(
        tf, lambda sp, b: tf.sparse.fill_empty_rows(tf.sparse.slice(sp, [1, 0], [2, 2]), b[0, 0])[0].values
        * tf.range(1.0, 3.0), B42),
    "sparse_grad_reorder": lambda tf: _grads(
        tf, lambda sp, b: tf.sparse.reorder(tf.SparseTensor(sp.indices[::-1], sp.values[::-1], sp.dense_shape))
        .values * tf.range(1.0, 6.0), B42),
    "sparse_grad_segment": lambda tf: _seg_grads(tf),
}


# --- tf.nn --------------------------------------------------------------------------------------
SAMPLED = (np.array([0, 4, 9, 2], np.int64), np.array([[0.3], [0.2], [0.1]], np.float32),
           np.array([0.5, 0.2, 0.1, 0.3], np.float32))
SAMPLED2 = (np.array([0, 4, 9, 2, 6], np.int64), np.array([[0.3, 0.2], [0.2, 0.1], [0.1, 0.4]], np.float32),
            np.array([0.5, 0.2, 0.1, 0.3, 0.25], np.float32))


def _sampled(tf, fn, labels, sampled, **kwargs):
    inputs = tf.constant(INPUTS)
    weights = tf.constant(EMB)
    biases = tf.constant(np.linspace(-0.5, 0.5, 10).astype(np.float32))
    loss = fn(weights=weights, biases=biases, labels=tf.constant(labels, tf.int64), inputs=inputs,
              num_sampled=len(sampled[0]), num_classes=10, num_true=len(labels[0]),
              sampled_values=tuple(tf.constant(v) for v in sampled), **kwargs)
    grads = tf.gradients(tf.reduce_sum(loss), [inputs, weights])
    return [loss, grads[0], tf.convert_to_tensor(grads[1])]


def _default_sampler(tf, fn, kwargs):
    return fn(weights=tf.constant(EMB), biases=tf.constant(np.linspace(-0.5, 0.5, 10).astype(np.float32)),
              labels=tf.constant([[1], [4], [7]], tf.int64), inputs=tf.constant(INPUTS), num_sampled=4,
              num_classes=10, **kwargs)


CTC_LOGITS = _RNG.uniform(-2, 2, (7, 3, 5)).astype(np.float32)


def _ctc(tf, kwargs, lengths=(7, 4, 6)):
    labels = tf.SparseTensor([[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2], [2, 0], [2, 1]],
                             tf.constant([1, 1, 2, 3, 0, 0, 2, 3], tf.int32), [3, 3])
    logits = tf.constant(CTC_LOGITS if kwargs.get("time_major", True) else CTC_LOGITS.transpose(1, 0, 2).copy())
    loss = tf.nn.ctc_loss(labels, logits, tf.constant(list(lengths), tf.int32), **kwargs)
    return [loss, tf.gradients(tf.reduce_sum(loss * tf.constant([1.0, 0.5, 2.0])), logits)[0]]


def _birnn(tf, sequence_length):
    init = tf.random_uniform_initializer(-0.5, 0.5, seed=3)
    with tf.variable_scope("model", initializer=init):
        outputs, state_fw, state_bw = tf.nn.static_bidirectional_rnn(
            tf.nn.rnn_cell.BasicLSTMCell(3), tf.nn.rnn_cell.GRUCell(2), [tf.constant(s) for s in STEPS],
            dtype=tf.float32, sequence_length=sequence_length)
    return [outputs, list(state_fw), state_bw]


def _moments_grads(tf):
    x = tf.constant(X34)
    mean, var = tf.nn.weighted_moments(x, [1], tf.constant([[1.], [2.], [0.5]]))
    counts, m_ss, v_ss, _ = tf.nn.sufficient_statistics(x, [0], shift=0.5)
    m2, v2 = tf.nn.normalize_moments(counts, m_ss, v_ss, 0.5)
    y = tf.reduce_sum(mean * var) + tf.reduce_sum(m2 * v2) + tf.reduce_sum(tf.nn.swish(x) ** 2)
    return tf.gradients(y, x)


NN_VALUES = {
    "nn_swish": lambda tf: tf.nn.swish(tf.constant(X34)),
    "nn_crelu": lambda tf: tf.nn.crelu(tf.constant(X34)),
    "nn_crelu_axis0": lambda tf: tf.nn.crelu(tf.constant(X34), axis=0),
    "nn_moments_shift_keep": lambda tf: list(tf.nn.moments(tf.constant(IMG), [0, 1, 2], shift=0.3, keep_dims=True)),
    "nn_weighted_moments": lambda tf: list(tf.nn.weighted_moments(
        tf.constant(X34), [1], tf.constant([[1.], [2.], [0.5]]))),
    "nn_weighted_moments_keep": lambda tf: list(tf.nn.weighted_moments(
        tf.constant(X34), [0, 1], tf.constant(np.arange(12, dtype=np.float32).reshape(3, 4)), keep_dims=True)),
    "nn_sufficient_statistics": lambda tf: list(tf.nn.sufficient_statistics(tf.constant(IMG), [0, 1, 2])[:3]),
    "nn_sufficient_statistics_shift": lambda tf: list(tf.nn.sufficient_statistics(
        tf.constant(X34), [1], shift=tf.constant([[0.5], [0.1], [-0.2]]), keep_dims=True)),
    "nn_normalize_moments": lambda tf: list(tf.nn.normalize_moments(
        tf.constant(4.0), tf.constant([2.0, -1.0]), tf.constant([5.0, 3.0]), tf.constant(0.25))),
    "nn_normalize_moments_no_shift": lambda tf: list(tf.nn.normalize_moments(
        tf.constant(4.0), tf.constant([2.0, -1.0]), tf.constant([5.0, 3.0]), None)),
    "nn_log_poisson_loss": lambda tf: tf.nn.log_poisson_loss(
        tf.constant([[0., 0.5, 2.0, 7.0]]), tf.constant(X34[:1])),
    "nn_log_poisson_loss_full": lambda tf: tf.nn.log_poisson_loss(
        tf.constant([[0., 0.5, 2.0, 7.0]]), tf.constant(X34[:1]), compute_full_loss=True),
    "nn_pool_max_same_strides": lambda tf: tf.nn.pool(tf.constant(IMG), [3, 2], "MAX", "SAME", strides=[2, 2]),
    "nn_pool_avg_valid": lambda tf: tf.nn.pool(tf.constant(IMG), [2, 3], "AVG", "VALID", strides=[1, 2]),
    "nn_pool_max_dilated_valid": lambda tf: tf.nn.pool(tf.constant(IMG), [2, 2], "MAX", "VALID",
                                                       dilation_rate=[2, 3]),
    "nn_pool_avg_dilated_valid": lambda tf: tf.nn.pool(tf.constant(IMG), [2, 2], "AVG", "VALID",
                                                       dilation_rate=[2, 1]),
    "nn_pool_1d_max": lambda tf: tf.nn.pool(tf.constant(SEQ), [3], "MAX", "SAME", strides=[2]),
    "nn_pool_1d_avg_dilated": lambda tf: tf.nn.pool(tf.constant(SEQ), [2], "AVG", "VALID", dilation_rate=[3]),
    "nn_pool_grad_dilated": lambda tf: _pool_grad(tf),
    "nn_conv1d_dilated_same": lambda tf: tf.nn.conv1d(tf.constant(SEQ), tf.constant(W1D), 1, "SAME", dilations=2),
    "nn_conv1d_stride_valid": lambda tf: tf.nn.conv1d(tf.constant(SEQ), tf.constant(W1D), 2, "VALID"),
    "nn_conv2d_transpose_same": lambda tf: tf.nn.conv2d_transpose(
        tf.constant(IMG), tf.constant(WT), [2, 12, 14, 2], [1, 2, 2, 1], "SAME"),
    "nn_conv2d_transpose_valid": lambda tf: tf.nn.conv2d_transpose(
        tf.constant(IMG), tf.constant(WT), tf.constant([2, 13, 15, 2]), [1, 2, 2, 1], "VALID"),
    "nn_atrous_conv2d_transpose_same": lambda tf: tf.nn.atrous_conv2d_transpose(
        tf.constant(IMG), tf.constant(WT), [2, 6, 7, 2], 2, "SAME"),
    "nn_atrous_conv2d_transpose_valid": lambda tf: tf.nn.atrous_conv2d_transpose(
        tf.constant(IMG), tf.constant(WT), [2, 10, 11, 2], 2, "VALID"),
    "nn_nce_loss": lambda tf: _sampled(tf, tf.nn.nce_loss, [[1], [4], [7]], SAMPLED),
    "nn_nce_loss_hits": lambda tf: _sampled(tf, tf.nn.nce_loss, [[1], [4], [9]], SAMPLED,
                                            remove_accidental_hits=True),
    "nn_nce_loss_two_true": lambda tf: _sampled(tf, tf.nn.nce_loss, [[1, 3], [4, 5], [7, 8]], SAMPLED2),
    "nn_sampled_softmax_loss": lambda tf: _sampled(tf, tf.nn.sampled_softmax_loss, [[1], [4], [9]], SAMPLED),
    "nn_sampled_softmax_loss_keep_hits": lambda tf: _sampled(
        tf, tf.nn.sampled_softmax_loss, [[1], [4], [7]], SAMPLED, remove_accidental_hits=False),
    "nn_sampled_softmax_two_true": lambda tf: _sampled(tf, tf.nn.sampled_softmax_loss, [[1, 0], [4, 2], [7, 6]],
                                                       SAMPLED2),
    "nn_log_uniform_expected": lambda tf: tf.nn.log_uniform_candidate_sampler(
        tf.constant([[0, 3], [7, 99]], tf.int64), 2, 5, False, 100, seed=1)[1],
    "nn_uniform_expected": lambda tf: tf.nn.uniform_candidate_sampler(
        tf.constant([[0], [7]], tf.int64), 1, 6, False, 30, seed=1)[1],
    "nn_log_uniform_sampler_unique": lambda tf: list(tf.nn.log_uniform_candidate_sampler(
        tf.constant([[0, 3], [7, 99]], tf.int64), 2, 5, True, 100, seed=1)),
    "nn_log_uniform_sampler": lambda tf: list(tf.nn.log_uniform_candidate_sampler(
        tf.constant([[4]], tf.int64), 1, 6, False, 50, seed=4)),
    "nn_uniform_sampler_unique": lambda tf: list(tf.nn.uniform_candidate_sampler(
        tf.constant([[1], [2]], tf.int64), 1, 8, True, 20, seed=2)),
    "nn_uniform_sampler": lambda tf: list(tf.nn.uniform_candidate_sampler(
        tf.constant([[1], [2]], tf.int64), 1, 8, False, 1000003)),
    "nn_nce_loss_default_sampler": lambda tf: _default_sampler(tf, tf.nn.nce_loss, {}),
    "nn_sampled_softmax_default_sampler": lambda tf: _default_sampler(tf, tf.nn.sampled_softmax_loss,
                                                                      {"seed": 3}),
    "nn_compute_accidental_hits_repeated": lambda tf: list(tf.nn.compute_accidental_hits(
        tf.constant([[1, 4], [2, 9]], tf.int64), tf.constant([4, 1, 4, 9], tf.int64), num_true=2)),
    "nn_compute_accidental_hits": lambda tf: list(tf.nn.compute_accidental_hits(
        tf.constant([[1, 4], [2, 9], [0, 3]], tf.int64), tf.constant([4, 0, 9, 1, 7], tf.int64), num_true=2)),
    "nn_moments_grads": lambda tf: _moments_grads(tf),
    "nn_max_pool1d": lambda tf: tf.nn.max_pool1d(tf.constant(SEQ), 3, 2, "SAME"),
    "nn_avg_pool1d": lambda tf: tf.nn.avg_pool1d(tf.constant(SEQ), [2], [1], "VALID"),
    "nn_conv1d_transpose": lambda tf: tf.nn.conv1d_transpose(
        tf.constant(SEQ[:, :, :2]), tf.constant(W1D[:, :, :2].copy()), [2, 18, 3], 2, "SAME"),
    "nn_conv1d_transpose_valid": lambda tf: tf.nn.conv1d_transpose(
        tf.constant(SEQ[:, :, :2]), tf.constant(W1D[:, :, :2].copy()), tf.constant([2, 19, 3]), 2, "VALID"),
    "nn_batch_norm_global": lambda tf: tf.nn.batch_norm_with_global_normalization(
        tf.constant(IMG), tf.constant([0.1, 0.2, 0.3]), tf.constant([1.0, 2.0, 0.5]), tf.constant([0.0, 1.0, -1.0]),
        tf.constant([2.0, 0.5, 1.5]), 0.001, True),
    "nn_batch_norm_global_no_scale": lambda tf: tf.nn.batch_norm_with_global_normalization(
        tf.constant(IMG), tf.constant([0.1, 0.2, 0.3]), tf.constant([1.0, 2.0, 0.5]), tf.constant([0.0, 1.0, -1.0]),
        tf.constant([2.0, 0.5, 1.5]), 0.001, False),
    "nn_all_candidate_sampler": lambda tf: list(tf.nn.all_candidate_sampler(
        tf.constant([[1], [3]], tf.int64), 1, 5, True)),
    "nn_safe_embedding_mean": lambda tf: tf.nn.safe_embedding_lookup_sparse(
        tf.constant(EMB), tf.SparseTensor([[0, 0], [0, 1], [2, 0], [2, 1], [3, 0]],
                                          tf.constant([1, 3, -1, 5, 2], tf.int64), [4, 2])),
    "nn_safe_embedding_weighted_default": lambda tf: tf.nn.safe_embedding_lookup_sparse(
        [tf.constant(EMB[:5]), tf.constant(EMB[5:])],
        tf.SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0]], tf.constant([1, 7, 4, 2], tf.int64), [4, 2]),
        tf.SparseTensor([[0, 0], [0, 1], [2, 0], [3, 0]], [2.0, 0.5, -1.0, 1.0], [4, 2]),
        combiner="sqrtn", default_id=9),
    "nn_ctc_loss": lambda tf: _ctc(tf, {}),
    "nn_ctc_loss_no_merge": lambda tf: _ctc(tf, {"ctc_merge_repeated": False}),
    "nn_ctc_loss_collapse": lambda tf: _ctc(tf, {"preprocess_collapse_repeated": True}),
    "nn_ctc_loss_batch_major_ignore_longer": lambda tf: _ctc(
        tf, {"time_major": False, "ignore_longer_outputs_than_inputs": True}, lengths=[7, 2, 5]),
    "nn_safe_embedding_3d_sum": lambda tf: tf.nn.safe_embedding_lookup_sparse(
        tf.constant(EMB), tf.SparseTensor([[0, 0, 0], [0, 1, 1], [1, 1, 0], [1, 1, 1]],
                                          tf.constant([1, 3, 5, 2], tf.int64), [2, 2, 2]), combiner="sum"),
}
VALUES.update(NN_VALUES)

# Recorded under TensorFlow 2.15 (make_tf215_birnn_fixtures.py): 2.21 has no tf.nn.rnn_cell cells.
TF215_VALUES = {
    "nn_static_bidirectional_rnn": lambda tf: _birnn(tf, None),
    "nn_static_bidirectional_rnn_lengths": lambda tf: _birnn(tf, tf.constant([4, 2])),
    "nn_raw_rnn": lambda tf: _raw_rnn(tf),
}


def _raw_rnn(tf):
    """raw_rnn emulating dynamic_rnn with sequence lengths (TF's documented example), plus a
    loop state counting the steps and an emit structure of two outputs."""
    inputs = tf.constant(np.stack(STEPS))  # [time, batch, depth]
    lengths = tf.constant([4, 2])
    ta = tf.TensorArray(tf.float32, size=4).unstack(inputs)
    cell = tf.nn.rnn_cell.LSTMCell(3, initializer=tf.random_uniform_initializer(-0.5, 0.5, seed=4))

    def loop_fn(time, cell_output, cell_state, loop_state):
        if cell_output is None:
            emit, state, count = (tf.zeros([3]), tf.zeros([1])), cell.zero_state(2, tf.float32), tf.constant(0.0)
        else:
            emit, state, count = (cell_output, cell_output[:, :1] * 2.0), cell_state, loop_state + 1.0
        finished = time >= lengths
        all_done = tf.reduce_all(finished)
        next_input = tf.cond(all_done, lambda: tf.zeros([2, 3]), lambda: ta.read(time))
        return finished, next_input, state, emit, count

    (out_ta, twice_ta), state, count = tf.nn.raw_rnn(cell, loop_fn)
    return [out_ta.stack(), twice_ta.stack(), list(state), count]


def _pool_grad(tf):
    x = tf.constant(IMG)
    y = (tf.reduce_sum(tf.nn.pool(x, [2, 2], "AVG", "VALID", dilation_rate=[2, 2]) ** 2)
         + tf.reduce_sum(tf.nn.pool(x, [3, 2], "MAX", "VALID", dilation_rate=[2, 3]) ** 2))
    return tf.gradients(y, x)


def _parts(slices):
    return [slices.values, slices.indices]


def _grads(tf, build, dense):
    """d sum(build(sp, b)) / d (sp.values, b)."""
    sp = _sp(tf)
    b = tf.constant(dense)
    y = tf.reduce_sum(build(sp, b))
    return [g if g is not None else tf.constant(0.0) for g in tf.gradients(y, [sp.values, b])]


def _seg_grads(tf):
    data = tf.constant(D35)
    y = (tf.reduce_sum(tf.sparse_segment_mean(data, [0, 2, 2], [0, 0, 1]) ** 2)
         + tf.reduce_sum(tf.sparse_segment_sqrt_n(data, [1, 2], [0, 0]) ** 2)
         + tf.reduce_sum(tf.sparse_segment_sum(data, [1, 1], [0, 1]) ** 2))
    return tf.gradients(y, data)


ERRORS = {
    "sparse_dense_matmul_row_oob": lambda tf: tf.sparse_tensor_dense_matmul(
        tf.SparseTensor([[0, 1], [5, 0]], [1., 2.], [3, 4]), tf.constant(B42)),
    "sparse_dense_matmul_col_oob": lambda tf: tf.sparse_tensor_dense_matmul(
        tf.SparseTensor([[0, 1], [1, 7]], [1., 2.], [3, 4]), tf.constant(B42)),
    "sparse_to_dense_unordered": lambda tf: tf.sparse.to_dense(_unordered(tf)),
    "sparse_to_dense_repeated": lambda tf: tf.sparse.to_dense(
        tf.SparseTensor([[0, 1], [0, 1]], [1., 2.], [3, 4])),
    "sparse_to_dense_oob": lambda tf: tf.sparse.to_dense(tf.SparseTensor([[0, 1], [3, 1]], [1., 2.], [3, 4])),
    "sparse_softmax_rank1": lambda tf: tf.sparse.softmax(tf.SparseTensor([[1]], [1.], [3])),
    "sparse_segment_bad_index": lambda tf: tf.sparse_segment_sum(tf.constant(D35), [0, 3], [0, 0]),
    "sparse_segment_unsorted": lambda tf: tf.sparse_segment_sum(tf.constant(D35), [0, 1], [1, 0]),
    "sparse_fill_empty_rows_oob": lambda tf: tf.sparse.fill_empty_rows(
        tf.SparseTensor([[0, 1], [9, 0]], [1., 2.], [3, 4]), 0.0)[0].values,
    "nn_ctc_not_enough_time": lambda tf: _ctc(tf, {}, lengths=[7, 2, 6]),
    "nn_ctc_empty_labels": lambda tf: tf.nn.ctc_loss(
        tf.SparseTensor([[0, 0]], tf.constant([1], tf.int32), [2, 1]), tf.constant(CTC_LOGITS[:, :2]),
        tf.constant([7, 7], tf.int32)),
    "nn_log_uniform_true_out_of_range": lambda tf: tf.nn.log_uniform_candidate_sampler(
        tf.constant([[3], [12]], tf.int64), 1, 2, True, 10)[0],
    "sparse_reduce_sum_oob": lambda tf: tf.sparse.reduce_sum(_oob(tf), 1),
    "sparse_maximum_oob": lambda tf: tf.sparse.maximum(_oob(tf), _oob(tf)).values,
    "sparse_dense_cwise_oob": lambda tf: (_oob(tf) * tf.ones([4])).values,
    "sparse_split_oob": lambda tf: tf.sparse.split(sp_input=_oob(tf), num_split=2, axis=1)[0].values,
    "sparse_dense_add_shape": lambda tf: tf.sparse_add(_sp(tf), tf.placeholder_with_default(B42, None)),
}


# ---------------------------------------------------------------------------------------------
# Comparing a run against the recorded fixture (used by the tests)
# ---------------------------------------------------------------------------------------------
def assert_matches(expected, got, path="out"):
    """`got` (what tensorweave's session returned) equals the encoded `expected`: float32 to
    rtol 1e-5, everything else exactly, with the same dtype and shape."""
    if isinstance(expected, list):
        assert isinstance(got, (list, tuple)), f"{path}: expected a list, got {type(got).__name__}"
        assert len(got) == len(expected), f"{path}: {len(got)} parts, expected {len(expected)}"
        for i, (e, g) in enumerate(zip(expected, got)):
            assert_matches(e, g, f"{path}[{i}]")
        return
    if "sparse" in expected:
        assert hasattr(got, "dense_shape"), f"{path}: expected a sparse value, got {type(got).__name__}"
        assert_matches(expected["sparse"], list(got), path)
        return
    a = np.asarray(got)
    want = np.array(expected["data"], dtype=expected["dtype"]).reshape(expected["shape"])
    assert a.dtype == want.dtype, f"{path}: dtype {a.dtype}, expected {want.dtype}"
    assert a.shape == want.shape, f"{path}: shape {a.shape}, expected {want.shape}"
    if a.dtype.kind == "f":
        np.testing.assert_allclose(a, want, rtol=1e-5, atol=1e-6, err_msg=path)
    else:
        np.testing.assert_array_equal(a, want, err_msg=path)
