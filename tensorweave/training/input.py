"""Queue-based input pipelines (TF1's tf.train input functions; white paper 4.6).

Producers (`string_input_producer`, `range_input_producer`, `slice_input_producer`,
`input_producer`) put a (shuffled) list into a FIFOQueue, epoch after epoch, from a QueueRunner
thread; `limit_epochs` counts epochs in a local variable and ends the input with
OutOfRangeError after `num_epochs`. Batchers (`batch`, `batch_join`, `shuffle_batch`,
`shuffle_batch_join`) add a queue filled by QueueRunner threads and dequeue batches from it.
Start the threads with `tf.train.start_queue_runners`; initialize local variables first when
`num_epochs` is set.
"""
from __future__ import annotations

import itertools
from typing import Any, Optional, Sequence

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import graph as _graph
from tensorweave.framework.graph import GraphKeys, Tensor
from tensorweave.framework.sparse_tensor import SparseTensor
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape, as_shape
from tensorweave.training.queue_runner import QueueRunner, add_queue_runner
from tensorweave.ops import queues as queue_ops
from tensorweave.ops.array import constant, gather, identity, shape, size
from tensorweave.ops.array import range as range_op
from tensorweave.ops.debugging import Assert
from tensorweave.ops.io import matching_files
from tensorweave.ops.math import cast, greater, maximum
from tensorweave.ops.random import random_shuffle
from tensorweave.ops.state import Variable, count_up_to
from tensorweave.ops import summary as summary_ops

__all__ = ["match_filenames_once", "limit_epochs", "input_producer", "string_input_producer",
           "range_input_producer", "slice_input_producer", "batch", "batch_join", "shuffle_batch",
           "shuffle_batch_join"]


def _queue_ops() -> Any:
    return queue_ops


def _summary_scalar(name: str, value: Tensor) -> None:
    """The queue-fullness scalar summary TF adds for each input queue."""
    summary_ops.scalar(name, value)


# ---------------------------------------------------------------------------------------------
# Producers
# ---------------------------------------------------------------------------------------------
def match_filenames_once(pattern: Any, name: Optional[str] = None) -> Any:
    """A local variable holding the files matching the glob `pattern` (or list of patterns),
    computed once when local variables are initialized."""
    with _graph.name_scope(name, "matching_filenames", [pattern]) as scope:
        return Variable(matching_files(pattern), trainable=False, validate_shape=False,
                        name=scope,
                        collections=[GraphKeys.LOCAL_VARIABLES])


def limit_epochs(tensor: Any, num_epochs: Optional[int] = None, name: Optional[str] = None) -> Tensor:
    """Returns `tensor` `num_epochs` times, then fails with OutOfRangeError (None: forever).
    The count lives in a local variable named "epochs": run
    tf.local_variables_initializer() first."""
    if num_epochs is None:
        return tensor
    if num_epochs <= 0:
        raise ValueError(f"num_epochs must be > 0 not {num_epochs}.")
    with _graph.name_scope(name, "limit_epochs", [tensor]) as scope:
        epochs = Variable(constant(0, dtype=_dtypes.int64), name="epochs", trainable=False,
                          collections=[GraphKeys.LOCAL_VARIABLES])
        counter = count_up_to(epochs, num_epochs)
        with _graph.control_dependencies([counter]):
            return identity(tensor, name=scope)  # a trailing "/" names the op after the scope


def input_producer(input_tensor: Any, element_shape: Any = None, num_epochs: Optional[int] = None,
                   shuffle: bool = True, seed: Optional[int] = None, capacity: int = 32,
                   shared_name: Optional[str] = None, summary_name: Optional[str] = None,
                   name: Optional[str] = None, cancel_op: Any = None) -> Any:
    """A FIFOQueue fed with the rows of `input_tensor` (shuffled each epoch with `shuffle`),
    for `num_epochs` epochs or forever; its QueueRunner is added to the graph."""
    with _graph.name_scope(name, "input_producer", [input_tensor]):
        input_tensor = convert_to_tensor(input_tensor, name="input_tensor")
        row_shape = input_tensor.shape.with_rank_at_least(1)[1:]
        element_shape = row_shape.merge_with(as_shape(element_shape) if element_shape is not None
                                             else TensorShape(None))
        if not element_shape.is_fully_defined():
            raise ValueError("Either `input_tensor` must have a fully defined shape or "
                             "`element_shape` must be specified")
        if shuffle:
            input_tensor = random_shuffle(input_tensor, seed=seed)
        input_tensor = limit_epochs(input_tensor, num_epochs)
        queue = _queue_ops().FIFOQueue(capacity=capacity, dtypes=[input_tensor.dtype.base_dtype],
                                       shapes=[element_shape], shared_name=shared_name,
                                       name=name or "fifo_queue")
        enqueue = queue.enqueue_many([input_tensor])
        add_queue_runner(QueueRunner(queue, [enqueue], cancel_op=cancel_op))
        if summary_name is not None:
            _summary_scalar(summary_name, _fraction(queue.size(), 0, capacity))
        return queue


