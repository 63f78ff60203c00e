"""`tf.contrib.layers.optimize_loss`: one call from a loss to a training op (optimizer by name,
class or instance, learning-rate variable and decay, gradient noise, multipliers and clipping,
UPDATE_OPS run first), with TF's summaries: by default the loss, the decayed learning rate and
the global gradient norm (before and after clipping); per variable gradient histograms and norms
on request."""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys, Tensor
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array import identity
from tensorweave.ops.math import cast, clip_by_global_norm, global_norm
from tensorweave.ops import summary
from tensorweave.ops.random import truncated_normal
from tensorweave.ops.state import constant_initializer, get_variable, trainable_variables, variable_scope
from tensorweave.training.adagrad import AdagradOptimizer
from tensorweave.training.adam import AdamOptimizer
from tensorweave.training.ftrl import FtrlOptimizer
from tensorweave.training.gradient_descent import GradientDescentOptimizer
from tensorweave.training.momentum import MomentumOptimizer
from tensorweave.training.optimizer import Optimizer
from tensorweave.training.rmsprop import RMSPropOptimizer
from tensorweave.training.training_util import assert_global_step, get_global_step

__all__ = ["optimize_loss", "OPTIMIZER_CLS_NAMES", "OPTIMIZER_SUMMARIES"]


def _momentum(learning_rate: Any) -> Optimizer:
    return MomentumOptimizer(learning_rate, momentum=0.9)


OPTIMIZER_CLS_NAMES: dict[str, Callable[..., Optimizer]] = {
    "Adagrad": AdagradOptimizer,
    "Adam": AdamOptimizer,
    "Ftrl": FtrlOptimizer,
    "Momentum": _momentum,
    "RMSProp": RMSPropOptimizer,
    "SGD": GradientDescentOptimizer,
}

OPTIMIZER_SUMMARIES = ["learning_rate", "loss", "gradients", "gradient_norm", "global_gradient_norm"]


def _with_dependencies(dependencies: Sequence[Any], output: Any) -> Any:
    with _graph.name_scope(None, "control_dependency", list(dependencies) + [output]) as name:
        with _graph.control_dependencies(list(dependencies)):
            return identity(output, name=name)


def _learning_rate(learning_rate: Any) -> Any:
    if learning_rate is None:
        return None
    if isinstance(learning_rate, Tensor) and learning_rate.get_shape().ndims == 0:
        return learning_rate
    if isinstance(learning_rate, float):
        if learning_rate < 0.0:
            raise ValueError(f"Invalid learning_rate {learning_rate}.")
        return get_variable("learning_rate", [], trainable=False,
                            initializer=constant_initializer(learning_rate))
    raise ValueError(f"Learning rate should be 0d Tensor or float. Got {learning_rate} of type "
                     f"{type(learning_rate)}")


def _make_optimizer(optimizer: Any, lr: Any, learning_rate: Any) -> Optimizer:
    if isinstance(optimizer, str):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is string "
                             f"({optimizer}).")
        if optimizer not in OPTIMIZER_CLS_NAMES:
            raise ValueError(f"Optimizer name should be one of [{', '.join(OPTIMIZER_CLS_NAMES)}], you "
                             f"provided {optimizer}.")
        return OPTIMIZER_CLS_NAMES[optimizer](learning_rate=lr)
    if isinstance(optimizer, type) and issubclass(optimizer, Optimizer):
        if lr is None:
            raise ValueError(f"Learning rate is None, but should be specified if optimizer is class "
                             f"({optimizer}).")
        return optimizer(learning_rate=lr)  # type: ignore[call-arg]
    if isinstance(optimizer, Optimizer):
        return optimizer
    if callable(optimizer):
        opt = optimizer(lr) if learning_rate is not None else optimizer()
        if not isinstance(opt, Optimizer):
            raise ValueError(f"Unrecognized optimizer: function should return subclass of Optimizer. Got {opt}.")
        return opt
    raise ValueError("Unrecognized optimizer: should be string, subclass of Optimizer, instance of subclass "
                     f"of Optimizer or function with one argument. Got {optimizer}.")


def _add_scaled_noise(grads_and_vars: list, scale: float) -> list:
    noisy = []
    for grad, var in grads_and_vars:
        if grad is None:
            noisy.append((None, var))
            continue
        shape = grad.dense_shape if isinstance(grad, IndexedSlices) else grad.get_shape()
        noisy.append((grad + truncated_normal(shape) * scale, var))
    return noisy


