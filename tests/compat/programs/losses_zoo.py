"""tf.losses on one batch with weights and reductions: mean_squared_error, absolute_difference,
huber_loss, log_loss, hinge_loss, sigmoid_cross_entropy with label_smoothing, softmax_cross_entropy
with label_smoothing, compute_weighted_loss with each Reduction, and the LOSSES collection."""
import numpy as np


def run(tf, workdir):
    rng = np.random.RandomState(11)
    labels = rng.randint(0, 2, (6, 3)).astype(np.float32)
    preds = rng.rand(6, 3).astype(np.float32)
    logits = (rng.randn(6, 3) * 2).astype(np.float32)
    weights = rng.rand(6, 1).astype(np.float32)
    out = {
        "mse": tf.losses.mean_squared_error(labels, preds, weights=weights),
        "abs": tf.losses.absolute_difference(labels, preds),
        "huber": tf.losses.huber_loss(labels, logits, delta=0.5),
        "log": tf.losses.log_loss(labels, preds, weights=2.0),
        "hinge": tf.losses.hinge_loss(labels, logits),
        "sigmoid_smooth": tf.losses.sigmoid_cross_entropy(labels, logits, label_smoothing=0.1),
        "softmax_smooth": tf.losses.softmax_cross_entropy(tf.one_hot([0, 1, 2, 0, 1, 2], 3), logits,
                                                          label_smoothing=0.2),
    }
    per = tf.square(labels - preds)
    for r in ("NONE", "SUM", "MEAN", "SUM_BY_NONZERO_WEIGHTS", "SUM_OVER_BATCH_SIZE"):
        out["weighted_" + r] = tf.losses.compute_weighted_loss(
            per, weights=weights * np.array([[1.0], [0.0], [1.0], [1.0], [0.0], [1.0]], np.float32),
            reduction=getattr(tf.losses.Reduction, r), loss_collection=None)
    n_collected = len(tf.losses.get_losses())
    total = tf.losses.get_total_loss(add_regularization_losses=False)
    with tf.Session() as sess:
        values = sess.run(out)
        t = sess.run(total)
    result = {k: np.asarray(v, np.float32) for k, v in values.items()}
    result["total"] = np.float32(t)
    result["n_collected"] = np.int64(n_collected)
    return result
