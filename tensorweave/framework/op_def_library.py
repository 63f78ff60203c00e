"""`apply_op`: builds a node from an OpDef and Python arguments, as TF's op_def_library does:
converts inputs to tensors (using dtypes inferred from the other inputs), infers type and
length attrs, validates attrs against the definition, and computes output dtypes."""
from __future__ import annotations

from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_def import ArgDef, AttrDef, OpDef
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_proto import DeferredTensor
from tensorweave.framework.tensor_shape import as_shape


def _graph_for(values: Sequence[Any]) -> _graph.Graph:
    stack = _graph._default_graph_stack.stack
    if stack and stack[-1].building_function:
        return stack[-1]  # a function body being traced captures the outer tensors it uses (TF's rule)
    for v in values:
        if isinstance(v, (list, tuple)):
            for item in v:
                if isinstance(item, Tensor):
                    return item.graph
        if isinstance(v, Tensor):
            return v.graph
        if hasattr(v, "_as_graph_element"):
            elem = v._as_graph_element()
            if elem is not None:
                return elem.graph
    return _graph.get_default_graph()


def _pre_infer_types(op_def: OpDef, inputs: dict[str, Any], attrs: dict[str, Any]) -> None:
    """Type attrs taken from inputs that already are tensors, so Python constants in other
    inputs convert to the same dtype (`tf.add(1, x)` with float x)."""
    for arg in op_def.inputs:
        if arg.type_attr is None or arg.type_attr in attrs:
            continue
        value = inputs.get(arg.name)
        candidates = value if arg.number_attr and isinstance(value, (list, tuple)) else [value]
        for v in candidates:
            dt = getattr(v, "dtype", None)
            if isinstance(dt, _dtypes.DType) and (isinstance(v, Tensor) or hasattr(v, "_as_graph_element")):
                attrs[arg.type_attr] = dt.base_dtype
                break


def _convert_input(op_def: OpDef, arg: ArgDef, value: Any, attrs: dict[str, Any],
                   attr_given: set[str]) -> list[Tensor]:
    what = f"parameter '{arg.name}' of op '{op_def.name}'"
    if arg.is_list:
        if not isinstance(value, (list, tuple)):
            raise TypeError(f"Expected list for {what}, got {value!r} of type '{type(value).__name__}'.")
        if arg.number_attr is not None:
            if arg.number_attr in attr_given and attrs[arg.number_attr] != len(value):
                raise ValueError(f"List argument '{arg.name}' to '{op_def.name}' Op with length "
                                 f"{len(value)} must match length {attrs[arg.number_attr]} of argument "
                                 f"'{arg.number_attr}'.")
            attrs[arg.number_attr] = len(value)
            dtype = attrs.get(arg.type_attr) if arg.type_attr else arg.fixed_dtype
            preferred = _default_type(op_def, arg.type_attr) if dtype is None else None
            try:
                tensors = [convert_to_tensor(v, dtype=dtype, preferred_dtype=preferred, as_ref=arg.is_ref)
                           for v in value]
            except ValueError as err:
                raise TypeError(f"Tensors in list passed to {what} have mismatched types: {err}") from None
            if tensors:
                base = tensors[0].dtype.base_dtype
                for t in tensors:
                    if t.dtype.base_dtype != base:
                        raise TypeError(f"Tensors in list passed to {what} have types "
                                        f"{[x.dtype.name for x in tensors]} that don't all match.")
                if arg.type_attr:
                    attrs.setdefault(arg.type_attr, base)
            return tensors
        types = attrs.get(arg.type_list_attr) if arg.type_list_attr in attr_given else None
        tensors = [convert_to_tensor(v, dtype=None if types is None else types[i], as_ref=arg.is_ref)
                   for i, v in enumerate(value)]
        attrs[arg.type_list_attr] = [t.dtype.base_dtype for t in tensors]  # type: ignore[index]
        return tensors
    dtype = attrs.get(arg.type_attr) if arg.type_attr else arg.fixed_dtype
    preferred = _default_type(op_def, arg.type_attr) if dtype is None else None
    try:
        tensor = convert_to_tensor(value, dtype=dtype, preferred_dtype=preferred, as_ref=arg.is_ref)
    except (TypeError, ValueError) as err:
        if isinstance(value, Tensor) or dtype is None:
            given = getattr(value, "dtype", None)
            given_name = given.base_dtype.name if given is not None else type(value).__name__
            raise TypeError(f"Input '{arg.name}' of '{op_def.name}' Op has type {given_name} that does "
                            f"not match {_expected_type(op_def, arg, dtype)}.") from None
        raise TypeError(f"Expected {dtype.name} passed to {what}, got {value!r} of type "
                        f"'{type(value).__name__}' instead. Error: {err}") from None
    if arg.is_ref and not tensor.dtype.is_ref_dtype:
        raise TypeError(f"'{op_def.name}' Op requires that input '{arg.name}' be a mutable tensor "
                        f"(e.g.: a tf.Variable)")
    if arg.type_attr:
        attrs.setdefault(arg.type_attr, tensor.dtype.base_dtype)
    return [tensor]


