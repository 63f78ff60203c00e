"""Concrete functions: one trace of a tf.function (TF's eager/function.py ConcreteFunction and
framework/func_graph.py).

A trace runs the Python function once on placeholders standing for its tensor arguments, in a
FuncGraph whose enclosing graph is the caller's: tensors of that graph used inside become
captured arguments, variables are read by capture (tf.get_variable inside is hoisted to the
caller's graph, as Defun does). The body becomes a function of the caller's library; a call is a
(Stateful)PartitionedCall op, as TF 2.x writes every call, so the graph runs it with the
executor's function runtime and tf.gradients differentiates it with the body's gradient.

The trace key of a call (`trace_key`) is a nested tuple of the arguments' structure: tensors as
TensorSpecs (shape and dtype), Python values by value (so 1, 1.0 and True are one key, as in
TF 2.21), other objects by identity. Keys generalise (`common_supertype`) and match calls whose
key is a subtype (`is_subtype`), which is how reduce_retracing and get_concrete_function with
TensorSpecs serve later calls.
"""
from __future__ import annotations

import contextlib
import itertools
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import function as _function
from tensorweave.framework import graph as _graph
from tensorweave.framework import nest
from tensorweave.framework.graph import Operation, Tensor
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor, register_tensor_conversion_function
from tensorweave.framework.tensor_spec import TensorSpec
from tensorweave.gradients import gradients
from tensorweave.ops.array import identity, zeros_like
from tensorweave.ops.functional.call_ops import PartitionedCall, StatefulPartitionedCall
from tensorweave.ops.functional.defun import _HoistingStore
from tensorweave.ops.state.variable_scope import _STORE_KEY, get_variable_scope
from tensorweave.ops.state.variables import Variable

from tensorweave.eager import forward_backward as _forward_backward
from tensorweave.eager import tape as _tape
from tensorweave.eager.variables import EagerVariable, owner_of

__all__ = ["ConcreteFunction", "trace_key", "is_subtype", "common_supertype", "trace"]

_uid = itertools.count(1)
_SEQ_KINDS = {list: "list", tuple: "tuple"}


# ---------------------------------------------------------------------------------------------
# Trace keys
# ---------------------------------------------------------------------------------------------
def trace_key(value: Any) -> Any:
    """The trace type of one argument (nested tuples; tensors as TensorSpecs)."""
    if isinstance(value, Tensor):
        return TensorSpec(value.shape, value.dtype)
    if isinstance(value, TensorSpec):
        return TensorSpec(value.shape, value.dtype)
    kind = _SEQ_KINDS.get(type(value))
    if kind is not None:
        return (kind,) + tuple(trace_key(v) for v in value)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a namedtuple
        return ("namedtuple", type(value)) + tuple(trace_key(v) for v in value)
    if isinstance(value, dict):
        return ("dict",) + tuple((k, trace_key(value[k])) for k in sorted(value))
    if isinstance(value, Variable):
        return ("object", id(value))
    try:
        hash(value)
    except TypeError:
        return ("object", id(value))
    return ("py", value)


_STRUCTS = ("list", "tuple", "namedtuple", "dict", "args")


def _is_struct(key: Any) -> bool:
    return isinstance(key, tuple) and bool(key) and key[0] in _STRUCTS


def _children(key: Any, other: Any) -> Optional[list[tuple[Any, Any]]]:
    """The pairs of sub-keys of two structure keys of the same shape (None when they differ)."""
    if not _is_struct(other) or key[0] != other[0] or len(key) != len(other):
        return None
    start = 1
    if key[0] == "namedtuple":
        if key[1] is not other[1]:
            return None
        start = 2
    pairs = []
    for a, b in zip(key[start:], other[start:]):
        if key[0] == "dict":
            if a[0] != b[0]:
                return None
            a, b = a[1], b[1]
        pairs.append((a, b))
    return pairs


