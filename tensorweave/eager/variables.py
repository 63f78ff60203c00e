"""Variables in eager mode (TF 1.15's ResourceVariable as eager code sees it).

`tf.Variable(...)` (and so `tf.get_variable`) made while executing eagerly is an
`EagerVariable`: its state is a `VariableCell`, the same cell the graph's VariableV2 kernel
holds, so every update op that takes a variable reference (Assign*, Scatter*, the optimizers'
Apply* ops) runs on it through the eager dispatch path unchanged. Resource semantics: each read
is a snapshot of the value at that moment, and a read after a write sees the write.

Reads report to gradient tapes (eager/tape.py): a tape watching accessed variables watches a
trainable variable when it is read, and records the read, so `tape.gradient(loss, var)` sums
the gradients of every read.
"""
from __future__ import annotations

import itertools
import weakref
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.eager import tape as _tape
from tensorweave.eager.tensor import CPU_DEVICE, EagerTensor
from tensorweave.framework import graph as _graph
from tensorweave.framework.held_attributes import HeldNameDtypeShape
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.ops.array import gather, gather_nd
from tensorweave.ops.state import variable_ops as state_ops
from tensorweave.ops.state import variables as _variables
from tensorweave.ops.state.variable_ops import VariableCell

_uids = itertools.count(1)
# Each variable's cell -> the variable: a traced function that assigns a variable takes its
# reference (the cell), and a tape's gradient for that reference is the variable's.
_OWNERS: "weakref.WeakValueDictionary[int, Any]" = weakref.WeakValueDictionary()


def owner_of(cell: Any) -> Optional["EagerVariable"]:
    """The eager variable whose state `cell` is, if it is alive."""
    return _OWNERS.get(id(cell))


