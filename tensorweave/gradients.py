"""`tf.gradients`: the backward pass as graph extension (white paper 4.1; OSDI 4.1).

From the ops between `xs` and `ys`, walked in reverse topological order, each op's registered
gradient function receives the op and the gradients of its outputs and returns the gradients
of its inputs as new graph nodes. A tensor consumed several times gets the sum of its partial
gradients (AddN, or IndexedSlices concatenation for sparse ones). Broadcasting is undone here,
once, for every op whose definition says it broadcasts: the gradient is summed down to the
input's shape.
"""
from __future__ import annotations

import collections
import contextlib
import heapq
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework.graph import Operation, Tensor, get_default_graph
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.op_def import NOT_DIFFERENTIABLE
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array as array_ops
from tensorweave.ops import math as math_ops
from tensorweave.ops.control_flow.contexts import entered, is_loop_exit, is_loop_switch
from tensorweave.ops.control_flow.grad_state import ControlFlowState, zeros_for_output

# Each family's gradients register on import (as TF's gradients_impl imports its *_grad modules).
from tensorweave.ops.array import grad as _array_grad  # noqa: F401
from tensorweave.ops.control_flow import grad as _control_flow_grad  # noqa: F401
from tensorweave.ops.debugging import grad as _debugging_grad  # noqa: F401
from tensorweave.ops.linalg import grad as _linalg_grad  # noqa: F401
from tensorweave.ops.math import grad as _math_grad  # noqa: F401
from tensorweave.ops.nn import grad as _nn_grad  # noqa: F401
from tensorweave.ops.sparse import grad as _sparse_grad  # noqa: F401
from tensorweave.ops.image import grad as _image_grad  # noqa: F401
from tensorweave.ops.functional import grad as _functional_grad  # noqa: F401
from tensorweave.framework.op_def import registered_ops

__all__ = ["gradients", "RegisterGradient", "NoGradient", "NotDifferentiable", "AggregationMethod",
           "UnconnectedGradients", "hessians"]

_CUSTOM_GRADIENTS: dict[str, Any] = {}


class RegisterGradient:
    """Decorator registering a gradient function under a name, for `gradient_override_map`
    (or for an op type that has no gradient yet)."""

    def __init__(self, op_type: str) -> None:
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string")
        self._op_type = op_type

    def __call__(self, fn: Callable) -> Callable:
        built_in = registered_ops().get(self._op_type)
        if self._op_type in _CUSTOM_GRADIENTS or (built_in is not None and built_in.gradient_fn is not None):
            raise KeyError(f"Registering two gradient with name '{self._op_type}'!")
        _CUSTOM_GRADIENTS[self._op_type] = fn
        return fn


def NotDifferentiable(op_type: str) -> None:  # noqa: N802  (TF's name)
    """Marks `op_type` as having no gradient (its inputs get None)."""
    _CUSTOM_GRADIENTS[op_type] = NOT_DIFFERENTIABLE


NoGradient = NotDifferentiable


class UnconnectedGradients:
    """What tf.gradients returns for an x that no y depends on: None (TF's default) or zeros."""

    NONE = "none"
    ZERO = "zero"

    @staticmethod
    def check(value: Any) -> str:
        value = getattr(value, "value", value)  # also an enum member with a .value
        if value not in ("none", "zero"):
            raise ValueError(f"Unknown value for unconnected_gradients: {value!r}")
        return value


class AggregationMethod:
    ADD_N = 0
    DEFAULT = ADD_N
    EXPERIMENTAL_TREE = 1
    EXPERIMENTAL_ACCUMULATE_N = 2


def gradient_function(op: Operation) -> Any:
    """The gradient function for `op`: an override from gradient_override_map, a function
    registered with RegisterGradient, or the op definition's own."""
    override = op._attrs.get("_gradient_op_type")
    if override is not None:
        if override not in _CUSTOM_GRADIENTS:
            raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {override}): "
                              f"gradient_override_map names {override!r}, which no "
                              f"tf.RegisterGradient(\"{override}\") registered.")
        return _CUSTOM_GRADIENTS[override]
    fn = _CUSTOM_GRADIENTS.get(op.type)
    if fn is not None:
        return fn
    return op.op_def.gradient_fn


def _as_list(x: Any) -> list[Any]:
    return list(x) if isinstance(x, (list, tuple)) else [x]


