"""`tf.train.AdadeltaOptimizer` (Zeiler 2012), with TF's update rule."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.state import training_ops
from tensorweave.training.optimizer import Optimizer


class AdadeltaOptimizer(Optimizer):
    def __init__(self, learning_rate: Any = 0.001, rho: Any = 0.95, epsilon: Any = 1e-8,
                 use_locking: bool = False, name: str = "Adadelta") -> None:
        super().__init__(use_locking, name)
        self._lr, self._rho, self._epsilon = learning_rate, rho, epsilon

    def _create_slots(self, var_list: Any) -> None:
        for v in var_list:
            self._zeros_slot(v, "accum", self._name)
            self._zeros_slot(v, "accum_update", self._name)

    def _apply(self, op_name: str, grad: Any, var: Any, **extra: Any) -> Any:
        return apply_op(training_ops.OPS[op_name], var=var._ref(), accum=self.get_slot(var, "accum")._ref(),
                        accum_update=self.get_slot(var, "accum_update")._ref(),
                        lr=self._hyper(self._lr, "lr", var), rho=self._hyper(self._rho, "rho", var),
                        epsilon=self._hyper(self._epsilon, "epsilon", var), grad=grad,
                        use_locking=self._use_locking, **extra).op

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._apply("ApplyAdadelta", grad, var)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        return self._apply("SparseApplyAdadelta", grad.values, var, indices=grad.indices)