def _rebuild(key: Any, subkeys: list[Any]) -> Any:
    start = 2 if key[0] == "namedtuple" else 1
    if key[0] == "dict":
        return key[:1] + tuple((entry[0], sub) for entry, sub in zip(key[1:], subkeys))
    return key[:start] + tuple(subkeys)


def is_subtype(key: Any, other: Any) -> bool:
    """Whether a call with trace type `key` can run a trace made for `other`."""
    if isinstance(key, TensorSpec):
        return isinstance(other, TensorSpec) and key.is_subtype_of(other)
    if _is_struct(key):
        pairs = _children(key, other)
        return pairs is not None and all(is_subtype(a, b) for a, b in pairs)
    return type(key) is type(other) and key == other


def common_supertype(key: Any, other: Any) -> Optional[Any]:
    """The most specific trace type both keys are subtypes of, or None."""
    if isinstance(key, TensorSpec):
        return key.most_specific_common_supertype(other) if isinstance(other, TensorSpec) else None
    if _is_struct(key):
        pairs = _children(key, other)
        if pairs is None:
            return None
        merged = [common_supertype(a, b) for a, b in pairs]
        if any(m is None for m in merged):
            return None
        return _rebuild(key, merged)
    return key if type(key) is type(other) and key == other else None


def _map(structure: Any) -> Any:
    flat = [TensorSpec(v.shape, v.dtype) if isinstance(v, Tensor) else v for v in nest.flatten(structure)]
    return nest.pack_sequence_as(structure, flat)


# ---------------------------------------------------------------------------------------------
# Tracing
# ---------------------------------------------------------------------------------------------
class _EagerTraceGraph(_function.FuncGraph):
    """The body of a trace made while executing eagerly: eager tensors it uses are captured
    (passed again at every call), and an eager variable converted to a tensor inside becomes an
    argument that each call fills with the variable's current value (read on the caller's
    tapes), so reads see assignments made between calls."""

    def capture_variable(self, variable: Any) -> Tensor:
        written = self._written_reference(variable)
        if written is not None:
            # the body assigned it already: read the reference after those assignments (the
            # order TF 2's automatic control dependencies give)
            ref, writes = written
            with self.control_dependencies(writes):
                return identity(ref)
        for outer, inner in self.captures:
            if outer is variable:
                return inner
        if isinstance(self.outer_graph, _EagerTraceGraph):
            return self.capture(self.outer_graph.capture_variable(variable))
        with self._name_stack.scope(None):
            inner = self.add_arg("Placeholder", variable.dtype.base_dtype, variable.shape)
        self.captures.append((variable, inner))
        return inner


    def _written_reference(self, variable: Any) -> Optional[tuple[Tensor, list[Operation]]]:
        cell = getattr(variable, "_cell", None)
        for outer, inner in self.captures:
            if isinstance(outer, Tensor) and outer.dtype.is_ref_dtype and getattr(outer, "_value", None) is cell:
                writes = [op for op in self.get_operations() if inner in op.inputs]
                if writes:
                    return inner, writes
        return None


def _eager_variable_to_tensor(v: Any, dtype: Any = None, name: Optional[str] = None, as_ref: bool = False) -> Any:
    if as_ref:
        return v._ref()
    graph = _graph.get_default_graph()
    if isinstance(graph, _EagerTraceGraph):
        return graph.capture_variable(v)
    return v.value()


# before Variable's own conversion (priority 100): inside an eager trace a read is an argument
register_tensor_conversion_function(EagerVariable, _eager_variable_to_tensor, priority=50)