def _fraction(size: Tensor, offset: int, span: int) -> Tensor:
    over = maximum(0, size - offset) if offset else size
    return cast(over, _dtypes.float32) * (1.0 / span)


def string_input_producer(string_tensor: Any, num_epochs: Optional[int] = None, shuffle: bool = True,
                          seed: Optional[int] = None, capacity: int = 32, shared_name: Optional[str] = None,
                          name: Optional[str] = None, cancel_op: Any = None) -> Any:
    """A queue of the strings in the 1-D `string_tensor` (typically file names for a reader),
    repeated for `num_epochs` epochs (None: forever), shuffled within each epoch."""
    not_null_err = "string_input_producer requires a non-null input tensor"
    if not isinstance(string_tensor, Tensor) and not len(string_tensor):
        raise ValueError(not_null_err)
    with _graph.name_scope(name, "input_producer", [string_tensor]) as scope:
        string_tensor = convert_to_tensor(string_tensor, dtype=_dtypes.string)
        with _graph.control_dependencies([Assert(greater(size(string_tensor), 0), [not_null_err])]):
            string_tensor = identity(string_tensor)
        return input_producer(string_tensor, element_shape=[], num_epochs=num_epochs, shuffle=shuffle,
                              seed=seed, capacity=capacity, shared_name=shared_name,
                              name=scope, summary_name=f"fraction_of_{capacity}_full",
                              cancel_op=cancel_op)


def range_input_producer(limit: Any, num_epochs: Optional[int] = None, shuffle: bool = True,
                         seed: Optional[int] = None, capacity: int = 32, shared_name: Optional[str] = None,
                         name: Optional[str] = None) -> Any:
    """A queue of the integers 0 .. limit-1, repeated for `num_epochs` epochs (None: forever)."""
    with _graph.name_scope(name, "input_producer", [limit]) as scope:
        return input_producer(range_op(limit), [], num_epochs, shuffle, seed, capacity, shared_name,
                              f"fraction_of_{capacity}_full", scope)


def slice_input_producer(tensor_list: Sequence[Any], num_epochs: Optional[int] = None, shuffle: bool = True,
                         seed: Optional[int] = None, capacity: int = 32, shared_name: Optional[str] = None,
                         name: Optional[str] = None) -> list:
    """Produces one row of every tensor in `tensor_list` at a time (the same row index for all,
    from a range_input_producer over dimension 0)."""
    with _graph.name_scope(name, "input_producer", list(tensor_list)):
        tensors = [convert_to_tensor(t) for t in tensor_list]
        if not tensors:
            raise ValueError("Expected at least one tensor in slice_input_producer().")
        first = tensors[0].shape.with_rank_at_least(1)[0]
        for t in tensors[1:]:
            first = first.merge_with(t.shape.with_rank_at_least(1)[0])  # same number of rows
        queue = range_input_producer(shape(tensors[0])[0], num_epochs=num_epochs, shuffle=shuffle,
                                     seed=seed, capacity=capacity, shared_name=shared_name)
        index = queue.dequeue()
        return [gather(t, index) for t in tensors]


# ---------------------------------------------------------------------------------------------
# Batching
# ---------------------------------------------------------------------------------------------
def _as_tensor_list(tensors: Any) -> list:
    """A dict's values in sorted-key order (the order the queue holds them), else the list."""
    if isinstance(tensors, dict):
        return [tensors[k] for k in sorted(tensors, key=str)]
    if isinstance(tensors, (Tensor, SparseTensor)) or not isinstance(tensors, (list, tuple)):
        raise TypeError(f"tensors must be a list, tuple or dict of tensors, got {type(tensors).__name__}")
    return list(tensors)


