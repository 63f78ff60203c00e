"""The one eager dispatch path: an op created while executing eagerly runs its registered
kernel at once (TF 1.15's eager/execute.py and the C++ EagerOperation/KernelAndDevice).

Ops reach it the way they reach a graph: every wrapper calls `apply_op`, which converts the
inputs and asks the default graph to create the node. In eager mode the default graph is an
`EagerGraph`, whose `_create_op_internal` does not add a node: it calls `execute`, which

1. looks up the kernel in a cache keyed by (op, attrs, input dtypes, input shapes). On a miss
   it builds a *template* node, with placeholder inputs of those dtypes and shapes, in a private
   scratch graph: the op's shape function runs once there (a shape error becomes TF eager's
   InvalidArgumentError) and the kernel builder receives the same `KernelContext` the executor
   gives it (runtime/graph_compiler.build_kernel), on the eager context's CPU device.
   Shapes are in the key because builders specialise on static shapes; values never are,
   since the template's inputs are placeholders. Stateful kernels (random ops) keep their
   state in the cached kernel, so repeated calls draw new numbers, as TF's cached eager
   kernels do;
2. calls the compute function with the input arrays (a `StepView` for kernels that need the
   step, a blocking continuation for asynchronous ones) and wraps the outputs in
   `EagerTensor`s (eager/tensor.py);
3. reports (op, inputs, outputs) to the active gradient tapes (eager/tape.py), which keep it
   only when an input is being watched.

A kernel's exception is raised as its TF error class (runtime/kernel_errors.py) from the
calling line. Ops with no eager meaning (placeholders) raise as TF does.

That is the general path. `apply_op` first hands the call to `EagerGraph._apply_op`, which runs
a call it has seen before from its *call plan* (call_plans.py: one dict lookup, then the
kernel), and otherwise takes the general path and plans the call from what it did.

For tf.function's tracer (a later part of issue 18): `execute(op_def, inputs, attrs)` is the
public entry, `EagerGraph` the graph to run eagerly in, and `kernel_cache_size()`/
`clear_kernel_cache()` expose the cache.
"""
from __future__ import annotations

import contextlib
import threading
from typing import Any, Optional, Sequence

import numpy as np

from tensorweave.eager import call_plans as _plans
from tensorweave.eager import operators as _operators  # noqa: F401  (EagerTensor's operators)
from tensorweave.eager import tape as _tape
from tensorweave.eager.call_plans import as_eager, eager_error
from tensorweave.eager import tensor as _tensor_mod
from tensorweave.eager.tensor import EagerTensor
from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import scopes
from tensorweave.framework.device_spec import DeviceSpec
from tensorweave.framework.graph import Graph, Operation
from tensorweave.framework.op_def import OpDef, get_op_def
from tensorweave.framework.op_def_library import build_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.runtime.device import Device
from tensorweave.runtime.colocation import ref_argument_flags
from tensorweave.runtime.graph_compiler import build_kernel
from tensorweave.runtime.step_context import StepContext

# Ops that only make sense in a graph (TF raises the same RuntimeError from their wrappers).
_GRAPH_ONLY = {
    "Placeholder": "tf.placeholder() is not compatible with eager execution.",
    "PlaceholderV2": "tf.placeholder() is not compatible with eager execution.",
    "VariableV2": "tf.Variable's graph ops are not compatible with eager execution: use tf.Variable.",
    "Variable": "tf.Variable's graph ops are not compatible with eager execution: use tf.Variable.",
}
_MAX_CACHED_KERNELS = 8192


class _EagerDevice:
    """The eager context's CPU device, made once (its resource manager holds eager state)."""

    device: Optional[Device] = None
    lock = threading.Lock()

    @classmethod
    def get(cls) -> Device:
        if cls.device is None:
            with cls.lock:
                if cls.device is None:
                    cls.device = Device(DeviceSpec("localhost", 0, 0, "CPU", 0), np, 1)
        return cls.device


class _Kernel:
    """A cached kernel: the template node it was built from and how to call it."""

    __slots__ = ("op", "compute", "mode", "out_dtypes", "n_out", "deref")

    def __init__(self, op: Operation, compute: Any) -> None:
        self.op = op
        # A variable's reference passed where the op takes a value is read (TF's dereference).
        arg_is_ref = ref_argument_flags(op)
        self.deref = tuple(i for i, t in enumerate(op.inputs) if t.dtype.is_ref_dtype and not arg_is_ref[i])
        self.compute = compute
        self.mode = op.op_def.kernel_call.value  # 0 plain, 1 step, 2 async
        self.out_dtypes = [t.dtype for t in op._outputs]
        self.n_out = len(op._outputs)


