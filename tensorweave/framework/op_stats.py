"""Per-op statistics registered by op type (`tf.RegisterStatistics`, `ops.get_stats_for_node_def`):
a function `(graph, node_def) -> OpStats` computes, say, an op's float operations from the static
shapes of its inputs and outputs. tf.profiler sums them (tensorweave/profiler/flops_registry.py
registers TF's FLOP counts)."""
from __future__ import annotations

from typing import Any, Callable, Optional

_REGISTRY: dict[tuple[str, str], Callable[[Any, Any], "OpStats"]] = {}


class OpStats:
    """One statistic of one op (`statistic_type`, e.g. "flops", and its `value`, None if unknown)."""

    __slots__ = ("statistic_type", "value")

    def __init__(self, statistic_type: str, value: Optional[int] = None) -> None:
        self.statistic_type = statistic_type
        self.value = value

    def __iadd__(self, other: "OpStats") -> "OpStats":
        if other.statistic_type != self.statistic_type:
            raise ValueError(f"Can't add an OpStat of type {other.statistic_type} to one of "
                             f"{self.statistic_type}.")
        if self.value is None:
            self.value = other.value
        elif other.value is not None:
            self.value += other.value
        return self

    def __repr__(self) -> str:
        return f"OpStats({self.statistic_type!r}, {self.value!r})"


class RegisterStatistics:
    """Decorator: `@tf.RegisterStatistics("MatMul", "flops")` registers a statistic function."""

    def __init__(self, op_type: str, statistic_type: str) -> None:
        if not isinstance(op_type, str):
            raise TypeError("op_type must be a string.")
        if "," in op_type:
            raise TypeError("op_type must not contain a comma.")
        if not isinstance(statistic_type, str):
            raise TypeError("statistic_type must be a string.")
        if "," in statistic_type:
            raise TypeError("statistic_type must not contain a comma.")
        self._key = (op_type, statistic_type)

    def __call__(self, fn: Callable[[Any, Any], OpStats]) -> Callable[[Any, Any], OpStats]:
        if self._key in _REGISTRY:
            raise KeyError(f"Registering two {self._key[1]} statistics for op type {self._key[0]}")
        _REGISTRY[self._key] = fn
        return fn


def get_stats_for_node_def(graph: Any, node: Any, statistic_type: str) -> OpStats:
    """The registered statistic for `node` (a NodeDef of `graph`); an empty OpStats when none is
    registered for its op type."""
    fn = _REGISTRY.get((node.op, statistic_type))
    if fn is None:
        return OpStats(statistic_type)
    return fn(graph, node)
