"""`from tensorflow.python.client import timeline`: the same Timeline as tensorweave.tools."""
from tensorweave.tools.timeline import AllocationMaximum, StepStatsAnalysis, Timeline

__all__ = ["AllocationMaximum", "StepStatsAnalysis", "Timeline"]
