"""What a plan learns about its partition, kept beside the compiled rows (which never change
after compilation, graph_compiler.NodeItem): per node, indexed by node id,

- `priority`: the critical-path priority (critical_path.py), from the cost model's estimates
  when the plan is built (white paper 3.2.1);
- `splits`: whether the kernel split its work over the device's pool when it last ran (learned
  by the dataflow executor, kernel_scheduling.py).

One per partition of a plan, shared by its steps. Steps on several threads may write `splits`
at once: single list-element stores, each a whole value."""
from __future__ import annotations

from typing import Optional, Sequence


class PlanLearning:
    __slots__ = ("priority", "splits")

    def __init__(self, num_nodes: int, priorities: Optional[Sequence[float]] = None) -> None:
        self.priority: list[float] = list(priorities) if priorities is not None else [0.0] * num_nodes
        self.splits: list[bool] = [False] * num_nodes
