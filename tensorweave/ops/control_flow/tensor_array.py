"""`tf.TensorArray` (OSDI 4.1; used by while loops, map_fn, scan and dynamic_rnn): a per-step
array of tensors behind a handle, with a `flow` scalar that orders its reads and writes in the
dataflow graph. Each TensorArrayV3 execution creates fresh state, which dies with the step."""
from __future__ import annotations

import threading
from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import graph as _graph
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape, unknown_shape
from tensorweave.ops.control_flow.stack_ops import make_handle, state_of

__all__ = ["TensorArray"]


class TensorArrayState:
    """The array behind a handle: element slots, and the rules TF enforces on them."""

    def __init__(self, name: str, size: int, dtype: Any, element_shape: TensorShape, dynamic_size: bool,
                 clear_after_read: bool) -> None:
        self.name = name
        self.elements: list[Any] = [None] * size
        self.cleared = [False] * size
        self.dtype = dtype
        self.np_dtype = np.dtype(dtype.as_numpy_dtype)
        # A gradient array (TensorArrayGradV3) sums repeated writes to one index: each forward
        # read of an element contributes a gradient.
        self.aggregate_writes = False
        self.grads: dict[str, "TensorArrayState"] = {}  # gradient arrays, by gradient source
        self.element_shape = element_shape
        self.dynamic_size = dynamic_size
        self.clear_after_read = clear_after_read
        self.closed = False
        self.lock = threading.Lock()

    @property
    def element_shape(self) -> TensorShape:
        return self._element_shape

    @element_shape.setter
    def element_shape(self, shape: TensorShape) -> None:
        self._element_shape = shape
        self._dims = tuple(shape.as_list()) if shape.is_fully_defined() else None  # the fast check

    def _fail(self, message: str) -> None:
        raise errors.InvalidArgumentError(None, None, f"TensorArray {self.name}: {message}")

    def _check_shape(self, index: int, shape: tuple, infer_shape: bool) -> None:
        if shape == self._dims:
            return
        if not self._element_shape.is_compatible_with(shape):
            self._fail(f"Could not write to TensorArray index {index} because the value shape is "
                       f"{list(shape)} which is incompatible with the TensorArray's inferred element "
                       f"shape: {self._element_shape}")
        if infer_shape and self._dims is None:
            self.element_shape = self._element_shape.merge_with(shape)

    def write(self, index: int, value: Any, infer_shape: bool = True) -> None:
        with self.lock:
            if self.closed:
                self._fail("Could not write to TensorArray because it has already been closed.")
            if index < 0:
                self._fail(f"Tried to write to index {index} but array index must be non-negative.")
            if index >= len(self.elements):
                if not self.dynamic_size:
                    self._fail(f"Tried to write to index {index} but array is not resizeable and size is: "
                               f"{len(self.elements)}")
                grow = index + 1 - len(self.elements)
                self.elements.extend([None] * grow)
                self.cleared.extend([False] * grow)
            if self.cleared[index] and self.aggregate_writes:
                self._fail(f"Could not aggregate to TensorArray index {index} because it has already been read.")
            value = np.asarray(value)
            if self.elements[index] is not None and self.aggregate_writes:
                if self.elements[index].shape != value.shape:
                    self._fail(f"Could not aggregate to TensorArray index {index}: the shapes differ: "
                               f"{list(self.elements[index].shape)} vs {list(value.shape)}")
                self.elements[index] = self.elements[index] + value
                return
            if self.elements[index] is not None or self.cleared[index]:
                self._fail(f"Could not write to TensorArray index {index} because it has already been written to.")
            self._check_shape(index, value.shape, infer_shape)
            self.elements[index] = value

    def read(self, index: int) -> Any:
        with self.lock:
            if index < 0 or index >= len(self.elements):
                self._fail(f"Tried to read from index {index} but array size is: {len(self.elements)}")
            value = self.elements[index]
            if value is None:
                if self.cleared[index]:
                    self._fail(f"Could not read index {index} twice because it was cleared after a previous read "
                               "(perhaps try setting clear_after_read = false?)")
                if self.element_shape.is_fully_defined():  # TF: unwritten elements read as zeros
                    return np.zeros(self.element_shape.as_list(), self.np_dtype)
                self._fail(f"Could not read from TensorArray index {index}.  Furthermore, the element shape is "
                           f"not fully defined: {self.element_shape}.  It is possible you are working with a "
                           "resizeable TensorArray and stop_gradients is not allowing the gradients to be "
                           "written.")
            if self.clear_after_read:
                self.elements[index] = None
                self.cleared[index] = True
            return value

    def size(self) -> int:
        return len(self.elements)

    def gradient_array(self, source: str) -> "TensorArrayState":
        """The gradient array for `source` (one per tf.gradients call), made on first use with
        this array's current size and element shape."""
        with self.lock:
            grad = self.grads.get(source)
            if grad is None:
                if self.closed:
                    self._fail("Cannot create a gradient TensorArray of a closed TensorArray.")
                grad = TensorArrayState(f"{self.name}@{source}", len(self.elements), self.dtype,
                                        self.element_shape, False, True)
                grad.aggregate_writes = True
                self.grads[source] = grad
            return grad


