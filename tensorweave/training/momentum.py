"""`tf.train.MomentumOptimizer`: accum = accum * momentum + grad; var -= lr * accum (or the
Nesterov form)."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.state import training_ops
from tensorweave.training.optimizer import Optimizer


class MomentumOptimizer(Optimizer):
    def __init__(self, learning_rate: Any, momentum: Any, use_locking: bool = False, name: str = "Momentum",
                 use_nesterov: bool = False) -> None:
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._momentum = momentum
        self._use_nesterov = use_nesterov

    def _create_slots(self, var_list: Any) -> None:
        for v in var_list:
            self._zeros_slot(v, "momentum", self._name)

    def _apply(self, op_name: str, grad: Any, var: Any, **extra: Any) -> Any:
        return apply_op(training_ops.OPS[op_name], var=var._ref(), accum=self.get_slot(var, "momentum")._ref(),
                        lr=self._hyper(self._learning_rate, "learning_rate", var), grad=grad,
                        momentum=self._hyper(self._momentum, "momentum", var), use_locking=self._use_locking,
                        use_nesterov=self._use_nesterov, **extra).op

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._apply("ApplyMomentum", grad, var)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        return self._apply("SparseApplyMomentum", grad.values, var, indices=grad.indices)
