"""`tf.queue`: the queue classes (re-exports only)."""
from tensorweave.ops.queues.queue_ops import (
    FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue)
