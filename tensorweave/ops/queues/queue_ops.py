"""Queue ops (white paper 4.6; OSDI 3.1, Figure 2): FIFOQueueV2, PaddingFIFOQueueV2,
RandomShuffleQueueV2, PriorityQueueV2 and the enqueue, dequeue, close and size ops on their
handles. The TF1 classes over them (`tf.FIFOQueue`, ...) are in queues/queue_classes.py.

A queue op (FIFOQueueV2, ...) yields a `resource` handle to queue state kept in its device's
resource manager (queues/queue_resource.py); enqueue, dequeue and close are asynchronous kernels
(white paper 5.3) that leave their continuation with the queue when they must wait, so steps
blocked on a queue hold no executor thread. Closing a queue lets blocked dequeues drain it and
then fail with OutOfRangeError; `cancel_pending_enqueues` fails blocked enqueues with
CancelledError; a step's timeout or a closed session withdraws its waiting requests.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import errors
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.tensor_shape import TensorShape, unknown_shape
from tensorweave.ops import _util
from tensorweave.ops.kernels.philox import SingleSampleStream
from tensorweave.ops.kernels.resource_handles import resource_handle_kernel, resource_of
from tensorweave.ops.queues import queue_resource as qr


# ---------------------------------------------------------------------------------------------
# Queue ops: each returns a handle to its queue
# ---------------------------------------------------------------------------------------------
_QUEUE_ATTRS = ["component_types: list(type) >= 1", "shapes: list(shape) >= 0 = []",
                "capacity: int = -1", "container: string = ''", "shared_name: string = ''"]

FIFOQueueV2 = define_op("FIFOQueueV2", outputs=["handle: resource"], attrs=_QUEUE_ATTRS,
                        shape_fn=_util.scalar, is_stateful=True)
PaddingFIFOQueueV2 = define_op("PaddingFIFOQueueV2", outputs=["handle: resource"], attrs=_QUEUE_ATTRS,
                               shape_fn=_util.scalar, is_stateful=True)
RandomShuffleQueueV2 = define_op(
    "RandomShuffleQueueV2", outputs=["handle: resource"],
    attrs=_QUEUE_ATTRS + ["min_after_dequeue: int = 0", "seed: int = 0", "seed2: int = 0"],
    shape_fn=_util.scalar, is_stateful=True)
PriorityQueueV2 = define_op(
    "PriorityQueueV2", outputs=["handle: resource"],
    attrs=["component_types: list(type) >= 0 = []", "shapes: list(shape) >= 0",
           "capacity: int = -1", "container: string = ''", "shared_name: string = ''"],
    shape_fn=_util.scalar, is_stateful=True)

_QUEUE_OPS = {"FIFOQueueV2", "PaddingFIFOQueueV2", "RandomShuffleQueueV2", "PriorityQueueV2"}


def _component_types(ctx: KernelContext) -> list:
    types = list(ctx.attr("component_types"))
    if ctx.op.type == "PriorityQueueV2":
        types = [_dtypes.int64] + types  # the priority travels as component 0
    return [np.dtype(t.as_numpy_dtype) for t in types]


def _component_shapes(ctx: KernelContext, count: int) -> Optional[list]:
    shapes = [s.as_tuple_or_none() for s in ctx.attr("shapes")]
    if ctx.op.type == "PriorityQueueV2":
        shapes = [()] + (shapes or [None] * (count - 1))
    if shapes and len(shapes) != count:
        raise errors.InvalidArgumentError(
            None, None, f"Queue shapes must have the same length as component types: got "
            f"{len(shapes)} shapes for {count} components")
    return shapes or None


def _queue_kernel(resource_cls: type, **extra: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """Builder of a queue op's kernel: the handle of its (possibly shared) queue resource."""

    def build(ctx: KernelContext) -> Callable[[], Any]:
        dtypes = _component_types(ctx)
        shapes = _component_shapes(ctx, len(dtypes))
        capacity = ctx.attr("capacity")
        kwargs = {k: fn(ctx) for k, fn in extra.items()}
        definition = (resource_cls.kind, dtypes, shapes, capacity, kwargs.get("min_after_dequeue"))

        def create(name: str) -> qr.QueueResource:
            return resource_cls(name, dtypes, shapes, capacity, definition, **kwargs)

        def verify(queue: Any) -> None:
            _verify_shared(queue, definition)

        return resource_handle_kernel(ctx, create, verify)

    return build


