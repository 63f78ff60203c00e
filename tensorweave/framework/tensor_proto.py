"""TensorProto <-> NumPy (TF1's `tf.make_tensor_proto` and `tf.make_ndarray`), as TF encodes them:
tensors of more than one element in `tensor_content` (raw little-endian bytes), single values
and strings in the typed repeated fields. Reading accepts every encoding TF writes, including a
short typed field whose last value repeats to fill the shape.

As in TensorFlow, a tensor that one value fills (`tf.constant(0.0, shape=[1 << 40])`) stays one
value: in memory a read-only broadcast view, in a TensorProto one typed value and the shape. A
proto that cannot become an array here (its content does not match its shape, or its repeated
values would fill more memory than `DEFERRED_BYTES`) is kept as a `DeferredTensor`, which only
the Const kernel materialises, at run time, failing there with InvalidArgumentError as
TensorFlow's "Cannot parse tensor from proto" does."""
from __future__ import annotations

from typing import Any

import numpy as np
from tensorboard.compat.proto import tensor_pb2

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework.tensor_shape import as_shape

__all__ = ["make_tensor_proto", "make_ndarray", "DeferredTensor", "tensor_value", "fill_to_shape", "deferred_fill",
           "is_broadcast"]

# Above this many bytes a value that is not one repeated value is not built at graph
# construction: the Const kernel builds it at run time (TF builds it in the kernel too).
DEFERRED_BYTES = 1 << 28
_INT64_MAX = (1 << 63) - 1

# Typed field of TensorProto per dtype name, for values not stored in tensor_content.
_FIELD = {
    "float32": "float_val", "float64": "double_val", "int32": "int_val", "uint8": "int_val",
    "int16": "int_val", "int8": "int_val", "uint16": "int_val", "int64": "int64_val",
    "bool": "bool_val", "uint32": "uint32_val", "uint64": "uint64_val", "float16": "half_val",
    "complex64": "scomplex_val", "complex128": "dcomplex_val", "string": "string_val",
}


def make_tensor_proto(values: Any, dtype: Any = None, shape: Any = None, verify_shape: bool = False,
                      allow_broadcast: bool = False) -> Any:
    """A TensorProto holding `values` (a NumPy array or Python value), optionally cast to `dtype`
    and reshaped or broadcast to `shape`."""
    if isinstance(values, tensor_pb2.TensorProto):
        return values
    from tensorweave.framework.tensor_conversion import python_value_to_ndarray
    dtype = None if dtype is None else _dtypes.as_dtype(dtype).base_dtype
    array = python_value_to_ndarray(values, dtype)
    if shape is not None:
        # a full shape is required: an unknown dim raises TypeError, as in TF
        target = tuple(int(d) for d in as_shape(shape).as_list())  # type: ignore[arg-type]
        if array.shape != target:
            if verify_shape:
                raise TypeError(f"Expected Tensor's shape: {target}, got {array.shape}.")
            if array.size == 1 or allow_broadcast:
                array = np.broadcast_to(array, target)
            elif array.size == int(np.prod(target, dtype=np.int64)):
                array = array.reshape(target)
            else:
                raise ValueError(f"Too many elements provided. Needed at most {int(np.prod(target))}, "
                                 f"but received {array.size}")
    return ndarray_to_proto(np.asarray(array))


def ndarray_to_proto(array: np.ndarray, proto: Any = None) -> Any:
    """The TensorProto of an array (filled into `proto` when given)."""
    dtype = _dtypes.string if array.dtype == object else _dtypes.from_numpy(array.dtype)
    proto = tensor_pb2.TensorProto() if proto is None else proto
    proto.dtype = dtype.as_datatype_enum
    proto.tensor_shape.SetInParent()  # a scalar's shape is present and empty, as TF writes it
    for d in array.shape:
        proto.tensor_shape.dim.add(size=d)
    if is_broadcast(array):  # one value fills it: TF stores that value once
        array = np.asarray(array[(0,) * array.ndim]).reshape(1)
    if dtype == _dtypes.string:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode("utf-8")
                                for v in array.reshape(-1))
        return proto
    if array.size > 1:
        proto.tensor_content = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        return proto
    _write_typed(proto, array.reshape(-1), dtype)
    return proto


