"""`tf.losses`: weighted training losses and the LOSSES collection helpers (re-exports only;
the implementation is tensorweave/ops/losses_impl.py)."""
from tensorweave.ops.nn.losses import (
    absolute_difference, add_loss, compute_weighted_loss, get_losses, get_regularization_loss,
    get_regularization_losses, get_total_loss, hinge_loss, huber_loss, log_loss, mean_squared_error,
    Reduction, sigmoid_cross_entropy, softmax_cross_entropy, sparse_softmax_cross_entropy)
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("losses", __name__)
