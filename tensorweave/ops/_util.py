"""The op toolkit every family shares: error constructors worded as TensorFlow's, rank checks,
graph-time constants, index arguments, kernel registration, gradient densifying and common shape
functions. (Public wrappers are written out in each family, so `grep "def sqrt"` finds them.)

It imports only framework/: every tier-1 op module may use it.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable, Optional, Sequence, Union

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation, Tensor, is_tensor_like
from tensorweave.framework.indexed_slices import IndexedSlices
from tensorweave.framework.kernel_contract import KernelBuilder, KernelContext
from tensorweave.framework.op_def import OpDef
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import Dimension, TensorShape, unknown_shape


# ---------------------------------------------------------------------------------------------
# Errors, worded as TensorFlow's
# ---------------------------------------------------------------------------------------------
def invalid(message: str) -> errors.InvalidArgumentError:
    """The run-time error of a kernel that got bad input (TF's errors::InvalidArgument)."""
    return errors.InvalidArgumentError(None, None, message)


def unimplemented(message: str) -> errors.UnimplementedError:
    return errors.UnimplementedError(None, None, message)


def fmt_shape(shape: Union[TensorShape, Sequence[Any]]) -> str:
    """A shape as TF prints it in messages: [2,?,3], or ? for an unknown rank."""
    if isinstance(shape, TensorShape):
        if shape.ndims is None:
            return "?"
        return "[" + ",".join("?" if d is None else str(d) for d in shape.as_list()) + "]"
    return "[" + ",".join(str(int(d)) if d is not None else "?" for d in shape) + "]"


def format_dims(dims: Sequence[int]) -> str:
    """A run-time shape as TF's TensorShape::DebugString prints it: [2,3]."""
    return "[" + ",".join(str(int(d)) for d in dims) + "]"


def shape_error(op: Operation, message: str) -> ValueError:
    """ValueError raised by a shape function, worded like TF's graph-construction errors."""
    shapes = ", ".join(fmt_shape(t.shape) for t in op.inputs)
    return ValueError(f"{message} for '{op.name}' (op: '{op.type}') with input shapes: {shapes}.")


def with_rank(op: Operation, shape: TensorShape, rank: int) -> TensorShape:
    """`shape` checked to have `rank` dims (unknown rank becomes `rank` unknown dims)."""
    if shape.ndims is None:
        return unknown_shape(rank)
    if shape.ndims != rank:
        raise shape_error(op, f"Shape must be rank {rank} but is rank {shape.ndims}")
    return shape


def with_rank_at_least(op: Operation, shape: TensorShape, rank: int) -> TensorShape:
    if shape.ndims is not None and shape.ndims < rank:
        raise shape_error(op, f"Shape must be at least rank {rank} but is rank {shape.ndims}")
    return shape


def canonical_axis(axis: int, rank: int, op: Optional[Operation] = None, what: str = "axis") -> int:
    """`axis` in [-rank, rank) made non-negative; ValueError (shape fns) otherwise."""
    if not -rank <= axis < rank:
        message = f"{what} {axis} is out of range [{-rank}, {rank})"
        raise shape_error(op, message) if op is not None else ValueError(message)
    return axis + rank if axis < 0 else axis


# ---------------------------------------------------------------------------------------------
# Integer arguments: known at graph construction, read at run time, converted for wrappers
# ---------------------------------------------------------------------------------------------
def const_ints(tensor: Tensor) -> Optional[list[int]]:
    """The value of an integer tensor known at graph-construction time, flattened, else None."""
    value = tensor_util.constant_value(tensor)
    if value is None:
        return None
    return [int(v) for v in np.reshape(value, -1)]


def const_int(tensor: Tensor) -> Optional[int]:
    values = const_ints(tensor)
    return values[0] if values is not None and len(values) == 1 else None


def host_ints(value: Any) -> list[int]:
    """A small integer array (shape, axis, perm ...) as a Python list.

    Kernels read such inputs on every call rather than folding graph-time constants into the
    kernel, because any tensor (a Const included) may be fed a different value."""
    if type(value) is np.ndarray and value.ndim == 1:
        return value.tolist()
    return np.asarray(value).reshape(-1).tolist()


def index_input(value: Any, name: Optional[str] = None) -> Any:
    """Converts an index-like argument (shape, axis, perm, multiples) preferring int32, as TF
    does through the op's default `Tidx`/`Tshape` attr: `[]` is an empty int32 vector."""
    if is_tensor_like(value):
        return value
    if isinstance(value, (list, tuple)) and not value:
        value = np.zeros([0], np.int32)
    return convert_to_tensor(value, name=name, preferred_dtype=_dtypes.int32)


# ---------------------------------------------------------------------------------------------
# Kernels
# ---------------------------------------------------------------------------------------------
# TF's kernels are silent about inf/nan results (1/0, log(0), NaN casts, float overflow);
# NumPy warns. A filter ignores exactly those warnings when raised from tensorweave code (a
# kernel, or the executor calling a bare ufunc), so the hot path pays nothing for it.
_NUMPY_NOISE = r"(divide by zero|invalid value|overflow) encountered"


def quiet_numpy_warnings() -> None:
    """Installs the filter unless present; kernel builders call it again because a
    warnings.catch_warnings block (pytest wraps imports in one) drops filters added inside."""
    for entry in warnings.filters:
        if entry[0] == "ignore" and getattr(entry[1], "pattern", None) == _NUMPY_NOISE:
            return
    warnings.filterwarnings("ignore", message=_NUMPY_NOISE, category=RuntimeWarning,
                            module=r"tensorweave\.")


def register_kernel(op: OpDef, dtypes: Any = None) -> Callable[[KernelBuilder], KernelBuilder]:
    """`op.kernel(dtypes=...)` for numeric kernels: the builder first makes sure NumPy's
    floating-point warnings stay quiet."""

    def register(build: KernelBuilder) -> KernelBuilder:
        def quiet_build(ctx: KernelContext) -> Callable[..., Any]:
            quiet_numpy_warnings()
            return build(ctx)

        op.kernel(dtypes=dtypes)(quiet_build)
        return build

    return register


quiet_numpy_warnings()


# ---------------------------------------------------------------------------------------------
# Gradients and wrappers
# ---------------------------------------------------------------------------------------------
def dense(grad: Any) -> Any:
    """A gradient as a dense tensor: an IndexedSlices is scattered into its dense shape (TF's
    IndexedSlices -> Tensor conversion); None and dense tensors pass through."""
    if grad is None or not isinstance(grad, IndexedSlices):
        return grad
    return convert_to_tensor(grad)


# ---------------------------------------------------------------------------------------------
# Shape functions shared by many ops (run at graph construction)
# ---------------------------------------------------------------------------------------------
def unchanged(op: Operation) -> list[TensorShape]:
    return [op.inputs[0].shape]


def scalar(op: Operation) -> list[TensorShape]:
    return [TensorShape([])] * len(op.outputs)


def unknown(op: Operation) -> list[TensorShape]:
    return [unknown_shape()] * len(op.outputs)


def no_outputs(op: Operation) -> list[TensorShape]:
    return []


def broadcast_shapes(a: TensorShape, b: TensorShape, op_name: str = "") -> TensorShape:
    """NumPy broadcasting on static shapes; ValueError when known dims can't broadcast."""
    if a.ndims is None or b.ndims is None:
        return unknown_shape()
    da, db = a.as_list(), b.as_list()
    n = max(len(da), len(db))
    da = [1] * (n - len(da)) + da
    db = [1] * (n - len(db)) + db
    out: list[Any] = []
    for x, y in zip(da, db):
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y if y is not None and y != 1 else None)
        elif y is None:
            out.append(x)
        elif x == y:
            out.append(x)
        else:
            raise ValueError(f"Dimensions must be equal, but are {x} and {y} for '{op_name}' with "
                             f"input shapes: {a}, {b}.")
    return TensorShape(out)


def broadcast_binary(op: Operation) -> list[TensorShape]:
    return [broadcast_shapes(op.inputs[0].shape, op.inputs[1].shape, f"{op.name}")] * len(op.outputs)


def merge_all_inputs(op: Operation) -> list[TensorShape]:
    shape = unknown_shape()
    for t in op.inputs:
        try:
            shape = shape.merge_with(t.shape)
        except ValueError:
            raise ValueError(f"Shapes must be equal for '{op.name}' ({op.type}): "
                             f"{[str(x.shape) for x in op.inputs]}") from None
    return [shape]


def dim(value: Any) -> Dimension:
    return value if isinstance(value, Dimension) else Dimension(value)