def _as_tensor(x: Any, as_ref: bool = False) -> Tensor:
    if isinstance(x, (Tensor, IndexedSlices)):
        return x  # type: ignore[return-value]
    return convert_to_tensor(x, as_ref=as_ref)


def _backpropagatable(t: Tensor) -> bool:
    """Gradients flow only through floating, complex and handle outputs (a loop's boolean
    predicate is never on a gradient path)."""
    dt = t.dtype.base_dtype
    return dt.is_floating or dt.is_complex or dt.name in ("resource", "variant")


def _between_ops(ys: Sequence[Tensor], xs: Sequence[Tensor], stop: set[Operation]) -> set[Operation]:
    """Ops on some path from an x to a y."""
    reached: set[Operation] = set()
    stack = [x.op for x in xs]
    while stack:
        op = stack.pop()
        if op in reached:
            continue
        reached.add(op)
        for out in op._outputs:
            if _backpropagatable(out):
                stack.extend(c for c in out._consumers if c not in reached)
    between: set[Operation] = set()
    stack = [y.op for y in ys]
    seen: set[Operation] = set()
    while stack:
        op = stack.pop()
        if op in seen:
            continue
        seen.add(op)
        if op in reached:
            between.add(op)
            if op not in stop:
                stack.extend(t.op for t in op.inputs)
    return between


def _pending_counts(between: set[Operation], stop: set[Operation]) -> dict[Operation, int]:
    """For each op between, how many of its outputs' consumers (input edges) are between."""
    pending: dict[Operation, int] = collections.defaultdict(int)
    for op in between:
        if op in stop:
            continue
        for t in op.inputs:
            if t.op in between:
                pending[t.op] += 1
    return pending


def _trainable(t: Tensor) -> bool:
    dt = t.dtype.base_dtype
    return dt.is_floating or dt.is_complex


def gradients(ys: Any, xs: Any, grad_ys: Any = None, name: str = "gradients",
              colocate_gradients_with_ops: bool = False, gate_gradients: bool = False,
              aggregation_method: Any = None, stop_gradients: Any = None,
              unconnected_gradients: Any = "none") -> list[Any]:
    """Symbolic partial derivatives of sum(ys) with respect to each x in xs.

    Through tf.while_loop the backward pass is itself a loop (OSDI 4.1): see
    ops/control_flow/grad_state.py."""
    if get_default_graph().executes_eagerly:
        raise RuntimeError("tf.gradients is not supported when eager execution is enabled. Use "
                           "tf.GradientTape instead.")
    ys = [_as_tensor(y) for y in _as_list(ys)]
    xs = [_as_tensor(x, as_ref=True) for x in _as_list(xs)]
    grad_ys = [None] * len(ys) if grad_ys is None else _as_list(grad_ys)
    if len(grad_ys) != len(ys):
        raise ValueError(f"Passed {len(grad_ys)} grad_ys for {len(ys)} ys")
    stop_ops = {_as_tensor(s).op for s in _as_list(stop_gradients)} if stop_gradients is not None else set()
    unconnected = UnconnectedGradients.check(unconnected_gradients)
    graph = ys[0].graph
    for t in xs + ys:
        if t.graph is not graph:
            raise ValueError(f"{t} must be from the same graph as {ys[0]}.")
    with graph.as_default(), graph.name_scope(name):
        grads = _initial_grads(graph, ys, grad_ys, array_ops)
        between = _between_ops(ys, xs, stop_ops)
        loop_state = ControlFlowState.maybe_create(between)
        pending = _pending_counts(between, stop_ops)
        queue = _ReadyQueue(grads, loop_state)
        queue.start(between, pending, {y.op for y in ys})
        while queue:
            op = queue.pop()
            with graph.name_scope(op.name + "_grad"):
                with _grad_context(loop_state, op, before=True):
                    out_grads = [aggregate_gradients(grads.get(t)) for t in op._outputs]
                for t, g in zip(op._outputs, out_grads):
                    if g is not None:
                        grads[t] = [g]
                if op in stop_ops:
                    continue
                with _grad_context(loop_state, op, before=False):
                    _backprop_op(op, out_grads, grads, array_ops, colocate_gradients_with_ops, loop_state)
            for t in op.inputs:
                if t.op in between:
                    pending[t.op] -= 1
                    queue.input_done(t.op, pending[t.op])
        results = []
        for x in xs:
            g = aggregate_gradients(grads.get(x))
            if g is None and unconnected == UnconnectedGradients.ZERO:
                with graph.name_scope(None):
                    g = array_ops.zeros_like(x)
            results.append(g)
        return results


