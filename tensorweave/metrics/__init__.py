"""`tf.metrics`: TF 1.x streaming metrics. Each returns (value, update_op) and keeps its totals in
local variables (LOCAL_VARIABLES and METRIC_VARIABLES), reset by tf.local_variables_initializer.
Written on the ops as TF's metrics_impl.py is; re-exports only."""
from tensorweave.metrics.means import (  # noqa: F401
    accuracy, mean, mean_absolute_error, mean_cosine_distance, mean_relative_error, mean_squared_error,
    mean_tensor, percentage_below, root_mean_squared_error)
