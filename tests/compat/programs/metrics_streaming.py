"""Streaming tf.metrics over several batches: precision, recall, mean_iou, mean_absolute_error,
root_mean_squared_error, false_negatives and precision_at_thresholds, with the update ops run per
batch and the local variables reset between two evaluation passes."""
import numpy as np


def run(tf, workdir):
    rng = np.random.RandomState(8)
    labels = tf.placeholder(tf.int64, [None])
    preds = tf.placeholder(tf.int64, [None])
    scores = tf.placeholder(tf.float32, [None])
    precision, p_up = tf.metrics.precision(labels, preds)
    recall, r_up = tf.metrics.recall(labels, preds)
    miou, m_up = tf.metrics.mean_iou(labels, preds, num_classes=2)
    mae, mae_up = tf.metrics.mean_absolute_error(tf.cast(labels, tf.float32), scores)
    rmse, rmse_up = tf.metrics.root_mean_squared_error(tf.cast(labels, tf.float32), scores)
    fn, fn_up = tf.metrics.false_negatives(labels, preds)
    pat, pat_up = tf.metrics.precision_at_thresholds(labels, scores, thresholds=[0.25, 0.5, 0.75])
    updates = [p_up, r_up, m_up, mae_up, rmse_up, fn_up, pat_up]
    values = [precision, recall, miou, mae, rmse, fn, pat]
    passes = []
    with tf.Session() as sess:
        for _ in range(2):
            sess.run(tf.local_variables_initializer())
            for _ in range(3):
                lab = rng.randint(0, 2, 20)
                sc = np.clip(lab * 0.4 + rng.rand(20) * 0.6, 0, 1).astype(np.float32)
                sess.run(updates, {labels: lab, preds: (sc > 0.5).astype(np.int64), scores: sc})
            passes.append(sess.run(values))
    out = {}
    for i, vals in enumerate(passes):
        for name, v in zip(["precision", "recall", "mean_iou", "mae", "rmse", "false_negatives",
                            "precision_at_thresholds"], vals):
            out["pass%d_%s" % (i, name)] = np.asarray(v, np.float32)
    out["local_variable_names"] = np.array(sorted(v.name for v in tf.local_variables()))
    return out