def _create_kernel(ctx: Any) -> Any:
    dtype, shape = ctx.attr("dtype"), ctx.attr("element_shape")
    dynamic, clear, name = ctx.attr("dynamic_size"), ctx.attr("clear_after_read"), ctx.attr("tensor_array_name")
    name = name or ctx.node_name

    def create(size: Any) -> Any:
        if int(size) < 0:
            raise errors.InvalidArgumentError(None, None, f"Size should be >= 0, got {int(size)}")
        state = TensorArrayState(name, int(size), dtype, shape, dynamic, clear)
        return make_handle(state), np.float32(0.0)

    return create


_state = state_of


TensorArrayV3 = define_op("TensorArrayV3", inputs=["size: int32"], outputs=["handle: resource", "flow: float"],
                          attrs=["dtype: type", "element_shape: shape = None", "dynamic_size: bool = false",
                                 "clear_after_read: bool = true", "identical_element_shapes: bool = false",
                                 "tensor_array_name: string = ''"],
                          shape_fn=lambda op: [TensorShape([2]), TensorShape([])], is_stateful=True)
TensorArrayV3.kernel()(_create_kernel)
TensorArrayV3.not_differentiable()

_FLOW_SHAPE = [TensorShape([])]
TensorArrayWriteV3 = define_op("TensorArrayWriteV3", inputs=["handle: resource", "index: int32", "value: T",
                                                             "flow_in: float"],
                               outputs=["flow_out: float"], attrs=["T: type"],
                               shape_fn=lambda op: _FLOW_SHAPE, is_stateful=True)


@TensorArrayWriteV3.kernel()
def _write_kernel(ctx: Any) -> Any:
    def write(handle: Any, index: Any, value: Any, flow: Any) -> Any:
        _state(handle).write(int(index), value)
        return flow
    return write


def _element_shape_of(op: Any) -> TensorShape:
    return op.get_attr("element_shape") if "element_shape" in op.node_attrs else unknown_shape()


TensorArrayReadV3 = define_op("TensorArrayReadV3", inputs=["handle: resource", "index: int32", "flow_in: float"],
                              outputs=["value: dtype"], attrs=["dtype: type", "element_shape: shape = None"],
                              shape_fn=lambda op: [_element_shape_of(op)], is_stateful=True)


@TensorArrayReadV3.kernel()
def _read_kernel(ctx: Any) -> Any:
    return lambda handle, index, flow: _state(handle).read(int(index))


TensorArrayGatherV3 = define_op("TensorArrayGatherV3", inputs=["handle: resource", "indices: int32",
                                                               "flow_in: float"],
                                outputs=["value: dtype"], attrs=["dtype: type", "element_shape: shape = None"],
                                shape_fn=lambda op: [TensorShape([op.inputs[1].shape[0] if op.inputs[1].shape.ndims
                                                                  else None]).concatenate(_element_shape_of(op))],
                                is_stateful=True)


