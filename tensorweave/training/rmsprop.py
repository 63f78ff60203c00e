"""`tf.train.RMSPropOptimizer` (optionally centered), with TF1's defaults: the mean-square slot
starts at ones."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.state import training_ops
from tensorweave.training.optimizer import Optimizer


class RMSPropOptimizer(Optimizer):
    def __init__(self, learning_rate: Any, decay: Any = 0.9, momentum: Any = 0.0, epsilon: Any = 1e-10,
                 use_locking: bool = False, centered: bool = False, name: str = "RMSProp") -> None:
        super().__init__(use_locking, name)
        self._lr, self._decay, self._momentum, self._epsilon = learning_rate, decay, momentum, epsilon
        self._centered = centered

    def _create_slots(self, var_list: Any) -> None:
        for v in var_list:
            self._constant_slot(v, 1.0, "rms", self._name)
            if self._centered:
                self._zeros_slot(v, "mg", self._name)
            self._zeros_slot(v, "momentum", self._name)

    def _apply(self, sparse: bool, grad: Any, var: Any, **extra: Any) -> Any:
        name = ("SparseApply" if sparse else "Apply") + ("CenteredRMSProp" if self._centered else "RMSProp")
        slots = {"ms": self.get_slot(var, "rms")._ref(), "mom": self.get_slot(var, "momentum")._ref()}
        if self._centered:
            slots["mg"] = self.get_slot(var, "mg")._ref()
        return apply_op(training_ops.OPS[name], var=var._ref(), lr=self._hyper(self._lr, "learning_rate", var),
                        rho=self._hyper(self._decay, "decay", var),
                        momentum=self._hyper(self._momentum, "momentum", var),
                        epsilon=self._hyper(self._epsilon, "epsilon", var), grad=grad,
                        use_locking=self._use_locking, **slots, **extra).op

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        return self._apply(False, grad, var)

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        return self._apply(True, grad.values, var, indices=grad.indices)
