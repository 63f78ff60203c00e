"""Queues (white paper 4.6; OSDI 3.1): the queue ops (queue_ops), the queue state kept in resource
managers (queue_resource), and the TF1 queue classes over the ops (queue_classes, tier 2); the
conditional accumulators of synchronous training likewise (accumulator_ops, accumulator_resource,
accumulator_classes, tier 2).

The family's public names (TF's data_flow_ops queue and accumulator classes) are re-exported here."""
from tensorweave.ops.queues.queue_classes import (
    FIFOQueue, PaddingFIFOQueue, PriorityQueue, QueueBase, RandomShuffleQueue)

__all__ = ["QueueBase", "FIFOQueue", "PaddingFIFOQueue", "RandomShuffleQueue", "PriorityQueue"]
from tensorweave.ops.queues.accumulator_classes import (  # noqa: E402
    ConditionalAccumulator, ConditionalAccumulatorBase, SparseConditionalAccumulator)

__all__ += ["ConditionalAccumulatorBase", "ConditionalAccumulator", "SparseConditionalAccumulator"]
