"""The optimizers' update kernels (OSDI 4.1): ApplyGradientDescent, ApplyMomentum, ApplyAdagrad,
ApplyAdadelta, ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdam, ApplyFtrl and their Sparse
forms, with TensorFlow's update rules. Dense updates write new arrays into the variable and
slot cells (so earlier reads keep their snapshot); sparse updates write only the touched rows,
in place, so their cost does not depend on the table size."""
from __future__ import annotations

import contextlib
from typing import Any, Callable

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.op_def import define_op
from tensorweave.ops import shape_fns

__all__: list[str] = []


def _locked(cell: Any, use_locking: bool) -> Any:
    return cell.lock if use_locking else contextlib.nullcontext()


def _define(name: str, slots: list[str], args: list[str], sparse: bool,
            extra_attrs: tuple[str, ...] = ()) -> Any:
    """`args`: the non-reference inputs after var and the slots, in TF's order; the sparse
    form takes `indices` right after `grad`."""
    inputs = ["var: Ref(T)"] + [f"{s}: Ref(T)" for s in slots]
    for a in args:
        inputs.append(f"{a}: T")
        if a == "grad" and sparse:
            inputs.append("indices: Tindices")
    attrs = ["T: numbertype", "use_locking: bool = false"] + list(extra_attrs)
    if sparse:
        attrs.append("Tindices: {int32, int64}")
    op = define_op(name, inputs=inputs, outputs=["out: Ref(T)"], attrs=attrs,
                   shape_fn=shape_fns.unchanged, is_stateful=True)
    op.not_differentiable()
    return op


def _register(op: Any, rule: Callable[..., tuple], num_slots: int, grad_pos: int, sparse: bool) -> None:
    """`rule(var, *slots, *args, attrs) -> (new_var, *new_slots)` on arrays, args in TF's input
    order; the kernel feeds it whole arrays (dense) or the indexed rows (sparse)."""

    @op.kernel()
    def build(ctx: Any) -> Any:
        use_locking, node = ctx.attr("use_locking"), ctx.op
        attrs = dict(ctx.attrs)

        def dense(var_cell: Any, *rest: Any) -> Any:
            slot_cells, args = rest[:num_slots], rest[num_slots:]
            with _locked(var_cell, use_locking):
                var = var_cell.read(node)
                if np.shape(args[grad_pos]) != np.shape(var):
                    raise errors.InvalidArgumentError(
                        None, node, f"var and grad do not have the same shape{list(np.shape(var))} "
                        f"{list(np.shape(args[grad_pos]))}")
                slots = [c.read(node) for c in slot_cells]
                new = rule(var, *slots, *args, attrs)
                var_cell.value = np.asarray(new[0]).astype(var.dtype, copy=False)
                for cell, value, old in zip(slot_cells, new[1:], slots):
                    cell.value = np.asarray(value).astype(old.dtype, copy=False)
            return var_cell

        def sparse_update(var_cell: Any, *rest: Any) -> Any:
            slot_cells, args = rest[:num_slots], list(rest[num_slots:])
            indices = args.pop(grad_pos + 1)
            with _locked(var_cell, use_locking):
                var = var_cell.read(node)
                bad = (indices < 0) | (indices >= var.shape[0])
                if bad.any():
                    i = int(np.argmax(bad))
                    raise errors.InvalidArgumentError(
                        None, node, f"indices[{i}] = {indices[i]} is not in [0, {var.shape[0]})")
                slots = [c.read(node) for c in slot_cells]
                rows = [var[indices]] + [s[indices] for s in slots]
                new = rule(*rows, *args, attrs)
                var[indices] = new[0]   # unique indices: the optimizer deduplicates first
                for slot, value in zip(slots, new[1:]):
                    slot[indices] = value
            return var_cell

        return sparse_update if sparse else dense


def _gd(var: Any, alpha: Any, grad: Any, attrs: dict) -> tuple:
    return (var - alpha * grad,)


def _momentum(var: Any, accum: Any, lr: Any, grad: Any, momentum: Any, attrs: dict) -> tuple:
    accum = accum * momentum + grad
    if attrs["use_nesterov"]:
        return var - (grad * lr + accum * momentum * lr), accum
    return var - lr * accum, accum


def _adagrad(var: Any, accum: Any, lr: Any, grad: Any, attrs: dict) -> tuple:
    accum = accum + grad * grad
    return var - lr * grad / np.sqrt(accum), accum


def _adadelta(var: Any, accum: Any, accum_update: Any, lr: Any, rho: Any, epsilon: Any, grad: Any,
              attrs: dict) -> tuple:
    accum = accum * rho + grad * grad * (1 - rho)
    update = np.sqrt(accum_update + epsilon) / np.sqrt(accum + epsilon) * grad
    accum_update = accum_update * rho + update * update * (1 - rho)
    return var - update * lr, accum, accum_update


