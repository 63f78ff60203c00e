"""`tf.metrics`: TF 1.x streaming metrics. Each returns (value, update_op) and keeps its totals in
local variables (LOCAL_VARIABLES and METRIC_VARIABLES), reset by tf.local_variables_initializer.
Written on the ops as TF's metrics_impl.py is; re-exports only."""
from tensorweave.metrics.means import (  # noqa: F401
    accuracy, mean, mean_absolute_error, mean_cosine_distance, mean_relative_error, mean_squared_error,
    mean_tensor, percentage_below, root_mean_squared_error)
from tensorweave.metrics.classes import mean_iou, mean_per_class_accuracy  # noqa: F401
from tensorweave.metrics.counts import (  # noqa: F401
    false_negatives, false_positives, precision, recall, true_negatives, true_positives)
from tensorweave.metrics.thresholds import (  # noqa: F401
    auc, false_negatives_at_thresholds, false_positives_at_thresholds, precision_at_thresholds,
    recall_at_thresholds, sensitivity_at_specificity, specificity_at_sensitivity, true_negatives_at_thresholds,
    true_positives_at_thresholds)
from tensorweave.metrics.top_k import (  # noqa: F401
    average_precision_at_k, precision_at_k, precision_at_top_k, recall_at_k, recall_at_top_k,
    sparse_average_precision_at_k, sparse_precision_at_k)
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("metrics", __name__)
