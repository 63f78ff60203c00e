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
from typing import Any, Callable, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
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

    build: Callable[["KernelContext"], Callable[..., Any]]
    device_types: Optional[tuple[str, ...]] = None
    dtypes: Optional[tuple[_dtypes.DType, ...]] = None


class NotDifferentiable:
    """Marks an op whose outputs carry no gradient (TF's ops.NotDifferentiable)."""

    def __repr__(self) -> str:
        return "NOT_DIFFERENTIABLE"


NOT_DIFFERENTIABLE = NotDifferentiable()


@dataclasses.dataclass(frozen=True, eq=False)
class OpDef:
    """The one definition of an op type. Frozen: the signature never changes after
    `define_op`; kernels and the gradient are filled into the mutable registration slots."""

    name: str
    inputs: tuple[ArgDef, ...]
    outputs: tuple[ArgDef, ...]
    attrs: dict[str, AttrDef]
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
    control_flow: Optional[str] = None
    kernels: list = dataclasses.field(default_factory=list)
    registrations: dict = dataclasses.field(default_factory=dict)

    # -- registration ---------------------------------------------------------------------------
    def kernel(self, device_types: Optional[Sequence[str]] = None,
               dtypes: Optional[Sequence[Any]] = None) -> Callable:
        """Decorator registering a kernel builder for `device_types` (default: any device whose
        array namespace the builder can use) and optionally only for some `T` dtypes."""

        def register(build: Callable) -> Callable:
            self.kernels.append(KernelDef(
                build, None if device_types is None else tuple(device_types),
                None if dtypes is None else tuple(_dtypes.as_dtype(d) for d in dtypes)))
            return build

        return register

    def find_kernel(self, device_type: str, dtype: Optional[_dtypes.DType] = None) -> Optional[KernelDef]:
        """The most specific kernel for a device type: device-specific ones beat generic ones."""
        generic = None
        for kdef in self.kernels:
            if kdef.dtypes is not None and dtype is not None and dtype.base_dtype not in kdef.dtypes:
                continue
            if kdef.device_types is None:
                generic = generic or kdef
            elif device_type in kdef.device_types:
                return kdef
        return generic

    def gradient(self, fn: Callable) -> Callable:
        """Decorator registering the gradient function `fn(op, *output_grads) -> input grads`."""
        self.registrations["gradient"] = fn
        return fn

    def not_differentiable(self) -> None:
        self.registrations["gradient"] = NOT_DIFFERENTIABLE

    @property
    def gradient_fn(self) -> Any:
        return self.registrations.get("gradient")

    def __repr__(self) -> str:
        return f"<OpDef {self.name}>"


class KernelContext:
    """What a kernel builder may look at: the node's attrs and dtypes, the device, and its
    array namespace. Built once per (session, node)."""

    __slots__ = ("op", "attrs", "device", "xp", "input_dtypes", "output_dtypes", "session_state")

    def __init__(self, op: Any, device: Any, session_state: Any = None) -> None:
        self.op = op
        self.attrs = op.node_attrs
        self.device = device
        self.xp = device.xp
        self.input_dtypes = [t.dtype for t in op.inputs]
        self.output_dtypes = [t.dtype for t in op.outputs]
        self.session_state = session_state

    def attr(self, name: str) -> Any:
        return self.attrs[name]

    @property
    def node_name(self) -> str:
        return self.op.name

    @property
    def resource_mgr(self) -> Any:
        """Where this node's resource lives: with an explicit shared_name, the process-wide
        manager of its device (shared by every local session); else the session's own."""
        if self.attrs.get("shared_name"):
            return self.device.shared_resource_manager
        return self.device.resource_manager


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
        raise ValueError(f"Op {name} is already registered.")
    attr_defs = {a.name: a for a in (_parse_attr(s) for s in attrs)}
    op_def = OpDef(name=name, inputs=tuple(_parse_arg(s, attr_defs) for s in inputs),
                   outputs=tuple(_parse_arg(s, attr_defs) for s in outputs),
                   attrs=attr_defs, shape_fn=shape_fn, **flags)
    _REGISTRY[name] = op_def
    return op_def


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