@TensorArrayGatherV3.kernel()
def _gather_kernel(ctx: Any) -> Any:
    np_dtype = ctx.attr("dtype").as_numpy_dtype

    def gather(handle: Any, indices: Any, flow: Any) -> Any:
        state = _state(handle)
        values = [state.read(int(i)) for i in np.reshape(indices, -1)]
        if not values:
            if not state.element_shape.is_fully_defined():
                raise errors.InvalidArgumentError(None, None, "TensorArray has size zero, but element shape "
                                                  f"{state.element_shape} is not fully defined.")
            return np.zeros([0] + state.element_shape.as_list(), np_dtype)
        shapes = {v.shape for v in values}
        if len(shapes) > 1:
            raise errors.InvalidArgumentError(None, None, f"TensorArray has inconsistent shapes: {sorted(shapes)}")
        return np.stack(values).astype(np_dtype, copy=False)

    return gather


TensorArrayScatterV3 = define_op("TensorArrayScatterV3", inputs=["handle: resource", "indices: int32",
                                                                 "value: T", "flow_in: float"],
                                 outputs=["flow_out: float"], attrs=["T: type"],
                                 shape_fn=lambda op: _FLOW_SHAPE, is_stateful=True)


@TensorArrayScatterV3.kernel()
def _scatter_kernel(ctx: Any) -> Any:
    def scatter(handle: Any, indices: Any, value: Any, flow: Any) -> Any:
        indices = np.reshape(indices, -1)
        if len(indices) != np.shape(value)[0]:
            raise errors.InvalidArgumentError(None, None, f"Expected len(indices) == values.shape[0], but saw: "
                                              f"{len(indices)} vs. {np.shape(value)[0]}")
        state = _state(handle)
        for i, row in zip(indices, value):
            state.write(int(i), row)
        return flow
    return scatter


TensorArrayConcatV3 = define_op("TensorArrayConcatV3", inputs=["handle: resource", "flow_in: float"],
                                outputs=["value: dtype", "lengths: int64"],
                                attrs=["dtype: type", "element_shape_except0: shape = None"],
                                shape_fn=lambda op: [TensorShape([None]).concatenate(
                                    op.get_attr("element_shape_except0")) if op.get_attr(
                                    "element_shape_except0").ndims is not None else unknown_shape(),
                                    TensorShape([None])], is_stateful=True)


@TensorArrayConcatV3.kernel()
def _concat_kernel(ctx: Any) -> Any:
    np_dtype = ctx.attr("dtype").as_numpy_dtype

    def concat(handle: Any, flow: Any) -> Any:
        state = _state(handle)
        values = [state.read(i) for i in range(state.size())]
        lengths = np.array([v.shape[0] for v in values], dtype=np.int64)
        if not values:
            return np.zeros([0], np_dtype), lengths
        return np.concatenate(values, axis=0).astype(np_dtype, copy=False), lengths

    return concat


TensorArraySplitV3 = define_op("TensorArraySplitV3", inputs=["handle: resource", "value: T", "lengths: int64",
                                                             "flow_in: float"],
                               outputs=["flow_out: float"], attrs=["T: type"],
                               shape_fn=lambda op: _FLOW_SHAPE, is_stateful=True)


@TensorArraySplitV3.kernel()
def _split_kernel(ctx: Any) -> Any:
    def split(handle: Any, value: Any, lengths: Any, flow: Any) -> Any:
        lengths = np.reshape(lengths, -1)
        if int(np.sum(lengths)) != np.shape(value)[0]:
            raise errors.InvalidArgumentError(None, None, f"Expected sum of lengths to be equal to values.shape[0], "
                                              f"but sum of lengths is {int(np.sum(lengths))} and value's shape is: "
                                              f"{list(np.shape(value))}")
        state = _state(handle)
        # pieces differ in their first dimension: only the rest of the shape is shared
        relaxed = TensorShape([None] + list(np.shape(value)[1:]))
        if state.element_shape.is_compatible_with(relaxed):
            state.element_shape = relaxed
        start = 0
        for i, n in enumerate(lengths):
            state.write(i, value[start:start + int(n)], infer_shape=False)
            start += int(n)
        return flow
    return split