def _expected_type(op_def: OpDef, arg: ArgDef, dtype: Any) -> str:
    """TF's wording for the type an input had to have: the type of the earlier argument that set
    the type attr, or the expected type."""
    name = getattr(dtype, "name", dtype)
    for earlier in op_def.inputs:
        if earlier is arg:
            break
        if arg.type_attr is not None and earlier.type_attr == arg.type_attr:
            return f"type {name} of argument '{earlier.name}'"
    return f"expected type of {name}"


def _default_type(op_def: OpDef, type_attr: Optional[str]) -> Optional[_dtypes.DType]:
    """A type attr's default guides how Python values convert (TF: `Tidx: {int32, int64} = int32`
    makes `[]` an int32 tensor, not a float32 one)."""
    if type_attr is None:
        return None
    attr = op_def.attrs.get(type_attr)
    return attr.default if attr is not None and attr.has_default else None


def _coerce_attr(op_def: OpDef, attr: AttrDef, value: Any) -> Any:
    kind = attr.kind
    where = f"attr '{attr.name}' of '{op_def.name}' Op"
    try:
        if kind == "type":
            return _dtypes.as_dtype(value).base_dtype
        if kind == "int":
            if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
                raise TypeError
            return int(value)
        if kind == "float":
            return float(value)
        if kind == "bool":
            if not isinstance(value, (bool, np.bool_)):
                raise TypeError
            return bool(value)
        if kind == "string":
            if isinstance(value, bytes):
                # TF's string attrs are bytes: text decodes, other bytes stay bytes (as TF accepts them)
                try:
                    return value.decode()
                except UnicodeDecodeError:
                    return value
            return str(value) if isinstance(value, str) else _raise()
        if kind == "shape":
            return as_shape(value)
        if kind.startswith("list("):
            inner = AttrDef(attr.name, kind[5:-1])
            return [_coerce_attr(op_def, inner, v) for v in value]
        if kind == "tensor":
            return value if isinstance(value, DeferredTensor) else np.asarray(value)
        return value
    except TypeError:
        raise TypeError(f"Expected {kind} for {where}, got {value!r} of type "
                        f"'{type(value).__name__}' instead.") from None


def _raise() -> Any:
    raise TypeError


def _check_attr(op_def: OpDef, attr: AttrDef, value: Any) -> None:
    if attr.allowed is not None:
        if attr.kind == "type" and value not in attr.allowed:
            raise TypeError(f"Value passed to parameter '{_type_user(op_def, attr.name)}' has DataType "
                            f"{value.name} not in list of allowed values: "
                            f"{', '.join(d.name for d in attr.allowed)}")
        if attr.kind == "string" and value not in attr.allowed:
            raise ValueError(f"Attr '{attr.name}' of '{op_def.name}' Op passed string '{value}' not in: "
                             f"{', '.join(repr(a) for a in attr.allowed)}.")
    if attr.minimum is not None and attr.kind == "int" and value < attr.minimum:
        raise ValueError(f"Attr '{attr.name}' of '{op_def.name}' Op passed {value} less than minimum "
                         f"{attr.minimum}.")


def _type_user(op_def: OpDef, type_attr: str) -> str:
    for arg in op_def.inputs:
        if arg.type_attr == type_attr:
            return arg.name
    return type_attr


def _output_dtypes(op_def: OpDef, attrs: dict[str, Any]) -> list[_dtypes.DType]:
    result: list[_dtypes.DType] = []
    for arg in op_def.outputs:
        if arg.type_list_attr is not None:
            types = list(attrs[arg.type_list_attr])
        else:
            base = attrs[arg.type_attr] if arg.type_attr else arg.fixed_dtype
            types = [base] * (attrs[arg.number_attr] if arg.number_attr else 1)
        result.extend(t._as_ref if arg.is_ref else t for t in types)
    return result


def _finish_attrs(op_def: OpDef, attrs: dict[str, Any]) -> None:
    for attr in op_def.attrs.values():
        if attr.name not in attrs:
            if not attr.has_default:
                raise TypeError(f"{op_def.name} missing required attr '{attr.name}'")
            attrs[attr.name] = attr.default
        _check_attr(op_def, attr, attrs[attr.name])


