"""The TF1 queue classes (white paper 4.6): `tf.QueueBase` and `tf.FIFOQueue`,
`tf.PaddingFIFOQueue`, `tf.RandomShuffleQueue`, `tf.PriorityQueue`, built on the queue ops of
queues/queue_ops.py. `QueueBase.from_list` selects among queue handles with array ops."""
from __future__ import annotations

import hashlib
from typing import Any, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework import random_seed
from tensorweave.framework import tensor_util
from tensorweave.framework.op_def import OpDef
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import Dimension, TensorShape, as_shape, unknown_shape
from tensorweave.ops.array.joining import stack
from tensorweave.ops.array.slicing import gather
from tensorweave.ops.queues.queue_ops import (
    FIFOQueueV2, PaddingFIFOQueueV2, PriorityQueueV2, QueueCloseV2, QueueDequeueManyV2,
    QueueDequeueUpToV2, QueueDequeueV2, QueueEnqueueManyV2, QueueEnqueueV2, QueueIsClosedV2,
    QueueSizeV2, RandomShuffleQueueV2)

__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"]


def _as_type_list(dtypes: Any) -> list:
    if isinstance(dtypes, _dtypes.DType) or not isinstance(dtypes, (list, tuple)):
        return [_dtypes.as_dtype(dtypes)]
    return [_dtypes.as_dtype(d) for d in dtypes]


def _as_shape_list(shapes: Any, unknown_dim_allowed: bool = False) -> Optional[list[TensorShape]]:
    """TF1's reading of the `shapes` argument: one shape, or a list with one per component."""
    if unknown_dim_allowed and (not isinstance(shapes, (list, tuple)) or not shapes or any(
            s is None or isinstance(s, int) for s in shapes)):
        raise ValueError("When providing partial shapes, a list of shapes must be provided.")
    if shapes is None:
        return None
    if isinstance(shapes, TensorShape):
        shapes = [shapes]
    if not isinstance(shapes, (list, tuple)):
        raise TypeError(f"Shapes must be a TensorShape or a list or tuple of TensorShapes, got "
                        f"{type(shapes)} instead.")
    if all(s is None or isinstance(s, (int, Dimension)) for s in shapes):
        shapes = [shapes]  # a single shape
    result = [as_shape(s) for s in shapes]
    if not unknown_dim_allowed and any(not s.is_fully_defined() for s in result):
        raise ValueError(f"All shapes must be fully defined: {result}")
    if any(s.ndims is None for s in result):
        raise ValueError(f"All shapes must have a defined rank: {result}")
    return result


def _as_name_list(names: Any, dtypes: Sequence[Any]) -> Optional[list]:
    if names is None:
        return None
    if not isinstance(names, (list, tuple)):
        names = [names]
    if len(names) != len(dtypes):
        raise ValueError("List of names must have the same length as the list of dtypes")
    return list(names)


