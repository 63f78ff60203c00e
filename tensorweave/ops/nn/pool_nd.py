"""`tf.nn.pool`: window pooling over 1 or 2 spatial dimensions (3-D pooling has its own ops),
with strides or with a dilation rate. Dilated pooling (VALID only, as in TF) runs as TF's
with_space_to_batch does: the input is split into rate x rate phases stacked on the batch, each
phase pooled with VALID windows, and the phases interleaved back.

Tier 2: built on the pooling ops and other families' wrappers.
"""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework.graph import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.array.creation import pad
from tensorweave.ops.array.shaping import expand_dims, reshape, squeeze
from tensorweave.ops.array.slicing import slice as slice_
from tensorweave.ops.array.transposition import transpose
from tensorweave.ops.nn.conv import pick
from tensorweave.ops.nn.pooling import avg_pool, max_pool

__all__ = ["pool"]


def _ints(value: Any, n: int, what: str) -> list[int]:
    if value is None:
        return [1] * n
    values = [int(v) for v in np.asarray(value).reshape(-1)]
    if len(values) != n:
        raise ValueError(f"{what} must have length {n} (one per spatial dimension), got {values}")
    return values


def pool(input: Any, window_shape: Any, pooling_type: str, padding: str,  # noqa: A002
         dilation_rate: Any = None, strides: Any = None, name: Optional[str] = None,
         data_format: Optional[str] = None, dilations: Any = None) -> Any:
    """MAX or AVG pooling of `input` [batch, *spatial, channels] (channels first for an NC*
    data_format) with `window_shape`, `strides` or `dilation_rate` (not both above 1)."""
    dilation_rate = pick(dilations, "dilations", dilation_rate, "dilation_rate")
    if pooling_type not in ("MAX", "AVG"):
        raise ValueError(f"Invalid pooling_type: {pooling_type}")
    window = [int(w) for w in window_shape]
    n = len(window)
    if n not in (1, 2):
        raise ValueError(f"tf.nn.pool supports 1 or 2 spatial dimensions here, got window_shape {window_shape}")
    if padding not in ("SAME", "VALID"):
        raise ValueError(f"padding must be either VALID or SAME: {padding}")
    rates, steps = _ints(dilation_rate, n, "dilation_rate"), _ints(strides, n, "strides")
    if any(r < 1 for r in rates):
        raise ValueError("Dilation rate must be positive")
    if any(s < 1 for s in steps):
        raise ValueError("Strides must be positive")
    if any(s > w for s, w in zip(steps, window)):
        raise ValueError("strides > window_shape not supported due to inconsistency between CPU and GPU "
                         "implementations")
    if padding == "SAME" and max(rates) > 1:
        raise ValueError(f"pooling with 'SAME' padding is not implemented for `dilation_rate` > 1. Received: "
                         f"padding={padding} and dilation_rate={rates}")
    if max(rates) > 1 and max(steps) > 1:
        raise ValueError("strides > 1 not supported in conjunction with dilation_rate > 1")
    channels_first = data_format is not None and data_format.startswith("NC")
    with name_scope(name, f"{pooling_type.lower()}_pool", [input]):
        x = convert_to_tensor(input, name="input")
        if channels_first:  # pool channels-last, then move channels back
            x = transpose(x, [0] + list(range(2, n + 2)) + [1])
        if n == 1:
            x = expand_dims(x, 1)
            window, rates, steps = [1] + window, [1] + rates, [1] + steps
        if max(rates) == 1:
            out = _pool2d(x, pooling_type, window, steps, padding)
        else:
            out = _dilated_pool2d(x, pooling_type, window, rates, padding)
        if n == 1:
            out = squeeze(out, [1])
        if channels_first:
            out = transpose(out, [0, n + 1] + list(range(1, n + 1)))
        return out


def _pool2d(x: Any, pooling_type: str, window: list[int], steps: list[int], padding: str) -> Any:
    fn = max_pool if pooling_type == "MAX" else avg_pool
    return fn(x, [1] + window + [1], [1] + steps + [1], padding)


def _dilated_pool2d(x: Any, pooling_type: str, window: list[int], rates: list[int], padding: str) -> Any:
    spatial = x.shape.as_list()[1:3] if x.shape.ndims == 4 else [None, None]
    channels = x.shape.as_list()[3] if x.shape.ndims == 4 else None
    if None in spatial or channels is None:
        raise ValueError("tf.nn.pool with dilation_rate > 1 needs the input's spatial and channel dimensions "
                         "known at graph construction")
    extra = [(w - 1) * r for w, r in zip(window, rates)]
    out = [s - e for s, e in zip(spatial, extra)]
    if min(out) <= 0:
        raise ValueError(f"Input spatial size {spatial} is too small for window {window} at rate {rates}")
    per_phase = [-(-o // r) for o, r in zip(out, rates)]  # pooled rows of each phase
    padded = [(p + w - 1) * r for p, w, r in zip(per_phase, window, rates)]
    paddings = [[0, 0]] + [[0, p - s] for p, s in zip(padded, spatial)] + [[0, 0]]
    x = pad(x, paddings)
    (m, l), (rh, rw) = [p + w - 1 for p, w in zip(per_phase, window)], rates
    # space to batch: [N, m, rh, l, rw, C] -> [N * rh * rw, m, l, C]
    x = reshape(transpose(reshape(x, [-1, m, rh, l, rw, channels]), [0, 2, 4, 1, 3, 5]), [-1, m, l, channels])
    y = _pool2d(x, pooling_type, window, [1, 1], padding)
    # batch to space, then crop the rows past the output
    y = transpose(reshape(y, [-1, rh, rw, per_phase[0], per_phase[1], channels]), [0, 3, 1, 4, 2, 5])
    y = reshape(y, [-1, per_phase[0] * rh, per_phase[1] * rw, channels])
    return slice_(y, [0, 0, 0, 0], [-1, out[0], out[1], -1])