def _verify_shared(queue: Any, definition: tuple) -> None:
    """A second queue op naming the same shared queue must define it the same way."""
    if not isinstance(queue, qr.QueueResource):
        raise errors.InvalidArgumentError(
            None, None, f"Shared name refers to a {type(queue).__name__}, not a queue")
    have, name = queue.definition, queue.name
    if have[0] != definition[0]:
        raise errors.InvalidArgumentError(None, None, f"Shared queue '{name}' is a {have[0]}, but a "
                                          f"{definition[0]} was requested")
    for i, (what, verb, show) in enumerate(_SHARED_FIELDS, start=1):
        if have[i] != definition[i]:
            raise errors.InvalidArgumentError(
                None, None, f"Shared queue '{name}' has {what} {show(have[i])} but requested {what} "
                f"{verb} {show(definition[i])}")


def _types_str(types: Sequence[Any]) -> str:
    return ", ".join(_dtypes.as_dtype(np.dtype(t)).name if np.dtype(t) != np.object_ else "string"
                     for t in types)


def _shapes_str(shapes: Optional[Sequence[Any]]) -> str:
    return "unspecified" if not shapes else ", ".join(
        "?" if s is None else qr.format_shape(s) for s in shapes)


_SHARED_FIELDS = (("component types", "were", _types_str),
                  ("component shapes", "were", _shapes_str),
                  ("capacity", "was", str), ("min_after_dequeue", "was", str))


def _shuffle_rng(ctx: KernelContext) -> SingleSampleStream:
    """The queue's own stream, TF's: Philox(seed, seed2) one word per element handed out (fresh
    random seeds when both are 0), so a seeded queue shuffles as TF's does."""
    return SingleSampleStream(ctx.attr("seed"), ctx.attr("seed2"))


FIFOQueueV2.kernel()(_queue_kernel(qr.FIFOQueueResource))
PaddingFIFOQueueV2.kernel()(_queue_kernel(qr.PaddingFIFOQueueResource))
RandomShuffleQueueV2.kernel()(_queue_kernel(
    qr.RandomShuffleQueueResource, min_after_dequeue=lambda ctx: ctx.attr("min_after_dequeue"),
    rng=_shuffle_rng))
PriorityQueueV2.kernel()(_queue_kernel(qr.PriorityQueueResource))


# ---------------------------------------------------------------------------------------------
# Operations on a queue handle
# ---------------------------------------------------------------------------------------------
def _handle_component_shapes(handle: Any, count: int) -> list[TensorShape]:
    """Component shapes of the queue behind `handle` when its queue op is visible."""
    op = handle.op
    if op.type in _QUEUE_OPS:
        shapes = list(op._get_attr("shapes"))
        if op.type == "PriorityQueueV2":
            shapes = [TensorShape([])] + (shapes or [unknown_shape()] * (count - 1))
        if len(shapes) == count:
            return shapes
    return [unknown_shape()] * count


def _dequeue_shape(op: Operation) -> list[TensorShape]:
    return _handle_component_shapes(op.inputs[0], len(op.outputs))


def _dequeue_many_shape(op: Operation) -> list[TensorShape]:
    n = tensor_util.constant_value(op.inputs[1])
    batch = TensorShape([None if n is None or op.type == "QueueDequeueUpToV2" else int(n)])
    return [batch.concatenate(s) for s in _dequeue_shape(op)]


_ENQUEUE_ATTRS = ["Tcomponents: list(type) >= 1", "timeout_ms: int = -1"]
_DEQUEUE_ATTRS = ["component_types: list(type) >= 1", "timeout_ms: int = -1"]

QueueEnqueueV2 = define_op("QueueEnqueueV2", inputs=["handle: resource", "components: Tcomponents"],
                           attrs=_ENQUEUE_ATTRS, shape_fn=_util.no_outputs, is_async=True,
                           is_stateful=True)
QueueEnqueueManyV2 = define_op("QueueEnqueueManyV2", inputs=["handle: resource", "components: Tcomponents"],
                               attrs=_ENQUEUE_ATTRS, shape_fn=_util.no_outputs, is_async=True,
                               is_stateful=True)
QueueDequeueV2 = define_op("QueueDequeueV2", inputs=["handle: resource"],
                           outputs=["components: component_types"], attrs=_DEQUEUE_ATTRS,
                           shape_fn=_dequeue_shape, is_async=True, is_stateful=True)
QueueDequeueManyV2 = define_op("QueueDequeueManyV2", inputs=["handle: resource", "n: int32"],
                               outputs=["components: component_types"], attrs=_DEQUEUE_ATTRS,
                               shape_fn=_dequeue_many_shape, is_async=True, is_stateful=True)
QueueDequeueUpToV2 = define_op("QueueDequeueUpToV2", inputs=["handle: resource", "n: int32"],
                               outputs=["components: component_types"], attrs=_DEQUEUE_ATTRS,
                               shape_fn=_dequeue_many_shape, is_async=True, is_stateful=True)