_KERNELS: dict[Any, _Kernel] = {}
_SCRATCH: list[Graph] = []
_BUILD_LOCK = threading.RLock()


def kernel_cache_size(context: Optional[Graph] = None) -> int:
    """How many kernels `context` (an EagerGraph; default: the process-wide cache) holds."""
    return len(context._kernels if context is not None else _KERNELS)  # type: ignore[attr-defined]


def clear_kernel_cache(context: Optional[Graph] = None) -> None:
    with _BUILD_LOCK:
        (context._kernels if context is not None else _KERNELS).clear()  # type: ignore[attr-defined]
        if context is not None:
            context._plans.clear()  # type: ignore[attr-defined]
        _SCRATCH.clear()


class _Unhashable(Exception):
    pass


def _freeze(value: Any) -> Any:
    kind = type(value)
    if kind in (int, float, bool, str, bytes) or value is None or isinstance(value, _dtypes.DType):
        return value
    if kind is list or kind is tuple:
        return tuple(_freeze(v) for v in value)
    if kind is TensorShape:
        return ("shape", None if value.ndims is None else tuple(value.as_list()))
    raise _Unhashable


def _cache_key(op_def: OpDef, inputs: Sequence[EagerTensor], attrs: dict[str, Any]) -> Any:
    try:
        frozen = tuple((k, _freeze(v)) for k, v in attrs.items())
    except _Unhashable:
        return None
    return (op_def, frozen, tuple((t._dtype, t._value.shape if type(t._value) is np.ndarray else _shape_of(t))
                                  for t in inputs))


def _shape_of(t: EagerTensor) -> Any:
    """The shape key of an input that is not an array: a variable's reference (its cell's
    array), a scalar, a variant."""
    if t._dtype.is_ref_dtype:
        return tuple(t.shape.as_list()) if t.shape.ndims is not None else None
    return np.shape(t._value)


def _scratch_graph() -> Graph:
    if not _SCRATCH or len(_SCRATCH[0]._nodes) > 4 * _MAX_CACHED_KERNELS:
        _SCRATCH[:] = [Graph()]
    return _SCRATCH[0]


def _build(op_def: OpDef, inputs: Sequence[EagerTensor], attrs: dict[str, Any],
           out_dtypes: Sequence[_dtypes.DType], library: Optional[Graph]) -> _Kernel:
    """The template node and its kernel (step 1 of the module docstring)."""
    placeholder = get_op_def("Placeholder")
    with _BUILD_LOCK:
        graph = _scratch_graph()
        if library is not None:  # functions called by name (Defun, If, PartitionedCall)
            for function in library._functions.values():
                graph._add_function(function)
        args = []
        for t in inputs:
            dt = t._dtype
            args.append(graph._create_op_internal(placeholder, [], {"dtype": dt, "shape": t.shape},
                                                  [dt], "input")._outputs[0])
        try:
            # internal ops' names start with "_", which a node name may not
            op = graph._create_op_internal(op_def, args, dict(attrs), out_dtypes, op_def.name.lstrip("_"))
        except ValueError as err:  # the shape function rejected the inputs
            raise errors.InvalidArgumentError(None, None, f"{err} [Op:{op_def.name}]") from None
        try:
            compute = build_kernel(op, _EagerDevice.get())
        except errors.OpError as err:
            raise type(err)(None, None, f"{err.message} [Op:{op_def.name}]") from None
        return _Kernel(op, compute)


def _kernel_for(op_def: OpDef, inputs: Sequence[EagerTensor], attrs: dict[str, Any],
                out_dtypes: Sequence[_dtypes.DType], context: Optional[Graph], build: bool = True) -> Any:
    """The cached kernel (built on a miss; with build=False, None on a miss or an uncacheable key)."""
    key = _cache_key(op_def, inputs, attrs)
    library = context if context is not None and context._functions else None
    if key is None:
        return _build(op_def, inputs, attrs, out_dtypes, library) if build else None
    cache = context._kernels if context is not None else _KERNELS  # type: ignore[attr-defined]
    kernel = cache.get(key)
    if kernel is None and build:
        kernel = _build(op_def, inputs, attrs, out_dtypes, library)
        if len(cache) >= _MAX_CACHED_KERNELS:
            cache.clear()
        cache[key] = kernel
    return kernel


class _AsyncResult:
    """A continuation an asynchronous kernel calls; the caller waits for it (eager ops block)."""

    def __init__(self) -> None:
        self.event = threading.Event()
        self.value: Any = None

    def done(self, value: Any) -> None:
        self.value = value
        self.event.set()


