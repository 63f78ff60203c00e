"""`tf.queue`: the queue classes (re-exports only)."""
from tensorweave.ops.queues import (  # noqa: F401
    FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue)
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("queue", __name__)