def _placeholders(graph: _function.FuncGraph, args: Sequence[Any], kwargs: dict[str, Any], key: Any,
                  arg_names: Sequence[str]) -> tuple[list[Any], dict[str, Any]]:
    """The arguments with every tensor (or TensorSpec) leaf replaced by a new argument of
    `graph` shaped as the matching spec of `key` (named after the Python argument)."""
    specs = iter(_flatten_key(key))

    def replace(value: Any, name: str) -> Any:
        flat = []
        for leaf in nest.flatten(value):
            if isinstance(leaf, (Tensor, TensorSpec)):
                spec = next(specs)
                given = leaf.name if isinstance(leaf, TensorSpec) else None
                leaf = graph.add_arg(given or name, spec.dtype, spec.shape)
            flat.append(leaf)
        return nest.pack_sequence_as(value, flat) if nest.is_sequence(value) else flat[0]

    new_args = [replace(a, arg_names[i] if i < len(arg_names) else f"args_{i}") for i, a in enumerate(args)]
    new_kwargs = {k: replace(kwargs[k], k) for k in sorted(kwargs)}
    return new_args, new_kwargs


def _flatten_key(key: Any) -> list[TensorSpec]:
    """The TensorSpecs of a trace key, in nest.flatten order of the arguments."""
    if isinstance(key, TensorSpec):
        return [key]
    if isinstance(key, tuple) and key and key[0] in ("list", "tuple", "args"):
        return [s for k in key[1:] for s in _flatten_key(k)]
    if isinstance(key, tuple) and key and key[0] == "namedtuple":
        return [s for k in key[2:] for s in _flatten_key(k)]
    if isinstance(key, tuple) and key and key[0] == "dict":
        return [s for _, k in key[1:] for s in _flatten_key(k)]
    return []


def flat_tensors(structure: Any) -> list[Any]:
    """The tensor leaves of call arguments, in trace order."""
    return [v for v in nest.flatten(structure) if isinstance(v, (Tensor, TensorSpec))]


def trace(python_function: Callable[..., Any], name: str, args: Any, kwargs: Any, key: Any,
          arg_names: Sequence[str], attrs: Optional[dict[str, Any]] = None) -> "ConcreteFunction":
    """Traces `python_function(*args, **kwargs)` into a new ConcreteFunction whose tensor
    arguments have the specs of `key` (the ("args", args key, kwargs key) trace type)."""
    outer = _graph.get_default_graph()
    eager = outer.executes_eagerly or isinstance(outer, _EagerTraceGraph)
    body = (_EagerTraceGraph if eager else _function.FuncGraph)(name, outer_graph=outer)
    with outer.as_default():
        outer_scope = get_variable_scope()
    store = _HoistingStore(outer, outer_scope)
    body.get_collection_ref(_STORE_KEY).append(store)
    # jit_compile=True: the whole body is one JIT scope (grappler/jit/ clusters it in the body's plan)
    compiled = body._attr_scope({"_XlaCompile": True, "_XlaScope": f"function_{name}"}) \
        if attrs and attrs.get("_XlaMustCompile") else contextlib.nullcontext()
    with body.as_default(), compiled:
        inner_args, inner_kwargs = _placeholders(body, args, kwargs, key, arg_names)
        results = python_function(*inner_args, **inner_kwargs)
        outputs, structured_outputs = _outputs(body, results)
    return ConcreteFunction(body, outputs, structured_outputs, (tuple(_map(inner_args)), _map(inner_kwargs)),
                            store.created, attrs or {})


def _outputs(body: _function.FuncGraph, results: Any) -> tuple[list[Tensor], Any]:
    """The flat output tensors of a trace and the returned structure (tensors replaced by their
    index among the outputs, Python values and None as they are)."""
    outputs: list[Tensor] = []
    packed = []
    for item in nest.flatten(results):
        if isinstance(item, Operation) or item is None:
            packed.append(None)  # an op the body runs anyway (its stateful ops are kept)
            continue
        if isinstance(item, Variable) or hasattr(item, "_as_graph_element") or isinstance(item, Tensor):
            t = convert_to_tensor(item)
            if t.graph is not body:
                t = body.capture(t)
            packed.append(_OutputSlot(len(outputs)))
            outputs.append(t)
            continue
        if hasattr(item, "flow") and hasattr(item, "stack"):  # a TensorArray: returned stacked
            t = item.stack()
            packed.append(_OutputSlot(len(outputs)))
            outputs.append(t)
            continue
        packed.append(item)
    structure = results if nest.is_sequence(results) else [results]
    packed_structure = nest.pack_sequence_as(structure, packed)
    return outputs, packed_structure if nest.is_sequence(results) else packed_structure[0]


