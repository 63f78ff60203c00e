"""L-BFGS (listed in the OSDI paper among optimizers built on TensorFlow), as a driver that
calls the graph, in the manner of TF1's `ScipyOptimizerInterface`: each function evaluation
writes the candidate point into the variables and runs one step fetching the loss and the
gradients of all variables; the two-loop recursion and a line search satisfying the strong
Wolfe conditions run in NumPy (float64) on the variables flattened into one vector.

The Wolfe line search matters: its curvature condition guarantees s·y > 0, so every stored
pair keeps the inverse-Hessian approximation positive definite and the two-loop direction a
descent direction (a plain backtracking search does not, and stalls on curved valleys such as
Rosenbrock's).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.gradients import gradients
from tensorweave.ops.state import variable_ops as state_ops
from tensorweave.ops.array.constant_op import placeholder
from tensorweave.ops.control_flow.grouping import group
from tensorweave.ops.state.variables import trainable_variables

_C1, _C2 = 1e-4, 0.9          # sufficient decrease and curvature constants (Nocedal & Wright)
_MAX_LINE_SEARCH_EVALS = 30


class LBFGSOptimizer:
    """Minimizes `loss` over `var_list` with L-BFGS, driving the graph from Python.

    `tf.train.LBFGSOptimizer(loss, var_list=None, history=10, max_iterations=100,
    tolerance=1e-7)`; `minimize(session, feed_dict=None, step_callback=None,
    loss_callback=None, fetches=None)` runs it and returns the final loss. It stops when the
    largest gradient component is at most `tolerance`, when an iteration lowers the loss by
    at most `tolerance` relative to its size, when no step along the search direction lowers
    the loss, or after `max_iterations` iterations. The variables end at the best point found.
    """

    def __init__(self, loss: Any, var_list: Optional[Sequence[Any]] = None, history: int = 10,
                 max_iterations: int = 100, tolerance: float = 1e-7, name: str = "LBFGS") -> None:
        if history < 1:
            raise ValueError(f"history must be at least 1, got {history}")
        if max_iterations < 0:
            raise ValueError(f"max_iterations must be non-negative, got {max_iterations}")
        self._loss = convert_to_tensor(loss)
        if self._loss.shape.ndims not in (None, 0):
            raise ValueError(f"loss must be a scalar, got shape {self._loss.shape}")
        self._vars = list(var_list) if var_list is not None else trainable_variables()
        if not self._vars:
            raise ValueError("No variables to optimize.")
        for v in self._vars:
            if not v.get_shape().is_fully_defined():
                raise ValueError(f"Variable {v.name} must have a fully defined shape, got {v.get_shape()}")
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

    # -- the graph side: write a point, read loss and gradient -----------------------------------
    def _write(self, session: Any, flat: np.ndarray, feed_dict: dict) -> None:
        feeds = dict(feed_dict)
        pos = 0
        for p, var, shape, size in zip(self._feeds, self._vars, self._shapes, self._sizes):
            feeds[p] = flat[pos:pos + size].reshape(shape).astype(var.dtype.base_dtype.as_numpy_dtype)
            pos += size
        session.run(self._assign, feeds)

    def _evaluate(self, session: Any, flat: np.ndarray, feed_dict: dict) -> tuple[float, np.ndarray]:
        self._write(session, flat, feed_dict)
        loss, grads = session.run([self._loss, self._grads], feed_dict)
        return float(loss), np.concatenate([np.asarray(g, np.float64).reshape(-1) for g in grads])

    # -- the driver ---------------------------------------------------------------------------
    def minimize(self, session: Any, feed_dict: Optional[dict] = None,
                 step_callback: Optional[Callable[[np.ndarray], None]] = None,
                 loss_callback: Optional[Callable[..., None]] = None,
                 fetches: Optional[Sequence[Any]] = None) -> float:
        """Runs L-BFGS from the variables' current values; returns the final loss.
        `step_callback(x)` gets the flat point after each iteration; `loss_callback(loss,
        *fetched)` is called after each function evaluation with the values of `fetches`."""
        feed_dict = dict(feed_dict or {})
        fetches = list(fetches or [])

        def evaluate(x: np.ndarray) -> tuple[float, np.ndarray]:
            f, g = self._evaluate(session, x, feed_dict)
            if not np.isfinite(f):
                f = np.inf  # treat overflow as "too far": the line search backs off
            if loss_callback is not None:
                loss_callback(f, *(session.run(fetches, feed_dict) if fetches else []))
            return f, g

        x = np.concatenate([np.asarray(v, np.float64).reshape(-1) for v in session.run(self._vars)])
        f, g = evaluate(x)
        s_hist: list[np.ndarray] = []
        y_hist: list[np.ndarray] = []
        for _ in range(self.max_iterations):
            if np.max(np.abs(g), initial=0.0) <= self.tolerance:
                break
            found = self._iterate(evaluate, x, f, g, s_hist, y_hist)
            if found is None:
                break  # no step along -g lowers the loss: as converged as float64 allows
            x_new, f_new, g_new = found
            decrease = f - f_new
            x, f, g = x_new, f_new, g_new
            if step_callback is not None:
                step_callback(x)
            if decrease <= self.tolerance * max(1.0, abs(f)):
                break
        self._write(session, x, feed_dict)
        return f

    def _iterate(self, evaluate: Callable, x: np.ndarray, f: float, g: np.ndarray,
                 s_hist: list[np.ndarray], y_hist: list[np.ndarray]) -> Optional[tuple]:
        """One L-BFGS iteration: search along the two-loop direction (restarting from steepest
        descent if that fails); records the (s, y) pair. None when no step helps."""
        for attempt in range(2):
            if s_hist:
                direction = -_two_loop(g, s_hist, y_hist)
                first_step = 1.0
            else:  # no curvature information yet: a unit-length first step
                direction = -g
                first_step = min(1.0, 1.0 / max(float(np.sum(np.abs(g))), 1e-300))
            slope = float(g @ direction)
            if slope < 0:
                found = _wolfe_line_search(evaluate, x, f, slope, direction, first_step)
                if found is not None:
                    x_new, f_new, g_new = found
                    s, y = x_new - x, g_new - g
                    if s @ y > 1e-10 * float(np.sqrt((s @ s) * (y @ y))):  # curvature check
                        s_hist.append(s)
                        y_hist.append(y)
                        if len(s_hist) > self.history:
                            s_hist.pop(0)
                            y_hist.pop(0)
                    return found
            if not s_hist:
                return None
            s_hist.clear()  # the quasi-Newton model misled us: forget it, try steepest descent
            y_hist.clear()
        return None


def _two_loop(g: np.ndarray, s_hist: list[np.ndarray], y_hist: list[np.ndarray]) -> np.ndarray:
    """H·g for the L-BFGS inverse-Hessian approximation (Nocedal & Wright, Algorithm 7.4),
    with the initial matrix scaled by s·y / y·y of the latest pair."""
    q = g.copy()
    alphas = []
    for s, y in zip(reversed(s_hist), reversed(y_hist)):
        rho = 1.0 / (y @ s)
        a = rho * (s @ q)
        alphas.append((rho, a))
        q -= a * y
    q *= (s_hist[-1] @ y_hist[-1]) / (y_hist[-1] @ y_hist[-1])
    for (s, y), (rho, a) in zip(zip(s_hist, y_hist), reversed(alphas)):
        b = rho * (y @ q)
        q += s * (a - b)
    return q


def _wolfe_line_search(evaluate: Callable, x: np.ndarray, f0: float, slope0: float,
                       direction: np.ndarray, step: float) -> Optional[tuple]:
    """A step satisfying the strong Wolfe conditions (Nocedal & Wright, Algorithm 3.5):
    bracket by expanding the step, then zoom. Returns (x, f, g) at the step, or None."""
    evals = [0]

    def phi(a: float) -> tuple[float, float, np.ndarray, np.ndarray]:
        evals[0] += 1
        point = x + a * direction
        f, g = evaluate(point)
        return f, float(g @ direction), g, point

    prev = (0.0, f0, slope0)
    while evals[0] < _MAX_LINE_SEARCH_EVALS:
        f, d, g, point = phi(step)
        if f > f0 + _C1 * step * slope0 or (evals[0] > 1 and f >= prev[1]):
            return _zoom(phi, f0, slope0, prev, (step, f, d), evals)
        if abs(d) <= -_C2 * slope0:
            return point, f, g
        if d >= 0:
            return _zoom(phi, f0, slope0, (step, f, d), prev, evals)
        prev = (step, f, d)
        step *= 4.0
    return None


def _zoom(phi: Callable, f0: float, slope0: float, lo: tuple, hi: tuple, evals: list) -> Optional[tuple]:
    """Shrinks the bracket [lo, hi] (lo: the lower loss so far) to a strong Wolfe step;
    trial steps by cubic interpolation, kept away from the ends (else bisection)."""
    best = None
    while evals[0] < _MAX_LINE_SEARCH_EVALS:
        a = _cubic_minimizer(lo, hi)
        f, d, g, point = phi(a)
        if f > f0 + _C1 * a * slope0 or f >= lo[1]:
            hi = (a, f, d)
        else:
            best = (point, f, g)
            if abs(d) <= -_C2 * slope0:
                return best
            if d * (hi[0] - lo[0]) >= 0:
                hi = lo
            lo = (a, f, d)
        if abs(hi[0] - lo[0]) <= 1e-16 * max(1.0, abs(lo[0])):
            break
    return best  # a sufficient-decrease step if one was seen (the caller checks curvature)


def _cubic_minimizer(lo: tuple, hi: tuple) -> float:
    """Minimizer of the cubic through (a, f, f') at both ends, safeguarded into the middle
    80% of the interval; bisection where the cubic has no usable minimizer."""
    (a, fa, da), (b, fb, db) = lo, hi
    left, right = min(a, b), max(a, b)
    width = right - left
    midpoint = left + 0.5 * width
    with np.errstate(all="ignore"):
        d1 = da + db - 3 * (fa - fb) / (a - b)
        radicand = d1 * d1 - da * db
        if not np.isfinite(radicand) or radicand < 0:
            return midpoint
        d2 = np.copysign(np.sqrt(radicand), b - a)
        t = b - (b - a) * (db + d2 - d1) / (db - da + 2 * d2)
    if not np.isfinite(t) or t < left + 0.1 * width or t > right - 0.1 * width:
        return midpoint
    return float(t)
