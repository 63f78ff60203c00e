"""The op definition registry (DESIGN.md "Defining an op once").

Each op is declared once with `define_op`, using TensorFlow's signature notation:

    MatMul = define_op(
        "MatMul",
        inputs=["a: T", "b: T"], outputs=["product: T"],
        attrs=["transpose_a: bool = false", "transpose_b: bool = false",
               "T: {float16, float32, float64, int32, int64, complex64, complex128}"],
        shape_fn=_matmul_shape, expensive=True)

and everything else about the op hangs off the returned `OpDef`, in the op family's module:
kernels (`@MatMul.kernel()`), its gradient (`@MatMul.gradient` or `not_differentiable`),
and the public TF1 wrapper that calls `apply_op`.

A kernel is registered as a *builder*: `build(ctx: KernelContext) -> compute`, run once per
(session, node) when a step plan is compiled. `compute(*input_values)` returns the output
value (one-output ops) or a tuple of outputs. Builders receive the device's array namespace
as `ctx.xp` (NumPy on CPU, CuPy on GPU), so one builder serves every device type with that
namespace. Ops that need the running step (rendezvous, cancellation, resources) declare
`needs_step=True` and get the step context as first argument; asynchronous kernels declare
`is_async=True` and are called as `compute(step, done, *inputs)`.
"""
from __future__ import annotations

import ast
import dataclasses
import re
import sys
from types import MappingProxyType
from typing import Any, Callable, Mapping, Optional, Sequence, Union

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.kernel_contract import (ConstantValueFn, ControlFlowKind, KernelBuilder, KernelCall,
                                                   PartialShapeFn)
from tensorweave.framework.tensor_shape import TensorShape, as_shape

_NO_DEFAULT = object()
_TYPE_ALIASES = {"float": "float32", "double": "float64", "half": "float16"}  # REGISTER_OP spellings

_TYPE_GROUPS: dict[str, tuple[_dtypes.DType, ...]] = {
    "numbertype": _dtypes.NUMBERS,
    "realnumbertype": _dtypes.REALS,
    "floatingtype": _dtypes.FLOATS,
    "quantizedtype": (),
    "alltypes": _dtypes.ALL_TYPES,
    "integertype": _dtypes.INTEGERS,
}


@dataclasses.dataclass(frozen=True)
class ArgDef:
    """One input or output of an op: its element type is fixed, given by a type attr, or a
    list given by a list(type) attr; `number_attr` makes it a list of N same-typed tensors."""

    name: str
    fixed_dtype: Optional[_dtypes.DType] = None
    type_attr: Optional[str] = None
    type_list_attr: Optional[str] = None
    number_attr: Optional[str] = None
    is_ref: bool = False

    @property
    def is_list(self) -> bool:
        return self.number_attr is not None or self.type_list_attr is not None


@dataclasses.dataclass(frozen=True)
class AttrDef:
    """An attribute: kind is TF's attr type ('type', 'int', 'list(int)', 'shape', ...)."""

    name: str
    kind: str
    default: Any = _NO_DEFAULT
    allowed: Optional[tuple[Any, ...]] = None
    minimum: Optional[int] = None

    @property
    def has_default(self) -> bool:
        return self.default is not _NO_DEFAULT


@dataclasses.dataclass(frozen=True)
class KernelDef:
    """A kernel builder registered for a set of device types (None: every array device)."""

    build: KernelBuilder
    device_types: Optional[tuple[str, ...]] = None
    dtypes: Optional[tuple[_dtypes.DType, ...]] = None


class NotDifferentiable:
    """Marks an op whose outputs carry no gradient (TF's ops.NotDifferentiable)."""

    def __repr__(self) -> str:
        return "NOT_DIFFERENTIABLE"


NOT_DIFFERENTIABLE = NotDifferentiable()

GradientFn = Callable[..., Any]
"""`fn(op, *output_grads) -> list of input gradients (None where an input gets none)`."""


@dataclasses.dataclass(eq=False)
class OpRegistration:
    """What an op family attaches to a declaration after `define_op`: kernels, gradient and
    graph-construction-time rules. Filled while the family's modules are imported, read-only
    after; kept apart from `OpDef` so the signature itself stays frozen."""

    kernels: list[KernelDef] = dataclasses.field(default_factory=list)
    gradient: Union[GradientFn, NotDifferentiable, None] = None
    # The output's value when it can be computed at graph construction (tf.get_static_value).
    constant_value: Optional[ConstantValueFn] = None
    # What is known of a shape-valued output (Shape, Pack of dims, ...) when not all of it is.
    partial_shape_value: Optional[PartialShapeFn] = None
    # The gradient has the broadcast shape; tf.gradients sums it down to each input's shape.
    broadcasts: bool = False