def _write_typed(proto: Any, flat: np.ndarray, dtype: Any) -> None:
    field = getattr(proto, _FIELD[dtype.name])
    if dtype == _dtypes.float16:
        field.extend(int(x) for x in flat.view(np.uint16))
    elif dtype.is_complex:
        for x in flat:
            field.extend((float(x.real), float(x.imag)))
    else:
        field.extend(flat.tolist())


def deferred_fill(flat: np.ndarray, shape: tuple[int, ...]) -> DeferredTensor:
    """`flat`'s values filling `shape` by TF's rule, kept as a proto (values in the typed field,
    as TF's make_tensor_proto stores fewer values than the shape holds)."""
    proto = tensor_pb2.TensorProto()
    dtype = _dtypes.string if flat.dtype == object else _dtypes.from_numpy(flat.dtype)
    proto.dtype = dtype.as_datatype_enum
    for d in shape:
        proto.tensor_shape.dim.add(size=d)
    if dtype == _dtypes.string:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode("utf-8") for v in flat)
    else:
        _write_typed(proto, flat, dtype)
    return DeferredTensor(proto, shape, flat.dtype)


class DeferredTensor:
    """A tensor value kept as its TensorProto until run time: its shape and dtype are known,
    its elements are built by `materialize` (in the Const kernel)."""

    __slots__ = ("proto", "shape", "dtype")

    def __init__(self, proto: Any, shape: tuple[int, ...], dtype: np.dtype) -> None:
        self.proto, self.shape, self.dtype = proto, shape, dtype

    @property
    def ndim(self) -> int:
        return len(self.shape)

    def materialize(self) -> np.ndarray:
        try:
            return make_ndarray(self.proto)
        except (ValueError, TypeError, MemoryError, OverflowError) as err:
            raise errors.InvalidArgumentError(
                None, None, f"Cannot parse tensor from proto: dtype "
                f"{_dtypes.as_dtype(self.proto.dtype).name} shape {list(self.shape)} ({err})") from None

    def __repr__(self) -> str:
        return f"DeferredTensor(shape={list(self.shape)}, dtype={self.dtype})"


def _checked_shape(tensor: Any) -> list[int]:
    """The dims of a TensorProto's shape, refused as TF's Const shape function refuses them."""
    shape = [d.size for d in tensor.tensor_shape.dim]
    text = "[" + ",".join(str(d) for d in shape) + "]"
    if any(d < 0 for d in shape):
        raise ValueError(f"Shape {text} is not fully defined")
    count = 1
    for d in shape:
        count *= d
    if count > _INT64_MAX:
        raise ValueError(f"Shape {text} is too large (more than 2**63 - 1 entries)")
    return shape


def tensor_value(tensor: Any) -> Any:
    """The value of a `tensor` attr as graph construction keeps it: an array (a read-only
    broadcast view when one value fills it), or a DeferredTensor when the proto cannot be
    parsed into an array of this size. A dtype or shape no tensor can have is a ValueError."""
    if tensor.dtype == 0 or tensor.dtype not in _dtypes._BY_ENUM:
        raise ValueError("AttrValue has invalid DataType")
    dtype = _dtypes.as_dtype(tensor.dtype).base_dtype
    shape = _checked_shape(tensor)
    if _FIELD.get(dtype.name) is None:  # resource, variant, ...: no array form here
        return DeferredTensor(tensor, tuple(shape), np.dtype(object))
    np_dtype = np.dtype(object) if dtype == _dtypes.string else np.dtype(dtype.as_numpy_dtype)
    count = int(np.prod(shape, dtype=np.int64))
    deferred = DeferredTensor(tensor, tuple(shape), np_dtype)
    if tensor.tensor_content and dtype != _dtypes.string:
        if len(tensor.tensor_content) != count * np_dtype.itemsize:
            return deferred
        return make_ndarray(tensor)
    flat = _typed_values(tensor, dtype, np_dtype, count)
    return fill_to_shape(flat, tuple(shape), lambda: deferred)


