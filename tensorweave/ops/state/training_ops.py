"""The optimizers' update kernels (OSDI 4.1): ApplyGradientDescent, ApplyMomentum, ApplyAdagrad,
ApplyAdadelta, ApplyRMSProp, ApplyCenteredRMSProp, ApplyAdam, ApplyFtrl and their Sparse
forms, with TensorFlow's update rules.

Dense updates write the variable's and the slots' buffers in place, as TF1's kernels do, when
nothing else can see those buffers: an array a cell holds is private when the cell's reference
is its only one (buffer_forwarding.held_only_by; kernels forward their inputs by the same
reference counts, buffer_forwarding.forwardable). CPython's reference counts are exact, and every
holder of the old value counts: a value fetched by the user or waiting for a kernel in this step
(the executor holds it), a view of it (a view references its base), a kernel running on it.
Reads dereference the cell when their consumer runs, so a value read before the update and still held anywhere keeps its
snapshot: such a buffer is replaced by a new one instead (copy-on-write, as before). A step that
reads the variable while another step is updating it may see a partly updated value, as with
TF1's in-place kernels (use_locking serialises updates, not reads). The update
runs in blocks of `_BLOCK` elements, so its temporaries stay in cache and no step-sized array is
allocated (fc1 of bench/cnn_step.py, 3.2M floats: 2.2 ms as new arrays, 0.95 ms in blocks, on a
quiet machine). Sparse updates write only the touched rows, in place, so their cost does not
depend on the table size.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Callable, Sequence

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op, OpDef
from tensorweave.ops import _util
from tensorweave.ops.kernels.buffer_forwarding import held_only_by
from tensorweave.ops.state import small_updates

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
                   shape_fn=_util.unchanged, is_stateful=True)
    op.not_differentiable()
    return op


# Elements per block of a dense update: the rule's temporaries (a few per block) stay in L2.
_BLOCK = 1 << 17
# Variables smaller than this are updated as whole new arrays: for bench/mlp_step.py's 100x10
# weights the in-place path's checks cost 24 us against 9 (Adagrad).
_IN_PLACE_SIZE = 1 << 14


def _blocked_update(rule: Callable[..., tuple], states: Sequence[np.ndarray], targets: Sequence[np.ndarray],
                    args: Sequence[Any], grad_pos: int, attrs: dict) -> None:
    """targets[i] = the rule's i-th result, block by block: each block reads the old values of
    its own elements only (the rules are element-wise), so a target may be its own state."""
    flat_states = [a.reshape(-1) for a in states]
    flat_targets = [a.reshape(-1) for a in targets]
    grad = np.ascontiguousarray(args[grad_pos]).reshape(-1)
    args = list(args)
    size = flat_states[0].size
    into = _INTO.get(rule)
    for lo in range(0, size, _BLOCK):
        hi = min(lo + _BLOCK, size)
        args[grad_pos] = grad[lo:hi]
        if into is not None:
            into([a[lo:hi] for a in flat_targets], *(a[lo:hi] for a in flat_states), *args, attrs)
            continue
        new = rule(*(a[lo:hi] for a in flat_states), *args, attrs)
        for target, value in zip(flat_targets, new):
            target[lo:hi] = value


def _whole_update(rule: Callable[..., tuple], cells: Sequence[Any], states: Sequence[Any], args: Sequence[Any],
                  attrs: dict) -> None:
    """The rule on whole arrays, its results stored as the cells' new arrays (copy-on-write)."""
    new = rule(*states, *args, attrs)
    for cell, value, old in zip(cells, new, states):
        cell.value = np.asarray(value).astype(old.dtype, copy=False)


class _Spare:
    """The buffer a copy-on-write update replaced (someone was still reading it then), kept by
    the kernel as the target of its next copy-on-write once nothing else references it: fresh
    step-sized arrays cost page faults (fc1 of bench/cnn_step.py: 4.8 ms instead of 2)."""

    __slots__ = ("value", "lock")

    def __init__(self) -> None:
        self.value: Any = None
        self.lock = threading.Lock()

    def take(self, like: np.ndarray) -> np.ndarray:
        """The spare if it fits and is private, else a new array; the spare is given up."""
        with self.lock:
            spare = self.value
            if spare is None or spare.shape != like.shape or spare.dtype != like.dtype:
                return np.empty_like(like)
            del spare
            if not held_only_by(self):
                return np.empty_like(like)
            spare, self.value = self.value, None
            return spare

    def keep(self, replaced: np.ndarray) -> None:
        with self.lock:
            self.value = replaced