class _OutputSlot:
    """Where output `index` goes in the returned structure."""

    __slots__ = ("index",)

    def __init__(self, index: int) -> None:
        self.index = index


# ---------------------------------------------------------------------------------------------
# ConcreteFunction
# ---------------------------------------------------------------------------------------------
class ConcreteFunction:
    """One trace of a tf.function: a graph function with fixed argument specs. Calling it adds
    a call op to the default graph (the graph it was traced for) and returns the outputs in the
    structure the Python function returned."""

    def __init__(self, body: _function.FuncGraph, outputs: list[Tensor], structured_outputs: Any,
                 structured_input_signature: Any, variables: Sequence[Any], attrs: dict[str, Any]) -> None:
        self._graph = body
        self._outputs = outputs
        self._structure = structured_outputs
        self.structured_input_signature = structured_input_signature
        self._hoisted_variables = list(dict.fromkeys(variables))
        inputs = list(body.inputs)
        self._inputs = inputs
        self._backward: Optional[tuple[_function.DefinedFunction, list[int]]] = None
        self._split: Optional[_forward_backward.ForwardBackward] = None  # a body that assigns
        self._captured = [outer for outer, _ in body.captures]
        self._reads_variables = any(isinstance(c, EagerVariable) for c in self._captured)
        self._assigns = any(t.dtype.is_ref_dtype for t in inputs)
        self._num_args = len(inputs) - len(self._captured)
        name = f"__inference_{body.name}_{next(_uid)}"  # TF's name
        fdef = _function.graph_to_function_def(name, body, inputs, outputs)
        for key, value in attrs.items():
            fdef.attr[key].b = bool(value)
        body.name = name
        self._defined = _function.DefinedFunction(
            fdef, _function.FunctionBody(body, inputs, outputs), python_grad_func=self._gradient,
            dependencies=list(body._functions.values()))
        self._op_def = StatefulPartitionedCall if self._defined.is_stateful else PartitionedCall
        self._f_attr = _function.function_attr_value(name)
        self._out_types = list(self._defined.output_types)

    # -- TF's ConcreteFunction properties ----------------------------------------------------------
    @property
    def name(self) -> str:
        return self._defined.name

    @property
    def graph(self) -> _function.FuncGraph:
        return self._graph

    @property
    def inputs(self) -> list[Tensor]:
        """The body's argument placeholders (the tensor arguments, then the captures)."""
        return list(self._inputs)

    @property
    def outputs(self) -> list[Tensor]:
        return list(self._outputs)

    @property
    def captured_inputs(self) -> list[Tensor]:
        return list(self._captured)

    @property
    def structured_outputs(self) -> Any:
        """The returned structure with the body's output tensors in it."""
        return self._pack(self._outputs)

    @property
    def variables(self) -> list[Any]:
        """The variables the body reads or assigns (captured from the calling graph)."""
        captured = set(c for c in self._captured if isinstance(c, Tensor))
        found = [v for v in self._graph_variables() if _variable_tensors(v) & captured]
        eager = [c for c in self._captured if isinstance(c, EagerVariable)]
        return list(dict.fromkeys(self._hoisted_variables + found + eager))

    @property
    def trainable_variables(self) -> list[Any]:
        return [v for v in self.variables if getattr(v, "trainable", True)]

    @property
    def function_def(self) -> Any:
        return self._defined.definition

    def _graph_variables(self) -> list[Any]:
        outer = self._graph.outer_graph
        while isinstance(outer, _function.FuncGraph):
            outer = outer.outer_graph
        if outer is None:
            return []
        return list(outer.get_collection("variables")) + list(outer.get_collection("local_variables"))

    def _pack(self, flat: Sequence[Any]) -> Any:
        def fill(item: Any) -> Any:
            return flat[item.index] if isinstance(item, _OutputSlot) else item
        if nest.is_sequence(self._structure):
            return nest.pack_sequence_as(self._structure, [fill(v) for v in nest.flatten(self._structure)])
        return fill(self._structure)

    # -- calls -------------------------------------------------------------------------------------
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Calls the function on tensors matching structured_input_signature."""
        sig_args, sig_kwargs = self.structured_input_signature
        if len(args) > len(sig_args):
            raise TypeError(f"{self.name} takes {len(sig_args)} positional argument(s), got {len(args)}")
        tensors: list[Any] = []
        for i, spec in enumerate(sig_args):
            _match(spec, args[i] if i < len(args) else spec, tensors, self.name)
        for key in sorted(sig_kwargs):
            _match(sig_kwargs[key], kwargs.get(key, sig_kwargs[key]), tensors, self.name)
        return self.call_flat(tensors)

    def call_flat(self, tensor_args: Sequence[Any]) -> Any:
        """Adds the call op for these tensor arguments (in trace order) and returns the
        structured outputs."""
        if len(tensor_args) != self._num_args:
            raise TypeError(f"{self.name}: expected {self._num_args} tensor argument(s), got {len(tensor_args)}")
        specs = self._graph.inputs
        inputs = [convert_to_tensor(a, dtype=s.dtype) for a, s in zip(tensor_args, specs)]
        graph = _graph.get_default_graph()
        if self._defined.name not in graph._functions:
            _function.add_function(graph, self._defined)
        captured = [c.read_value() if isinstance(c, EagerVariable) else c for c in self._captured] \
            if self._reads_variables else self._captured
        if self._assigns and graph.executes_eagerly:
            # a body assigning a captured variable takes its reference: the call op typed by
            # the function's own signature (ref inputs) hands the variable itself to the body.
            # Under a tape, the forward function also returns what the backward one needs
            # (eager/forward_backward.py), so the gradient does not assign again.
            defined = self._defined
            if _tape.active():
                self._backward_function()
                assert self._split is not None
                defined = self._split.forward
                if defined.name not in graph._functions:
                    _function.add_function(graph, defined)
                _record_reference_reads(captured)
            result = _function.call_function(graph, defined, inputs + captured)
        else:
            # eagerly the function is named by a string: a hashable attr keeps the call's kernel
            # (and the body plan it compiles at its first run) in the eager kernel cache
            f = self.name if graph.executes_eagerly else self._f_attr
            result = apply_op(self._op_def, name=None, args=inputs + captured, Tout=self._out_types, f=f)
        if isinstance(result, Operation):
            outputs: list[Any] = list(result.outputs)
        elif isinstance(result, Tensor):
            outputs = [result]
        else:
            outputs = list(result)
        return self._pack(outputs)

    def __repr__(self) -> str:
        return f"<ConcreteFunction {self.name}>"

    # -- gradient ----------------------------------------------------------------------------------
    def _backward_function(self) -> tuple[_function.DefinedFunction, list[int]]:
        """The function computing the gradients of the float arguments from the arguments and
        the output gradients, built once by tf.gradients in the traced body itself (so loop and
        cond contexts made while tracing are there: TF 2's backward function)."""
        if self._backward is None:
            body = self._graph
            # an assigned variable's reference is differentiated too when the body is split: its
            # gradient is the variable's (what the body's reads of it contribute, as in TF 2)
            wrt = [i for i, t in enumerate(self._inputs)
                   if t.dtype.base_dtype.is_floating and (self._assigns or not t.dtype.is_ref_dtype)]
            first_gradient_op = len(body.get_operations())
            with body.as_default(), body.name_scope("gradients_of_call"):
                dys = [body.add_arg(f"dy_{k}", t.dtype.base_dtype, t.shape) for k, t in enumerate(self._outputs)]
                pairs = [(y, dy) for y, dy in zip(self._outputs, dys) if y.dtype.base_dtype.is_floating]
                xs = [self._inputs[i] for i in wrt]
                grads = gradients([y for y, _ in pairs], xs, grad_ys=[dy for _, dy in pairs]) if pairs and xs \
                    else [None] * len(xs)
                grads = [zeros_like(x) if g is None else g for x, g in zip(xs, grads)]
            if self._assigns:
                self._split = _forward_backward.split(self.name, body, self._defined.definition, first_gradient_op,
                                                      dys, grads, body._functions, self._gradient)
                self._backward = (self._split.backward, wrt)
                return self._backward
            name = f"__backward_{self.name}"
            fdef = _function.graph_to_function_def(name, body, self._inputs + dys, grads)
            defined = _function.DefinedFunction(
                fdef, _function.FunctionBody(body, self._inputs + dys, grads),
                dependencies=list(body._functions.values()))
            self._backward = (defined, wrt)
        return self._backward

    def _gradient(self, op: Any, *grads: Any) -> list[Any]:
        """The call op's gradient: a call of the backward function (None for arguments that
        are not floats or are variable references)."""
        n = len(self._outputs)
        backward, wrt = self._backward_function()
        if self._split is not None and len(op.outputs) != n + self._split.num_intermediates:
            # a plain call of a body that assigns: its backward function would run the
            # assignments again (only calls made under a tape return the intermediates)
            raise LookupError(f"No gradient defined for operation '{getattr(op, 'name', self.name)}': function "
                              f"{self.name} assigns a variable, so its backward function cannot run it again.")
        result: list[Any] = [None] * len(op.inputs)
        if not wrt:
            return result
        dys = [zeros_like(t) if g is None else g for t, g in zip(op.outputs[:n], grads[:n])]
        args = list(op.outputs[n:]) + dys if self._split is not None else list(op.inputs) + dys
        graph = _graph.get_default_graph()
        if backward.name not in graph._functions:
            _function.add_function(graph, backward)
        op_def = StatefulPartitionedCall if backward.is_stateful else PartitionedCall
        f = backward.name if graph.executes_eagerly else _function.function_attr_value(backward.name)
        out = apply_op(op_def, name=None, args=args, Tout=list(backward.output_types), f=f)
        out = [out] if isinstance(out, Tensor) else list(out)
        for i, g in zip(wrt, out):
            result[i] = g
        return result


def _record_reference_reads(captured: Sequence[Any]) -> None:
    """Tells the tapes that a call hands these variables' references to its body: a trainable
    variable is accessed, and the gradient of its reference is the variable's."""
    for c in captured:
        if c.dtype.is_ref_dtype:
            variable = owner_of(c._value)
            if variable is not None:
                if variable.trainable:
                    _tape.variable_accessed(variable)
                _tape.record_read(variable, c)


def _match(spec: Any, value: Any, tensors: list[Any], name: str) -> None:
    """Appends the values standing where `spec` holds TensorSpecs (a missing argument, given as
    its spec, is an error; Python values of the signature are fixed by the trace)."""
    if isinstance(spec, TensorSpec):
        if isinstance(value, TensorSpec):
            raise TypeError(f"{name}: missing a tensor argument for {spec}")
        tensors.append(value)
    elif nest.is_sequence(spec):
        if not nest.is_sequence(value) or len(nest.flatten(spec)) != len(nest.flatten(value)):
            raise TypeError(f"{name}: {value!r} does not match the structure of {spec!r}")
        items = sorted(spec) if isinstance(spec, dict) else range(len(spec))
        for k in items:
            _match(spec[k], value[k], tensors, name)


def _variable_tensors(v: Any) -> set[Any]:
    found = set()
    for attr in ("_variable", "_snapshot", "_ref_tensor"):
        t = getattr(v, attr, None)
        if isinstance(t, Tensor):
            found.add(t)
    for method in ("_ref", "value"):
        try:
            found.add(getattr(v, method)())
        except Exception:  # noqa: BLE001  (a variable kind without that accessor)
            pass
    return found
