"""TensorProto <-> NumPy (TF1's `tf.make_tensor_proto` and `tf.make_ndarray`), as TF encodes them:
tensors of more than one element in `tensor_content` (raw little-endian bytes), single values
and strings in the typed repeated fields. Reading accepts every encoding TF writes, including a
short typed field whose last value repeats to fill the shape."""
from __future__ import annotations

from typing import Any

import numpy as np
from tensorboard.compat.proto import tensor_pb2

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.tensor_shape import as_shape

__all__ = ["make_tensor_proto", "make_ndarray"]

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
    for d in array.shape:
        proto.tensor_shape.dim.add(size=d)
    if dtype == _dtypes.string:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode("utf-8")
                                for v in array.reshape(-1))
        return proto
    if array.size > 1:
        proto.tensor_content = array.astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
        return proto
    flat = array.reshape(-1)
    field = getattr(proto, _FIELD[dtype.name])
    if dtype == _dtypes.float16:
        field.extend(int(x) for x in flat.view(np.uint16))
    elif dtype.is_complex:
        for x in flat:
            field.extend((float(x.real), float(x.imag)))
    else:
        field.extend(flat.tolist())
    return proto


def make_ndarray(tensor: Any) -> np.ndarray:
    """The NumPy value of TensorProto `tensor`."""
    dtype = _dtypes.as_dtype(tensor.dtype).base_dtype
    shape = [d.size for d in tensor.tensor_shape.dim]
    count = int(np.prod(shape, dtype=np.int64))
    if dtype == _dtypes.string:
        flat = np.empty(len(tensor.string_val), dtype=object)
        flat[:] = list(tensor.string_val)
        return _fill(flat, count, shape, object)
    np_dtype = np.dtype(dtype.as_numpy_dtype)
    if tensor.tensor_content:
        return np.frombuffer(tensor.tensor_content, dtype=np_dtype.newbyteorder("<")).astype(
            np_dtype).reshape(shape)
    field_name = _FIELD.get(dtype.name)
    if field_name is None:
        raise TypeError(f"Unsupported tensor type: {dtype.name}")
    values = getattr(tensor, field_name)
    if dtype == _dtypes.float16:
        flat = np.array(list(values), dtype=np.uint16).view(np.float16)
    elif dtype.is_complex:
        pairs = np.array(list(values), dtype=np_dtype.type(0).real.dtype).reshape(-1, 2)
        flat = (pairs[:, 0] + 1j * pairs[:, 1]).astype(np_dtype)
    else:
        flat = np.array(list(values), dtype=np_dtype)
    return _fill(flat, count, shape, np_dtype)


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
        raise ValueError(f"TensorProto holds {flat.size} values for shape {shape}")
    out = np.empty(count, dtype=np_dtype)
    out[:flat.size] = flat
    out[flat.size:] = flat[-1]
    return out.reshape(shape)


