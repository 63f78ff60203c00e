"""Call plans: the eager fast path behind `apply_op` (issue 18's per-op time).

An op called eagerly with inputs that are EagerTensors, eager variables or Python scalars is
looked up by one key: (op, the call's argument names in order, each input's dtype and shape -- a
Python scalar's type --, each attr's type and value). The first call with a key takes the
general path (conversion, attr inference and checks, the template node and its kernel:
execute.py) and what that path did becomes a *plan*: the kernel's compute function, the dtype
each Python scalar was converted to, the final attrs and the output dtypes. Every later call
with the key runs the plan, skipping conversion, inference and validation: they depend only on
what the key holds (shapes are in it because the shape function ran on them and kernel
builders specialise on static shapes). Runtime checks stay in the kernels.

Only what is exactly the general path's result is planned: single-tensor inputs and outputs,
plain kernels reading no variable reference, Python scalars whose conversion to the planned
dtype is NumPy's own cast (floats to float32/64, int32-range ints to int32/64 and floats, bools
to bool). Anything else (lists, NumPy arrays, graph tensors, out-of-range ints) takes the
general path every time. Plans live in the eager context's graph beside its kernels and are
dropped with them (a new global seed restarts random kernels).
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.eager import tape as _tape
from tensorweave.eager.tensor import EagerTensor, OpRecipe
from tensorweave.eager.variables import EagerVariable
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.op_def import OpDef
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.runtime import kernel_errors

_INT32_MIN, _INT32_MAX = -2**31, 2**31 - 1

# (Python scalar type, dtype) -> the dtype's NumPy type, where np.array(value, that type) is
# what tensor_conversion.python_value_to_ndarray gives for every value the key admits.
_SCALAR_CASTS: dict[tuple[type, _dtypes.DType], Any] = {}
for _kind, _targets in ((float, (_dtypes.float32, _dtypes.float64)),
                        (int, (_dtypes.int32, _dtypes.int64, _dtypes.float32, _dtypes.float64)),
                        (bool, (_dtypes.bool,))):
    for _dt in _targets:
        _SCALAR_CASTS[(_kind, _dt)] = _dt.as_numpy_dtype

_CASTABLE = {(kind, dt._enum) for kind, dt in _SCALAR_CASTS}


def in_int32_range(value: int) -> bool:
    return _INT32_MIN <= value <= _INT32_MAX


def castable(value: Any, dtype: _dtypes.DType) -> bool:
    """Whether the Python scalar `value` converts to `dtype` by a plan's cast."""
    kind = type(value)
    if kind is int and not _INT32_MIN <= value <= _INT32_MAX:
        return False
    return (kind, dtype._enum) in _CASTABLE


_UNSEEN = object()
SPECS: dict[OpDef, Optional[frozenset[str]]] = {}


def _input_names(op_def: OpDef) -> Optional[frozenset[str]]:
    """The input names of an op whose calls can be planned, else None."""
    spec = SPECS.get(op_def, _UNSEEN)
    if spec is _UNSEEN:
        simple = all(not a.is_list and not a.is_ref for a in op_def.inputs + op_def.outputs)
        spec = frozenset(a.name for a in op_def.inputs) if simple and op_def.control_flow is None \
            and op_def.kernel_call.value == 0 and op_def.name != "Const" else None
        SPECS[op_def] = spec
    return spec  # type: ignore[return-value]


def plan_key(op_def: OpDef, kwargs: dict[str, Any]) -> tuple[Optional[tuple], list[Any]]:
    """The call's key and its input values in argument order (a variable read, not the
    variable); (None, _) when the call cannot be planned."""
    values: list[Any] = []
    names = SPECS.get(op_def, _UNSEEN)
    if names is _UNSEEN:
        names = _input_names(op_def)
    if names is None:
        return None, values
    key: list[Any] = [op_def]
    for k, v in kwargs.items():
        kind = type(v)
        if k in names:  # type: ignore[operator]
            if kind is EagerTensor or kind is EagerVariable:
                if kind is EagerVariable:
                    v = v.read_value()
                value = v._value
                if type(value) is not np.ndarray:
                    return None, values
                # the dtype as its int: DType's __hash__ is Python code
                key += (k, v._dtype._enum, value.shape)
            elif kind is float or kind is bool or (kind is int and _INT32_MIN <= v <= _INT32_MAX):
                key += (k, kind)
            else:
                return None, values
            values.append(v)
        elif k == "_control_inputs":
            return None, values
        else:
            key += (k, kind, v)
    return tuple(key), values


