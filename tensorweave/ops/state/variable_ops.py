"""Variables' ops (white paper 2 "Variables", 4.7; OSDI 3.1): VariableV2 returns a reference
to persistent state kept in its device's resource manager; Assign, AssignAdd and AssignSub
update it. Dense updates replace the stored array (copy-on-write), so values read earlier in a
step keep their snapshot; `use_locking` makes the read-modify-write atomic."""
from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op, OpDef
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops import _util
from tensorweave.ops.kernels.scatter import scatter_reduce

__all__ = ["assign", "assign_add", "assign_sub", "is_variable_initialized"]


class VariableCell:
    """A variable's state: the current array (None until initialized) and its lock."""

    __slots__ = ("value", "lock", "name", "shape", "dropped")

    def __init__(self, name: str, shape: TensorShape) -> None:
        self.value: Optional[Any] = None
        self.lock = threading.Lock()
        self.name = name
        self.shape = shape
        self.dropped = False

    def close_resource(self) -> None:
        """Called when its container is reset: kernels holding it look it up again."""
        self.dropped = True
        self.value = None

    def read(self, op: Optional[Operation] = None) -> Any:
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, op, f"Attempting to use uninitialized value {self.name}")
        return value


VariableV2 = define_op("VariableV2", outputs=["ref: Ref(dtype)"],
                       attrs=["shape: shape", "dtype: type", "container: string = ''",
                              "shared_name: string = ''"],
                       shape_fn=lambda op: [op._get_attr("shape")], is_stateful=True,
                       persistent_output=True)


@VariableV2.kernel()
def _variable_kernel(ctx: KernelContext) -> Any:
    name, container, node, shape = ctx.attr("shared_name") or ctx.node_name, ctx.attr("container"), \
        ctx.node_name, ctx.attr("shape")
    rm = ctx.resource_mgr
    held = [rm.lookup_or_create(container, name, lambda: VariableCell(node, shape))]

    def variable() -> VariableCell:
        cell = held[0]
        if cell.dropped:  # its container was reset: a fresh, uninitialized variable
            cell = held[0] = rm.lookup_or_create(container, name, lambda: VariableCell(node, shape))
        return cell

    return variable


VariableV2.not_differentiable()


def variable_op_v2(shape: Any, dtype: Any, name: Optional[str] = None, container: str = "",
                   shared_name: str = "") -> Any:
    return apply_op(VariableV2, name=name, shape=as_shape(shape), dtype=dtype, container=container,
                    shared_name=shared_name)


def _assign_shape(op: Operation) -> list[TensorShape]:
    if op._get_attr("validate_shape"):
        return [op.inputs[0].shape.merge_with(op.inputs[1].shape)]
    return [op.inputs[1].shape]


Assign = define_op("Assign", inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
                   attrs=["T: type", "validate_shape: bool = true", "use_locking: bool = true"],
                   shape_fn=_assign_shape, is_stateful=True)


@Assign.kernel()
def _assign_kernel(ctx: KernelContext) -> Any:
    validate, locking, xp, op = ctx.attr("validate_shape"), ctx.attr("use_locking"), ctx.xp, ctx.op
    declared = op.inputs[0].shape

    def assign(cell: VariableCell, value: Any) -> VariableCell:
        new = xp.array(value, copy=True)  # the variable owns its buffer (sparse updates write it)
        if validate:
            current = cell.value
            expected = current.shape if current is not None else declared.as_tuple_or_none()
            if expected is not None and (len(expected) != new.ndim or any(
                    e is not None and e != g for e, g in zip(expected, new.shape))):
                raise errors.InvalidArgumentError(
                    None, op, "Assign requires shapes of both tensors to match. lhs shape= "
                    f"{list(expected)} rhs shape= {list(new.shape)}")
        if locking:
            with cell.lock:
                cell.value = new
        else:
            cell.value = new
        return cell

    return assign


def _make_update_kernel(fn_name: str) -> Any:
    def build(ctx: KernelContext) -> Any:
        op = ctx.op
        ufunc = getattr(ctx.xp, fn_name)

        # The read-modify-write runs under the variable's lock whatever `use_locking` says (TF
        # calls an unlocked update's races undefined): a thread switch between the read and the
        # write would lose an update, and concurrent metric updates count on every one (the
        # generated straight-line code of runtime/plan_codegen.py switches threads only at
        # function calls, such as the ones between the read and the write here).
        def update(cell: VariableCell, delta: Any) -> VariableCell:
            with cell.lock:
                old = cell.read(op)
                cell.value = _checked_update(ufunc, old, delta, op)
            return cell

        return update

    return build


