"""`tf.train.FtrlOptimizer` (McMahan et al., FTRL-Proximal), with TF's accumulators."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.state import training_ops
from tensorweave.training.optimizer import Optimizer


class FtrlOptimizer(Optimizer):
    def __init__(self, learning_rate: Any, learning_rate_power: float = -0.5,
                 initial_accumulator_value: float = 0.1, l1_regularization_strength: float = 0.0,
                 l2_regularization_strength: float = 0.0, use_locking: bool = False, name: str = "Ftrl",
                 accum_name: Optional[str] = None, linear_name: Optional[str] = None,
                 l2_shrinkage_regularization_strength: float = 0.0) -> None:
        super().__init__(use_locking, name)
        if initial_accumulator_value < 0.0:
            raise ValueError(f"initial_accumulator_value {initial_accumulator_value} needs to be >= 0.0")
        if learning_rate_power > 0.0:
            raise ValueError(f"learning_rate_power {learning_rate_power} needs to be <= 0.0")
        for label, value in (("l1", l1_regularization_strength), ("l2", l2_regularization_strength),
                             ("l2_shrinkage", l2_shrinkage_regularization_strength)):
            if value < 0.0:
                raise ValueError(f"{label}_regularization_strength {value} needs to be >= 0.0")
        self._lr, self._lr_power = learning_rate, learning_rate_power
        self._init_accum = initial_accumulator_value
        self._l1, self._l2, self._l2_shrinkage = (l1_regularization_strength, l2_regularization_strength,
                                                  l2_shrinkage_regularization_strength)
        self._accum_name, self._linear_name = accum_name, linear_name

    def _create_slots(self, var_list: Any) -> None:
        for v in var_list:
            self._constant_slot(v, self._init_accum, "accum", self._accum_name or self._name)
            self._zeros_slot(v, "linear", self._linear_name or self._name)

    def _apply(self, sparse: bool, grad: Any, var: Any, **extra: Any) -> Any:
        v2 = self._l2_shrinkage > 0.0
        name = ("SparseApply" if sparse else "Apply") + ("FtrlV2" if v2 else "Ftrl")
        h = self._hyper
        if v2:
            extra["l2_shrinkage"] = h(self._l2_shrinkage, "l2_shrinkage", var)
        return apply_op(training_ops.OPS[name], var=var._ref(), accum=self.get_slot(var, "accum")._ref(),
                        linear=self.get_slot(var, "linear")._ref(), grad=grad,
                        lr=h(self._lr, "learning_rate", var), l1=h(self._l1, "l1", var),
                        l2=h(self._l2, "l2", var), lr_power=h(self._lr_power, "lr_power", var),
                        use_locking=self._use_locking, **extra).op

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._apply(False, grad, var)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        return self._apply(True, grad.values, var, indices=grad.indices)