QueueCloseV2 = define_op("QueueCloseV2", inputs=["handle: resource"],
                         attrs=["cancel_pending_enqueues: bool = false"], shape_fn=_util.no_outputs,
                         is_async=True, is_stateful=True)
QueueSizeV2 = define_op("QueueSizeV2", inputs=["handle: resource"], outputs=["size: int32"],
                        shape_fn=_util.scalar, is_stateful=True)
QueueIsClosedV2 = define_op("QueueIsClosedV2", inputs=["handle: resource"], outputs=["is_closed: bool"],
                            shape_fn=_util.scalar, is_stateful=True)

for _op in (FIFOQueueV2, PaddingFIFOQueueV2, RandomShuffleQueueV2, PriorityQueueV2, QueueEnqueueV2,
            QueueEnqueueManyV2, QueueDequeueV2, QueueDequeueManyV2, QueueDequeueUpToV2, QueueCloseV2,
            QueueSizeV2, QueueIsClosedV2):
    _op.not_differentiable()


def _queue_lookup(ctx: KernelContext, attr: str) -> Callable[[Any], qr.QueueResource]:
    """The queue behind a handle value, its component types checked against the node's
    (once per queue object)."""
    types = [np.dtype(t.as_numpy_dtype) for t in ctx.attr(attr)]
    checked: list = [None]

    def lookup(handle: Any) -> qr.QueueResource:
        queue = resource_of(handle)
        if queue is not checked[0]:
            queue.check_types(types)
            checked[0] = queue
        return queue

    return lookup


def _enqueue_builder(many: bool) -> Callable[[Any], Any]:
    def build(ctx: KernelContext) -> Callable[..., None]:
        lookup = _queue_lookup(ctx, "Tcomponents")

        def enqueue(step: Any, done: Callable[[Any], None], handle: Any, *components: Any) -> None:
            queue = lookup(handle)
            queue.enqueue(step, done, queue.split_batch(components) if many
                          else queue.make_element(components))

        return enqueue

    return build


QueueEnqueueV2.kernel()(_enqueue_builder(many=False))
QueueEnqueueManyV2.kernel()(_enqueue_builder(many=True))


def _single_output(done: Callable[[Any], None]) -> Callable[[Any], None]:
    """A continuation passing on the only component of a one-component result."""
    def deliver(result: Any) -> None:
        done(result if isinstance(result, BaseException) else result[0])
    return deliver


@QueueDequeueV2.kernel()
def _dequeue_kernel(ctx: KernelContext) -> Callable[..., None]:
    lookup = _queue_lookup(ctx, "component_types")
    single = len(ctx.attr("component_types")) == 1

    def dequeue(step: Any, done: Callable[[Any], None], handle: Any) -> None:
        lookup(handle).dequeue(step, _single_output(done) if single else done)

    return dequeue


def _dequeue_many_builder(allow_small: bool) -> Callable[[Any], Any]:
    def build(ctx: KernelContext) -> Callable[..., None]:
        lookup = _queue_lookup(ctx, "component_types")
        single = len(ctx.attr("component_types")) == 1

        def dequeue_many(step: Any, done: Callable[[Any], None], handle: Any, n: Any) -> None:
            queue = lookup(handle)
            if not queue.fully_defined:
                raise errors.InvalidArgumentError(
                    None, None, f"{queue.kind}'s DequeueMany and DequeueUpTo require the components "
                    "to have specified shapes.")
            n = int(n)
            if n < 0:
                raise errors.InvalidArgumentError(None, None, f"DequeueManyOp requested {n} < 0 elements")
            queue.dequeue_many(step, _single_output(done) if single else done, n, allow_small)

        return dequeue_many

    return build


QueueDequeueManyV2.kernel()(_dequeue_many_builder(False))
QueueDequeueUpToV2.kernel()(_dequeue_many_builder(True))


@QueueCloseV2.kernel()
def _close_kernel(ctx: KernelContext) -> Callable[..., None]:
    cancel = ctx.attr("cancel_pending_enqueues")

    def close(step: Any, done: Callable[[Any], None], handle: Any) -> None:
        resource_of(handle).close(step, done, cancel)

    return close


@QueueSizeV2.kernel()
def _size_kernel(ctx: KernelContext) -> Callable[[qr.QueueResource], Any]:
    return lambda handle: np.int32(resource_of(handle).size())


@QueueIsClosedV2.kernel()
def _is_closed_kernel(ctx: KernelContext) -> Callable[[qr.QueueResource], Any]:
    return lambda handle: np.bool_(resource_of(handle).closed)
