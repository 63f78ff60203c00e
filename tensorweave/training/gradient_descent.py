"""`tf.train.GradientDescentOptimizer`: var -= learning_rate * grad."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.state import training_ops, variable_ops as state_ops
from tensorweave.training.optimizer import Optimizer


class GradientDescentOptimizer(Optimizer):
    def __init__(self, learning_rate: Any, use_locking: bool = False, name: str = "GradientDescent") -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return apply_op(training_ops.OPS["ApplyGradientDescent"], var=var._ref(),
                        alpha=self._hyper(self._learning_rate, "learning_rate", var), grad=grad,
                        use_locking=self._use_locking).op

    def _apply_sparse_duplicate_indices(self, grad: IndexedSlices, var: Any) -> Any:
        # ScatterSub adds duplicate rows up itself, so no deduplication is needed.
        lr = self._hyper(self._learning_rate, "learning_rate", var)
        return state_ops.scatter_sub(var, grad.indices, grad.values * lr, use_locking=self._use_locking).op
