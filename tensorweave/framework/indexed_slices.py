"""`tf.IndexedSlices`: a sparse gradient (rows `indices` of a dense tensor of `dense_shape`),
what Gather and embedding lookups produce so optimizers touch only those rows (OSDI 4.2)."""
from __future__ import annotations

from typing import Any, NamedTuple, Optional

import numpy as np

from tensorweave.framework.graph import Tensor


class IndexedSlices:
    def __init__(self, values: Tensor, indices: Tensor, dense_shape: Optional[Tensor] = None) -> None:
        self._values = values
        self._indices = indices
        self._dense_shape = dense_shape

    @property
    def values(self) -> Tensor:
        return self._values

    @property
    def indices(self) -> Tensor:
        return self._indices

    @property
    def dense_shape(self) -> Optional[Tensor]:
        return self._dense_shape

    @property
    def dtype(self) -> Any:
        return self._values.dtype

    @property
    def graph(self) -> Any:
        return self._values.graph

    @property
    def name(self) -> str:
        return self._values.name

    @property
    def op(self) -> Any:
        return self._values.op

    @property
    def device(self) -> str:
        return self._values.device

    def __repr__(self) -> str:
        return f"IndexedSlices(indices={self._indices}, values={self._values}, dense_shape={self._dense_shape})"


class IndexedSlicesValue(NamedTuple):
    """What fetching an IndexedSlices returns."""

    values: np.ndarray
    indices: np.ndarray
    dense_shape: Optional[np.ndarray]


def _fetch_indexed_slices(s: IndexedSlices) -> Any:
    parts = [s.values, s.indices] + ([s.dense_shape] if s.dense_shape is not None else [])
    return parts, lambda v: IndexedSlicesValue(v[0], v[1], v[2] if len(v) > 2 else None)