def infer_attrs_and_output_dtypes(op_def: OpDef, inputs: list[Tensor],
                                  attrs: dict[str, Any]) -> tuple[dict[str, Any], list[_dtypes.DType]]:
    """For Graph.create_op: attrs inferred from already-converted, flattened input tensors."""
    pos = 0
    for arg in op_def.inputs:
        if arg.number_attr:
            n = attrs.get(arg.number_attr, len(inputs) - pos)
            attrs.setdefault(arg.number_attr, n)
            group = inputs[pos:pos + n]
        elif arg.type_list_attr:
            group = inputs[pos:]
            attrs.setdefault(arg.type_list_attr, [t.dtype.base_dtype for t in group])
        else:
            group = inputs[pos:pos + 1]
        if arg.type_attr and group:
            attrs.setdefault(arg.type_attr, group[0].dtype.base_dtype)
        pos += len(group)
    for attr in op_def.attrs.values():
        if attr.name in attrs:
            attrs[attr.name] = _coerce_attr(op_def, attr, attrs[attr.name])
    _finish_attrs(op_def, attrs)
    return attrs, _output_dtypes(op_def, attrs)


def apply_op(op_def: OpDef, name: Optional[str] = None, **kwargs: Any) -> Any:
    """Adds a node of type `op_def` to the graph of its inputs; returns its outputs as TF's
    generated wrappers do: the Operation for no outputs, a Tensor for one, else a list.

    While executing eagerly the eager context's graph runs the op itself (its cached call plans,
    eager/execute.py); graph construction pays two attribute loads and a test for that."""
    stack = _graph._default_graph_stack.stack
    graph = stack[-1] if stack else _graph._DefaultGraphStack.global_default
    if graph is not None and graph.executes_eagerly:
        return graph._apply_op(op_def, name, kwargs)  # type: ignore[attr-defined]
    return build_op(op_def, name, kwargs)


def build_op(op_def: OpDef, name: Optional[str], kwargs: dict[str, Any],
             capture: Optional[list[Any]] = None) -> Any:
    """apply_op's general path (`kwargs` is consumed). `capture`, when given, receives (graph,
    flat input tensors, attrs) of the op made, for the eager context's call plans."""
    input_values = {arg.name: kwargs.pop(arg.name) for arg in op_def.inputs if arg.name in kwargs}
    missing = [arg.name for arg in op_def.inputs if arg.name not in input_values]
    if missing:
        raise TypeError(f"{op_def.name} missing required input(s): {', '.join(missing)}")
    control_inputs = kwargs.pop("_control_inputs", ())
    attrs: dict[str, Any] = {}
    for key, value in kwargs.items():
        attr = op_def.attrs.get(key)
        if attr is None:
            if key.startswith("_"):
                attrs[key] = value
                continue
            raise TypeError(f"{op_def.name} got an unexpected keyword argument '{key}'")
        if value is None and attr.has_default:
            continue
        attrs[key] = _coerce_attr(op_def, attr, value)
    attr_given = set(attrs)
    graph = _graph_for(list(input_values.values()))
    with graph.as_default():
        _pre_infer_types(op_def, input_values, attrs)
        flat_inputs: list[Tensor] = []
        for arg in op_def.inputs:
            flat_inputs.extend(_convert_input(op_def, arg, input_values[arg.name], attrs, attr_given))
        _finish_attrs(op_def, attrs)
        out_dtypes = _output_dtypes(op_def, attrs)
        op = graph._create_op_internal(op_def, flat_inputs, attrs, out_dtypes, name,
                                       control_inputs=control_inputs)
    if capture is not None:
        capture.append((graph, flat_inputs, attrs))
    return structure_outputs(op)


def structure_outputs(op: Operation) -> Any:
    op_def = op.op_def
    outputs = op._outputs
    if not op_def.outputs:
        return op
    if len(op_def.outputs) == 1 and not op_def.outputs[0].is_list:
        return outputs[0]
    result: list[Any] = []
    pos = 0
    for arg in op_def.outputs:
        if arg.is_list:
            n = len(op._attrs[arg.type_list_attr]) if arg.type_list_attr else op._attrs[str(arg.number_attr)]
            group = outputs[pos:pos + n]
            result.append(list(group) if len(op_def.outputs) > 1 else group)
            pos += n
        else:
            result.append(outputs[pos])
            pos += 1
    return result[0] if len(op_def.outputs) == 1 else result
