"""Variables' ops (white paper 2 "Variables", 4.7; OSDI 3.1): VariableV2 returns a reference
to persistent state kept in its device's resource manager; Assign, AssignAdd and AssignSub
update it. Dense updates replace the stored array (copy-on-write), so values read earlier in a
step keep their snapshot; `use_locking` makes the read-modify-write atomic."""
from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops import shape_fns

__all__ = ["assign", "assign_add", "assign_sub", "is_variable_initialized"]


class VariableCell:
    """A variable's state: the current array (None until initialized) and its lock."""

    __slots__ = ("value", "lock", "name", "shape")

    def __init__(self, name: str, shape: TensorShape) -> None:
        self.value: Optional[Any] = None
        self.lock = threading.Lock()
        self.name = name
        self.shape = shape

    def read(self, op: Any = None) -> Any:
        value = self.value
        if value is None:
            raise errors.FailedPreconditionError(
                None, op, f"Attempting to use uninitialized value {self.name}")
        return value


VariableV2 = define_op("VariableV2", outputs=["ref: Ref(dtype)"],
                       attrs=["shape: shape", "dtype: type", "container: string = ''",
                              "shared_name: string = ''"],
                       shape_fn=lambda op: [op.get_attr("shape")], is_stateful=True,
                       persistent_output=True)


@VariableV2.kernel()
def _variable_kernel(ctx: Any) -> Any:
    name = ctx.attr("shared_name") or ctx.node_name
    cell = ctx.resource_mgr.lookup_or_create(ctx.attr("container"), name,
                                             lambda: VariableCell(ctx.node_name, ctx.attr("shape")))
    return lambda: cell


VariableV2.not_differentiable()


def variable_op_v2(shape: Any, dtype: Any, name: Optional[str] = None, container: str = "",
                   shared_name: str = "") -> Any:
    return apply_op(VariableV2, name=name, shape=as_shape(shape), dtype=dtype, container=container,
                    shared_name=shared_name)


def _assign_shape(op: Any) -> list[TensorShape]:
    if op.get_attr("validate_shape"):
        return [op.inputs[0].shape.merge_with(op.inputs[1].shape)]
    return [op.inputs[1].shape]


Assign = define_op("Assign", inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
                   attrs=["T: type", "validate_shape: bool = true", "use_locking: bool = true"],
                   shape_fn=_assign_shape, is_stateful=True)


@Assign.kernel()
def _assign_kernel(ctx: Any) -> Any:
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
    def build(ctx: Any) -> Any:
        locking, op = ctx.attr("use_locking"), ctx.op
        ufunc = getattr(ctx.xp, fn_name)

        def update(cell: VariableCell, delta: Any) -> VariableCell:
            if locking:
                with cell.lock:
                    old = cell.read(op)
                    cell.value = _checked_update(ufunc, old, delta, op)
            else:
                cell.value = _checked_update(ufunc, cell.read(op), delta, op)
            return cell

        return update

    return build


def _checked_update(ufunc: Any, old: Any, delta: Any, op: Any) -> Any:
    if np.shape(old) != np.shape(delta):
        raise errors.InvalidArgumentError(
            None, op, f"Must have the same shape: {list(np.shape(old))} vs {list(np.shape(delta))}")
    return ufunc(old, delta).astype(old.dtype, copy=False)


_UPDATE_ATTRS = ["T: numbertype", "use_locking: bool = false"]
AssignAdd = define_op("AssignAdd", inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
                      attrs=_UPDATE_ATTRS, shape_fn=shape_fns.unchanged, is_stateful=True)
AssignSub = define_op("AssignSub", inputs=["ref: Ref(T)", "value: T"], outputs=["output_ref: Ref(T)"],
                      attrs=_UPDATE_ATTRS, shape_fn=shape_fns.unchanged, is_stateful=True)
AssignAdd.kernel()(_make_update_kernel("add"))
AssignSub.kernel()(_make_update_kernel("subtract"))
for _op in (Assign, AssignAdd, AssignSub):
    _op.not_differentiable()

IsVariableInitialized = define_op("IsVariableInitialized", inputs=["ref: Ref(dtype)"],
                                  outputs=["is_initialized: bool"], attrs=["dtype: type"],
                                  shape_fn=shape_fns.scalar)


@IsVariableInitialized.kernel()
def _is_initialized_kernel(ctx: Any) -> Any:
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
