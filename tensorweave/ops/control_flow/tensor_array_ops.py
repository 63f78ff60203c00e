"""The TensorArray ops (OSDI 4.1): TensorArrayV3 creates a per-step array of tensors behind a
handle; reads and writes take and return a `flow` scalar that orders them in the dataflow graph.
Each TensorArrayV3 execution creates fresh state, which dies with the step. The Python
`tf.TensorArray` over these ops is in tensor_array.py."""
from __future__ import annotations

import threading
from typing import Any

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops.control_flow.stack_ops import make_handle, state_of


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


def _create_kernel(ctx: KernelContext) -> Any:
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
def _write_kernel(ctx: KernelContext) -> Any:
    def write(handle: Any, index: Any, value: Any, flow: Any) -> Any:
        _state(handle).write(int(index), value)
        return flow
    return write


def _element_shape_of(op: Operation) -> TensorShape:
    return op._get_attr("element_shape") if "element_shape" in op.node_attrs else unknown_shape()


TensorArrayReadV3 = define_op("TensorArrayReadV3", inputs=["handle: resource", "index: int32", "flow_in: float"],
                              outputs=["value: dtype"], attrs=["dtype: type", "element_shape: shape = None"],
                              shape_fn=lambda op: [_element_shape_of(op)], is_stateful=True)


@TensorArrayReadV3.kernel()
def _read_kernel(ctx: KernelContext) -> Any:
    return lambda handle, index, flow: _state(handle).read(int(index))


TensorArrayGatherV3 = define_op("TensorArrayGatherV3", inputs=["handle: resource", "indices: int32",
                                                               "flow_in: float"],
                                outputs=["value: dtype"], attrs=["dtype: type", "element_shape: shape = None"],
                                shape_fn=lambda op: [TensorShape([op.inputs[1].shape[0] if op.inputs[1].shape.ndims
                                                                  else None]).concatenate(_element_shape_of(op))],
                                is_stateful=True)


@TensorArrayGatherV3.kernel()
def _gather_kernel(ctx: KernelContext) -> Any:
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
def _scatter_kernel(ctx: KernelContext) -> Any:
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
                                    op._get_attr("element_shape_except0")) if op._get_attr(
                                    "element_shape_except0").ndims is not None else unknown_shape(),
                                    TensorShape([None])], is_stateful=True)


@TensorArrayConcatV3.kernel()
def _concat_kernel(ctx: KernelContext) -> Any:
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
def _split_kernel(ctx: KernelContext) -> Any:
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
def _close_kernel(ctx: KernelContext) -> Any:
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
def _grad_kernel(ctx: KernelContext) -> Any:
    source = ctx.attr("source")

    def grad(handle: Any, flow: Any) -> Any:
        return make_handle(_state(handle).gradient_array(source)), flow

    return grad
