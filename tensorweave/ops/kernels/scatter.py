"""Scatter engines shared by the segment reductions (math) and the scatter updates of
variables (state)."""
from __future__ import annotations

from typing import Any

import numpy as np


def scatter_reduce(ufunc: Any, out: Any, ids: Any, rows: Any) -> None:
    """out[ids[j]] = ufunc(out[ids[j]], rows[j]) in order of j, dropping negative ids (as TF's
    unsorted segment ops do). `out` is [num_segments, ...], `rows` is [len(ids), inner].

    One 1-D `ufunc.at` over element positions: NumPy's fast path for `at` is 1-D only (`at`
    over whole rows is 2-3x slower), and the elements of each output row still combine in
    the order of j, exactly as TF's kernels do."""
    if ids.size and ids.min() < 0:
        keep = ids >= 0
        ids, rows = ids[keep], rows[keep]
    inner = rows.shape[1]
    flat_out = out.reshape(-1)  # a view: out is freshly allocated and contiguous
    if inner == 1:
        ufunc.at(flat_out, ids, rows.reshape(-1))
    elif inner:
        positions = (ids.astype(np.int64)[:, None] * inner + np.arange(inner)).reshape(-1)
        ufunc.at(flat_out, positions, rows.reshape(-1))