class QueueBase:
    """Base class for queue implementations: a queue holds tuples of tensors with fixed dtypes
    (and optionally shapes and names); enqueue/dequeue ops run asynchronously in steps."""

    def __init__(self, dtypes: Any, shapes: Any, names: Any, queue_ref: Any) -> None:
        self._dtypes = list(dtypes)
        if shapes is not None:
            if len(shapes) != len(dtypes):
                raise ValueError(f"Queue shapes must have the same length as dtypes, received "
                                 f"len(shapes)={len(shapes)}, len(dtypes)={len(dtypes)}")
            self._shapes = [as_shape(s) for s in shapes]
        else:
            self._shapes = [unknown_shape() for _ in self._dtypes]
        if names is not None:
            if len(names) != len(dtypes):
                raise ValueError(f"List of names must have the same length as the list of dtypes, "
                                 f"received len(names)={len(names)},len(dtypes)={len(dtypes)}")
            self._names = list(names)
        else:
            self._names = None
        self._queue_ref = queue_ref
        self._name = queue_ref.op.name.split("/")[-1]

    @staticmethod
    def from_list(index: Any, queues: Sequence["QueueBase"]) -> "QueueBase":
        """A queue whose ops act on `queues[index]`, chosen when the step runs."""
        if not queues or not isinstance(queues, list) or not all(isinstance(q, QueueBase) for q in queues):
            raise TypeError("A list of queues expected")
        dtypes = queues[0].dtypes
        if not all(dtypes == q.dtypes for q in queues[1:]):
            raise TypeError("Queues do not have matching component dtypes.")
        names = queues[0].names
        if not all(names == q.names for q in queues[1:]):
            raise TypeError("Queues do not have matching component names.")
        shapes = []
        for per_queue in zip(*[q.shapes for q in queues]):
            common = per_queue[0]
            for s in per_queue[1:]:
                common = common.most_specific_compatible_shape(s)
            shapes.append(common)
        refs = stack([q.queue_ref for q in queues])
        selected = gather(refs, index)
        return QueueBase(dtypes=dtypes, shapes=shapes, names=names, queue_ref=selected)

    # -- properties -------------------------------------------------------------------------------
    @property
    def queue_ref(self) -> Any:
        """The underlying queue reference (a `resource` handle)."""
        return self._queue_ref

    @property
    def name(self) -> str:
        """The name of the underlying queue."""
        return self._queue_ref.op.name

    @property
    def dtypes(self) -> list:
        return self._dtypes

    @property
    def shapes(self) -> list[TensorShape]:
        return self._shapes

    @property
    def names(self) -> Optional[list]:
        return self._names

    # -- enqueue ----------------------------------------------------------------------------------
    def _check_enqueue_dtypes(self, vals: Any) -> list:
        if isinstance(vals, dict):
            if not self._names:
                raise ValueError("Queue must have names to enqueue a dictionary")
            if sorted(self._names, key=str) != sorted(vals.keys(), key=str):
                raise ValueError(f"Keys in dictionary to enqueue do not match names of Queue.  "
                                 f"Dictionary: {sorted(vals.keys())},Queue: {sorted(self._names)}")
            vals = [vals[k] for k in self._names]
        else:
            if self._names:
                raise ValueError("You must enqueue a dictionary in a Queue with names")
            if not isinstance(vals, (list, tuple)):
                vals = [vals]
        if len(vals) != len(self._dtypes):
            raise ValueError(f"Queue '{self.name}' has {len(self._dtypes)} component(s) but "
                             f"{len(vals)} value(s) were given to enqueue")
        return [convert_to_tensor(v, dtype=dt, name=f"component_{i}")
                for i, (v, dt) in enumerate(zip(vals, self._dtypes))]

    def _scope_vals(self, vals: Any) -> list:
        if isinstance(vals, (list, tuple)):
            return [self._queue_ref] + list(vals)
        if isinstance(vals, dict):
            return [self._queue_ref] + list(vals.values())
        return [self._queue_ref, vals]

    def enqueue(self, vals: Any, name: Optional[str] = None) -> Any:
        """Enqueues one element (a tensor, list/tuple of tensors, or dict by names). When the
        queue is full the op waits until there is room; on a closed queue it fails with
        CancelledError."""
        with _graph.name_scope(name, f"{self._name}_enqueue", self._scope_vals(vals)) as scope:
            tensors = self._check_enqueue_dtypes(vals)
            for tensor, shape in zip(tensors, self._shapes):
                tensor.shape.assert_is_compatible_with(shape)
            return apply_op(QueueEnqueueV2, name=scope, handle=self._queue_ref, components=tensors)

    def enqueue_many(self, vals: Any, name: Optional[str] = None) -> Any:
        """Enqueues zero or more elements: each component is sliced along dimension 0, which
        must be the same size for every component."""
        with _graph.name_scope(name, f"{self._name}_EnqueueMany", self._scope_vals(vals)) as scope:
            tensors = self._check_enqueue_dtypes(vals)
            batch = tensors[0].shape.with_rank_at_least(1)[0] if tensors[0].shape.ndims is not None \
                else Dimension(None)
            for tensor, shape in zip(tensors, self._shapes):
                tshape = tensor.shape.with_rank_at_least(1)
                if tshape.ndims is not None:
                    batch = batch.merge_with(tshape[0])
                    tshape[1:].assert_is_compatible_with(shape)
            return apply_op(QueueEnqueueManyV2, name=scope, handle=self._queue_ref, components=tensors)

    # -- dequeue ----------------------------------------------------------------------------------
    def _dequeue_return_value(self, tensors: Any) -> Any:
        tensors = list(tensors) if isinstance(tensors, (list, tuple)) else [tensors]
        if self._names:
            return {n: tensors[i] for i, n in enumerate(self._names)}
        if len(tensors) == 1:
            return tensors[0]
        return tensors

    def _dequeue_op(self, op_def: OpDef, name: str, batch: Optional[TensorShape], **inputs: Any) -> Any:
        ret = apply_op(op_def, name=name, handle=self._queue_ref, component_types=self._dtypes, **inputs)
        outputs = ret if isinstance(ret, list) else [ret]
        for output, shape in zip(outputs, self._shapes):
            output.set_shape(shape if batch is None else batch.concatenate(shape))
        return self._dequeue_return_value(outputs)

    def dequeue(self, name: Optional[str] = None) -> Any:
        """Dequeues one element; waits while the queue is empty, and fails with OutOfRangeError
        once it is closed and empty."""
        return self._dequeue_op(QueueDequeueV2, name or f"{self._name}_Dequeue", None)

    def dequeue_many(self, n: Any, name: Optional[str] = None) -> Any:
        """Dequeues and concatenates `n` elements along a new dimension 0; waits for all `n`
        and fails with OutOfRangeError if the queue closes with fewer."""
        n_tensor = convert_to_tensor(n, dtype=_dtypes.int32) if not _graph.is_tensor_like(n) else n
        value = tensor_util.constant_value(n_tensor)
        batch = TensorShape([None if value is None else int(value)])
        return self._dequeue_op(QueueDequeueManyV2, name or f"{self._name}_DequeueMany", batch, n=n_tensor)

    def dequeue_up_to(self, n: Any, name: Optional[str] = None) -> Any:
        """Like dequeue_many, but once the queue is closed returns what is left (fewer than
        `n`) before failing with OutOfRangeError when nothing is left."""
        return self._dequeue_op(QueueDequeueUpToV2, name or f"{self._name}_DequeueUpTo",
                                TensorShape([None]), n=n)

    # -- state ------------------------------------------------------------------------------------
    def close(self, cancel_pending_enqueues: bool = False, name: Optional[str] = None) -> Any:
        """Closes the queue: later enqueues fail; pending dequeues complete while elements last.
        With `cancel_pending_enqueues`, blocked enqueues fail with CancelledError."""
        return apply_op(QueueCloseV2, name=name or f"{self._name}_Close", handle=self._queue_ref,
                        cancel_pending_enqueues=cancel_pending_enqueues)

    def is_closed(self, name: Optional[str] = None) -> Any:
        """A scalar bool tensor: whether the queue is closed."""
        return apply_op(QueueIsClosedV2, name=name or f"{self._name}_Is_Closed", handle=self._queue_ref)

    def size(self, name: Optional[str] = None) -> Any:
        """A scalar int32 tensor: the number of elements in the queue."""
        return apply_op(QueueSizeV2, name=name or f"{self._name}_Size", handle=self._queue_ref)