class Plan:
    """How to run one key's calls (module docstring)."""

    __slots__ = ("op_def", "compute", "attrs", "casts", "cast_dtypes", "order", "out_dtypes", "recipe")

    def __init__(self, op_def: OpDef, compute: Callable[..., Any], attrs: dict[str, Any],
                 cast_dtypes: Optional[tuple], order: Optional[tuple[int, ...]],
                 out_dtypes: Sequence[_dtypes.DType], recipe: OpRecipe) -> None:
        self.op_def = op_def
        self.compute = compute
        self.attrs = attrs
        # per input in argument order: None, or the dtype a Python scalar converts to
        self.cast_dtypes = cast_dtypes
        self.casts = None if cast_dtypes is None else tuple(
            None if dt is None else dt.as_numpy_dtype for dt in cast_dtypes)
        self.order = order  # argument order -> the op's input order, when they differ
        self.out_dtypes = tuple(out_dtypes)
        self.recipe = recipe  # the op of an output, made when asked for (tensor.py)


def make_plan(graph: Any, op_def: OpDef, values: Sequence[Any], arg_names: Sequence[str],
              flat_inputs: Sequence[Any], attrs: dict[str, Any], compute: Callable[..., Any],
              out_dtypes: Sequence[_dtypes.DType]) -> Optional[Plan]:
    """The plan of a call the general path just ran, when its result is exactly reproducible:
    `values` and `arg_names` are the call's inputs in argument order (plan_key's values),
    `flat_inputs` the tensors the general path converted them to (the op's input order)."""
    position = {arg.name: i for i, arg in enumerate(op_def.inputs)}
    order = tuple(position[n] for n in arg_names)
    if sorted(order) != list(range(len(op_def.inputs))):
        return None
    cast_dtypes: list[Any] = []
    for value, i in zip(values, order):
        tensor = flat_inputs[i]
        if type(value) is EagerTensor:
            # itself, or (for a variable) the general path's own read of it
            if type(tensor) is not EagerTensor or tensor._dtype is not value._dtype:
                return None
            cast_dtypes.append(None)
        else:
            if (type(value), tensor._dtype) not in _SCALAR_CASTS:
                return None
            cast_dtypes.append(tensor._dtype)
    identity = tuple(range(len(order)))
    return Plan(op_def, compute, attrs, tuple(cast_dtypes) if any(cast_dtypes) else None,
                None if order == identity else tuple(order.index(i) for i in identity), out_dtypes,
                OpRecipe(graph, op_def, attrs))


def run(plan: Plan, graph: Any, values: list[Any]) -> Any:
    """Runs a plan on a call's input values (argument order); returns what apply_op returns."""
    casts = plan.casts
    if casts is None:
        args = [v._value for v in values]
    else:
        args = [v._value if c is None else np.array(v, c) for v, c in zip(values, casts)]
    order = plan.order
    try:
        result = plan.compute(*(args if order is None else [args[i] for i in order]))
    except Exception as err:  # noqa: BLE001  (raised as its TF error class)
        raise eager_error(err, plan.op_def.name) from None
    graph._version += 1  # op seeds (random_seed.get_seed) count ops run, as TF's eager context
    out_dtypes = plan.out_dtypes
    if len(out_dtypes) == 1:
        out = EagerTensor(result, out_dtypes[0]) if type(result) is np.ndarray else as_eager(result, out_dtypes[0])
        out._op = plan.recipe
        if _tape._state.tapes:
            _record(plan, values, args, [out])
        return out
    outputs = [as_eager(v, dt) for v, dt in zip(result, out_dtypes)] if out_dtypes else []
    op = plan.recipe.make(outputs)
    for t in outputs:
        t._op = op
    if _tape._state.tapes:
        _record(plan, values, args, outputs)
    return outputs if outputs else op


def _record(plan: Plan, values: list[Any], args: list[Any], outputs: list[EagerTensor]) -> None:
    """Offers the op to the tapes, with tensors for converted Python scalars."""
    tensors = list(values)
    if plan.cast_dtypes is not None:
        for i, dt in enumerate(plan.cast_dtypes):
            if dt is not None:
                tensors[i] = EagerTensor(args[i], dt)
    if plan.order is not None:
        tensors = [tensors[i] for i in plan.order]
    _tape.record(plan.op_def, dict(plan.attrs), tensors, outputs)


def as_eager(value: Any, dtype: _dtypes.DType) -> EagerTensor:
    """A kernel's output as an EagerTensor of `dtype`."""
    if dtype.is_ref_dtype:  # a variable's reference (Assign's output): the cell itself
        ref = EagerTensor(value, dtype)
        # or a handle held by reference (a ConditionalAccumulator's), which has no cell
        held = value.value if hasattr(value, "value") else value
        ref._shape = TensorShape(np.shape(held)) if held is not None else TensorShape(None)
        return ref
    if not isinstance(value, np.ndarray) and dtype.name not in ("variant", "resource"):
        value = np.asarray(value, dtype=dtype.as_numpy_dtype if dtype is not _dtypes.string else object)
    return EagerTensor(value, dtype)


def eager_error(err: Exception, op_name: str) -> BaseException:
    """TF eager's form: the error class of the kernel failure, the message ending [Op:Name]."""
    annotated = kernel_errors.annotate(err, None)
    if not isinstance(annotated, errors.OpError):
        return annotated
    message = annotated.message
    if isinstance(err, errors.OpError):
        message = err.message
    return type(annotated)(None, None, f"{message} [Op:{op_name}]")