@dataclasses.dataclass(frozen=True, eq=False)
class OpDef:
    """The one definition of an op type. Frozen: the signature never changes after
    `define_op`; kernels, the gradient and the folding rules go into `registration`."""

    name: str
    inputs: tuple[ArgDef, ...]
    outputs: tuple[ArgDef, ...]
    attrs: Mapping[str, AttrDef]
    shape_fn: Optional[Callable[[Any], Sequence[Any]]]
    is_stateful: bool = False
    is_async: bool = False
    needs_step: bool = False
    expensive: bool = False
    # Output i may be a view of (or the same object as) some input: fetching it must copy.
    forwards_input: bool = False
    # Its outputs are persistent arrays (Const values, variable buffers): fetch copies them.
    persistent_output: bool = False
    # Runs inside the executor loop itself (Switch/Merge/Enter/... and Send/Recv plumbing).
    control_flow: Optional[ControlFlowKind] = None
    defined_at: str = "?"  # file:line of the define_op call, for duplicate-definition errors
    registration: OpRegistration = dataclasses.field(default_factory=OpRegistration)

    @property
    def kernel_call(self) -> KernelCall:
        """How the executor calls this op's compute function."""
        if self.is_async:
            return KernelCall.ASYNC
        return KernelCall.STEP if self.needs_step else KernelCall.PLAIN

    # -- registration ---------------------------------------------------------------------------
    def kernel(self, device_types: Optional[Sequence[str]] = None,
               dtypes: Optional[Sequence[Any]] = None) -> Callable[[KernelBuilder], KernelBuilder]:
        """Decorator registering a kernel builder for `device_types` (default: any device whose
        array namespace the builder can use) and optionally only for some `T` dtypes."""

        def register(build: KernelBuilder) -> KernelBuilder:
            self.registration.kernels.append(KernelDef(
                build, None if device_types is None else tuple(device_types),
                None if dtypes is None else tuple(_dtypes.as_dtype(d) for d in dtypes)))
            return build

        return register

    @property
    def kernels(self) -> tuple[KernelDef, ...]:
        return tuple(self.registration.kernels)

    def find_kernel(self, device_type: str, dtype: Optional[_dtypes.DType] = None) -> Optional[KernelDef]:
        """The most specific kernel for a device type: device-specific ones beat generic ones."""
        generic = None
        for kdef in self.registration.kernels:
            if kdef.dtypes is not None and dtype is not None and dtype.base_dtype not in kdef.dtypes:
                continue
            if kdef.device_types is None:
                generic = generic or kdef
            elif device_type in kdef.device_types:
                return kdef
        return generic

    def gradient(self, fn: Optional[GradientFn] = None, *, dense_grad: bool = False,
                 broadcasts: bool = False) -> Any:
        """Registers the gradient function `fn(op, *output_grads) -> input grads`.

        Used bare (`@Op.gradient`) or with options (`@Op.gradient(dense_grad=True)`):
        `dense_grad` hands `fn` its output gradients as dense tensors (an IndexedSlices is
        scattered into its dense shape first), for formulas that multiply them by tensors;
        `broadcasts` says the gradient has the broadcast shape of the inputs, and
        tf.gradients sums it down to each input's shape."""

        def register(grad_fn: GradientFn) -> GradientFn:
            registered = _densifying(grad_fn) if dense_grad else grad_fn
            self.registration.gradient = registered
            if broadcasts:
                self.registration.broadcasts = True
            return registered

        return register if fn is None else register(fn)

    def not_differentiable(self) -> None:
        self.registration.gradient = NOT_DIFFERENTIABLE

    @property
    def gradient_fn(self) -> Union[GradientFn, NotDifferentiable, None]:
        return self.registration.gradient

    def constant_value(self, fn: ConstantValueFn) -> ConstantValueFn:
        """Decorator registering how to fold this op's output at graph-construction time."""
        self.registration.constant_value = fn
        return fn

    def partial_shape_value(self, fn: PartialShapeFn) -> PartialShapeFn:
        """Decorator registering what is known of this op's shape-valued output."""
        self.registration.partial_shape_value = fn
        return fn

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"


def _densifying(fn: GradientFn) -> GradientFn:
    """`fn` with its output gradients converted to dense tensors first."""

    def grad_fn(op: Any, *grads: Any) -> Any:
        # late: tensor_conversion imports graph, which imports this module
        from tensorweave.framework.tensor_conversion import convert_to_tensor
        return fn(op, *(g if g is None else convert_to_tensor(g) for g in grads))

    grad_fn.__name__ = grad_fn.__qualname__ = fn.__name__
    grad_fn.__doc__ = fn.__doc__
    return grad_fn


