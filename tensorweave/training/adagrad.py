"""`tf.train.AdagradOptimizer`: accum += grad^2; var -= lr * grad / sqrt(accum)."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.state import training_ops
from tensorweave.training.optimizer import Optimizer


class AdagradOptimizer(Optimizer):
    def __init__(self, learning_rate: Any, initial_accumulator_value: float = 0.1, use_locking: bool = False,
                 name: str = "Adagrad") -> None:
        if initial_accumulator_value <= 0.0:
            raise ValueError(f"initial_accumulator_value must be positive: {initial_accumulator_value}")
        super().__init__(use_locking, name)
        self._learning_rate = learning_rate
        self._initial_accumulator_value = initial_accumulator_value

    def _create_slots(self, var_list: Any) -> None:
        for v in var_list:
            self._constant_slot(v, self._initial_accumulator_value, "accumulator", self._name)

    def _apply(self, op_name: str, grad: Any, var: Any, **extra: Any) -> Any:
        return apply_op(training_ops.OPS[op_name], var=var._ref(),
                        accum=self.get_slot(var, "accumulator")._ref(),
                        lr=self._hyper(self._learning_rate, "learning_rate", var), grad=grad,
                        use_locking=self._use_locking, **extra).op

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._apply("ApplyAdagrad", grad, var)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        return self._apply("SparseApplyAdagrad", grad.values, var, indices=grad.indices)