def fill_to_shape(flat: np.ndarray, shape: tuple[int, ...], deferred: Any) -> Any:
    """TF's fill rule without building what one value fills: a scalar or empty `flat` becomes
    a read-only broadcast view; a longer one filling a large shape becomes `deferred()`."""
    count = int(np.prod(shape, dtype=np.int64))
    if flat.size >= count:
        return flat[:count].reshape(shape)
    if flat.size <= 1:
        one = flat.reshape(-1)[:1] if flat.size else _zero(flat.dtype)
        return np.broadcast_to(one.reshape(()), shape)
    if count * flat.dtype.itemsize > DEFERRED_BYTES:
        return deferred()
    return _fill(flat, count, list(shape), flat.dtype)


def _zero(np_dtype: np.dtype) -> np.ndarray:
    return np.array([b""], dtype=object) if np_dtype.kind == "O" else np.zeros(1, dtype=np_dtype)


def is_broadcast(array: np.ndarray) -> bool:
    """Whether `array` is one value viewed as many (every stride 0): stored as one value."""
    return array.size > 1 and not any(array.strides)


def make_ndarray(tensor: Any) -> np.ndarray:
    """The NumPy value of TensorProto `tensor`."""
    dtype = _dtypes.as_dtype(tensor.dtype).base_dtype
    shape = [d.size for d in tensor.tensor_shape.dim]
    count = int(np.prod(shape, dtype=np.int64))
    if dtype == _dtypes.string:
        return _fill(_typed_values(tensor, dtype, None, count), count, shape, object)
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    if tensor.tensor_content:
        return np.frombuffer(tensor.tensor_content, dtype=np_dtype.newbyteorder("<")).astype(
            np_dtype).reshape(shape)
    if _FIELD.get(dtype.name) is None:
        raise TypeError(f"Unsupported tensor type: {dtype.name}")
    return _fill(_typed_values(tensor, dtype, np_dtype, count), count, shape, np_dtype)


def _typed_values(tensor: Any, dtype: Any, np_dtype: Any, count: int) -> np.ndarray:
    """The values of the dtype's typed field (at most `count`: TF ignores values beyond the
    shape, and the fields of other types)."""
    if dtype == _dtypes.string:
        flat = np.empty(min(len(tensor.string_val), count), dtype=object)
        flat[:] = list(tensor.string_val[:count])
        return flat
    values = getattr(tensor, _FIELD[dtype.name])
    if dtype == _dtypes.float16:
        return np.array(list(values[:count]), dtype=np.uint16).view(np.float16)
    if dtype.is_complex:
        pairs = np.array(list(values[:2 * count]), dtype=np_dtype.type(0).real.dtype).reshape(-1, 2)
        return (pairs[:, 0] + 1j * pairs[:, 1]).astype(np_dtype)
    return np.array(list(values[:count]), dtype=np_dtype)


def _fill(flat: np.ndarray, count: int, shape: list[int], np_dtype: Any) -> np.ndarray:
    """TF's rule: fewer values than elements repeat the last value; none means zeros."""
    if flat.size == count:
        return flat.reshape(shape)
    if flat.size == 0:
        out = np.zeros(shape, dtype=np_dtype)
        if np_dtype is object:
            out[...] = b""
        return out
    if flat.size > count:
        return flat[:count].reshape(shape)
    out = np.empty(count, dtype=np_dtype)
    out[:flat.size] = flat
    out[flat.size:] = flat[-1]
    return out.reshape(shape)