TensorArraySizeV3 = define_op("TensorArraySizeV3", inputs=["handle: resource", "flow_in: float"],
                              outputs=["size: int32"], shape_fn=lambda op: [TensorShape([])], is_stateful=True)
TensorArraySizeV3.kernel()(lambda ctx: lambda handle, flow: np.int32(_state(handle).size()))
TensorArrayCloseV3 = define_op("TensorArrayCloseV3", inputs=["handle: resource"],
                               shape_fn=lambda op: [], is_stateful=True)


@TensorArrayCloseV3.kernel()
def _close_kernel(ctx: Any) -> Any:
    def close(handle: Any) -> None:
        state = _state(handle)
        state.closed = True
        state.elements = []
    return close


TensorArraySizeV3.not_differentiable()
TensorArrayCloseV3.not_differentiable()

TensorArrayGradV3 = define_op("TensorArrayGradV3", inputs=["handle: resource", "flow_in: float"],
                              outputs=["grad_handle: resource", "flow_out: float"], attrs=["source: string"],
                              shape_fn=lambda op: [TensorShape([2]), TensorShape([])], is_stateful=True)
TensorArrayGradV3.not_differentiable()


@TensorArrayGradV3.kernel()
def _grad_kernel(ctx: Any) -> Any:
    source = ctx.attr("source")

    def grad(handle: Any, flow: Any) -> Any:
        return make_handle(_state(handle).gradient_array(source)), flow

    return grad


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
        from tensorweave.ops.array.shaping import identity
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
        from tensorweave.ops.array.creation import range as tf_range
        with _graph.name_scope(name, "TensorArrayStack", [self._handle]):
            value = self.gather(tf_range(0, self.size()), name=name)
            if self._element_shape[0].ndims is not None and not self._dynamic_size and self._size is not None:
                value.set_shape(TensorShape([self._static_size()]).concatenate(self._element_shape[0]))
            return value

    def _static_size(self) -> Optional[int]:
        from tensorweave.framework.tensor_util import constant_value
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
        from tensorweave.ops.array.shaping import shape
        from tensorweave.ops.array.creation import range as tf_range
        with _graph.name_scope(name, "TensorArrayUnstack", [self._handle, value]):
            value = convert_to_tensor(value, dtype=self._dtype)
            return self.scatter(tf_range(0, shape(value)[0]), value)

    def concat(self, name: Optional[str] = None) -> Any:
        except0 = self._element_shape[0][1:] if self._element_shape[0].ndims else unknown_shape()
        value, _ = apply_op(TensorArrayConcatV3, name=name, handle=self._handle, flow_in=self._flow,
                            dtype=self._dtype, element_shape_except0=except0)
        return value

    def split(self, value: Any, lengths: Any, name: Optional[str] = None) -> "TensorArray":
        from tensorweave.ops import math as math_ops
        value = convert_to_tensor(value, dtype=self._dtype)
        lengths = math_ops.to_int64(convert_to_tensor(lengths))
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
        from tensorweave.ops.array.shaping import identity
        flow = self._flow if flow is None else flow
        with _graph.name_scope(name, "TensorArrayGrad", [self._handle]):
            g_handle, _ = apply_op(TensorArrayGradV3, handle=self._handle, flow_in=flow, source=source)
            with _graph.control_dependencies([g_handle]):
                flow = identity(flow, name="gradient_flow")
        g = TensorArray(self._dtype, handle=g_handle, flow=flow, infer_shape=self._infer_shape)
        g._element_shape = self._element_shape
        return g