def _call(kernel: _Kernel, args: list[Any]) -> Any:
    mode = kernel.mode
    if mode == 0:
        return kernel.compute(*args)
    step = StepContext([])
    if mode == 1:
        return kernel.compute(step, *args)
    result = _AsyncResult()
    kernel.compute(step, result.done, *args)
    result.event.wait()
    if isinstance(result.value, BaseException):
        raise result.value
    return result.value


def _check_inputs(op_def: OpDef, inputs: Sequence[Any]) -> None:
    for t in inputs:
        if type(t) is not EagerTensor:
            raise errors.InvalidArgumentError(
                None, None, f"An op outside of the function building code is being passed a graph "
                f"tensor ({t!r}) while executing eagerly [Op:{op_def.name}]")


def execute(op_def: OpDef, inputs: Sequence[EagerTensor], attrs: dict[str, Any],
            out_dtypes: Sequence[_dtypes.DType], context: Optional[Graph] = None) -> list[EagerTensor]:
    """Runs `op_def`'s kernel on eager inputs now; returns its outputs as EagerTensors.
    `context`: the EagerGraph running it (its kernel cache, and the function library naming
    the functions the op calls); None uses a process-wide cache."""
    name = op_def.name
    if name == "Const":
        value = attrs["value"]
        if hasattr(value, "materialize"):
            value = value.materialize()
        return [EagerTensor(np.array(value), attrs["dtype"])]  # a copy: the caller's array may change
    message = _GRAPH_ONLY.get(name)
    if message is not None:
        raise RuntimeError(message)
    if op_def.control_flow is not None:
        raise errors.UnimplementedError(None, None, f"{name} is a graph control-flow primitive: in eager "
                                        "mode use tf.cond and tf.while_loop, which run as Python")
    _check_inputs(op_def, inputs)
    kernel = _kernel_for(op_def, inputs, attrs, out_dtypes, context)
    args = [t._value for t in inputs]
    for i in kernel.deref:
        args[i] = np.array(args[i].read(), copy=True)
    try:
        result = _call(kernel, args)
    except Exception as err:  # noqa: BLE001  (raised as its TF error class)
        raise eager_error(err, name) from None
    n = kernel.n_out
    dts = kernel.out_dtypes
    if n == 1:
        outputs = [as_eager(result, dts[0])]
    elif n == 0:
        outputs = []
    else:
        outputs = [as_eager(v, dt) for v, dt in zip(result, dts)]
    if _tape.active():
        _tape.record(op_def, attrs, inputs, outputs)
    return outputs


class EagerOperation(Operation):
    """What `apply_op` gets back in eager mode, and what a tape hands a gradient function:
    the op's definition, attrs, inputs and outputs, outside any graph."""

    __slots__ = ()

    def __init__(self, graph: Graph, op_def: OpDef, inputs: Sequence[Any], attrs: dict[str, Any],
                 outputs: list[EagerTensor]) -> None:
        self._graph = graph
        self._name = op_def.name
        self._op_def = op_def
        self._attrs = attrs
        self._inputs = tuple(inputs)
        self._control_inputs = []
        self._control_outputs = []
        self._outputs = outputs
        self._device = _tensor_mod.CPU_DEVICE
        self._assigned_device = _tensor_mod.CPU_DEVICE
        self._id = 0
        self._traceback = None
        self._control_flow_context = None


class _EagerNameScopes(scopes.NameScopeStack):
    """TF's eager context makes no name unique (`with tf.name_scope("x")` twice is "x/" both
    times, a summary's tag is its name): no graph holds the names, so none can clash."""

    def unique_name(self, name: str, mark_as_used: bool = True) -> str:
        return f"{self.current}/{name}" if self.current else name


class _EagerNameScope:
    """A name scope while executing eagerly. As in TF's eager mode, it names without making
    names unique (every `tf.matmul` of a loop is under "MatMul/", none under "MatMul_1000/",
    and no name is remembered) and checks nothing."""

    __slots__ = ("_stack", "_name", "_old")

    def __init__(self, stack: Any, name: Optional[str]) -> None:
        self._stack = stack
        self._name = name

    def __enter__(self) -> str:
        stack, name = self._stack, self._name
        old = self._old = stack.current
        if not name:
            new = ""
        elif name[-1] == "/":
            new = name[:-1]
        else:
            new = f"{old}/{name}" if old else name
        stack.current = new
        return f"{new}/" if new else ""

    def __exit__(self, *exc: Any) -> None:
        self._stack.current = self._old


