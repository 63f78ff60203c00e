"""`EagerTensor`: a tensor that holds its value (TF 1.15's ops.EagerTensor).

An EagerTensor is a `Tensor` (so every wrapper, operator and conversion that accepts tensors
accepts it) whose value is a NumPy array computed when the op that made it ran. It differs
from a graph tensor as TF's does: `.numpy()` and `np.asarray(t)` give the value; Python
conversions (`float`, `int`, `bool`, `__index__`), `len`, iteration over the first axis and
printing use the value; `.name` has no meaning and raises AttributeError. `.op` is the op that
made it, without its inputs (so no history is kept alive; a value made outside any op shows
a Const); gradients never use it: the tape records what they need (eager/tape.py).

Like TF 1.15's EagerTensor it hashes by identity and `==` is identity (TF 2 changed both).

The value is `_value` (an ndarray, an object array for strings); the static shape is the
value's shape, computed on first use.
"""
from __future__ import annotations

from typing import Any, Iterator, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Tensor, get_default_graph
from tensorweave.framework.tensor_shape import TensorShape

CPU_DEVICE = "/job:localhost/replica:0/task:0/device:CPU:0"
_SHAPES: dict[tuple, TensorShape] = {}  # NumPy shape -> its TensorShape (making one costs us)
_MAX_SHAPES = 4096


class EagerTensor(Tensor):
    """A tensor with a concrete value, made by an op run eagerly."""

    __slots__ = ("_value",)

    _eager = True

    def __init__(self, value: Any, dtype: _dtypes.DType, op: Any = None, value_index: int = 0) -> None:
        # Tensor.__init__ is skipped: an eager tensor has no consumers and its shape is its value's.
        self._op = op
        self._value_index = value_index
        self._dtype = dtype
        self._shape = None
        self._consumers = _NO_CONSUMERS
        self._value = value

    # -- what a graph tensor has, with eager meanings ---------------------------------------------
    @property
    def shape(self) -> TensorShape:
        shape = self._shape
        if shape is None:
            value = self._value
            dims = value.shape if type(value) is np.ndarray else np.shape(value)
            shape = _SHAPES.get(dims)
            if shape is None:  # TensorShapes are immutable: one per distinct shape is shared
                shape = TensorShape(dims)
                if len(_SHAPES) < _MAX_SHAPES:
                    _SHAPES[dims] = shape
            self._shape = shape
        return shape

    def get_shape(self) -> TensorShape:
        return self.shape

    def set_shape(self, shape: Any) -> None:
        if not self.shape.is_compatible_with(shape):
            raise ValueError(f"Tensor's shape {self.shape} is not compatible with supplied shape {shape}")

    @property
    def name(self) -> str:
        raise AttributeError("Tensor.name is meaningless when eager execution is enabled.")

    @property
    def op(self) -> Any:
        op = self._op
        if op is None:  # a value made outside any op (a variable read): a Const stands in
            op = self._op = _OP_FACTORY[0](self)
        elif type(op) is OpRecipe:  # made by a call plan: the op is built when first asked for
            op = self._op = op.make([self])
        return op

    @property
    def graph(self) -> Any:
        # TF raises here; tensorweave's wrappers find the graph to build in from their inputs,
        # and the eager context's graph is where an op with eager inputs runs.
        graph = get_default_graph()
        return graph if graph.executes_eagerly else _eager_graph_of()

    @property
    def device(self) -> str:
        return CPU_DEVICE

    @property
    def backing_device(self) -> str:
        return CPU_DEVICE

    def consumers(self) -> list[Any]:
        raise AttributeError("Tensor.consumers is meaningless when eager execution is enabled.")

    def eval(self, feed_dict: Any = None, session: Any = None) -> Any:
        raise NotImplementedError("eval is not supported when eager execution is enabled, "
                                  "is .numpy() what you're looking for?")

    # -- the value ----------------------------------------------------------------------------------
    def numpy(self) -> Any:
        """The value as a NumPy array (a NumPy scalar for a scalar, as TF gives)."""
        value = self._value
        if isinstance(value, np.ndarray):
            return value.copy() if value.ndim else value[()]
        if self._dtype.is_ref_dtype and isinstance(getattr(value, "value", None), np.ndarray):
            # a variable's reference (an assign or scatter op's output): its value when read,
            # as TF's _UnreadVariable gives
            held = value.value
            return held.copy() if held.ndim else held[()]
        return value

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        value = self._value
        value = np.asarray(value if isinstance(value, np.ndarray) or not self._dtype.is_ref_dtype
                           else self.numpy())
        return value if dtype is None else value.astype(dtype)

    def _scalar(self, kind: str) -> Any:
        value = np.asarray(self._value)
        if value.size != 1:
            raise TypeError(f"only size-1 arrays can be converted to Python {kind}s")
        return value.reshape(())[()]

    def __float__(self) -> float:
        return float(self._scalar("scalar"))

    def __int__(self) -> int:
        return int(self._scalar("scalar"))

    def __complex__(self) -> complex:
        return complex(self._scalar("scalar"))

    def __index__(self) -> int:
        if not self._dtype.is_integer or np.ndim(self._value) != 0:
            raise TypeError("Only integer scalar tensors can be used as an index")
        return int(self._value)

    def __bool__(self) -> bool:
        return bool(self._value)

    def __len__(self) -> int:
        if np.ndim(self._value) == 0:
            raise TypeError("Scalar tensor has no `len()`")
        return len(self._value)

    def __iter__(self) -> Iterator[Tensor]:
        if np.ndim(self._value) == 0:
            raise TypeError("Cannot iterate over a scalar tensor.")
        for i in range(len(self._value)):
            yield self[i]

    def __copy__(self) -> "EagerTensor":
        return self  # immutable, as TF's

    def __deepcopy__(self, memo: Any) -> "EagerTensor":
        return self

    def __reduce__(self) -> Any:
        return _from_numpy, (self.numpy(),)

    def __format__(self, spec: str) -> str:
        return format(self.numpy(), spec) if spec else str(self)

    def __repr__(self) -> str:
        return (f"<tf.Tensor: id={id(self)}, shape={_shape_text(self.shape)}, "
                f"dtype={self._dtype.name}, numpy={_value_text(self._value, True)}>")

    def __str__(self) -> str:
        return (f"tf.Tensor({_value_text(self._value, False)}, shape={_shape_text(self.shape)}, "
                f"dtype={self._dtype.name})")