def _checked_update(ufunc: Any, old: Any, delta: Any, op: Operation) -> Any:
    if np.shape(old) != np.shape(delta):
        raise errors.InvalidArgumentError(
            None, op, f"Must have the same shape: {list(np.shape(old))} vs {list(np.shape(delta))}")
    return ufunc(old, delta).astype(old.dtype, copy=False)


_UPDATE_ATTRS = ["T: numbertype", "use_locking: bool = false"]
AssignAdd = define_op("AssignAdd", inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
                      attrs=_UPDATE_ATTRS, shape_fn=_util.unchanged, is_stateful=True)
AssignSub = define_op("AssignSub", inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
                      attrs=_UPDATE_ATTRS, shape_fn=_util.unchanged, is_stateful=True)
AssignAdd.kernel()(_make_update_kernel("add"))
AssignSub.kernel()(_make_update_kernel("subtract"))
for _op in (Assign, AssignAdd, AssignSub):
    _op.not_differentiable()

IsVariableInitialized = define_op("IsVariableInitialized", inputs=["ref: Ref(dtype)"],
                                  outputs=["is_initialized: bool"], attrs=["dtype: type"],
                                  shape_fn=_util.scalar)


@IsVariableInitialized.kernel()
def _is_initialized_kernel(ctx: KernelContext) -> Any:
    return lambda cell: np.bool_(cell.value is not None)


IsVariableInitialized.not_differentiable()


def _ref_of(ref: Any) -> Any:
    return ref._ref() if hasattr(ref, "_ref") else ref


def assign(ref: Any, value: Any, validate_shape: Optional[bool] = None, use_locking: Optional[bool] = None,
           name: Optional[str] = None) -> Any:
    """Updates `ref` by assigning `value` to it; returns `ref` after the assignment."""
    return apply_op(Assign, name=name, ref=_ref_of(ref), value=value, validate_shape=validate_shape,
                    use_locking=use_locking)


def assign_add(ref: Any, value: Any, use_locking: Optional[bool] = None, name: Optional[str] = None) -> Any:
    """Updates `ref` by adding `value` to it; returns `ref` after the update."""
    return apply_op(AssignAdd, name=name, ref=_ref_of(ref), value=value, use_locking=use_locking)


def assign_sub(ref: Any, value: Any, use_locking: Optional[bool] = None, name: Optional[str] = None) -> Any:
    """Updates `ref` by subtracting `value` from it; returns `ref` after the update."""
    return apply_op(AssignSub, name=name, ref=_ref_of(ref), value=value, use_locking=use_locking)


def is_variable_initialized(variable: Any) -> Any:
    """A scalar bool tensor: whether `variable` has been initialized."""
    ref = _ref_of(variable)
    return apply_op(IsVariableInitialized, ref=ref, dtype=ref.dtype.base_dtype)


# -- sparse updates: only the indexed rows change, in place ---------------------------------------
def _scatter_shape(op: Operation) -> list[TensorShape]:
    ref, indices, updates = (t.shape for t in op.inputs)
    if ref.ndims is not None and indices.ndims is not None:
        expected = indices.concatenate(ref[1:])
        if not updates.is_compatible_with(expected):
            raise ValueError(f"Shapes of updates {updates} and indices {indices} are incompatible with "
                             f"ref {ref} for '{op.name}'")
    return [ref]