# ---------------------------------------------------------------------------------------------
# The registry
# ---------------------------------------------------------------------------------------------
_REGISTRY: dict[str, OpDef] = {}


def get_op_def(name: str) -> OpDef:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise ValueError(f"No op named {name} is registered.") from None


def registered_ops() -> dict[str, OpDef]:
    return dict(_REGISTRY)


def define_op(name: str, inputs: Sequence[str] = (), outputs: Sequence[str] = (),
              attrs: Sequence[str] = (), shape_fn: Optional[Callable] = None, **flags: Any) -> OpDef:
    """Declares op `name` once; a second declaration of the same name is an error."""
    if name in _REGISTRY:
        first = _REGISTRY[name].defined_at
        raise ValueError(f"Op {name} is already registered (first defined at {first}).")
    attr_defs = {a.name: a for a in (_parse_attr(s) for s in attrs)}
    if isinstance(flags.get("control_flow"), str):
        flags["control_flow"] = ControlFlowKind(flags["control_flow"])
    op_def = OpDef(name=name, inputs=tuple(_parse_arg(s, attr_defs) for s in inputs),
                   outputs=tuple(_parse_arg(s, attr_defs) for s in outputs),
                   attrs=MappingProxyType(attr_defs), shape_fn=shape_fn,
                   defined_at=_caller_site(), **flags)
    _REGISTRY[name] = op_def
    return op_def


def _caller_site() -> str:
    frame = sys._getframe(2)  # define_op's caller
    return f"{frame.f_code.co_filename}:{frame.f_lineno}"


# ---------------------------------------------------------------------------------------------
# Signature parsing (TF's REGISTER_OP notation)
# ---------------------------------------------------------------------------------------------
_ARG_RE = re.compile(r"^\s*(\w+)\s*:\s*(?:(\w+)\s*\*\s*)?(Ref\(\s*(\w+)\s*\)|(\w+))\s*$")
_ATTR_RE = re.compile(r"^\s*(\w+)\s*:\s*((?:[^=>]|>=?)+?)\s*(?:(?<!>)=\s*(.+?))?\s*$")


def _parse_arg(spec: str, attrs: dict[str, AttrDef]) -> ArgDef:
    m = _ARG_RE.match(spec)
    if not m:
        raise ValueError(f"Bad op argument spec {spec!r}")
    name, number_attr, _, ref_type, plain_type = m.groups()
    type_name = ref_type or plain_type
    type_name = _TYPE_ALIASES.get(type_name, type_name)
    kwargs: dict[str, Any] = {"name": name, "number_attr": number_attr, "is_ref": ref_type is not None}
    attr = attrs.get(type_name)
    if attr is not None and attr.kind == "type":
        kwargs["type_attr"] = type_name
    elif attr is not None and attr.kind == "list(type)":
        kwargs["type_list_attr"] = type_name
    else:
        kwargs["fixed_dtype"] = _dtypes.as_dtype(type_name)
    if number_attr is not None and number_attr not in attrs:
        raise ValueError(f"Argument {spec!r} names undeclared attr {number_attr}")
    return ArgDef(**kwargs)


def _parse_default(text: str) -> Any:
    lowered = {"true": "True", "false": "False"}.get(text, text)
    if lowered in _dtypes._BY_NAME:
        return _dtypes.as_dtype(lowered)
    return ast.literal_eval(lowered.replace("true", "True").replace("false", "False"))


def _parse_attr(spec: str) -> AttrDef:
    m = _ATTR_RE.match(spec)
    if not m:
        raise ValueError(f"Bad attr spec {spec!r}")
    name, kind, default_text = m.groups()
    kind = kind.strip()
    allowed: Optional[tuple[Any, ...]] = None
    minimum = None
    if kind.startswith("{"):
        members = [s.strip() for s in kind[1:-1].split(",") if s.strip()]
        if members[0][0] in "'\"":
            kind, allowed = "string", tuple(ast.literal_eval(s) for s in members)
        else:
            kind = "type"
            expanded: list[_dtypes.DType] = []
            for s in members:
                expanded.extend(_TYPE_GROUPS[s] if s in _TYPE_GROUPS else (_dtypes.as_dtype(s),))
            allowed = tuple(expanded)
    elif kind in _TYPE_GROUPS:
        kind, allowed = "type", _TYPE_GROUPS[kind]
    elif ">=" in kind:
        kind, low = (s.strip() for s in kind.split(">="))
        minimum = int(low)
    default = _NO_DEFAULT if default_text is None else _parse_default(default_text)
    if kind == "shape" and default is not _NO_DEFAULT:
        default = TensorShape(None) if default is None else as_shape(default)
    return AttrDef(name, kind, default, allowed, minimum)
