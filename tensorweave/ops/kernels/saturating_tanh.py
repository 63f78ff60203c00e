"""tanh as cheaply close to TensorFlow's CPU kernel as NumPy allows (issue 11).

TF's Tanh kernel evaluates Eigen's rational approximation with x clamped where it reaches
exactly 1, so TF gives exactly +/-1 for |x| >= 7.9073896 (float32) or 17.714196 (float64), where
np.tanh gives 0.99999994. Repeating Eigen's evaluation bit for bit costs about 25 NumPy calls a
kernel (the LSTM benchmark's forward step got 5-10% slower), so the bulk stays np.tanh (within
a few ulp of TF) and only the saturation is TF's: two reductions find out whether any input is
past the clamp, and only then are those entries set."""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["saturating_tanh"]

# Eigen's clamp: the smallest |x| whose approximation is exactly 1 (no fused multiply-add).
_CLAMP = {np.dtype(np.float32): np.float32(7.90738964080810547), np.dtype(np.float64): 17.714196154005176}


def saturating_tanh(x: Any, out: Any) -> Any:
    """`out` = np.tanh(x), with TF's exact +/-1 where Eigen clamps (out may be x)."""
    x = np.asarray(x)
    clamp = _CLAMP[out.dtype]
    clamped = None
    if x.size and (np.fmax.reduce(x, axis=None) >= clamp or np.fmin.reduce(x, axis=None) <= -clamp):
        clamped = np.abs(x) >= clamp  # before np.tanh, which may write over x
    np.tanh(x, out=out)
    if clamped is not None:
        np.copysign(out.dtype.type(1), out, out=out, where=clamped)
    return out