class EagerVariable(HeldNameDtypeShape, _variables.Variable):
    """A variable whose value lives in this process and is read and written at once."""

    _eager_variable = True

    def __init__(self, initial_value: Any = None, trainable: bool = True,
                 collections: Optional[Sequence[str]] = None, validate_shape: bool = True,
                 caching_device: Any = None, name: Optional[str] = None, variable_def: Any = None,
                 dtype: Any = None, expected_shape: Any = None, import_scope: Any = None,
                 constraint: Optional[Callable] = None, use_resource: Any = None,
                 synchronization: Any = None, aggregation: Any = None, shape: Any = None) -> None:
        if variable_def is not None:
            raise ValueError("variable_def is not supported when eager execution is enabled.")
        if initial_value is None:
            raise ValueError("initial_value must be specified.")
        if constraint is not None and not callable(constraint):
            raise ValueError("The `constraint` argument must be a callable.")
        graph = _graph.get_default_graph()
        scope = graph.get_name_scope()
        base = (name or "Variable").rstrip("/")
        self._name = f"{scope}/{base}:0" if scope and not (name or "").endswith("/") else f"{base}:0"
        if callable(initial_value):
            initial_value = initial_value()
        initial = convert_to_tensor(initial_value, dtype=dtype)
        value = np.array(initial._value, copy=True)
        self._dtype = initial.dtype.base_dtype
        self._shape = as_shape(shape) if shape is not None else TensorShape(value.shape)
        if not self._shape.is_compatible_with(value.shape):
            raise ValueError(f"Initial value shape {list(value.shape)} is not compatible with the "
                             f"variable's shape {self._shape}")
        self._cell = VariableCell(self._name, self._shape)
        self._cell.value = value
        self._initial_value = initial
        self._trainable = trainable
        self._constraint = constraint
        self._save_slice_info = None
        self._unique_id = next(_uids)
        _OWNERS[id(self._cell)] = self

    # -- reads --------------------------------------------------------------------------------------
    def read_value(self) -> EagerTensor:
        """A snapshot of the current value (recorded by tapes that watch this variable); inside a
        tf.function being traced, the read the trace makes (an argument each call fills)."""
        capture = getattr(_graph.get_default_graph(), "capture_variable", None)
        if capture is not None:
            return capture(self)
        if self._trainable and _tape.active():
            _tape.variable_accessed(self)
        value = EagerTensor(np.array(self._cell.read(), copy=True), self._dtype)
        if _tape.active():
            _tape.record_read(self, value)
        return value

    def value(self) -> EagerTensor:
        return self.read_value()

    def _ref(self) -> EagerTensor:
        """The variable's reference, for update ops that write it (Assign*, Scatter*, Apply*)."""
        ref = EagerTensor(self._cell, self._dtype._as_ref)
        ref._shape = self._shape
        return ref

    def _as_graph_element(self) -> Any:
        return None  # no graph node: wrappers find the eager graph from their other inputs

    def numpy(self) -> Any:
        return self.read_value().numpy()

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = np.array(self._cell.read(), copy=True)
        return value if dtype is None else value.astype(dtype)

    def sparse_read(self, indices: Any, name: Optional[str] = None) -> Any:
        return gather(self.read_value(), indices, name=name)

    def gather_nd(self, indices: Any, name: Optional[str] = None) -> Any:
        return gather_nd(self.read_value(), indices, name=name)

    # -- writes -------------------------------------------------------------------------------------
    def _written(self, read_value: bool) -> Any:
        return self.read_value() if read_value else None

    def assign(self, value: Any, use_locking: bool = False, name: Optional[str] = None,
               read_value: bool = True) -> Any:
        value = convert_to_tensor(value, dtype=self._dtype)
        if not self._shape.is_compatible_with(value.shape):
            raise ValueError(f"Shapes {self._shape} and {value.shape} are incompatible")
        state_ops.assign(self._ref(), value, use_locking=use_locking, name=name)
        return self._written(read_value)

    def assign_add(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Any:
        state_ops.assign_add(self._ref(), convert_to_tensor(delta, dtype=self._dtype), use_locking=use_locking,
                             name=name)
        return self._written(read_value)

    def assign_sub(self, delta: Any, use_locking: bool = False, name: Optional[str] = None,
                   read_value: bool = True) -> Any:
        state_ops.assign_sub(self._ref(), convert_to_tensor(delta, dtype=self._dtype), use_locking=use_locking,
                             name=name)
        return self._written(read_value)

    def _scatter(self, fn: Any, sparse_delta: Any, use_locking: bool, name: Optional[str]) -> "EagerVariable":
        if not hasattr(sparse_delta, "indices"):
            raise TypeError(f"sparse_delta is not IndexedSlices: {sparse_delta}")
        fn(self._ref(), sparse_delta.indices, sparse_delta.values, use_locking=use_locking, name=name)
        return self

    def scatter_update(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
        return self._scatter(state_ops.scatter_update, sparse_delta, use_locking, name)

    def scatter_add(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
        return self._scatter(state_ops.scatter_add, sparse_delta, use_locking, name)

    def scatter_sub(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
        return self._scatter(state_ops.scatter_sub, sparse_delta, use_locking, name)

    def scatter_mul(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
        return self._scatter(state_ops.scatter_mul, sparse_delta, use_locking, name)

    def scatter_div(self, sparse_delta: Any, use_locking: bool = False, name: Optional[str] = None) -> Any:
        return self._scatter(state_ops.scatter_div, sparse_delta, use_locking, name)

    def load(self, value: Any, session: Any = None) -> None:
        self.assign(value)

    # -- what it is ---------------------------------------------------------------------------------
    def set_shape(self, shape: Any) -> None:
        self._shape = self._shape.merge_with(as_shape(shape))

    @property
    def device(self) -> str:
        return CPU_DEVICE

    @property
    def graph(self) -> Any:
        return _graph.get_default_graph()

    @property
    def op(self) -> "_VariableOp":
        """What code written for graph variables asks of `v.op` (its name, for slot names and
        name scopes); TF's eager variables answer through their handle's op."""
        return _VariableOp(self._name[:-2], self)

    @property
    def initializer(self) -> Any:
        return None  # initialized at creation

    @property
    def initial_value(self) -> Any:
        return self._initial_value

    def initialized_value(self) -> EagerTensor:
        return self.read_value()

    def eval(self, session: Any = None) -> Any:
        raise NotImplementedError("eval is not supported when eager execution is enabled, "
                                  "is .numpy() what you're looking for?")

    def to_proto(self, export_scope: Optional[str] = None) -> Any:
        raise RuntimeError("to_proto not supported in EAGER mode.")

    def __bool__(self) -> bool:
        return bool(self.read_value())

    def __iter__(self) -> Any:
        return iter(self.read_value())

    def __len__(self) -> int:
        return len(self.read_value())

    def __index__(self) -> int:
        return self.read_value().__index__()

    def __float__(self) -> float:
        return float(self.read_value())

    def __int__(self) -> int:
        return int(self.read_value())

    def __repr__(self) -> str:
        value = self._cell.value
        return (f"<tf.Variable '{self._name}' shape={self._shape} dtype={self._dtype.name}, "
                f"numpy={np.array(value)!r}>")


class _VariableOp:
    """A variable's stand-in node: a name, a type and colocation with itself."""

    type = "VarHandleOp"

    def __init__(self, name: str, variable: EagerVariable) -> None:
        self.name = name
        self._variable = variable

    @property
    def graph(self) -> Any:
        return _graph.get_default_graph()

    @property
    def device(self) -> str:
        return CPU_DEVICE

    def _colocation_groups(self) -> list[str]:
        return [f"loc:@{self.name}"]

    def __repr__(self) -> str:
        return f"<tf.Operation '{self.name}' type=VarHandleOp>"


_variables.register_eager_variable_class(EagerVariable)