def _as_tensor_list_list(tensors_list: Sequence[Any]) -> list[list]:
    if not tensors_list:
        raise ValueError("Expected at least one set of tensors")
    if isinstance(tensors_list[0], dict):
        keys = set(tensors_list[0])
        if any(set(t) != keys for t in tensors_list[1:]):
            raise ValueError("All dictionaries in tensors_list must have the same keys")
    return [_as_tensor_list(t) for t in tensors_list]


def _as_original_type(original: Any, dequeued: Any) -> Any:
    if isinstance(original, dict):
        if not isinstance(dequeued, list):  # a one-component queue dequeues a bare tensor
            dequeued = [dequeued]
        return {k: dequeued[i] for i, k in enumerate(sorted(original, key=str))}
    return dequeued


def _validate(tensor_list: list, what: str = "batch()") -> list[Tensor]:
    if not tensor_list:
        raise ValueError(f"Expected at least one tensor in {what}.")
    for t in tensor_list:
        if isinstance(t, SparseTensor):
            raise TypeError(f"{what} does not batch SparseTensors; batch their dense components "
                            f"(indices, values, dense_shape) or densify them first.")
    return [convert_to_tensor(t) for t in tensor_list]


def _dtypes_of(tensor_list_list: list[list[Tensor]]) -> list:
    types = [t.dtype.base_dtype for t in tensor_list_list[0]]
    for tl in tensor_list_list[1:]:
        other = [t.dtype.base_dtype for t in tl]
        if other != types:
            raise TypeError(f"Expected types to be consistent: {', '.join(x.name for x in types)} vs. "
                            f"{', '.join(x.name for x in other)}.")
    return types


def _shapes_of(tensor_list_list: list[list[Tensor]], shapes: Any, enqueue_many: bool) -> list[TensorShape]:
    """The queue's element shapes: given, or merged from the inputs (less the batch dimension
    with `enqueue_many`)."""
    if shapes is not None:
        return [as_shape(s) for s in shapes]
    if len({len(tl) for tl in tensor_list_list}) != 1:
        raise ValueError("Every set of tensors in tensors_list must have the same length")
    merged = []
    for i in range(len(tensor_list_list[0])):
        shape = TensorShape(None)
        for tl in tensor_list_list:
            s = tl[i].shape
            if s.ndims is None:
                raise ValueError(f"Cannot infer Tensor's rank: {tl[i]}")
            shape = shape.merge_with(s.with_rank_at_least(1)[1:] if enqueue_many else s)
        merged.append(shape)
    return merged


def _enqueue_ops(queue: Any, tensor_list_list: list[list[Tensor]], enqueue_many: bool,
                 copies: int = 1) -> None:
    enqueue = queue.enqueue_many if enqueue_many else queue.enqueue
    ops = [enqueue(tl) for tl in tensor_list_list] * copies  # one thread per op in the list
    add_queue_runner(QueueRunner(queue, ops))


def _dequeue(queue: Any, batch_size: Any, allow_smaller_final_batch: bool, name: str) -> Any:
    if allow_smaller_final_batch:
        return queue.dequeue_up_to(batch_size, name=name)
    return queue.dequeue_many(batch_size, name=name)


def _batch_join_impl(tensors_list: Sequence[Any], batch_size: Any, num_threads: int, capacity: int,
                     enqueue_many: bool, shapes: Any, dynamic_pad: bool, allow_smaller_final_batch: bool,
                     shared_name: Optional[str], name: Optional[str], default_name: str) -> Any:
    lists = _as_tensor_list_list(tensors_list)
    flat = list(itertools.chain.from_iterable(lists))
    with _graph.name_scope(name, default_name, flat) as scope:
        lists = [_validate(tl, f"{default_name}()") for tl in lists]
        types = _dtypes_of(lists)
        queue_shapes = _shapes_of(lists, shapes, enqueue_many)
        qops = _queue_ops()
        queue_cls = qops.PaddingFIFOQueue if dynamic_pad else qops.FIFOQueue
        queue = queue_cls(capacity=capacity, dtypes=types, shapes=queue_shapes, shared_name=shared_name)
        _enqueue_ops(queue, lists, enqueue_many, num_threads)
        _summary_scalar(f"fraction_of_{capacity}_full", _fraction(queue.size(), 0, capacity))
        return _as_original_type(tensors_list[0], _dequeue(queue, batch_size, allow_smaller_final_batch, scope))


