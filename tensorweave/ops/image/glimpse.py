"""ExtractGlimpse and tf.image.extract_glimpse: a [height, width] window per image centred at an
offset (normalised and/or centred, as TF's GlimpseExtractionOp reads it for this op, version 1;
the window corner is truncated to whole pixels). Window parts outside the image get noise: uniform between the
image's min and max, Gaussian with each channel's mean and deviation (clipped to its range),
or zeros."""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops._util import format_dims, invalid, with_rank

__all__ = ["extract_glimpse"]

_F32 = np.float32


def _glimpse_shape(op: Operation) -> list[TensorShape]:
    images = with_rank(op, op.inputs[0].shape, 4)
    with_rank(op, op.inputs[1].shape, 1)
    with_rank(op, op.inputs[2].shape, 2)
    value = tensor_util.constant_value(op.inputs[1])
    hw: list[Any] = [None, None] if value is None else [int(v) for v in np.reshape(value, -1)]
    return [TensorShape([images.dims[0], hw[0], hw[1], images.dims[3]])]


ExtractGlimpse = define_op("ExtractGlimpse", inputs=["input: float", "size: int32", "offsets: float"],
                           outputs=["glimpse: float"],
                           attrs=["centered: bool = true", "normalized: bool = true", "uniform_noise: bool = true",
                                  "noise: string = 'uniform'"], shape_fn=_glimpse_shape)
ExtractGlimpse.not_differentiable()


def _corner(offset: float, size: int, window: int, normalized: bool, centered: bool) -> int:
    """The window's first row (column): the offset is the window's centre, in pixels or as a
    fraction of the size, from the image's corner or (centred, in [-1, 1]) its centre."""
    v = _F32(offset)
    if normalized:
        v = v * _F32(size)
    if centered:
        v = v / _F32(2) + _F32(size) / _F32(2)
    v = v - _F32(window) / _F32(2)
    return int(v)   # truncation toward zero, as TF's cast


def _noise(image: np.ndarray, shape: tuple[int, ...], mode: str, rng: np.random.Generator) -> np.ndarray:
    if mode == "zero":
        return np.zeros(shape, _F32)
    if mode == "uniform":
        low = image.min()
        return (low + rng.random(shape, dtype=_F32) * (image.max() - low)).astype(_F32)
    mean, sigma = image.mean(axis=(0, 1)), image.std(axis=(0, 1))
    draw = mean + rng.standard_normal(shape).astype(_F32) * sigma
    return np.clip(draw, image.min(axis=(0, 1)), image.max(axis=(0, 1))).astype(_F32)


def glimpses(images: np.ndarray, size: Any, offsets: np.ndarray, centered: bool, normalized: bool, mode: str,
             rng: np.random.Generator) -> np.ndarray:
    if images.ndim != 4:
        raise invalid(f"input must be 4-dimensional, got {format_dims(images.shape)}")
    size = np.asarray(size)
    if size.shape != (2,):
        raise invalid(f"input must be a vector of size 2 (height, width), got {format_dims(size.shape)}")
    if offsets.shape != (images.shape[0], 2):
        raise invalid(f"offsets must be [batch_size, 2], got {format_dims(offsets.shape)}")
    window_h, window_w = int(size[0]), int(size[1])
    if window_h <= 0 or window_w <= 0:
        raise invalid(f"glimpse size must be positive, got {window_h}x{window_w}")
    batch, height, width, depth = images.shape
    out = np.empty((batch, window_h, window_w, depth), _F32)
    for i in range(batch):
        y = _corner(offsets[i, 0], height, window_h, normalized, centered)
        x = _corner(offsets[i, 1], width, window_w, normalized, centered)
        inside = 0 <= y and y + window_h < height and 0 <= x and x + window_w < width
        out[i] = 0 if inside else _noise(images[i], (window_h, window_w, depth), mode, rng)
        # The window's overlap with the image, in image and in window coordinates.
        y0, y1, x0, x1 = max(y, 0), min(y + window_h, height), max(x, 0), min(x + window_w, width)
        if y0 < y1 and x0 < x1:
            out[i, y0 - y:y1 - y, x0 - x:x1 - x] = images[i, y0:y1, x0:x1]
    return out


@ExtractGlimpse.kernel()
def _glimpse_kernel(ctx: KernelContext) -> Callable[..., Any]:
    centered, normalized = bool(ctx.attr("centered")), bool(ctx.attr("normalized"))
    uniform, noise = bool(ctx.attr("uniform_noise")), ctx.attr("noise")
    if uniform and noise not in ("", "uniform"):
        raise invalid("The uniform_noise and noise should not be specified at the same time")
    mode = "zero" if noise == "zero" else "gaussian" if (noise == "gaussian" or not uniform) else "uniform"
    rng = np.random.default_rng()
    return lambda images, size, offsets: glimpses(images, size, offsets, centered, normalized, mode, rng)


def extract_glimpse(input: Any, size: Any, offsets: Any, centered: bool = True,  # noqa: A002 (TF's name)
                    normalized: bool = True, uniform_noise: bool = True, name: Optional[str] = None) -> Any:
    """Windows of `size` [height, width] from `input` [batch, h, w, c] at `offsets` [batch, 2]
    (y, x): normalised to [-1, 1] and centred on the image by default."""
    return apply_op(ExtractGlimpse, name=name, input=input, size=size, offsets=offsets, centered=centered,
                    normalized=normalized, uniform_noise=uniform_noise)