def _dense_update(rule: Callable[..., tuple], cells: Sequence[Any], args: Sequence[Any], grad_pos: int,
                  attrs: dict, node: Any, spares: Sequence[_Spare]) -> None:
    """Applies `rule` to the var cell and slot cells (`cells`); the caller holds any lock."""
    var = cells[0].read(node)
    if np.shape(args[grad_pos]) != np.shape(var):
        raise errors.InvalidArgumentError(
            None, node, f"var and grad do not have the same shape{list(np.shape(var))} "
            f"{list(np.shape(args[grad_pos]))}")
    shape = np.shape(var)
    if np.size(var) < _IN_PLACE_SIZE or not all(np.ndim(a) == 0 for i, a in enumerate(args) if i != grad_pos):
        # Small variables (and hyperparameters that are not scalars, which TF rejects): the rule on
        # whole arrays, new arrays into the cells; the in-place machinery costs more than it saves.
        _whole_update(rule, cells, [var] + [cell.read(node) for cell in cells[1:]], args, attrs)
        return
    del var
    in_place = [held_only_by(cell) for cell in cells]  # before this function references the arrays
    states = [cell.read(node) for cell in cells]
    if not all(type(a) is np.ndarray and a.flags.c_contiguous and a.shape == shape for a in states):
        _whole_update(rule, cells, states, args, attrs)
        return
    targets = [old if own else spare.take(old) for own, old, spare in zip(in_place, states, spares)]
    _blocked_update(rule, states, targets, args, grad_pos, attrs)
    for cell, own, target, old, spare in zip(cells, in_place, targets, states, spares):
        if not own:
            cell.value = target
            spare.keep(old)


def _register(op: OpDef, rule: Callable[..., tuple], num_slots: int, grad_pos: int, sparse: bool) -> None:
    """`rule(var, *slots, *args, attrs) -> (new_var, *new_slots)` on arrays, args in TF's input
    order; the kernel feeds it blocks of whole arrays (dense) or the indexed rows (sparse)."""

    @op.kernel()
    def build(ctx: KernelContext) -> Any:
        use_locking, node = ctx.attr("use_locking"), ctx.op
        attrs = dict(ctx.attrs)
        spares = [_Spare() for _ in range(1 + num_slots)]

        written = _WRITTEN_OUT.get(rule)

        def dense(var_cell: Any, *rest: Any) -> Any:
            # small variables with scalar hyperparameters first (small_updates.py): no lock to
            # take, and most of the general path's checks are the cost there
            if not use_locking and small_updates.small_update(
                    rule, written, (var_cell,) + rest[:num_slots], rest[num_slots:], grad_pos, attrs, _IN_PLACE_SIZE):
                return var_cell
            with _locked(var_cell, use_locking):
                _dense_update(rule, (var_cell,) + rest[:num_slots], rest[num_slots:], grad_pos, attrs, node,
                              spares)
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
    if attrs.get("update_slots", True):  # TF's update_slots=False leaves the accumulator as it is
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


# The most used rules again, writing straight into the target blocks (`out`, which may be the
# state blocks themselves) with the same operations in the same order, so the same results:
# no copy of each new block into place (GD on 3.2M floats: 1.5 -> 0.9 ms).
def _gd_into(out: list, var: Any, alpha: Any, grad: Any, attrs: dict) -> None:
    np.subtract(var, np.multiply(alpha, grad), out=out[0])


def _momentum_into(out: list, var: Any, accum: Any, lr: Any, grad: Any, momentum: Any, attrs: dict) -> None:
    new_accum = np.multiply(accum, momentum, out=out[1])
    new_accum += grad
    if attrs["use_nesterov"]:
        step = np.multiply(grad, lr)
        step += np.multiply(new_accum, momentum) * lr
    else:
        step = np.multiply(lr, new_accum)
    np.subtract(var, step, out=out[0])


def _adagrad_into(out: list, var: Any, accum: Any, lr: Any, grad: Any, attrs: dict) -> None:
    if attrs.get("update_slots", True):
        accum = np.add(accum, np.multiply(grad, grad), out=out[1])
    elif out[1] is not accum:
        out[1][...] = accum
    step = np.multiply(lr, grad)
    step /= np.sqrt(accum)
    np.subtract(var, step, out=out[0])


_INTO: dict[Callable, Callable] = {_gd: _gd_into, _momentum: _momentum_into, _adagrad: _adagrad_into}
# Rules written out for small_updates.small_update (the others run as they are there).
_WRITTEN_OUT: dict[Callable, Callable] = {_adam: small_updates.adam}

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
