"""Op cases for stateful containers: queues of every kind, conditional accumulators (resource,
reference and sparse), stacks, mutexes and tensor arrays. Each case fills and drains its
container in one run; in graph mode control dependencies give the order program order gives
eagerly."""
import numpy as np

import tensorweave as tf
from tensorweave.ops.control_flow import stack_ops
from tensorweave.ops.state import mutex as mutex_ops
from tests.op_cases import SEEDED, OpCase, raw


def _after(before, make):
    """What `make()` builds (a tensor, an op, or a list of them), run after `before`."""
    with tf.control_dependencies(before if isinstance(before, list) else [before]):
        return _ordered(make())


def _ordered(value):
    if isinstance(value, (list, tuple)):
        return [_ordered(v) for v in value]
    if isinstance(value, tf.Operation):
        return tf.group(value)
    return tf.identity(value)


def _queues():
    fifo = tf.FIFOQueue(5, [tf.int32, tf.float32], shapes=[[], [2]])
    put_many = fifo.enqueue_many(([1, 2, 3], [[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]))
    put = _after(put_many, lambda: fifo.enqueue((4, [7.0, 8.0])))
    one = _after(put, lambda: fifo.dequeue())
    many = _after(one, lambda: fifo.dequeue_many(2))
    size = _after(many, lambda: fifo.size())
    close = _after(size, lambda: fifo.close())
    rest = _after(close, lambda: fifo.dequeue_up_to(3))
    closed = _after(rest, lambda: fifo.is_closed())
    padding = tf.PaddingFIFOQueue(4, [tf.int32], shapes=[[None]])
    padded = _after(padding.enqueue_many([[[1, 2], [3, 0]]]), lambda: padding.dequeue_many(2))
    priority = tf.PriorityQueue(4, [tf.string], shapes=[[]])
    ranked = _after(priority.enqueue_many(([5, 1, 3], ["e", "a", "c"])), lambda: priority.dequeue_many(3))
    return [one, many, size, rest, closed, padded, ranked]


def _shuffle_queue():
    queue = tf.RandomShuffleQueue(6, 0, [tf.int32], shapes=[[]], seed=3)
    return _after(queue.enqueue_many([[1, 2, 3, 4, 5]]), lambda: queue.dequeue_many(5))


def _accumulators(x):
    dense = tf.ConditionalAccumulator(tf.float32, shape=[2])
    applied = [dense.apply_grad(x[0], local_step=0), dense.apply_grad(x[1], local_step=0)]
    count = _after(applied, lambda: dense.num_accumulated())
    step = _after(count, lambda: dense.set_global_step(0))
    mean = _after(step, lambda: dense.take_grad(2))
    ref = raw("ConditionalAccumulator", dtype=tf.float32, shape=[2])
    put = raw("AccumulatorApplyGradient", ref, tf.constant(0, tf.int64), x[0])
    put2 = _after(put, lambda: raw("AccumulatorApplyGradient", ref, tf.constant(0, tf.int64), x[1]))
    ref_count = _after(put2, lambda: raw("AccumulatorNumAccumulated", ref))
    ref_step = _after(ref_count, lambda: raw("AccumulatorSetGlobalStep", ref, tf.constant(0, tf.int64)))
    ref_mean = _after(ref_step, lambda: raw("AccumulatorTakeGradient", ref, tf.constant(2), dtype=tf.float32))
    sparse = tf.SparseConditionalAccumulator(tf.float32, shape=[3, 2])
    sparse_put = [sparse.apply_grad([0, 2], x, local_step=0), sparse.apply_grad([2], x[:1], local_step=0)]
    with tf.control_dependencies(sparse_put):
        rows = sparse.take_indexed_slices_grad(2)
    return [count, mean, ref_count, ref_mean, rows.indices, rows.values, rows.dense_shape]


def _stack_and_mutex(x):
    handle = stack_ops.stack(tf.float32, max_size=4)
    pushed = stack_ops.stack_push(handle, x[0])
    pushed2 = _after(pushed, lambda: stack_ops.stack_push(handle, x[1]))
    top = _after(pushed2, lambda: stack_ops.stack_pop(handle, tf.float32))
    closed = _after(top, lambda: stack_ops.stack_close(handle))
    mutex = raw("MutexV2")
    lock = mutex_ops.mutex_lock(mutex)
    with tf.control_dependencies([lock]):
        guarded = x * 2.0
    released = mutex_ops.consume_mutex_lock(lock)
    return [pushed, top, _after(closed, lambda: x), _after(released, lambda: guarded)]


def _tensor_arrays(x):
    with tf.GradientTape() as tape:
        tape.watch(x)
        array = tf.TensorArray(tf.float32, size=3).unstack(x)
        total = array.read(0) + 2.0 * array.read(2)
        size = array.size()
    grad = tape.gradient(total, x)
    written = tf.TensorArray(tf.float32, size=1).write(0, x[0])
    stacked = written.stack()
    return [total, size, grad, stacked, _after(_after(stacked, written.close), lambda: x)]


CASES = [
    OpCase("queues:queues", _queues,
           ops=("FIFOQueueV2", "QueueEnqueueManyV2", "QueueEnqueueV2", "QueueDequeueV2", "QueueDequeueManyV2",
                "QueueSizeV2", "QueueCloseV2", "QueueDequeueUpToV2", "QueueIsClosedV2", "PaddingFIFOQueueV2",
                "PriorityQueueV2")),
    OpCase("queues:random_shuffle_queue", _shuffle_queue, compare=SEEDED, ops=("RandomShuffleQueueV2",)),
    OpCase("queues:accumulators", _accumulators, lambda rng: [rng.randn(2, 2).astype(np.float32)],
           ("ResourceConditionalAccumulator", "ResourceAccumulatorApplyGradient",
            "ResourceAccumulatorNumAccumulated", "ResourceAccumulatorSetGlobalStep",
            "ResourceAccumulatorTakeGradient", "ConditionalAccumulator", "AccumulatorApplyGradient",
            "AccumulatorNumAccumulated", "AccumulatorSetGlobalStep", "AccumulatorTakeGradient",
            "SparseConditionalAccumulator", "SparseAccumulatorApplyGradient", "SparseAccumulatorTakeGradient")),
    OpCase("control:stack_and_mutex", _stack_and_mutex, lambda rng: [rng.randn(2, 2).astype(np.float32)],
           ("StackV2", "StackPushV2", "StackPopV2", "StackCloseV2", "MutexV2", "MutexLock", "ConsumeMutexLock")),
    OpCase("control:tensor_arrays", _tensor_arrays, lambda rng: [rng.randn(3, 2).astype(np.float32)],
           ("TensorArrayV3", "TensorArraySizeV3", "TensorArrayGradV3", "TensorArrayCloseV3")),
]