def _initial_grads(graph: Any, ys: list[Tensor], grad_ys: list[Any], array_ops: Any) -> dict[Tensor, list[Any]]:
    """The gradients of the ys: grad_ys, or ones."""
    grads: dict[Tensor, list[Any]] = collections.defaultdict(list)
    for y, gy in zip(ys, grad_ys):
        if gy is None:
            if y.dtype.base_dtype.is_complex:
                raise TypeError(f"Gradients of complex tensors ({y}) must set grad_ys (y.dtype = "
                                f"{y.dtype.base_dtype.name})")
            with graph.name_scope("grad_ys_0" if len(ys) == 1 else None):
                gy = array_ops.ones_like(y)
        grads[y].append(_as_tensor(gy) if not isinstance(gy, IndexedSlices) else gy)
    return grads


def _grad_context(loop_state: Any, op: Operation, before: bool) -> Any:
    """Builds `op`'s gradient ops in its loop's backward context (nothing to do without loops)."""
    if loop_state is None:
        return contextlib.nullcontext()
    return entered(loop_state.context_for(op, before))


class _ReadyQueue:
    """Ops whose gradients can be computed, latest-created first (reverse creation order is a
    reverse topological order of the forward graph). With loops: a loop Switch is visited once
    per consumer side (Exit, then body), and a loop's Exits wait for one another, since the
    backward loop needs every loop variable (a zero gradient for those no gradient reaches)."""

    def __init__(self, grads: dict, loop_state: Any) -> None:
        self._heap: list[tuple[int, int, Operation]] = []
        self._grads = grads
        self._loops = loop_state

    def __bool__(self) -> bool:
        return bool(self._heap)

    def push(self, op: Operation) -> None:
        heapq.heappush(self._heap, (-op._id, op._id, op))

    def pop(self) -> Operation:
        return heapq.heappop(self._heap)[2]

    def start(self, between: set[Operation], pending: dict, y_ops: set[Operation]) -> None:
        loops = self._loops
        for op in between:
            if pending[op] == 0 and (loops is None or op in y_ops or not self._waits(op)):
                self.push(op)
        if loops is not None:
            for y in loops.process_unused_loop_exits(pending, y_ops):
                if _trainable(y):
                    self._grads[y] = [loops.zeros_for_exit(y)]
                self.push(y.op)

    def _waits(self, op: Operation) -> bool:
        return is_loop_exit(op) and self._loops.grad_state_of(op, before=False) is not None

    def input_done(self, op: Operation, left: int) -> None:
        """One more consumer of `op`'s outputs has had its gradient computed."""
        loops = self._loops
        if loops is None:
            if left == 0:
                self.push(op)
            return
        if left != 0 and not is_loop_switch(op):
            return
        if not is_loop_exit(op):
            self.push(op)
            return
        for y, needs_zero in loops.exit_arrived(op, lambda t: any(g is not None for g in self._grads.get(t, []))):
            if needs_zero and _trainable(y):
                self._grads[y] = [loops.zeros_for_exit(y)]
            self.push(y.op)


def _backprop_op(op: Operation, out_grads: list[Any], grads: dict, array_ops: Any, colocate: bool,
                 loop_state: Any = None) -> None:
    if all(g is None for g in out_grads) or not op.inputs:
        return
    fn = gradient_function(op)
    if fn is NOT_DIFFERENTIABLE:
        return
    if fn is None:
        raise LookupError(f"No gradient defined for operation '{op.name}' (op type: {op.type}). "
                          f"Register one with @{op.type}.gradient on its OpDef (or "
                          f"tf.RegisterGradient(\"{op.type}\") for your own), mark it with "
                          f"{op.type}.not_differentiable(), or cut the path with tf.stop_gradient.")
    filled = []
    for t, g in zip(op._outputs, out_grads):
        if g is None and len(op._outputs) > 1 and t.dtype.base_dtype.is_floating:
            g = zeros_for_output(op, len(filled), loop_state)
        filled.append(g)
    ctx = op.graph.colocate_with(op) if colocate else contextlib.nullcontext()
    with ctx, _compile_scope(op):
        in_grads = _as_list(fn(op, *filled))
        if len(in_grads) != len(op.inputs):
            raise ValueError(f"Num gradients {len(in_grads)} generated for op {op.name} ({op.type}) do "
                             f"not match num inputs {len(op.inputs)}")
        for t, g in input_gradients(op.inputs, in_grads, op.op_def.registration.broadcasts):
            grads[t].append(g)


