"""The one table of differentiable ops: each family's module lists GradCase entries, and
tests/test_gradient_check.py checks every case with the float64 central-difference checker
and fails if a differentiable op appears in no case."""
from __future__ import annotations

import dataclasses
import importlib
import pkgutil
from typing import Callable, Optional, Sequence

import numpy as np


@dataclasses.dataclass(frozen=True)
class GradCase:
    name: str
    ops: tuple[str, ...]                 # op types whose gradients this case exercises
    build: Callable[..., object]          # float64 input tensors -> float64 output tensor
    shapes: Sequence[tuple[int, ...]]
    low: float = -1.0                     # inputs drawn uniformly from [low, high]
    high: float = 1.0
    tol: float = 1e-6
    init: Optional[Callable[[np.random.RandomState], Sequence[np.ndarray]]] = None
    directional: bool = False             # large inputs: random-direction check
    delta: float = 1e-6                   # central-difference step (larger for float32-only ops)


def all_cases() -> list[GradCase]:
    cases: list[GradCase] = []
    for info in pkgutil.iter_modules(__path__):
        module = importlib.import_module(f"{__name__}.{info.name}")
        cases.extend(getattr(module, "CASES", []))
    return cases
