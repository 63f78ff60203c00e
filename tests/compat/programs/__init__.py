"""TF1 programs run unchanged under tensorweave and under real TensorFlow (issue 11).

Each module has `run(tf, workdir) -> dict` of named NumPy results; PROGRAMS names them in order.
A module that sets USES_CONTRIB = True needs `tf.contrib` (run under TF 2.x through the tf_slim
shim in tests/data/make_tf_compat_fixtures.py)."""

PROGRAMS = [
    "softmax_flags", "mlp_layers_dropout", "cnn_layers_metrics", "batchnorm_checkpoint", "two_tower_reuse",
    "image_augment", "png_roundtrip", "contrib_layers", "lstm_language_model", "static_birnn",
    "word2vec_nce", "skipgram_softmax", "sparse_bow", "queue_logreg", "linreg_saver", "autoencoder",
    "gan_two_optimizers", "while_cond_numeric", "metrics_streaming", "version_compat", "ema_restore",
    "layers_regularizer", "lr_decay", "grad_clip_stop_gradient", "moments_batchnorm_by_hand",
    "tf215_checkpoint", "optimizers_zoo", "raw_cnn", "birnn_dynamic", "losses_zoo",
    "shuffle_queue_seeded", "ema_control_dependencies", "sampled_softmax_candidates",
    "default_scope_names",
]