def _compile_scope(op: Operation) -> Any:
    """The gradient of an op created in a jit_scope is compiled too (TF's _MaybeCompile): in
    the op's _XlaScope, or in a scope of its own per gradients() call when the op asked for
    separate_compiled_gradients."""
    attrs = op._attrs
    if not attrs.get("_XlaCompile"):
        return contextlib.nullcontext()
    scope = attrs.get("_XlaScope", "")
    if attrs.get("_XlaSeparateCompiledGradients"):
        scope = f"{scope}_grad_{op.graph.get_name_scope().rsplit('/', 1)[0]}"
    return op.graph._attr_scope({"_XlaCompile": True, "_XlaScope": scope})


def input_gradients(inputs: Sequence[Any], in_grads: Sequence[Any], broadcasts: bool) -> list[tuple[Any, Any]]:
    """(input, its gradient) for the inputs that take one (graph and eager backprop alike): integer
    and boolean tensors carry no gradient; a broadcasting op's dense gradients are summed back to
    their input's shape."""
    out = []
    for t, g in zip(inputs, in_grads):
        if g is None or not (t.dtype.base_dtype.is_floating or t.dtype.base_dtype.is_complex):
            continue
        if broadcasts and not isinstance(g, IndexedSlices):
            g = unbroadcast(g, t)
        out.append((t, g))
    return out


def unbroadcast(grad: Tensor, x: Tensor) -> Tensor:
    """Sums `grad` down to the shape of `x` (undoing NumPy broadcasting in the forward op)."""
    gs, xs = grad.shape, x.shape
    if gs.is_fully_defined() and xs.is_fully_defined():
        g_dims, x_dims = gs.as_list(), xs.as_list()
        if g_dims == x_dims:
            return grad
        lead = len(g_dims) - len(x_dims)
        axes = list(range(lead)) + [lead + i for i, d in enumerate(x_dims) if d == 1 and g_dims[lead + i] != 1]
        summed = math_ops.reduce_sum(grad, axes) if axes else grad
        return array_ops.reshape(summed, x_dims)
    shape_x = array_ops.shape(x)
    r0, _ = math_ops.broadcast_gradient_args(shape_x, array_ops.shape(grad))
    return array_ops.reshape(math_ops.reduce_sum(grad, r0), shape_x)


def aggregate_gradients(parts: Optional[list[Any]]) -> Any:
    """The sum of one tensor's gradient contributions (graph and eager backprop alike): None when
    there are none, IndexedSlices concatenated while all parts are sparse, else a dense add_n."""
    if not parts:
        return None
    parts = [p for p in parts if p is not None]
    if not parts:
        return None
    if len(parts) == 1:
        return parts[0]
    if all(isinstance(p, IndexedSlices) for p in parts):
        return IndexedSlices(array_ops.concat([p.values for p in parts], 0),
                             array_ops.concat([p.indices for p in parts], 0), parts[0].dense_shape)
    dense = [convert_to_tensor(p) if isinstance(p, IndexedSlices) else p for p in parts]
    return math_ops.add_n(dense)


def hessians(ys: Any, xs: Any, name: str = "hessians", **kwargs: Any) -> list[Tensor]:
    """Second derivatives of sum(ys) with respect to each x (flattened Jacobian of the gradient)."""
    results = []
    for x in _as_list(xs):
        g = gradients(ys, x, **kwargs)[0]
        flat = array_ops.reshape(g, [-1])
        n = flat.shape[0].value
        if n is None:
            raise ValueError("hessians needs a statically known number of elements")
        rows = [gradients(flat[i], x, **kwargs)[0] for i in range(n)]
        results.append(array_ops.reshape(array_ops.stack(rows), x.shape.as_list() + x.shape.as_list()))
    return results

