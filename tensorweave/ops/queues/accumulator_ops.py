"""Conditional accumulator ops (TF's data_flow_ops; OSDI 4.4): the dense accumulator as TF2's
graphs build it (ResourceConditionalAccumulator and its Resource* ops on a `resource` handle),
TF1's reference-handle forms (ConditionalAccumulator, Accumulator*), and the sparse accumulator
(SparseConditionalAccumulator, SparseAccumulator*; a `Ref(string)` handle in TF1 and TF2 alike).

The accumulator op yields a handle to state kept in its device's resource manager
(accumulator_resource.py); consumers reach it through the handle, so the placer keeps them on
the accumulator's device. Taking a gradient is an asynchronous kernel: a step waiting for
enough gradients holds no executor thread and is withdrawn when the step is cancelled.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tensorweave.framework import errors
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import _util
from tensorweave.ops.kernels.resource_handles import resource_handle_kernel, resource_of
from tensorweave.ops.queues import accumulator_resource as ar

_ACCUMULATOR_ATTRS = ["dtype: numbertype", "shape: shape", "container: string = ''", "shared_name: string = ''",
                      "reduction_type: {'MEAN', 'SUM'} = 'MEAN'"]


def _handle_shape(op: Operation) -> list[TensorShape]:
    return [TensorShape([2])]  # TF's shape for a reference handle (a string pair)


ResourceConditionalAccumulator = define_op(
    "ResourceConditionalAccumulator", outputs=["handle: resource"], attrs=_ACCUMULATOR_ATTRS,
    shape_fn=_util.scalar, is_stateful=True)
ConditionalAccumulator = define_op(
    "ConditionalAccumulator", outputs=["handle: Ref(string)"], attrs=_ACCUMULATOR_ATTRS,
    shape_fn=_handle_shape, is_stateful=True)
SparseConditionalAccumulator = define_op(
    "SparseConditionalAccumulator", outputs=["handle: Ref(string)"], attrs=_ACCUMULATOR_ATTRS,
    shape_fn=_handle_shape, is_stateful=True)


def _verify(kind: type, definition: tuple) -> Callable[[Any], None]:
    def verify(existing: Any) -> None:
        if not isinstance(existing, kind):
            raise errors.InvalidArgumentError(
                None, None, f"Shared name refers to a {type(existing).__name__}, not a {kind.kind}")
        if existing.definition != definition:
            raise errors.InvalidArgumentError(
                None, None, f"Shared {kind.kind} '{existing.name}' has dtype, shape or reduction type "
                f"{_show(existing.definition)} but {_show(definition)} was requested")
    return verify


def _show(definition: tuple) -> str:
    dtype, shape, reduction = definition
    return f"({dtype.name}, {ar.format_partial(shape)}, {reduction})"


def _accumulator_kernel(kind: type) -> Callable[[KernelContext], Callable[[], Any]]:
    def build(ctx: KernelContext) -> Callable[[], Any]:
        dtype = np.dtype(ctx.attr("dtype").as_numpy_dtype)
        shape = ctx.attr("shape").as_tuple_or_none()
        reduction = ctx.attr("reduction_type")
        definition = (dtype, shape, reduction)

        def create(name: str) -> ar.AccumulatorResource:
            return kind(name, dtype, shape, reduction, definition)

        return resource_handle_kernel(ctx, create, _verify(kind, definition), use_node_name=True)
    return build


ResourceConditionalAccumulator.kernel()(_accumulator_kernel(ar.DenseAccumulator))
ConditionalAccumulator.kernel()(_accumulator_kernel(ar.DenseAccumulator))
SparseConditionalAccumulator.kernel()(_accumulator_kernel(ar.SparseAccumulator))


# ---------------------------------------------------------------------------------------------
# Operations on an accumulator: each in a resource form and a reference form
# ---------------------------------------------------------------------------------------------
def _take_shape(op: Operation) -> list[TensorShape]:
    source = op.inputs[0].op
    if source.type in ("ResourceConditionalAccumulator", "ConditionalAccumulator"):
        return [source._get_attr("shape")]
    return [unknown_shape()]


def _pair(name: str, handle: str, inputs: list, outputs: list, attrs: list, shape_fn: Callable,
          **flags: Any) -> tuple:
    """The op `name` on a reference handle and `Resource<name>` on a resource handle."""
    ops = []
    for prefix, kind in (("", "Ref(string)"), ("Resource", "resource")):
        ops.append(define_op(prefix + name, inputs=[f"{handle}: {kind}"] + inputs, outputs=outputs, attrs=attrs,
                             shape_fn=shape_fn, is_stateful=True, **flags))
    return tuple(ops)


AccumulatorNumAccumulated, ResourceAccumulatorNumAccumulated = _pair(
    "AccumulatorNumAccumulated", "handle", [], ["num_accumulated: int32"], [], _util.scalar)
AccumulatorSetGlobalStep, ResourceAccumulatorSetGlobalStep = _pair(
    "AccumulatorSetGlobalStep", "handle", ["new_global_step: int64"], [], [], _util.no_outputs)
AccumulatorApplyGradient, ResourceAccumulatorApplyGradient = _pair(
    "AccumulatorApplyGradient", "handle", ["local_step: int64", "gradient: dtype"], [], ["dtype: numbertype"],
    _util.no_outputs)
AccumulatorTakeGradient, ResourceAccumulatorTakeGradient = _pair(
    "AccumulatorTakeGradient", "handle", ["num_required: int32"], ["average: dtype"], ["dtype: numbertype"],
    _take_shape, is_async=True)
SparseAccumulatorApplyGradient = define_op(
    "SparseAccumulatorApplyGradient",
    inputs=["handle: Ref(string)", "local_step: int64", "gradient_indices: int64", "gradient_values: dtype",
            "gradient_shape: int64"],
    attrs=["dtype: numbertype", "has_known_shape: bool"], shape_fn=_util.no_outputs, is_stateful=True)
SparseAccumulatorTakeGradient = define_op(
    "SparseAccumulatorTakeGradient", inputs=["handle: Ref(string)", "num_required: int32"],
    outputs=["indices: int64", "values: dtype", "shape: int64"], attrs=["dtype: numbertype"],
    shape_fn=lambda op: [TensorShape([None]), unknown_shape(), TensorShape([None])], is_async=True,
    is_stateful=True)

for _op in (ResourceConditionalAccumulator, ConditionalAccumulator, SparseConditionalAccumulator,
            AccumulatorNumAccumulated, ResourceAccumulatorNumAccumulated, AccumulatorSetGlobalStep,
            ResourceAccumulatorSetGlobalStep, AccumulatorApplyGradient, ResourceAccumulatorApplyGradient,
            AccumulatorTakeGradient, ResourceAccumulatorTakeGradient, SparseAccumulatorApplyGradient,
            SparseAccumulatorTakeGradient):
    _op.not_differentiable()


def _accumulator(handle: Any, kind: type) -> Any:
    accumulator = resource_of(handle)
    if not isinstance(accumulator, kind):
        raise errors.InvalidArgumentError(None, None, f"The handle does not refer to a {kind.kind}")
    return accumulator


def _num_accumulated_kernel(ctx: KernelContext) -> Callable[[Any], Any]:
    return lambda handle: np.int32(_accumulator(handle, ar.AccumulatorResource).num_accumulated())


def _set_global_step_kernel(ctx: KernelContext) -> Callable[[Any, Any], None]:
    def set_global_step(handle: Any, step: Any) -> None:
        _accumulator(handle, ar.AccumulatorResource).set_global_step(int(step))
    return set_global_step


def _check_dtype(accumulator: ar.AccumulatorResource, dtype: np.dtype) -> None:
    if accumulator.dtype != dtype:
        raise errors.InvalidArgumentError(
            None, None, f"Input dtype does not match the accumulator's: expected "
            f"{accumulator.dtype.name}, got {dtype.name}")


def _apply_kernel(ctx: KernelContext) -> Callable[[Any, Any, Any], None]:
    dtype = np.dtype(ctx.attr("dtype").as_numpy_dtype)

    def apply(handle: Any, local_step: Any, gradient: Any) -> None:
        accumulator = _accumulator(handle, ar.DenseAccumulator)
        _check_dtype(accumulator, dtype)
        accumulator.apply(int(local_step), np.asarray(gradient))
    return apply


def _take_kernel(ctx: KernelContext) -> Callable[..., None]:
    dtype = np.dtype(ctx.attr("dtype").as_numpy_dtype)

    def take(step: Any, done: Callable[[Any], None], handle: Any, num_required: Any) -> None:
        accumulator = _accumulator(handle, ar.DenseAccumulator)
        _check_dtype(accumulator, dtype)
        accumulator.take(step, done, int(num_required))
    return take


for _op in (AccumulatorNumAccumulated, ResourceAccumulatorNumAccumulated):
    _op.kernel()(_num_accumulated_kernel)
for _op in (AccumulatorSetGlobalStep, ResourceAccumulatorSetGlobalStep):
    _op.kernel()(_set_global_step_kernel)
for _op in (AccumulatorApplyGradient, ResourceAccumulatorApplyGradient):
    _op.kernel()(_apply_kernel)
for _op in (AccumulatorTakeGradient, ResourceAccumulatorTakeGradient):
    _op.kernel()(_take_kernel)


@SparseAccumulatorApplyGradient.kernel()
def _sparse_apply_kernel(ctx: KernelContext) -> Callable[..., None]:
    dtype = np.dtype(ctx.attr("dtype").as_numpy_dtype)
    known = ctx.attr("has_known_shape")

    def apply(handle: Any, local_step: Any, indices: Any, values: Any, shape: Any) -> None:
        accumulator = _accumulator(handle, ar.SparseAccumulator)
        _check_dtype(accumulator, dtype)
        indices, values = np.asarray(indices), np.asarray(values)
        if local_step < accumulator.global_step:
            return  # stale: dropped before any check, as TF's (apply checks again under its lock)
        if indices.ndim != 1:
            raise _util.invalid(f"Input indices should be vector but received shape: "
                                f"{_util.format_dims(indices.shape)}")
        if values.ndim == 0:
            raise _util.invalid("Values cannot be 0-dimensional.")
        if values.shape[0] != indices.shape[0]:
            raise _util.invalid(f"Expected {indices.shape[0]} non-empty input values, got {values.shape[0]}")
        accumulator.apply(int(local_step), (indices, values, np.asarray(shape) if known else None))
    return apply


@SparseAccumulatorTakeGradient.kernel()
def _sparse_take_kernel(ctx: KernelContext) -> Callable[..., None]:
    dtype = np.dtype(ctx.attr("dtype").as_numpy_dtype)

    def take(step: Any, done: Callable[[Any], None], handle: Any, num_required: Any) -> None:
        accumulator = _accumulator(handle, ar.SparseAccumulator)
        _check_dtype(accumulator, dtype)
        accumulator.take(step, done, int(num_required))
    return take
