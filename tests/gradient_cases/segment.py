"""Gradient cases: segment reductions, dynamic partition/stitch, and embedding lookups (whose
IndexedSlices gradient the checker densifies through the registered conversion)."""
import numpy as np

from tensorweave.ops.array import partition_stitch as data_flow_ops
from tensorweave.ops.nn import embedding as embedding_ops
from tensorweave.ops.math import segment as segment_ops
from tests.gradient_cases import GradCase

SORTED_IDS = [0, 0, 1, 3, 3]        # segment 2 is empty
UNSORTED_IDS = [2, 0, -1, 2, 0]     # -1 is dropped; segment 1 is empty


def _with_zeros(shape):
    """Inputs for product gradients: one segment with a single zero, one with two zeros.
    A product is linear in each input, so central differences stay exact at zero."""
    def init(rng):
        x = rng.uniform(0.5, 1.5, shape) * rng.choice([-1.0, 1.0], shape)
        x[0, 0] = 0.0          # segment 0 / 2: one zero in column 0
        x[3, 1] = 0.0          # two zeros in column 1 of the segment holding rows 3, 4
        x[4, 1] = 0.0
        return [x]
    return init


CASES = [
    GradCase("segment_sum", ("SegmentSum",), lambda d: segment_ops.segment_sum(d, SORTED_IDS), [(5, 2)]),
    GradCase("segment_sum_3d", ("SegmentSum",), lambda d: segment_ops.segment_sum(d, [0, 1, 1]), [(3, 2, 2)]),
    GradCase("segment_mean", ("SegmentMean",), lambda d: segment_ops.segment_mean(d, SORTED_IDS), [(5, 2)]),
    GradCase("segment_mean_3d", ("SegmentMean",), lambda d: segment_ops.segment_mean(d, [0, 0, 2]),
             [(3, 2, 2)]),
    GradCase("segment_max", ("SegmentMax",), lambda d: segment_ops.segment_max(d, SORTED_IDS), [(5, 2)]),
    GradCase("segment_min", ("SegmentMin",), lambda d: segment_ops.segment_min(d, SORTED_IDS), [(5, 2)]),
    GradCase("segment_prod", ("SegmentProd",), lambda d: segment_ops.segment_prod(d, SORTED_IDS), [(5, 2)],
             init=_with_zeros((5, 2))),
    GradCase("unsorted_segment_max", ("UnsortedSegmentMax",),
             lambda d: segment_ops.unsorted_segment_max(d, UNSORTED_IDS, 3), [(5, 2)]),
    GradCase("unsorted_segment_min", ("UnsortedSegmentMin",),
             lambda d: segment_ops.unsorted_segment_min(d, UNSORTED_IDS, 3), [(5, 2)]),
    GradCase("unsorted_segment_prod", ("UnsortedSegmentProd",),
             lambda d: segment_ops.unsorted_segment_prod(d, [0, 1, 2, 1, 1], 4), [(5, 2)],
             init=_with_zeros((5, 2))),
    GradCase("unsorted_segment_prod_negative_ids", ("UnsortedSegmentProd",),
             lambda d: segment_ops.unsorted_segment_prod(d, UNSORTED_IDS, 3), [(5, 2)]),
    GradCase("dynamic_stitch", ("DynamicStitch",),
             lambda a, b: data_flow_ops.dynamic_stitch([[0, 3], [1, 2, 4]], [a, b]), [(2, 3), (3, 3)]),
    GradCase("dynamic_stitch_2d_indices", ("DynamicStitch",),
             lambda a, b: data_flow_ops.dynamic_stitch([[[1, 0]], [2]], [a, b]), [(1, 2, 2), (1, 2)]),
    GradCase("parallel_dynamic_stitch", ("ParallelDynamicStitch",),
             lambda a, b: data_flow_ops.parallel_dynamic_stitch([[2, 0], [1]], [a, b]), [(2,), (1,)]),
    GradCase("dynamic_partition_one_output", ("DynamicPartition",),
             lambda d: data_flow_ops.dynamic_partition(d, [1, 0, 2, 1, 0], 3)[1], [(5, 2)]),
    GradCase("dynamic_partition_2d_partitions", ("DynamicPartition",),
             lambda d: data_flow_ops.dynamic_partition(d, [[1, 0], [0, 1]], 2)[0], [(2, 2, 3)]),
    GradCase("dynamic_partition_then_stitch", ("DynamicPartition", "ParallelDynamicStitch"),
             lambda d: data_flow_ops.parallel_dynamic_stitch(
                 data_flow_ops.dynamic_partition(np.arange(4, dtype=np.int32), [1, 0, 1, 2], 3),
                 data_flow_ops.dynamic_partition(d, [1, 0, 1, 2], 3)), [(4, 3)]),
    # IndexedSlices gradients (GatherV2), densified by the checker; id 3 is looked up twice
    GradCase("embedding_lookup", ("GatherV2",),
             lambda t: embedding_ops.embedding_lookup(t, [3, 0, 3, 1]), [(5, 2)]),
    GradCase("embedding_lookup_div_shards", ("GatherV2", "ParallelDynamicStitch"),
             lambda a, b, c: embedding_ops.embedding_lookup([a, b, c], [[0, 5], [2, 5], [7, 3]],
                                                            partition_strategy="div"),
             [(3, 2), (3, 2), (2, 2)]),
    GradCase("embedding_lookup_mod_shards", ("GatherV2", "ParallelDynamicStitch"),
             lambda a, b: embedding_ops.embedding_lookup([a, b], [4, 1, 4, 2]), [(3, 2), (2, 2)]),
]