class EagerGraph(Graph):
    """The eager context's graph: creating an op runs it (module docstring). Name scopes,
    collections and the seed work as in a graph; no node is kept."""

    executes_eagerly = True

    def __init__(self) -> None:
        super().__init__()
        # This context's kernels: stateful ones (random draws) continue per context, as TF's.
        self._kernels: dict[Any, _Kernel] = {}
        self._name_stack = _EagerNameScopes()
        # Call plans (call_plans.py) over those kernels: dropped whenever the kernels are.
        self._plans: dict[Any, _plans.Plan] = {}
        _tensor_mod._EAGER_GRAPH[:] = [self]

    # Graph's getter, with a setter that also drops the kernels.
    @Graph.seed.setter
    def seed(self, seed: Optional[int]) -> None:
        # TF's context drops its cached kernels when the global seed is set: draws restart.
        self._seed = seed
        self._kernels.clear()
        self._plans.clear()

    def name_scope(self, name: Optional[str]) -> Any:
        return _EagerNameScope(self._name_stack, name)

    def _apply_op(self, op_def: OpDef, name: Optional[str], kwargs: dict[str, Any]) -> Any:
        """apply_op while this graph is the default: a planned call runs its plan; another
        takes the general path, which then plans the call when it can (call_plans.py)."""
        key, values = _plans.plan_key(op_def, kwargs)
        if key is None:
            if op_def.name == "Const" and len(kwargs) == 2:
                value, dtype = kwargs.get("value"), kwargs.get("dtype")
                if type(value) is np.ndarray and type(dtype) is _dtypes.DType and not dtype.is_ref_dtype:
                    # what build_op and execute make of an array constant, without the checks
                    # an array and a dtype always pass
                    self._version += 1
                    out = EagerTensor(np.array(value), dtype)
                    out._op = _tensor_mod.OpRecipe(self, op_def, {"value": value, "dtype": dtype})
                    return out
            return build_op(op_def, name, kwargs)
        try:
            plan = self._plans.get(key)
        except TypeError:  # an unhashable attr value (a list): not plannable
            return build_op(op_def, name, kwargs)
        if plan is not None:
            return _plans.run(plan, self, values)
        arg_names = [k for k in kwargs if k in _plans.SPECS[op_def]]  # type: ignore[operator]
        capture: list[Any] = []
        result = build_op(op_def, name, kwargs, capture)
        if capture and capture[0][0] is self:
            _, flat_inputs, attrs = capture[0]
            kernel = _kernel_for(op_def, flat_inputs, attrs, (), self, build=False)
            if kernel is not None and kernel.mode == 0 and not kernel.deref:
                plan = _plans.make_plan(self, op_def, values, arg_names, flat_inputs, attrs,
                                        kernel.compute, kernel.out_dtypes)
                if plan is not None:
                    if len(self._plans) >= _MAX_CACHED_KERNELS:
                        self._plans.clear()
                    self._plans[key] = plan
        return result

    def _create_op_internal(self, op_def: OpDef, inputs: Sequence[Any], attrs: dict[str, Any],
                            output_dtypes: Sequence[_dtypes.DType], name: Optional[str] = None,
                            control_inputs: Sequence[Operation] = ()) -> Operation:
        outputs = execute(op_def, inputs, attrs, output_dtypes, self)
        self._version += 1  # op seeds (random_seed.get_seed) count ops run, as TF's eager context
        op = EagerOperation(self, op_def, (), attrs, outputs)
        for t in outputs:
            t._op = op  # `t.op.type` and `t.op.graph` for wrappers; no inputs: no history kept
        return op

    @staticmethod
    def _eager_constant(array: np.ndarray) -> EagerTensor:
        """The tensor of a converted Python or NumPy value (ops/array/constant_op's factory); a
        copy, since the caller's array may change later."""
        return EagerTensor(np.array(array), _dtypes.from_numpy(array.dtype))

    def as_graph_element(self, obj: Any, allow_tensor: bool = True, allow_operation: bool = True) -> Any:
        if isinstance(obj, (EagerTensor, Operation)):
            return obj
        return super().as_graph_element(obj, allow_tensor, allow_operation)

    def control_dependencies(self, control_inputs: Optional[Sequence[Any]]) -> Any:
        # Eager ops run in program order: control dependencies have nothing to add (as in TF).
        return super().control_dependencies(None)

    def colocate_with(self, op: Any, ignore_existing: bool = False) -> Any:
        return contextlib.nullcontext()  # one device: nothing to colocate

    def finalize(self) -> None:
        pass  # there is no graph to freeze


def _stand_in_op(t: EagerTensor) -> EagerOperation:
    return EagerOperation(_tensor_mod._eager_graph_of(), get_op_def("Const"), (),
                          {"value": t._value, "dtype": t._dtype}, [t])


_tensor_mod._OP_FACTORY[:] = [_stand_in_op, lambda graph, op_def, attrs, outputs: EagerOperation(
    graph, op_def, (), attrs, outputs)]


def is_eager_graph(graph: Any) -> bool:
    return getattr(graph, "executes_eagerly", False)