_NO_CONSUMERS: list[Any] = []


class OpRecipe:
    """What the op of a call plan's output is made of (eager/call_plans.py): the op object is
    made only when `.op` is asked for, which eager code rarely does."""

    __slots__ = ("graph", "op_def", "attrs")

    def __init__(self, graph: Any, op_def: Any, attrs: dict[str, Any]) -> None:
        self.graph = graph
        self.op_def = op_def
        self.attrs = attrs

    def make(self, outputs: list[Any]) -> Any:
        return _OP_FACTORY[1](self.graph, self.op_def, dict(self.attrs), outputs)


def _shape_text(shape: TensorShape) -> str:
    dims = shape.as_list()
    return "(" + ", ".join(str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"


def _value_text(value: Any, for_repr: bool) -> str:
    """TF's numpy_text: the NumPy repr (repr) or str (str) of the value, on a new line when
    it spans several."""
    shown = np.asarray(value)
    shown = shown[()] if shown.ndim == 0 else shown
    text = repr(shown) if for_repr else str(shown)
    return "\n" + text if "\n" in text else text


def _from_numpy(value: Any) -> "EagerTensor":
    array = np.asarray(value)
    return EagerTensor(array, _dtypes.from_numpy(array.dtype))


_EAGER_GRAPH: list[Any] = []
# execute.py: the stand-in op of a tensor made outside any op, and the EagerOperation class
_OP_FACTORY: list[Any] = []


def _eager_graph_of() -> Any:
    """The graph an eager tensor belongs to when a graph is the default (set by execute.py)."""
    return _EAGER_GRAPH[0] if _EAGER_GRAPH else get_default_graph()


def is_eager_tensor(value: Any) -> bool:
    return type(value) is EagerTensor


def as_value(value: Any) -> Optional[Any]:
    """The value of an eager tensor, else None."""
    return value._value if type(value) is EagerTensor else None