def batch(tensors: Any, batch_size: Any, num_threads: int = 1, capacity: int = 32, enqueue_many: bool = False,
          shapes: Any = None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
          shared_name: Optional[str] = None, name: Optional[str] = None) -> Any:
    """Batches `tensors` (a list or dict) through a queue filled by `num_threads` threads.

    Each run of the result dequeues `batch_size` elements; with `enqueue_many`, each input is
    already a batch of elements along dimension 0. `dynamic_pad` pads elements of different
    shapes to the batch's largest; `allow_smaller_final_batch` returns a last, smaller batch
    when the input ends (else the remainder is dropped). Returns the same structure as
    `tensors` (a single tensor for a one-element list)."""
    return _batch_join_impl([tensors], batch_size, num_threads, capacity, enqueue_many, shapes, dynamic_pad,
                            allow_smaller_final_batch, shared_name, name, "batch")


def batch_join(tensors_list: Sequence[Any], batch_size: Any, capacity: int = 32, enqueue_many: bool = False,
               shapes: Any = None, dynamic_pad: bool = False, allow_smaller_final_batch: bool = False,
               shared_name: Optional[str] = None, name: Optional[str] = None) -> Any:
    """Like `batch`, from several lists of tensors (e.g. one per reader), each enqueued by its
    own thread into one queue."""
    return _batch_join_impl(tensors_list, batch_size, 1, capacity, enqueue_many, shapes, dynamic_pad,
                            allow_smaller_final_batch, shared_name, name, "batch_join")


def _shuffle_batch_join_impl(tensors_list: Sequence[Any], batch_size: Any, capacity: int, min_after_dequeue: int,
                             num_threads: int, seed: Optional[int], enqueue_many: bool, shapes: Any,
                             allow_smaller_final_batch: bool, shared_name: Optional[str],
                             name: Optional[str], default_name: str) -> Any:
    lists = _as_tensor_list_list(tensors_list)
    flat = list(itertools.chain.from_iterable(lists))
    with _graph.name_scope(name, default_name, flat) as scope:
        if capacity <= min_after_dequeue:
            raise ValueError(f"capacity {capacity} must be bigger than min_after_dequeue {min_after_dequeue}.")
        lists = [_validate(tl, f"{default_name}()") for tl in lists]
        types = _dtypes_of(lists)
        queue_shapes = _shapes_of(lists, shapes, enqueue_many)
        queue = _queue_ops().RandomShuffleQueue(capacity=capacity, min_after_dequeue=min_after_dequeue,
                                                seed=seed, dtypes=types, shapes=queue_shapes,
                                                shared_name=shared_name)
        _enqueue_ops(queue, lists, enqueue_many, num_threads)
        _summary_scalar(f"fraction_over_{min_after_dequeue}_of_{capacity - min_after_dequeue}_full",
                        _fraction(queue.size(), min_after_dequeue, capacity - min_after_dequeue))
        return _as_original_type(tensors_list[0], _dequeue(queue, batch_size, allow_smaller_final_batch, scope))


def shuffle_batch(tensors: Any, batch_size: Any, capacity: int, min_after_dequeue: int, num_threads: int = 1,
                  seed: Optional[int] = None, enqueue_many: bool = False, shapes: Any = None,
                  allow_smaller_final_batch: bool = False, shared_name: Optional[str] = None,
                  name: Optional[str] = None) -> Any:
    """Batches `tensors` in random order: `num_threads` threads fill a RandomShuffleQueue that
    keeps at least `min_after_dequeue` elements (until the input ends) to sample from."""
    return _shuffle_batch_join_impl([tensors], batch_size, capacity, min_after_dequeue, num_threads, seed,
                                    enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                                    "shuffle_batch")


def shuffle_batch_join(tensors_list: Sequence[Any], batch_size: Any, capacity: int, min_after_dequeue: int,
                       seed: Optional[int] = None, enqueue_many: bool = False, shapes: Any = None,
                       allow_smaller_final_batch: bool = False, shared_name: Optional[str] = None,
                       name: Optional[str] = None) -> Any:
    """Like `shuffle_batch`, from several lists of tensors, one enqueue thread each."""
    return _shuffle_batch_join_impl(tensors_list, batch_size, capacity, min_after_dequeue, 1, seed,
                                    enqueue_many, shapes, allow_smaller_final_batch, shared_name, name,
                                    "shuffle_batch_join")
