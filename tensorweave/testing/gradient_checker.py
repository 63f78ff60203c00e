"""The numeric gradient checker (float64 central differences, fed through Session.run), with
TF's `tf.test.compute_gradient` / `compute_gradient_error` meaning: the full Jacobian for small
inputs, and a random-direction check for large ones."""
from __future__ import annotations

import contextlib
from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.framework.graph import Tensor
from tensorweave.framework.default_session import get_default_session
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.gradients import gradients
from tensorweave.ops import math as math_ops
from tensorweave.ops.array.constant_op import placeholder
from tensorweave.runtime.session import Session


def _session(graph: Any) -> Any:
    """The default session when it runs `graph` (as TF's checker uses it, so variables it has
    initialized keep their values), else a new session closed on exit."""
    current = get_default_session()
    if current is not None and current.graph is graph:
        return contextlib.nullcontext(current)
    return Session(graph=graph)


def _theoretical_jacobian(sess: Any, x: Tensor, x_value: np.ndarray, y: Tensor, y_shape: Sequence[int],
                          feeds: dict) -> np.ndarray:
    dy = placeholder(y.dtype.base_dtype, list(y_shape))
    g = gradients(y, x, grad_ys=dy)[0]
    x_size, y_size = int(np.prod(x_value.shape)), int(np.prod(y_shape))
    jac = np.zeros((x_size, y_size), dtype=np.float64)
    if g is None:
        return jac
    if not isinstance(g, Tensor):
        g = convert_to_tensor(g)
    seed = np.zeros(y_size, dtype=y.dtype.base_dtype.as_numpy_dtype)
    for j in range(y_size):
        seed[:] = 0
        seed[j] = 1
        feed = dict(feeds)
        feed[x] = x_value
        feed[dy] = seed.reshape(y_shape)
        jac[:, j] = np.asarray(sess.run(g, feed), dtype=np.float64).reshape(-1)
    return jac


def _numeric_jacobian(sess: Any, x: Tensor, x_value: np.ndarray, y: Tensor, y_shape: Sequence[int],
                      delta: float, feeds: dict) -> np.ndarray:
    x_size, y_size = int(np.prod(x_value.shape)), int(np.prod(y_shape))
    jac = np.zeros((x_size, y_size), dtype=np.float64)
    flat = x_value.reshape(-1).copy()
    for i in range(x_size):
        orig = flat[i]
        values = []
        for step in (delta, -delta):
            flat[i] = orig + step
            feed = dict(feeds)
            feed[x] = flat.reshape(x_value.shape)
            values.append(np.asarray(sess.run(y, feed), dtype=np.float64).reshape(-1))
        flat[i] = orig
        jac[i, :] = (values[0] - values[1]) / (2 * delta)
    return jac


def compute_gradient(x: Any, x_shape: Any, y: Tensor, y_shape: Sequence[int],
                     x_init_value: Any = None, delta: float = 1e-3, init_targets: Any = None,
                     extra_feed_dict: Optional[dict] = None) -> Any:
    """(theoretical, numerical) Jacobians of y with respect to x, each of shape
    [x_size, y_size]; for a list of xs, a list of such pairs."""
    xs = x if isinstance(x, (list, tuple)) else [x]
    shapes = x_shape if isinstance(x, (list, tuple)) else [x_shape]
    inits = x_init_value if isinstance(x, (list, tuple)) else [x_init_value]
    if inits is None:
        inits = [None] * len(xs)
    rng = np.random.RandomState(1)
    values = [np.asarray(v, dtype=t.dtype.base_dtype.as_numpy_dtype) if v is not None else
              rng.random_sample(s).astype(t.dtype.base_dtype.as_numpy_dtype)
              for t, s, v in zip(xs, shapes, inits)]
    for t, s, v in zip(xs, shapes, values):
        if tuple(v.shape) != tuple(s):
            raise ValueError(f"x_init_value for {t.name} has shape {v.shape}, but x_shape is {tuple(s)}")
    with _session(y.graph) as sess:
        if init_targets is not None:
            sess.run(init_targets)
        results = []
        for i, (xi, vi) in enumerate(zip(xs, values)):
            feeds = dict(extra_feed_dict or {})
            for j, (xj, vj) in enumerate(zip(xs, values)):
                if j != i:
                    feeds[xj] = vj
            results.append((_theoretical_jacobian(sess, xi, vi, y, y_shape, feeds),
                            _numeric_jacobian(sess, xi, vi, y, y_shape, delta, feeds)))
    return results if isinstance(x, (list, tuple)) else results[0]


def compute_gradient_error(x: Any, x_shape: Any, y: Tensor, y_shape: Sequence[int],
                           x_init_value: Any = None, delta: float = 1e-3, init_targets: Any = None,
                           extra_feed_dict: Optional[dict] = None) -> float:
    """The largest absolute difference between the theoretical and numerical Jacobians."""
    grads = compute_gradient(x, x_shape, y, y_shape, x_init_value, delta, init_targets, extra_feed_dict)
    pairs = grads if isinstance(grads, list) else [grads]
    return max(float(np.max(np.abs(t - n))) if t.size else 0.0 for t, n in pairs)


def directional_gradient_error(xs: Sequence[Tensor], values: Sequence[np.ndarray], y: Tensor,
                               delta: float = 1e-4, seed: int = 0, extra_feed_dict: Optional[dict] = None) -> float:
    """For large inputs: compares <grad sum(y * w), v> with the central difference of sum(y * w)
    along a random direction v (w a fixed random weighting), relative to their scale."""
    rng = np.random.RandomState(seed)
    y_value_shape = None
    with _session(y.graph) as sess:
        feeds = dict(extra_feed_dict or {})
        feeds.update({x: v for x, v in zip(xs, values)})
        y_value_shape = np.shape(sess.run(y, feeds))
        weights = rng.standard_normal(y_value_shape)
        w = placeholder(y.dtype.base_dtype, list(y_value_shape))
        objective = math_ops.reduce_sum(y * w)
        grads = gradients(objective, list(xs))
        directions = [rng.standard_normal(np.shape(v)) for v in values]
        feeds[w] = weights
        analytic = sum(float(np.sum(np.asarray(g_val, np.float64) * d))
                       for g_val, d in zip(sess.run([g for g in grads], feeds), directions))

        def at(sign: float) -> float:
            f = dict(feeds)
            f.update({x: v + sign * delta * d for x, v, d in zip(xs, values, directions)})
            return float(sess.run(objective, f))

        numeric = (at(1.0) - at(-1.0)) / (2 * delta)
    return abs(analytic - numeric) / max(1.0, abs(numeric))
