"""`tf.queue`: the queue classes (re-exports only)."""
from tensorweave.ops.queue_ops import (  # noqa: F401
    FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue)
