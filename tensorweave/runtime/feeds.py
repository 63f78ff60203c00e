"""Fed values for `Session.run`: checked and converted to their tensor's dtype and static shape
by TensorFlow's rules (client/session.py's feed loop), so a value is never silently wrapped where
TF refuses it, and wraps exactly where TF wraps it:

- a Python int must keep its value in the tensor's dtype (2**40 into int32: TypeError);
- anything else converts as NumPy's `asarray(value).astype(dtype)` (TF's numpy_compat.np_asarray):
  NumPy arrays of a wider integer type wrap, floats truncate towards zero, None becomes NaN in a
  float tensor, numeric strings parse, and what NumPy cannot convert raises NumPy's error class;
- a string tensor takes bytes and str (encoded as UTF-8); any other element is TF's
  InternalError "Unsupported object type";
- then the shape must be compatible, and the tensor feedable (not built in a loop body,
  not marked by `Graph.prevent_feeding`).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import Tensor

_NUMPY_ERRORS = (ValueError, TypeError, OverflowError)


class FeedConverter:
    """Checks and converts one fed value to its tensor's dtype and static shape."""

    __slots__ = ("tensor", "np_dtype", "rank", "known_dims", "is_number")

    def __init__(self, tensor: Tensor) -> None:
        self.tensor = tensor
        self.np_dtype = np.dtype(tensor.dtype.base_dtype.as_numpy_dtype)
        # TF converts numbers with asarray(...).astype(dtype), which wraps; bool (and other
        # non-number dtypes) with asarray(..., dtype=dtype).
        self.is_number = bool(np.issubdtype(self.np_dtype, np.number))
        dims = tensor.shape.as_tuple_or_none()
        self.rank = None if dims is None else len(dims)
        self.known_dims = () if dims is None else tuple((i, d) for i, d in enumerate(dims) if d is not None)

    def __call__(self, value: Any) -> np.ndarray:
        if type(value) is not np.ndarray or value.dtype != self.np_dtype:
            value = self._convert(value)
        if self.rank is not None:
            self._check_shape(value)
        return value

    def _check_shape(self, value: np.ndarray) -> None:
        shape = value.shape
        if len(shape) != self.rank or any(shape[i] != d for i, d in self.known_dims):
            raise ValueError(f"Cannot feed value of shape {shape} for Tensor {self.tensor.name}, "
                             f"which has shape {self.tensor.shape}")

    def _convert(self, value: Any) -> np.ndarray:
        if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
            raise TypeError("The value of a feed cannot be a tf.Tensor object. Acceptable feed values "
                            "include Python scalars, strings, lists, numpy ndarrays, or TensorHandles. "
                            f"Feeding Tensor '{self.tensor.name}'.")
        try:
            if isinstance(value, int):
                self._check_python_int(value)
            if self.is_number:
                return np.asarray(value).astype(self.np_dtype, copy=False)
            return np.asarray(value, dtype=self.np_dtype)
        except _NUMPY_ERRORS as err:
            if type(err) not in _NUMPY_ERRORS or "Feeding Tensor" in str(err):
                raise
            # NumPy's own error class, as TF raises it, with the tensor named.
            raise type(err)(f"{err} (Feeding Tensor '{self.tensor.name}' of type "
                            f"{self.tensor.dtype.base_dtype.name}.)") from None

    def _check_python_int(self, value: int) -> None:
        """TF's rule for Python ints (bools too): the value must survive the conversion."""
        converted = self.np_dtype.type(np.array(value).astype(self.np_dtype))
        if converted != value:
            self._incompatible_int(value, str(self.np_dtype.type))

    def _incompatible_int(self, value: int, tensor_type: str) -> None:
        raise TypeError(f"Type of feed value {value} with type {type(value)} is not compatible with Tensor "
                        f"type {tensor_type}. Try explicitly setting the type of the feed tensor to a larger "
                        f"type (e.g. int64). Feeding Tensor '{self.tensor.name}'.")


class StringFeedConverter(FeedConverter):
    """A string tensor's feeds: an object array of bytes; str elements are encoded as UTF-8."""

    __slots__ = ()

    def __call__(self, value: Any) -> np.ndarray:
        value = self._convert(value)  # object arrays too: their elements need checking
        if self.rank is not None:
            self._check_shape(value)
        return value

    def _convert(self, value: Any) -> np.ndarray:
        if isinstance(value, Tensor) or hasattr(value, "_as_graph_element"):
            return super()._convert(value)
        if isinstance(value, int):  # TF compares str(value) with value: never equal
            self._incompatible_int(value, "<class 'object'>")
        array = np.asarray(value, dtype=object)
        flat = array.reshape(-1)
        copied = array is not value
        for i, v in enumerate(flat):
            if isinstance(v, bytes):
                continue
            if not isinstance(v, str):
                kind = type(v)
                name = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
                raise errors.InternalError(None, None, f"Unsupported object type {name} (Feeding Tensor "
                                           f"'{self.tensor.name}' of type string.)")
            if not copied:  # never rewrite the caller's own array
                array = array.copy()
                flat, copied = array.reshape(-1), True
            flat[i] = v.encode("utf-8")
        return array


class UnfeedableConverter:
    """The converter of a tensor that may not be fed: TF converts and checks the shape first."""

    __slots__ = ("convert",)

    def __init__(self, convert: FeedConverter) -> None:
        self.convert = convert

    def __call__(self, value: Any) -> np.ndarray:
        self.convert(value)
        raise ValueError(f"Tensor {self.convert.tensor.name} may not be fed.")


def feed_converter(tensor: Tensor) -> Any:
    """The converter for feeds of `tensor`, by its dtype and whether it may be fed."""
    convert = (StringFeedConverter if tensor.dtype.base_dtype.name == "string" else FeedConverter)(tensor)
    return convert if tensor.graph.is_feedable(tensor) else UnfeedableConverter(convert)