def _multiply_gradients(grads_and_vars: list, multipliers: dict) -> list:
    out = []
    for grad, var in grads_and_vars:
        key = var if var in multipliers else var.name
        if grad is not None and key in multipliers:
            if isinstance(grad, IndexedSlices):
                grad = IndexedSlices(grad.values * multipliers[key], grad.indices, grad.dense_shape)
            else:
                grad = grad * cast(multipliers[key], grad.dtype)
        out.append((grad, var))
    return out


def _check_summaries(summaries: Optional[Sequence[str]]) -> list[str]:
    if summaries is None:
        return ["loss", "learning_rate", "global_gradient_norm"]
    for name in summaries:
        if name not in OPTIMIZER_SUMMARIES:
            raise ValueError(f"Summaries should be one of [{', '.join(OPTIMIZER_SUMMARIES)}], you provided {name}.")
    return list(summaries)


def _gradient_summaries(gradients: list, summaries: list[str]) -> None:
    """Per-variable gradient histograms and norms (`gradients`, `gradient_norm`)."""
    for grad, var in gradients:
        values = grad.values if isinstance(grad, IndexedSlices) else grad
        if values is None:
            continue
        var_name = var.name.replace(":", "_")
        if "gradients" in summaries:
            summary.histogram(f"gradients/{var_name}", values)
        if "gradient_norm" in summaries:
            summary.scalar(f"gradient_norm/{var_name}", global_norm([values]))


def optimize_loss(loss: Any, global_step: Any, learning_rate: Any, optimizer: Any,
                  gradient_noise_scale: Optional[float] = None, gradient_multipliers: Optional[dict] = None,
                  clip_gradients: Any = None, learning_rate_decay_fn: Optional[Callable] = None,
                  update_ops: Optional[Sequence[Any]] = None, variables: Optional[Sequence[Any]] = None,
                  name: Optional[str] = None, summaries: Optional[Sequence[str]] = None,
                  colocate_gradients_with_ops: bool = False, increment_global_step: bool = True) -> Any:
    """Builds the training step for `loss`: returns a tensor equal to the loss that, when run,
    applies one update of `optimizer` to `variables` (default: the trainable variables) and
    increments `global_step` (default: the graph's global step, if any)."""
    loss = convert_to_tensor(loss)
    if loss.get_shape().ndims not in (None, 0):
        raise ValueError(f"Expected scalar shape for {loss.name}, saw shape: {loss.get_shape()}.")
    if global_step is None:
        global_step = get_global_step()
    else:
        assert_global_step(global_step)
    summaries = _check_summaries(summaries)
    with variable_scope(name, "OptimizeLoss", [loss, global_step]):
        if update_ops is None:
            update_ops = list(dict.fromkeys(_graph.get_collection(GraphKeys.UPDATE_OPS)))
        if update_ops:
            loss = _with_dependencies(list(update_ops), loss)
        lr = _learning_rate(learning_rate)
        if learning_rate is not None and learning_rate_decay_fn is not None:
            if global_step is None:
                raise ValueError("global_step is required for learning_rate_decay_fn.")
            lr = learning_rate_decay_fn(lr, global_step)
            if "learning_rate" in summaries:
                summary.scalar("learning_rate", lr)
        opt = _make_optimizer(optimizer, lr, learning_rate)
        if variables is None:
            variables = trainable_variables()
        gradients = opt.compute_gradients(loss, variables, colocate_gradients_with_ops=colocate_gradients_with_ops)
        if gradient_noise_scale is not None:
            gradients = _add_scaled_noise(gradients, gradient_noise_scale)
        if gradient_multipliers is not None:
            gradients = _multiply_gradients(gradients, gradient_multipliers)
            if not gradients:
                raise ValueError("Empty list of (gradient, var) pairs encountered. This is most likely to be "
                                 "caused by an improper value of gradient_multipliers.")
        norm_summaries = "global_gradient_norm" in summaries or "gradient_norm" in summaries
        if norm_summaries:
            summary.scalar("global_norm/gradient_norm", global_norm([g for g, _ in gradients]))
        if isinstance(clip_gradients, float):
            grads, variables_ = zip(*gradients)
            clipped, _ = clip_by_global_norm(list(grads), clip_gradients)
            gradients = list(zip(clipped, variables_))
        elif callable(clip_gradients):
            gradients = clip_gradients(gradients)
        elif clip_gradients is not None:
            raise ValueError(f"Unknown type {type(clip_gradients)} for clip_gradients")
        if "loss" in summaries:
            summary.scalar("loss", loss)
        _gradient_summaries(gradients, summaries)
        if clip_gradients is not None and norm_summaries:
            summary.scalar("global_norm/clipped_gradient_norm", global_norm([g for g, _ in gradients]))
        grad_updates = opt.apply_gradients(
            gradients, global_step=global_step if increment_global_step else None, name="train")
        return _with_dependencies([grad_updates], loss)