def _make_scatter(name: str, combine: Optional[str]) -> Any:
    op_def = define_op(name, inputs=["ref: Ref(T)", "indices: Tindices", "updates: T"],
                       outputs=["output_ref: Ref(T)"],
                       attrs=["T: type", "Tindices: {int32, int64}", "use_locking: bool = true"],
                       shape_fn=_scatter_shape, is_stateful=True)
    op_def.not_differentiable()

    @op_def.kernel()
    def build(ctx: KernelContext) -> Any:
        locking, node = ctx.attr("use_locking"), ctx.op
        ufunc = None if combine is None else getattr(np, combine)

        def scatter(cell: VariableCell, indices: Any, updates: Any) -> VariableCell:
            lock = cell.lock if locking else None
            if lock is not None:
                lock.acquire()
            try:
                var = cell.read(node)
                bad = (indices < 0) | (indices >= var.shape[0])
                if np.any(bad):
                    i = int(np.argmax(bad.reshape(-1)))
                    raise errors.InvalidArgumentError(
                        None, node, f"indices[{i}] = {np.reshape(indices, -1)[i]} is not in [0, {var.shape[0]})")
                expected = np.shape(indices) + var.shape[1:]
                if np.shape(updates) != expected:
                    updates = np.broadcast_to(updates, expected)
                if ufunc is None:
                    var[indices] = updates       # duplicates: the last one wins
                elif var.ndim > 1 and var.flags.c_contiguous:
                    # duplicates accumulate in order; element-wise `at` is NumPy's fast path
                    inner = var.size // var.shape[0] if var.shape[0] else 0
                    scatter_reduce(ufunc, var, np.reshape(indices, -1),
                                   np.reshape(updates, (-1, inner)))
                else:
                    ufunc.at(var, indices, updates)
            finally:
                if lock is not None:
                    lock.release()
            return cell

        return scatter

    return op_def


ScatterUpdate = _make_scatter("ScatterUpdate", None)
ScatterAdd = _make_scatter("ScatterAdd", "add")
ScatterSub = _make_scatter("ScatterSub", "subtract")
ScatterMul = _make_scatter("ScatterMul", "multiply")
ScatterDiv = _make_scatter("ScatterDiv", "divide")
__all__ += ["scatter_update", "scatter_add", "scatter_sub", "scatter_mul", "scatter_div"]


def _scatter(op_def: OpDef, ref: Any, indices: Any, updates: Any, use_locking: Optional[bool],
             name: Optional[str]) -> Any:
    return apply_op(op_def, name=name, ref=_ref_of(ref), indices=indices, updates=updates,
                    use_locking=use_locking)


def scatter_update(ref: Any, indices: Any, updates: Any, use_locking: bool = True, name: Optional[str] = None) -> Any:
    """ref[indices, ...] = updates; returns ref after the update."""
    return _scatter(ScatterUpdate, ref, indices, updates, use_locking, name)


def scatter_add(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
    """ref[indices, ...] += updates (duplicate indices add up)."""
    return _scatter(ScatterAdd, ref, indices, updates, use_locking, name)


def scatter_sub(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
    """ref[indices, ...] -= updates (duplicate indices add up)."""
    return _scatter(ScatterSub, ref, indices, updates, use_locking, name)


def scatter_mul(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
    return _scatter(ScatterMul, ref, indices, updates, use_locking, name)


def scatter_div(ref: Any, indices: Any, updates: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
    return _scatter(ScatterDiv, ref, indices, updates, use_locking, name)


# ---------------------------------------------------------------------------------------------
# CountUpTo: the epoch counter of input producers (tf.train.limit_epochs)
# ---------------------------------------------------------------------------------------------
def _count_up_to_shape(op: Operation) -> list[TensorShape]:
    if op.inputs[0].shape.ndims not in (None, 0):
        raise ValueError(f"Shape must be rank 0 but is rank {op.inputs[0].shape.ndims} for "
                         f"'{op.name}' (op: 'CountUpTo').")
    return [TensorShape([])]


CountUpTo = define_op("CountUpTo", inputs=["ref: Ref(T)"], outputs=["output: T"],
                      attrs=["limit: int", "T: {int32, int64}"], shape_fn=_count_up_to_shape,
                      is_stateful=True)
CountUpTo.not_differentiable()


@CountUpTo.kernel()
def _count_up_to_kernel(ctx: KernelContext) -> Any:
    limit, op = ctx.attr("limit"), ctx.op

    def count_up_to(cell: VariableCell) -> Any:
        with cell.lock:  # increment-and-test must be atomic across concurrent steps
            old = cell.read(op)
            if old >= limit:
                raise errors.OutOfRangeError(None, op, f"Reached limit of {limit}")
            cell.value = np.array(old + 1, dtype=old.dtype)
        return old

    return count_up_to


__all__ += ["count_up_to"]


def count_up_to(ref: Any, limit: int, name: Optional[str] = None) -> Any:
    """Increments the scalar integer variable `ref` until it reaches `limit`; returns its value
    before the increment. Once it has reached `limit`, fails with OutOfRangeError."""
    return apply_op(CountUpTo, name=name, ref=_ref_of(ref), limit=limit)
