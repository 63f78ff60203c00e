"""L-BFGS (listed in the OSDI paper among optimizers built on TensorFlow), as a driver that
calls the graph: each iteration runs one step fetching the loss and the gradients of all
variables, and the two-loop recursion and a backtracking line search run in NumPy on the
flattened variables, written back through the variables' initializers' feeds."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.gradients import gradients
from tensorweave.ops import state_ops
from tensorweave.ops.constant_op import placeholder
from tensorweave.ops.control_flow.grouping import group
from tensorweave.ops.variables import trainable_variables


class LBFGSOptimizer:
    """tf.train.LBFGSOptimizer(loss, var_list).minimize(session, feed_dict) -> final loss."""

    def __init__(self, loss: Any, var_list: Optional[Sequence[Any]] = None, history: int = 10,
                 max_iterations: int = 100, tolerance: float = 1e-7, name: str = "LBFGS") -> None:
        self._loss = convert_to_tensor(loss)
        self._vars = list(var_list) if var_list is not None else trainable_variables()
        if not self._vars:
            raise ValueError("No variables to optimize.")
        grads = gradients(self._loss, self._vars, name=f"{name}/gradients")
        if any(g is None for g in grads):
            missing = [v.name for v, g in zip(self._vars, grads) if g is None]
            raise ValueError(f"No gradients for variables {missing}")
        self._grads = [convert_to_tensor(g) for g in grads]
        self._feeds = [placeholder(v.dtype.base_dtype, v.get_shape()) for v in self._vars]
        self._assign = group(*[state_ops.assign(v, p) for v, p in zip(self._vars, self._feeds)],
                             name=f"{name}/assign")
        self._shapes = [v.get_shape().as_list() for v in self._vars]
        self._sizes = [int(np.prod(s, dtype=np.int64)) for s in self._shapes]
        self.history, self.max_iterations, self.tolerance = history, max_iterations, tolerance

    def _unpack(self, flat: np.ndarray) -> list[np.ndarray]:
        parts, pos = [], 0
        for shape, size in zip(self._shapes, self._sizes):
            parts.append(flat[pos:pos + size].reshape(shape))
            pos += size
        return parts

    def _evaluate(self, session: Any, flat: np.ndarray, feed_dict: dict) -> tuple[float, np.ndarray]:
        feeds = dict(feed_dict)
        for p, v, var in zip(self._feeds, self._unpack(flat), self._vars):
            feeds[p] = v.astype(var.dtype.base_dtype.as_numpy_dtype)
        session.run(self._assign, feeds)
        loss, grads = session.run([self._loss, self._grads], feed_dict)
        return float(loss), np.concatenate([np.asarray(g, np.float64).reshape(-1) for g in grads])

    def minimize(self, session: Any, feed_dict: Optional[dict] = None,
                 step_callback: Optional[Callable[[np.ndarray], None]] = None) -> float:
        feed_dict = dict(feed_dict or {})
        x = np.concatenate([np.asarray(v, np.float64).reshape(-1) for v in session.run(self._vars)])
        f, g = self._evaluate(session, x, feed_dict)
        s_hist: list[np.ndarray] = []
        y_hist: list[np.ndarray] = []
        for _ in range(self.max_iterations):
            if np.max(np.abs(g)) <= self.tolerance:
                break
            direction = -_two_loop(g, s_hist, y_hist)
            if direction @ g >= 0:  # not a descent direction: restart from steepest descent
                s_hist.clear()
                y_hist.clear()
                direction = -g
            step, f_new, g_new, x_new = 1.0, f, g, x
            for _ in range(40):  # backtracking line search with the Armijo condition
                x_new = x + step * direction
                f_new, g_new = self._evaluate(session, x_new, feed_dict)
                if f_new <= f + 1e-4 * step * (g @ direction):
                    break
                step *= 0.5
            s, y = x_new - x, g_new - g
            if s @ y > 1e-12:
                s_hist.append(s)
                y_hist.append(y)
                if len(s_hist) > self.history:
                    s_hist.pop(0)
                    y_hist.pop(0)
            converged = abs(f - f_new) <= self.tolerance * max(1.0, abs(f))
            x, f, g = x_new, f_new, g_new
            if step_callback is not None:
                step_callback(x)
            if converged:
                break
        self._evaluate(session, x, feed_dict)
        return f


def _two_loop(g: np.ndarray, s_hist: list[np.ndarray], y_hist: list[np.ndarray]) -> np.ndarray:
    """H·g for the L-BFGS inverse-Hessian approximation (Nocedal & Wright, Algorithm 7.4)."""
    q = g.copy()
    alphas = []
    for s, y in zip(reversed(s_hist), reversed(y_hist)):
        rho = 1.0 / (y @ s)
        a = rho * (s @ q)
        alphas.append((rho, a))
        q -= a * y
    if s_hist:
        q *= (s_hist[-1] @ y_hist[-1]) / (y_hist[-1] @ y_hist[-1])
    for (s, y), (rho, a) in zip(zip(s_hist, y_hist), reversed(alphas)):
        b = rho * (y @ q)
        q += s * (a - b)
    return q
