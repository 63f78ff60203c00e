"""`Graph`, `Operation` and `Tensor`: the stateful dataflow graph of white paper section 2.

A Graph holds operations by unique name, in creation order, with a version counter that a
session checks so it sees ops added after it was created (the white paper's Extend). Scope
stacks live in `scopes.py`; op signatures in `op_def.py`.
"""
from __future__ import annotations

import contextlib
import os
import sys
import threading
from typing import Any, Callable, Iterator, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import scopes
from tensorweave.framework.device_spec import parse_device
from tensorweave.framework.op_def import OpDef, get_op_def
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorweave.framework import default_session
from tensorweave.framework.graph_def import attr_to_proto, attr_value_to_python, graph_to_graph_def, node_def

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_CONTEXTLIB_FILE = contextlib.__file__


def _user_call_site() -> Optional[tuple[str, int, str]]:
    """The innermost stack frame outside tensorweave: the user line that built a node."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not filename.startswith(_PACKAGE_DIR) and filename != _CONTEXTLIB_FILE:
            return filename, frame.f_lineno, frame.f_code.co_name
        frame = frame.f_back  # type: ignore[assignment]
    return None


class Tensor:
    """A symbolic handle to one output of an Operation: `Tensor(op, value_index, dtype)`."""

    __slots__ = ("_op", "_value_index", "_dtype", "_shape", "_consumers", "__weakref__")

    # Tensors rank above NumPy arrays so `ndarray + tensor` builds a graph op.
    __array_priority__ = 100
    # An EagerTensor (eager/tensor.py) holds its value: graph-time folding reads it directly.
    _eager = False

    def __init__(self, op: "Operation", value_index: int, dtype: _dtypes.DType) -> None:
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = unknown_shape()
        self._consumers: list[Operation] = []

    @property
    def op(self) -> "Operation":
        return self._op

    @property
    def graph(self) -> "Graph":
        return self._op._graph

    @property
    def name(self) -> str:
        return f"{self._op._name}:{self._value_index}"

    @property
    def value_index(self) -> int:
        return self._value_index

    @property
    def dtype(self) -> _dtypes.DType:
        return self._dtype

    @property
    def device(self) -> str:
        return self._op.device

    @property
    def shape(self) -> TensorShape:
        return self._shape

    def get_shape(self) -> TensorShape:
        return self._shape

    def set_shape(self, shape: Any) -> None:
        """Refines the static shape; raises ValueError if incompatible with what is known."""
        self._shape = self._shape.merge_with(as_shape(shape))

    def consumers(self) -> list["Operation"]:
        return list(self._consumers)

    def eval(self, feed_dict: Any = None, session: Any = None) -> Any:
        return default_session.run_with_default(self, feed_dict, session)

    def __repr__(self) -> str:
        return f"<tf.Tensor '{self.name}' shape={self._shape} dtype={self._dtype.name}>"

    __str__ = __repr__

    def __hash__(self) -> int:
        return id(self)

    def __eq__(self, other: Any) -> bool:  # TF1: identity, so tensors work as dict keys
        return self is other

    def __ne__(self, other: Any) -> bool:
        return self is not other

    def __bool__(self) -> bool:
        raise TypeError("Using a `tf.Tensor` as a Python `bool` is not allowed. Use `if t is not None:` "
                        "instead of `if t:` to test if a tensor is defined, and use TensorFlow ops such "
                        "as tf.cond to execute subgraphs conditioned on the value of a tensor.")

    def __iter__(self) -> Iterator["Tensor"]:
        # TF1 graph mode: a symbolic tensor has no elements to iterate over (unpacking one by
        # mistake, `a, b = t`, would otherwise build slicing ops silently).
        raise TypeError("Tensor objects are only iterable when eager execution is enabled. To "
                        "iterate over this tensor use tf.map_fn or tf.unstack.")

    def __len__(self) -> int:
        raise TypeError(f"len is not well defined for symbolic Tensors ({self.name}). "
                        "Please call `x.shape` rather than `len(x)` for shape information.")

    @classmethod
    def _override_operator(cls, operator: str, func: Callable) -> None:
        setattr(cls, operator, func)


class Operation:
    """A node: name, type, attrs, input tensors, control inputs, requested and assigned
    device, output tensors, and the user line that created it (for error messages)."""

    __slots__ = ("_graph", "_name", "_op_def", "_attrs", "_inputs", "_control_inputs", "_outputs",
                 "_device", "_assigned_device", "_id", "_traceback", "_control_outputs",
                 "_control_flow_context", "__weakref__")

    def __init__(self, graph: "Graph", name: str, op_def: OpDef, inputs: Sequence[Tensor],
                 attrs: dict[str, Any], output_dtypes: Sequence[_dtypes.DType],
                 control_inputs: Sequence["Operation"], op_id: int) -> None:
        self._graph = graph
        self._name = name
        self._op_def = op_def
        self._attrs = attrs
        self._inputs = tuple(inputs)
        self._control_inputs = list(control_inputs)
        self._control_outputs: list[Operation] = []
        self._outputs = [Tensor(self, i, dt) for i, dt in enumerate(output_dtypes)]
        self._device = ""
        self._assigned_device = ""
        self._id = op_id
        self._traceback = _user_call_site()
        self._control_flow_context: Any = None
        for t in self._inputs:
            t._consumers.append(self)
        for c in self._control_inputs:
            c._control_outputs.append(self)

    @property
    def name(self) -> str:
        return self._name

    @property
    def type(self) -> str:
        return self._op_def.name

    @property
    def op_def(self) -> OpDef:
        return self._op_def

    @property
    def graph(self) -> "Graph":
        return self._graph

    @property
    def inputs(self) -> tuple[Tensor, ...]:
        return self._inputs

    @property
    def outputs(self) -> list[Tensor]:
        return list(self._outputs)

    def values(self) -> tuple[Tensor, ...]:
        return tuple(self._outputs)

    @property
    def control_inputs(self) -> list["Operation"]:
        return list(self._control_inputs)

    @property
    def device(self) -> str:
        return self._device

    def _set_device(self, device: Any) -> None:
        self._device = parse_device(device).to_string() if device else ""

    @property
    def node_attrs(self) -> dict[str, Any]:
        return self._attrs

    def get_attr(self, name: str) -> Any:
        """The attr's value as TF returns it, read from its AttrValue form: strings as bytes,
        types as DType, shapes as TensorShapeProto, tensors as TensorProto, lists as lists."""
        value = self._get_attr(name)
        if value is None:
            return None
        declared = self._op_def.attrs.get(name)
        try:
            proto = attr_to_proto(value, declared.kind if declared is not None else None)
        except TypeError:
            return value  # a private runtime helper with no AttrValue form
        return attr_value_to_python(proto)

    def _get_attr(self, name: str) -> Any:
        """The attr's value as tensorweave holds it (str, TensorShape, ndarray): what shape
        functions, gradients and kernels read."""
        try:
            return self._attrs[name]
        except KeyError:
            raise ValueError(f"Operation '{self._name}' has no attr named '{name}'.") from None

    def _set_attr(self, name: str, value: Any) -> None:
        self._attrs[name] = value
        self._graph._structure_version += 1

    def colocation_groups(self) -> list[bytes]:
        """The `loc:@name` groups this op is colocated with, as bytes (TF's form)."""
        return [group.encode("utf-8") for group in self._colocation_groups()]

    def _colocation_groups(self) -> list[str]:
        """colocation_groups() as str, for the placer and the colocation scope."""
        groups = [c for c in self._attrs.get("_class") or () if c.startswith("loc:@")]
        return groups or [f"loc:@{self._name}"]

    @property
    def traceback(self) -> Optional[tuple[str, int, str]]:
        return self._traceback

    @property
    def creation_site(self) -> Optional[str]:
        if self._traceback is None:
            return None
        filename, lineno, func = self._traceback
        return f'File "{filename}", line {lineno}, in {func}'

    def _add_control_input(self, op: "Operation") -> None:
        self._add_control_inputs([op])

    def _add_control_inputs(self, ops: Sequence["Operation"]) -> None:
        for op in ops:
            if not isinstance(op, Operation):
                raise TypeError(f"op must be an Operation: {op!r}")
            if op not in self._control_inputs:
                self._control_inputs.append(op)
                op._control_outputs.append(self)
        self._graph._structure_version += 1

    def _update_input(self, index: int, tensor: Tensor) -> None:
        old = self._inputs[index]
        old._consumers.remove(self)
        self._inputs = self._inputs[:index] + (tensor,) + self._inputs[index + 1:]
        tensor._consumers.append(self)
        self._graph._structure_version += 1

    def run(self, feed_dict: Any = None, session: Any = None) -> None:
        default_session.run_with_default(self, feed_dict, session)

    @property
    def node_def(self) -> Any:
        """This op as a NodeDef protobuf (framework/graph_def.py)."""
        return node_def(self)

    def __repr__(self) -> str:
        return f"<tf.Operation '{self._name}' type={self.type}>"

    def __str__(self) -> str:
        inputs = "".join(f'\ninput: "{t.op.name}{"" if t.value_index == 0 else ":%d" % t.value_index}"'
                         for t in self._inputs)
        return f'name: "{self._name}"\nop: "{self.type}"{inputs}'


class GraphKeys:
    """Standard collection names (TF1's tf.GraphKeys)."""

    GLOBAL_VARIABLES = "variables"
    LOCAL_VARIABLES = "local_variables"
    METRIC_VARIABLES = "metric_variables"
    MODEL_VARIABLES = "model_variables"
    TRAINABLE_VARIABLES = "trainable_variables"
    SUMMARIES = "summaries"
    QUEUE_RUNNERS = "queue_runners"
    TABLE_INITIALIZERS = "table_initializer"
    ASSET_FILEPATHS = "asset_filepaths"
    MOVING_AVERAGE_VARIABLES = "moving_average_variables"
    REGULARIZATION_LOSSES = "regularization_losses"
    CONCATENATED_VARIABLES = "concatenated_variables"
    SAVERS = "savers"
    WEIGHTS = "weights"
    BIASES = "biases"
    ACTIVATIONS = "activations"
    UPDATE_OPS = "update_ops"
    LOSSES = "losses"
    SAVEABLE_OBJECTS = "saveable_objects"
    RESOURCES = "resources"
    LOCAL_RESOURCES = "local_resources"
    TRAINABLE_RESOURCE_VARIABLES = "trainable_resource_variables"
    INIT_OP = "init_op"
    LOCAL_INIT_OP = "local_init_op"
    READY_OP = "ready_op"
    READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
    SUMMARY_OP = "summary_op"
    GLOBAL_STEP = "global_step"
    EVAL_STEP = "eval_step"
    TRAIN_OP = "train_op"
    COND_CONTEXT = "cond_context"
    WHILE_CONTEXT = "while_context"
    VARIABLES = GLOBAL_VARIABLES


class Graph:
    """A TensorFlow computation: operations by unique name, collections and scope stacks."""

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._nodes_by_name: dict[str, Operation] = {}
        self._nodes: list[Operation] = []
        self._version = 0
        self._structure_version = 0
        # A partition graph (a worker's share of a distributed step) holds the runtime's own
        # nodes, whose names start with an underscore (TF's allow_internal_ops).
        self._internal_names = False
        self._finalized = False
        self._collections: dict[str, list[Any]] = {}
        self._seed: Optional[int] = None
        self._name_stack = scopes.NameScopeStack()
        self._control_dependencies = scopes.ControlDependencyStack()
        self._device_stack = scopes.DeviceStack()
        self._colocation_stack = scopes.ColocationStack()
        self._container = ""
        self._gradient_override_map: dict[str, str] = {}
        # Attrs every op created in `_attr_scope` gets (TF's private scope: jit_scope's _XlaCompile).
        self._attr_scope_map: dict[str, Any] = {}
        # Control-flow contexts (cond/while) push themselves here; ops record the innermost.
        self._control_flow_context: Any = None
        # Tensors that may not be fed and ops whose outputs may not be fetched (TF's
        # prevent_feeding / prevent_fetching): values of a loop frame or a cond branch.
        self._unfeedable_tensors: set[Tensor] = set()
        self._unfetchable_ops: set[Operation] = set()
        # The function library (framework/function.py): name -> DefinedFunction, in the order added.
        self._functions: dict[str, Any] = {}

    # -- identity and defaults ------------------------------------------------------------------
    def as_default(self) -> Any:
        return _default_graph_stack.get_controller(self)

    @property
    def version(self) -> int:
        return self._version

    @property
    def finalized(self) -> bool:
        return self._finalized

    def finalize(self) -> None:
        self._finalized = True

    def prevent_feeding(self, tensor: Tensor) -> None:
        """Marks `tensor` as unfeedable in this graph: `Session.run` raises ValueError if it is fed."""
        self._unfeedable_tensors.add(tensor)
        self._structure_version += 1  # compiled run signatures check feeds once: compile again

    def is_feedable(self, tensor: Tensor) -> bool:
        """True if and only if `tensor` may be fed."""
        return tensor not in self._unfeedable_tensors

    def prevent_fetching(self, op: Operation) -> None:
        """Marks `op` as unfetchable in this graph: fetching it, or any of its outputs, raises
        InaccessibleTensorError (a ValueError)."""
        self._unfetchable_ops.add(op)
        self._structure_version += 1

    def is_fetchable(self, tensor_or_op: Any) -> bool:
        """True if and only if `tensor_or_op` (a Tensor, or an Operation) may be fetched."""
        op = tensor_or_op.op if isinstance(tensor_or_op, Tensor) else tensor_or_op
        return op not in self._unfetchable_ops

    def _unsafe_unfinalize(self) -> None:
        self._finalized = False

    @property
    def seed(self) -> Optional[int]:
        return self._seed

    @seed.setter
    def seed(self, seed: Optional[int]) -> None:
        self._seed = seed

    @property
    def _last_id(self) -> int:
        return self._version

    @property
    def building_function(self) -> bool:
        return False

    # The eager context's graph (eager/execute.py) runs each op as it is created; wrappers and
    # variables test this one class attribute, so graph construction pays nothing for eager.
    executes_eagerly = False

    # -- op creation ----------------------------------------------------------------------------
    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        return self._name_stack.unique_name(name, mark_as_used)

    def get_name_scope(self) -> str:
        return self._name_stack.current

    def _create_op_internal(self, op_def: OpDef, inputs: Sequence[Tensor], attrs: dict[str, Any],
                            output_dtypes: Sequence[_dtypes.DType], name: Optional[str] = None,
                            control_inputs: Sequence[Operation] = ()) -> Operation:
        with self._lock:
            if self._finalized:
                raise RuntimeError("Graph is finalized and cannot be modified.")
            for t in inputs:
                if t.graph is not self:
                    raise ValueError(f"Tensor {t.name} must be from the same graph as the op being "
                                     f"created ({name or op_def.name}).")
            if name is not None and name.endswith("/"):
                name = name[:-1]
                if name in self._nodes_by_name:
                    raise ValueError(f"Duplicate node name in graph: '{name}'")
                self._name_stack.mark_used(name)
            else:
                name = self.unique_name(name or op_def.name)
            scopes.check_op_name(name, self._internal_names)
            controls = list(control_inputs)
            input_ops = {t._op for t in inputs}
            for c in self._control_dependencies.current(input_ops):
                c_op = c.op if isinstance(c, Tensor) else c
                if c_op not in input_ops and c_op not in controls:
                    controls.append(c_op)
            colocate = bool(self._colocation_stack)
            if colocate:
                attrs = dict(attrs)
                attrs["_class"] = self._colocation_stack.groups()
            if self._gradient_override_map and op_def.name in self._gradient_override_map:
                attrs = dict(attrs)
                attrs["_gradient_op_type"] = self._gradient_override_map[op_def.name]
            if self._attr_scope_map:
                attrs = {**attrs, **self._attr_scope_map}
            if self._container and "container" in op_def.attrs and not attrs.get("container"):
                attrs["container"] = self._container
            op = Operation(self, name, op_def, inputs, attrs, output_dtypes, controls, len(self._nodes))
            if self._device_stack:
                op._device = self._device_stack.device_for(op)
            if colocate:  # colocation overrides device scopes, as in TF
                op._device = self._colocation_stack.device() or op._device
            _run_shape_fn(op)
            self._nodes_by_name[name] = op
            self._nodes.append(op)
            if self._control_dependencies:
                self._control_dependencies.record(op)
            self._version += 1
            op._control_flow_context = self._control_flow_context
            if self._control_flow_context is not None:
                # cond/while contexts route outside inputs through Switch/Enter (new nodes).
                self._control_flow_context.add_op(op)
            return op

    def create_op(self, op_type: str, inputs: Sequence[Tensor], dtypes: Any = None,
                  input_types: Any = None, name: Optional[str] = None, attrs: Any = None,
                  op_def: Any = None, compute_shapes: bool = True, compute_device: bool = True) -> Operation:
        """TF1's low-level Graph.create_op, by op type name."""
        definition = get_op_def(op_type)
        # late: op_def_library builds on Graph/Tensor/Operation from this module
        from tensorweave.framework.op_def_library import infer_attrs_and_output_dtypes
        full_attrs, out_dtypes = infer_attrs_and_output_dtypes(definition, list(inputs), dict(attrs or {}))
        if dtypes is not None:
            out_dtypes = [_dtypes.as_dtype(d) for d in dtypes]
        return self._create_op_internal(definition, list(inputs), full_attrs, out_dtypes, name)

    # -- the function library --------------------------------------------------------------------
    def _add_function(self, function: Any) -> None:
        """Adds a DefinedFunction to this graph's library (again: nothing; a different function
        under the same name: ValueError, as TF). A Defun (TF1 programs pass those too) adds
        itself, with the functions it calls."""
        if not hasattr(function, "call_op_def") and hasattr(function, "add_to_graph"):
            function.add_to_graph(self)
            return
        with self._lock:
            existing = self._functions.get(function.name)
            if existing is function:
                return
            if existing is not None and existing.definition != function.definition:
                raise ValueError(f"Cannot add function '{function.name}' because a different function with "
                                 "the same name already exists.")
            if existing is None:
                self._functions[function.name] = function
                self._structure_version += 1

    def _get_function(self, name: str) -> Any:
        """The DefinedFunction named `name` in this graph's library, or None."""
        return self._functions.get(name)

    def _is_function(self, name: str) -> bool:
        return name in self._functions

    # -- serialization --------------------------------------------------------------------------
    def as_graph_def(self, from_version: Optional[int] = None, add_shapes: bool = False) -> Any:
        """The GraphDef protobuf of this graph (framework/graph_def.py)."""
        return graph_to_graph_def(self, from_version, add_shapes)

    # -- lookup ---------------------------------------------------------------------------------
    def get_operations(self) -> list[Operation]:
        with self._lock:
            return list(self._nodes)

    def get_operation_by_name(self, name: str) -> Operation:
        if not isinstance(name, str):
            raise TypeError(f"Operation names are strings (or similar), not {type(name).__name__}.")
        result = self.as_graph_element(name, allow_tensor=False, allow_operation=True)
        return result

    def get_tensor_by_name(self, name: str) -> Tensor:
        if not isinstance(name, str):
            raise TypeError(f"Tensor names are strings (or similar), not {type(name).__name__}.")
        return self.as_graph_element(name, allow_tensor=True, allow_operation=False)

    def _get_operation_or_none(self, name: str) -> Optional[Operation]:
        return self._nodes_by_name.get(name)

    def as_graph_element(self, obj: Any, allow_tensor: bool = True, allow_operation: bool = True) -> Any:
        """Resolves a Tensor, Operation or 'name' / 'name:port' string to a graph element."""
        if allow_tensor and isinstance(obj, Tensor):
            if obj.graph is not self:
                raise ValueError(f"Tensor {obj} is not an element of this graph.")
            return obj
        if allow_operation and isinstance(obj, Operation):
            if obj.graph is not self:
                raise ValueError(f"Operation {obj} is not an element of this graph.")
            return obj
        if hasattr(obj, "_as_graph_element"):
            return self.as_graph_element(obj._as_graph_element(), allow_tensor, allow_operation)
        if not isinstance(obj, str):
            wanted = " or ".join(k for k, ok in (("Tensor", allow_tensor), ("Operation", allow_operation)) if ok)
            raise TypeError(f"Can not convert a {type(obj).__name__} into a {wanted}.")
        if ":" in obj and allow_tensor:
            op_name, _, port = obj.rpartition(":")
            try:
                index = int(port)
            except ValueError:
                raise ValueError(f"The name {obj!r} looks a like a Tensor name, but is not a valid one. "
                                 "Tensor names must be of the form \"<op_name>:<output_index>\".") from None
            op = self._nodes_by_name.get(op_name)
            if op is None:
                raise KeyError(f"The name {obj!r} refers to a Tensor which does not exist. "
                               f"The operation, {op_name!r}, does not exist in the graph.")
            if index >= len(op._outputs):
                raise KeyError(f"The name {obj!r} refers to a Tensor which does not exist. The operation, "
                               f"{op_name!r}, exists but only has {len(op._outputs)} outputs.")
            return op._outputs[index]
        if ":" in obj:
            raise ValueError(f"Name {obj!r} appears to refer to a Tensor, not a Operation.")
        op = self._nodes_by_name.get(obj)
        if op is None:
            raise KeyError(f"The name {obj!r} refers to an Operation not in the graph.")
        if not allow_operation:
            raise ValueError(f"The name {obj!r} refers to an Operation, not a Tensor. Tensor names must "
                             "be of the form \"<op_name>:<output_index>\".")
        return op

    # -- scopes ---------------------------------------------------------------------------------
    def name_scope(self, name: Optional[str]) -> Any:
        return self._name_stack.scope(name)

    def control_dependencies(self, control_inputs: Optional[Sequence[Any]]) -> Any:
        if control_inputs is None:
            return self._control_dependencies.push(None)
        resolved = []
        for c in control_inputs:
            if hasattr(c, "_as_graph_element") and not isinstance(c, (Tensor, Operation)):
                c = c._as_graph_element()
            if isinstance(c, Tensor):
                c = c.op
            if not isinstance(c, Operation):
                raise TypeError(f"Control input must be Operation or Tensor: {c!r}")
            resolved.append(self.as_graph_element(c))
        return self._control_dependencies.push(resolved)

    def device(self, device_name_or_function: Any) -> Any:
        return self._device_stack.push(device_name_or_function)

    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Any:
        if op is None:
            return self._colocation_stack.push(None, ignore_existing)
        if isinstance(op, Tensor):
            op = op.op
        elif hasattr(op, "_as_graph_element"):
            op = op._as_graph_element()
            op = op.op if isinstance(op, Tensor) else op
        return self._colocation_stack.push(op, ignore_existing)

    @contextlib.contextmanager
    def container(self, container_name: str) -> Iterator[str]:
        original = self._container
        self._container = container_name
        try:
            yield container_name
        finally:
            self._container = original

    @contextlib.contextmanager
    def gradient_override_map(self, op_type_map: dict[str, str]) -> Iterator[None]:
        saved = dict(self._gradient_override_map)
        self._gradient_override_map.update(op_type_map)
        try:
            yield
        finally:
            self._gradient_override_map = saved

    @contextlib.contextmanager
    def _attr_scope(self, attr_map: dict[str, Any]) -> Iterator[None]:
        """Ops created inside get these attrs (a value of None removes an outer scope's)."""
        saved = self._attr_scope_map
        merged = {**saved, **attr_map}
        self._attr_scope_map = {k: v for k, v in merged.items() if v is not None}
        try:
            yield
        finally:
            self._attr_scope_map = saved

    # -- collections ----------------------------------------------------------------------------
    def add_to_collection(self, name: str, value: Any) -> None:
        with self._lock:
            self._collections.setdefault(name, []).append(value)

    def add_to_collections(self, names: Any, value: Any) -> None:
        names = (names,) if isinstance(names, str) else set(names)
        for name in names:
            self.add_to_collection(name, value)

    def get_collection_ref(self, name: str) -> list[Any]:
        with self._lock:
            return self._collections.setdefault(name, [])

    def get_collection(self, name: str, scope: Optional[str] = None) -> list[Any]:
        with self._lock:
            items = self._collections.get(name)
            if items is None:
                return []
            if scope is None:
                return list(items)
            import re
            pattern = re.compile(scope)
            return [item for item in items
                    if getattr(item, "name", None) is not None and pattern.match(item.name)]

    def get_all_collection_keys(self) -> list[str]:
        with self._lock:
            return [k for k, v in self._collections.items() if isinstance(k, str)]

    def clear_collection(self, name: str) -> None:
        with self._lock:
            self._collections.pop(name, None)


def _run_shape_fn(op: Operation) -> None:
    shape_fn = op._op_def.shape_fn
    if shape_fn is None:
        return
    shapes = shape_fn(op)
    if len(shapes) != len(op._outputs):
        raise ValueError(f"Shape function for {op.type} returned {len(shapes)} shapes for "
                         f"{len(op._outputs)} outputs")
    for t, s in zip(op._outputs, shapes):
        t._shape = as_shape(s)


# ---------------------------------------------------------------------------------------------
# The default graph stack (per thread, with one process-wide global default graph)
# ---------------------------------------------------------------------------------------------
class _DefaultGraphStack(threading.local):
    global_default: Optional[Graph] = None
    # What the global default graph is made of: tf.enable_eager_execution makes it the eager
    # context's graph (eager/context.py), so ops built outside any `as_default` run at once.
    global_factory: Callable[[], Graph] = Graph
    _lock = threading.Lock()

    def __init__(self) -> None:
        self.stack: list[Graph] = []

    def get_default(self) -> Graph:
        if self.stack:
            return self.stack[-1]
        default = _DefaultGraphStack.global_default
        if default is not None:  # made once: the lock is only for making it
            return default
        with _DefaultGraphStack._lock:
            if _DefaultGraphStack.global_default is None:
                _DefaultGraphStack.global_default = _DefaultGraphStack.global_factory()
            return _DefaultGraphStack.global_default

    @contextlib.contextmanager
    def get_controller(self, graph: Graph) -> Iterator[Graph]:
        self.stack.append(graph)
        try:
            yield graph
        finally:
            self.stack.pop()

    def reset(self) -> None:
        if self.stack:
            raise AssertionError("Do not use tf.reset_default_graph() to clear nested graphs. If you "
                                 "need a cleared graph, exit the nesting and create a new graph.")
        _DefaultGraphStack.global_default = None


_default_graph_stack = _DefaultGraphStack()


def get_default_graph() -> Graph:
    return _default_graph_stack.get_default()


def reset_default_graph() -> None:
    _default_graph_stack.reset()


def add_to_collection(name: str, value: Any) -> None:
    get_default_graph().add_to_collection(name, value)


def add_to_collections(names: Any, value: Any) -> None:
    get_default_graph().add_to_collections(names, value)


def get_collection(key: str, scope: Optional[str] = None) -> list[Any]:
    return get_default_graph().get_collection(key, scope)


def get_collection_ref(key: str) -> list[Any]:
    return get_default_graph().get_collection_ref(key)


def control_dependencies(control_inputs: Optional[Sequence[Any]]) -> Any:
    return get_default_graph().control_dependencies(control_inputs)


def device(device_name_or_function: Any) -> Any:
    return get_default_graph().device(device_name_or_function)


def colocate_with(op: Any, ignore_existing: bool = False) -> Any:
    return get_default_graph().colocate_with(op, ignore_existing)


def container(container_name: str) -> Any:
    return get_default_graph().container(container_name)


class name_scope:  # noqa: N801  (TF's name: a context manager, used like a function)
    """TF1's tf.name_scope(name, default_name, values): opens a scope in the graph of `values`,
    which is the default graph inside it. A class rather than a generator: every wrapper opens
    one, and this is about half the cost."""

    __slots__ = ("_name", "_default_name", "_values", "_scope")

    def __init__(self, name: Optional[str], default_name: Optional[str] = None,
                 values: Optional[Sequence[Any]] = None) -> None:
        self._name, self._default_name, self._values = name, default_name, values

    def __enter__(self) -> str:
        name, values = self._name, self._values
        if name is None and self._default_name is None and values is not None:
            raise ValueError("At least one of name (None) and default_name (None) must be provided.")
        graph = _graph_from_values(values)
        scope = self._scope = graph.name_scope(self._default_name if name is None else name)
        stack = _default_graph_stack.stack
        stack.append(graph)  # graph.as_default()
        try:
            return scope.__enter__()
        except BaseException:
            stack.pop()
            raise

    def __exit__(self, *exc: Any) -> Any:
        try:
            return self._scope.__exit__(*exc)
        finally:
            _default_graph_stack.stack.pop()


def _graph_from_values(values: Optional[Sequence[Any]]) -> Graph:
    if values:
        for v in values:
            if isinstance(v, Tensor):
                return v.graph
            if isinstance(v, Operation):
                return v.graph
    return get_default_graph()


def is_tensor_like(x: Any) -> bool:
    return isinstance(x, Tensor) or hasattr(x, "_as_graph_element")