def _rmsprop(var: Any, ms: Any, mom: Any, lr: Any, rho: Any, momentum: Any, epsilon: Any, grad: Any,
             attrs: dict) -> tuple:
    ms = ms + (grad * grad - ms) * (1 - rho)
    mom = mom * momentum + lr * grad / np.sqrt(ms + epsilon)
    return var - mom, ms, mom


def _centered_rmsprop(var: Any, mg: Any, ms: Any, mom: Any, lr: Any, rho: Any, momentum: Any,
                      epsilon: Any, grad: Any, attrs: dict) -> tuple:
    ms = ms + (grad * grad - ms) * (1 - rho)
    mg = mg + (grad - mg) * (1 - rho)
    denom = ms - mg * mg + epsilon
    mom = mom * momentum + lr * grad / np.sqrt(denom)
    return var - mom, mg, ms, mom


def _adam(var: Any, m: Any, v: Any, beta1_power: Any, beta2_power: Any, lr: Any, beta1: Any, beta2: Any,
          epsilon: Any, grad: Any, attrs: dict) -> tuple:
    lr_t = lr * np.sqrt(1 - beta2_power) / (1 - beta1_power)
    m = m + (grad - m) * (1 - beta1)
    v = v + (grad * grad - v) * (1 - beta2)
    if attrs["use_nesterov"]:
        return var - (m * beta1 + (1 - beta1) * grad) * lr_t / (np.sqrt(v) + epsilon), m, v
    return var - m * lr_t / (np.sqrt(v) + epsilon), m, v


def _ftrl(var: Any, accum: Any, linear: Any, grad: Any, lr: Any, l1: Any, l2: Any, lr_power: Any,
          attrs: dict, l2_shrinkage: Any = 0.0) -> tuple:
    # TF's Ftrl(V2): accumulate squared gradients, move `linear`, then solve the proximal step.
    shrunk = grad + 2 * l2_shrinkage * var
    new_accum = accum + grad * grad
    if lr_power == -0.5:
        sigma = (np.sqrt(new_accum) - np.sqrt(accum)) / lr
        quadratic = np.sqrt(new_accum) / lr + 2 * l2
    else:
        sigma = (new_accum ** -lr_power - accum ** -lr_power) / lr
        quadratic = new_accum ** -lr_power / lr + 2 * l2
    linear = linear + shrunk - sigma * var
    new_var = np.where(np.abs(linear) > l1, (np.sign(linear) * l1 - linear) / quadratic, 0.0)
    return new_var, new_accum, linear


def _ftrl_v2(var: Any, accum: Any, linear: Any, grad: Any, lr: Any, l1: Any, l2: Any, l2_shrinkage: Any,
             lr_power: Any, attrs: dict) -> tuple:
    return _ftrl(var, accum, linear, grad, lr, l1, l2, lr_power, attrs, l2_shrinkage)


_NESTEROV = ("use_nesterov: bool = false",)
_SPECS = [
    # name, slots, other inputs in TF's order, rule, extra attrs, has a sparse form
    ("GradientDescent", [], ["alpha", "grad"], _gd, (), False),
    ("Momentum", ["accum"], ["lr", "grad", "momentum"], _momentum, _NESTEROV, True),
    ("Adagrad", ["accum"], ["lr", "grad"], _adagrad, ("update_slots: bool = true",), True),
    ("Adadelta", ["accum", "accum_update"], ["lr", "rho", "epsilon", "grad"], _adadelta, (), True),
    ("RMSProp", ["ms", "mom"], ["lr", "rho", "momentum", "epsilon", "grad"], _rmsprop, (), True),
    ("CenteredRMSProp", ["mg", "ms", "mom"], ["lr", "rho", "momentum", "epsilon", "grad"],
     _centered_rmsprop, (), True),
    ("Adam", ["m", "v"], ["beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"],
     _adam, _NESTEROV, False),
    ("Ftrl", ["accum", "linear"], ["grad", "lr", "l1", "l2", "lr_power"], _ftrl, (), True),
    ("FtrlV2", ["accum", "linear"], ["grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"], _ftrl_v2, (), True),
]

OPS: dict[str, Any] = {}
for _name, _slots, _args, _rule, _extra, _has_sparse in _SPECS:
    for _sparse in (False, True) if _has_sparse else (False,):
        _op_name = ("SparseApply" if _sparse else "Apply") + _name
        OPS[_op_name] = _define(_op_name, _slots, _args, _sparse, _extra)
        _register(OPS[_op_name], _rule, len(_slots), _args.index("grad"), _sparse)
del _name, _slots, _args, _rule, _extra, _sparse, _op_name, _has_sparse