class FIFOQueue(QueueBase):
    """A queue that dequeues elements in first-in first-out order."""

    def __init__(self, capacity: int, dtypes: Any, shapes: Any = None, names: Any = None,
                 shared_name: Optional[str] = None, name: str = "fifo_queue") -> None:
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        ref = apply_op(FIFOQueueV2, name=name, component_types=dtypes, shapes=shapes or [],
                       capacity=capacity, shared_name=shared_name or "")
        super().__init__(dtypes, shapes, names, ref)


class PaddingFIFOQueue(QueueBase):
    """A FIFOQueue whose shapes may have unknown dimensions; `dequeue_many` pads each batch to
    the largest element (zeros, or empty strings)."""

    def __init__(self, capacity: int, dtypes: Any, shapes: Any, names: Any = None,
                 shared_name: Optional[str] = None, name: str = "padding_fifo_queue") -> None:
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes, unknown_dim_allowed=True)
        names = _as_name_list(names, dtypes)
        if len(dtypes) != len(shapes):  # type: ignore[arg-type]
            raise ValueError(f"Shapes must be provided for all components, but received {len(dtypes)} "
                             f"dtypes and {len(shapes)} shapes.")  # type: ignore[arg-type]
        ref = apply_op(PaddingFIFOQueueV2, name=name, component_types=dtypes, shapes=shapes,
                       capacity=capacity, shared_name=shared_name or "")
        super().__init__(dtypes, shapes, names, ref)


class RandomShuffleQueue(QueueBase):
    """A queue that dequeues elements in random order, keeping at least `min_after_dequeue`
    elements until it is closed."""

    def __init__(self, capacity: int, min_after_dequeue: int, dtypes: Any, shapes: Any = None,
                 names: Any = None, seed: Optional[int] = None, shared_name: Optional[str] = None,
                 name: str = "random_shuffle_queue") -> None:
        dtypes = _as_type_list(dtypes)
        shapes = _as_shape_list(shapes)
        names = _as_name_list(names, dtypes)
        seed1, seed2 = random_seed.get_seed(seed)
        if seed1 is None and seed2 is None:
            seed1, seed2 = 0, 0
        elif seed is None and shared_name is not None:
            # Graph seed only: make seed2 depend on the graph seed and the shared name, so every
            # graph sharing this queue agrees (TF1's rule).
            digest = hashlib.md5((str(seed1) + shared_name).encode("utf-8")).hexdigest()
            seed2 = int(digest[:8], 16) & 0x7FFFFFFF
        ref = apply_op(RandomShuffleQueueV2, name=name, component_types=dtypes, shapes=shapes or [],
                       capacity=capacity, min_after_dequeue=min_after_dequeue, seed=seed1, seed2=seed2,
                       shared_name=shared_name or "")
        super().__init__(dtypes, shapes, names, ref)


class PriorityQueue(QueueBase):
    """A queue that dequeues the element with the smallest priority first. Each element's
    first component is its int64 scalar priority (not part of `types`/`shapes`)."""

    def __init__(self, capacity: int, types: Any, shapes: Any = None, names: Any = None,
                 shared_name: Optional[str] = None, name: str = "priority_queue") -> None:
        types = _as_type_list(types)
        if shapes is None:
            raise TypeError("Expected list for 'shapes' argument to 'priority_queue_v2' Op, not None.")
        shapes = _as_shape_list(shapes)
        ref = apply_op(PriorityQueueV2, name=name, component_types=types, shapes=shapes or [],
                       capacity=capacity, shared_name=shared_name or "")
        priority_types = [_dtypes.int64] + types
        priority_shapes = [TensorShape([])] + shapes if shapes else shapes
        super().__init__(priority_types, priority_shapes, names, ref)
