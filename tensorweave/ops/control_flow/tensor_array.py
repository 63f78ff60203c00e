"""`tf.TensorArray` (OSDI 4.1; used by while loops, map_fn, scan and dynamic_rnn): a Python object
over (handle, flow) of the TensorArray ops in tensor_array_ops.py; every write returns a new
TensorArray whose flow depends on the write."""
from __future__ import annotations

from typing import Any, Optional

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorweave.framework.tensor_util import constant_value
from tensorweave.ops.array.array_impl import range as tf_range
from tensorweave.ops.array.shaping import identity, shape
from tensorweave.ops.control_flow.tensor_array_ops import (
    TensorArrayCloseV3,
    TensorArrayConcatV3,
    TensorArrayGatherV3,
    TensorArrayGradV3,
    TensorArrayReadV3,
    TensorArrayScatterV3,
    TensorArraySizeV3,
    TensorArraySplitV3,
    TensorArrayV3,
    TensorArrayWriteV3,
)
from tensorweave.ops.math.cast import to_int64

__all__ = ["TensorArray"]


class TensorArray:
    """TF1's tf.TensorArray: a Python wrapper over (handle, flow); every write returns a new
    TensorArray whose flow depends on the write."""

    def __init__(self, dtype: Any, size: Any = None, dynamic_size: Optional[bool] = None,
                 clear_after_read: Optional[bool] = None, tensor_array_name: Optional[str] = None,
                 handle: Any = None, flow: Any = None, infer_shape: bool = True, element_shape: Any = None,
                 colocate_with_first_write_call: bool = True, name: Optional[str] = None) -> None:
        self._dtype = _dtypes.as_dtype(dtype).base_dtype
        self._infer_shape = infer_shape
        self._element_shape = [as_shape(element_shape) if element_shape is not None else unknown_shape()]
        self._dynamic_size = bool(dynamic_size)
        self._size = size  # kept so stack() can give a static leading dimension, as TF's does
        if handle is not None:
            if flow is None:
                raise ValueError("flow must not be None if handle is not None.")
            self._handle, self._flow = handle, flow
            return
        if size is None:
            raise ValueError("Size must be provided if handle is not provided")
        with _graph.name_scope(name, "TensorArray", [size]) as scope:
            self._handle, self._flow = apply_op(
                TensorArrayV3, name=scope, size=convert_to_tensor(size, _dtypes.int32), dtype=self._dtype,
                element_shape=self._element_shape[0], dynamic_size=self._dynamic_size,
                clear_after_read=True if clear_after_read is None else clear_after_read,
                tensor_array_name=tensor_array_name or "")

    @property
    def dtype(self) -> Any:
        return self._dtype

    @property
    def handle(self) -> Any:
        return self._handle

    @property
    def flow(self) -> Any:
        return self._flow

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape[0]

    def _with_flow(self, flow: Any) -> "TensorArray":
        ta = TensorArray(self._dtype, handle=self._handle, flow=flow, infer_shape=self._infer_shape,
                         dynamic_size=self._dynamic_size)
        ta._element_shape = self._element_shape  # shared: shapes inferred by later writes apply to all
        ta._size = self._size
        return ta

    def _merge_element_shape(self, shape: TensorShape) -> None:
        if self._infer_shape:
            try:
                self._element_shape[0] = self._element_shape[0].merge_with(shape)
            except ValueError:
                raise ValueError(f"Inconsistent shapes: saw {shape} but expected {self._element_shape[0]} "
                                 "(and infer_shape=True)") from None

    def identity(self) -> "TensorArray":
        return self._with_flow(identity(self._flow))

    def read(self, index: Any, name: Optional[str] = None) -> Any:
        return apply_op(TensorArrayReadV3, name=name, handle=self._handle, index=index, flow_in=self._flow,
                        dtype=self._dtype, element_shape=self._element_shape[0])

    def write(self, index: Any, value: Any, name: Optional[str] = None) -> "TensorArray":
        value = convert_to_tensor(value, dtype=self._dtype)
        self._merge_element_shape(value.shape)
        flow = apply_op(TensorArrayWriteV3, name=name, handle=self._handle, index=index, value=value,
                        flow_in=self._flow)
        return self._with_flow(flow)

    def gather(self, indices: Any, name: Optional[str] = None) -> Any:
        return apply_op(TensorArrayGatherV3, name=name, handle=self._handle, indices=indices,
                        flow_in=self._flow, dtype=self._dtype, element_shape=self._element_shape[0])

    def stack(self, name: Optional[str] = None) -> Any:
        with _graph.name_scope(name, "TensorArrayStack", [self._handle]):
            value = self.gather(tf_range(0, self.size()), name=name)
            if self._element_shape[0].ndims is not None and not self._dynamic_size and self._size is not None:
                value.set_shape(TensorShape([self._static_size()]).concatenate(self._element_shape[0]))
            return value

    def _static_size(self) -> Optional[int]:
        size = constant_value(self._size)
        return None if size is None else int(size)

    def scatter(self, indices: Any, value: Any, name: Optional[str] = None) -> "TensorArray":
        value = convert_to_tensor(value, dtype=self._dtype)
        if value.shape.ndims:
            self._merge_element_shape(value.shape[1:])
        flow = apply_op(TensorArrayScatterV3, name=name, handle=self._handle, indices=indices, value=value,
                        flow_in=self._flow)
        return self._with_flow(flow)

    def unstack(self, value: Any, name: Optional[str] = None) -> "TensorArray":
        with _graph.name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = convert_to_tensor(value, dtype=self._dtype)
            return self.scatter(tf_range(0, shape(value)[0]), value)

    def concat(self, name: Optional[str] = None) -> Any:
        except0 = self._element_shape[0][1:] if self._element_shape[0].ndims else unknown_shape()
        value, _ = apply_op(TensorArrayConcatV3, name=name, handle=self._handle, flow_in=self._flow,
                            dtype=self._dtype, element_shape_except0=except0)
        return value

    def split(self, value: Any, lengths: Any, name: Optional[str] = None) -> "TensorArray":
        value = convert_to_tensor(value, dtype=self._dtype)
        lengths = to_int64(convert_to_tensor(lengths))
        if value.shape.ndims:
            self._merge_element_shape(TensorShape([None]).concatenate(value.shape[1:]))
        flow = apply_op(TensorArraySplitV3, name=name, handle=self._handle, value=value, lengths=lengths,
                        flow_in=self._flow)
        return self._with_flow(flow)

    def size(self, name: Optional[str] = None) -> Any:
        return apply_op(TensorArraySizeV3, name=name, handle=self._handle, flow_in=self._flow)

    def close(self, name: Optional[str] = None) -> Any:
        return apply_op(TensorArrayCloseV3, name=name, handle=self._handle)

    def grad(self, source: str, flow: Any = None, name: Optional[str] = None) -> "TensorArray":
        """The gradient TensorArray for `source` (TF's TensorArrayGradV3): same size and element
        shape, created once per source; repeated writes to one of its indices are summed."""
        flow = self._flow if flow is None else flow
        with _graph.name_scope(name, "TensorArrayGrad", [self._handle]):
            g_handle, _ = apply_op(TensorArrayGradV3, handle=self._handle, flow_in=flow, source=source)
            with _graph.control_dependencies([g_handle]):
                flow = identity(flow, name="gradient_flow")
        g = TensorArray(self._dtype, handle=g_handle, flow=flow, infer_shape=self._infer_shape)
        g._element_shape = self._element_shape
        return g
