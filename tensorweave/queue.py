"""`tf.queue`: the queue classes (re-exports only)."""
from tensorweave.ops.queues import (  # noqa: F401
    FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue)
