"""`tf.train.AdamOptimizer` (Kingma & Ba), with TF's bias-corrected learning rate and the
beta1_power/beta2_power accumulators as non-slot variables."""
from __future__ import annotations

from typing import Any

from tensorweave.framework import graph as _graph
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.state import training_ops, variable_ops as state_ops
from tensorweave.ops.control_flow.grouping import group
from tensorweave.training.optimizer import Optimizer
from tensorweave.ops import math as math_ops


class AdamOptimizer(Optimizer):
    def __init__(self, learning_rate: Any = 0.001, beta1: float = 0.9, beta2: float = 0.999,
                 epsilon: float = 1e-8, use_locking: bool = False, name: str = "Adam") -> None:
        super().__init__(use_locking, name)
        self._lr, self._beta1, self._beta2, self._epsilon = learning_rate, beta1, beta2, epsilon

    def _create_slots(self, var_list: Any) -> None:
        first = min(var_list, key=lambda v: v.name)
        self._create_non_slot_variable(self._beta1, "beta1_power", first)
        self._create_non_slot_variable(self._beta2, "beta2_power", first)
        for v in var_list:
            self._zeros_slot(v, "m", self._name)
            self._zeros_slot(v, "v", self._name)

    def _powers(self, graph: Any) -> tuple[Any, Any]:
        return (self._get_non_slot_variable("beta1_power", graph),
                self._get_non_slot_variable("beta2_power", graph))

    def _apply_dense(self, grad: Any, var: Any) -> Any:
        b1p, b2p = self._powers(var.graph)
        h = self._hyper
        return apply_op(training_ops.OPS["ApplyAdam"], var=var._ref(), m=self.get_slot(var, "m")._ref(),
                        v=self.get_slot(var, "v")._ref(), beta1_power=h(b1p.value(), "beta1_power", var),
                        beta2_power=h(b2p.value(), "beta2_power", var), lr=h(self._lr, "learning_rate", var),
                        beta1=h(self._beta1, "beta1", var), beta2=h(self._beta2, "beta2", var),
                        epsilon=h(self._epsilon, "epsilon", var), grad=grad, use_locking=self._use_locking).op

    def _apply_sparse(self, grad: Any, var: Any) -> Any:
        """TF1's sparse Adam: the moments decay everywhere, gradients are added at the rows."""
        b1p, b2p = self._powers(var.graph)
        h = self._hyper
        lr, beta1, beta2, eps = (h(self._lr, "lr", var), h(self._beta1, "beta1", var),
                                 h(self._beta2, "beta2", var), h(self._epsilon, "epsilon", var))
        b1p_t, b2p_t = h(b1p.value(), "beta1_power", var), h(b2p.value(), "beta2_power", var)
        lr_t = lr * math_ops.sqrt(1 - b2p_t) / (1 - b1p_t)
        m, v = self.get_slot(var, "m"), self.get_slot(var, "v")
        m_t = state_ops.assign(m, m * beta1, use_locking=self._use_locking)
        with _graph.control_dependencies([m_t]):
            m_t = state_ops.scatter_add(m, grad.indices, grad.values * (1 - beta1), use_locking=self._use_locking)
        v_t = state_ops.assign(v, v * beta2, use_locking=self._use_locking)
        with _graph.control_dependencies([v_t]):
            v_t = state_ops.scatter_add(v, grad.indices, grad.values * grad.values * (1 - beta2),
                                        use_locking=self._use_locking)
        update = state_ops.assign_sub(var, lr_t * m_t / (math_ops.sqrt(v_t) + eps), use_locking=self._use_locking)
        return group(update, m_t, v_t)

    def _finish(self, update_ops: list[Any], name_scope: str) -> Any:
        graph = update_ops[0].graph
        b1p, b2p = self._powers(graph)
        with _graph.control_dependencies(update_ops), graph.colocate_with(b1p.op):
            update_b1 = b1p.assign(b1p * self._beta1, use_locking=self._use_locking)
            update_b2 = b2p.assign(b2p * self._beta2, use_locking=self._use_locking)
        return group(*update_ops, update_b1, update_b2, name=name_scope)
