"""Colour ops: RGBToHSV, HSVToRGB, AdjustContrastv2, AdjustHue, AdjustSaturation, and the wrappers
tf.image.rgb_to_hsv and hsv_to_rgb (adjust_* are composites in image_impl.py).

Each kernel is TF's CPU kernel written over whole arrays: the per-pixel branches of TF's code
become selects, in TF's float32 arithmetic and order. AdjustHue works on hue and the value
range (TF's rgb_to_hv_range: a hue in [0, 6) and the min/max channel), AdjustSaturation through
HSV with TF's scalar helpers (whose 2/6 and 4/6 are double constants).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops._util import format_dims, invalid, register_kernel, shape_error, with_rank, with_rank_at_least

__all__ = ["rgb_to_hsv", "hsv_to_rgb"]

_F32 = np.float32


def _three_channels(op: Operation) -> list[TensorShape]:
    shape = with_rank_at_least(op, op.inputs[0].shape, 1)
    if shape.ndims is not None and shape.dims[-1].value not in (None, 3):
        raise shape_error(op, f"Dimension must be 3 but is {shape.dims[-1].value}")
    return [shape]


def _image_and_scalar(op: Operation) -> list[TensorShape]:
    shape = with_rank_at_least(op, op.inputs[0].shape, 3)
    with_rank(op, op.inputs[1].shape, 0)
    if op.type != "AdjustContrastv2" and shape.ndims is not None and shape.dims[-1].value not in (None, 3):
        raise shape_error(op, f"Dimension must be 3 but is {shape.dims[-1].value}")
    return [shape]


RGBToHSV = define_op("RGBToHSV", inputs=["images: T"], outputs=["output: T"],
                     attrs=["T: {float16, float32, float64} = float32"], shape_fn=_three_channels)
HSVToRGB = define_op("HSVToRGB", inputs=["images: T"], outputs=["output: T"],
                     attrs=["T: {float16, float32, float64} = float32"], shape_fn=_three_channels)
AdjustContrastv2 = define_op("AdjustContrastv2", inputs=["images: T", "contrast_factor: float"],
                             outputs=["output: T"], attrs=["T: {float16, float32} = float32"],
                             shape_fn=_image_and_scalar)
AdjustHue = define_op("AdjustHue", inputs=["images: T", "delta: float"], outputs=["output: T"],
                      attrs=["T: {float16, float32} = float32"], shape_fn=_image_and_scalar)
AdjustSaturation = define_op("AdjustSaturation", inputs=["images: T", "scale: float"], outputs=["output: T"],
                             attrs=["T: {float16, float32} = float32"], shape_fn=_image_and_scalar)

for _op in (HSVToRGB, AdjustContrastv2, AdjustHue, AdjustSaturation):
    _op.not_differentiable()   # as in TF (RGBToHSV's gradient is in grad.py)


def _check_rgb(op_type: str, images: np.ndarray, min_rank: int = 1) -> None:
    if images.ndim < min_rank:
        raise invalid(f"{op_type}: input must be at least {min_rank}-D, got shape {format_dims(images.shape)}")
    if images.shape[-1] != 3:
        raise invalid(f"{op_type}: input must have 3 channels but input only has {images.shape[-1]} channels.")


# ---------------------------------------------------------------------------------------------
# RGBToHSV / HSVToRGB (TF's colorspace_op.h)
# ---------------------------------------------------------------------------------------------
def rgb_to_hsv_array(images: np.ndarray) -> np.ndarray:
    t = images.dtype.type
    r, g, b = images[..., 0], images[..., 1], images[..., 2]
    v = np.maximum(np.maximum(r, g), b)
    spread = v - np.minimum(np.minimum(r, g), b)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, spread / v, t(0))
        norm = (t(1) / spread) * (t(1) / t(6))
        h = np.where(r == v, norm * (g - b),
                     np.where(g == v, norm * (b - r) + t(2) / t(6), norm * (r - g) + t(4) / t(6)))
    h = np.where(spread > 0, h, t(0))
    h = np.where(h < 0, h + t(1), h)
    return np.stack([h, s, v], axis=-1).astype(images.dtype, copy=False)


def hsv_to_rgb_array(images: np.ndarray) -> np.ndarray:
    t = images.dtype.type
    h, s, v = images[..., 0], images[..., 1], images[..., 2]
    dh = h * t(6)
    dr = np.clip(np.abs(dh - t(3)) - t(1), t(0), t(1))
    dg = np.clip(-np.abs(dh - t(2)) + t(2), t(0), t(1))
    db = np.clip(-np.abs(dh - t(4)) + t(2), t(0), t(1))
    one_s = -s + t(1)
    return np.stack([(one_s + s * dr) * v, (one_s + s * dg) * v, (one_s + s * db) * v], axis=-1).astype(
        images.dtype, copy=False)


def _colorspace_kernel(convert: Callable[[np.ndarray], np.ndarray]) -> Callable[[KernelContext], Any]:
    def build(ctx: KernelContext) -> Callable[..., Any]:
        def kernel(images: np.ndarray) -> np.ndarray:
            _check_rgb(ctx.op.type, images)
            return convert(images)
        return kernel
    return build


register_kernel(RGBToHSV)(_colorspace_kernel(rgb_to_hsv_array))
register_kernel(HSVToRGB)(_colorspace_kernel(hsv_to_rgb_array))


# ---------------------------------------------------------------------------------------------
# AdjustContrastv2
# ---------------------------------------------------------------------------------------------
@register_kernel(AdjustContrastv2)
def _adjust_contrast_kernel(ctx: KernelContext) -> Callable[..., Any]:
    def kernel(images: np.ndarray, factor: Any) -> np.ndarray:
        if images.ndim < 3:
            raise invalid(f"input must be at least 3-D, got shape {format_dims(images.shape)}")
        if np.ndim(factor) != 0:
            raise invalid(f"contrast_factor must be scalar: {format_dims(np.shape(factor))}")
        x = images.astype(_F32, copy=False)
        mean = np.mean(x, axis=(-3, -2), keepdims=True, dtype=_F32)
        return ((x - mean) * _F32(factor) + mean).astype(images.dtype, copy=False)
    return kernel


# ---------------------------------------------------------------------------------------------
# AdjustHue: hue and value range (TF's rgb_to_hv_range / hv_range_to_rgb)
# ---------------------------------------------------------------------------------------------
def _hv_range(r: np.ndarray, g: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    rg = r < g
    cases = [rg & (b < r), rg & (b > g), rg, b < g, b > r]
    v_max = np.select(cases, [g, b, g, r, b], r)
    v_mid = np.select(cases, [r, g, b, g, r], b)
    v_min = np.select(cases, [b, r, r, b, g], g)
    category = np.select(cases, [1, 3, 2, 0, 4], 5).astype(_F32)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (v_mid - v_min) / (v_max - v_min)
    increase = category % 2 == 0
    h = np.where(v_max == v_min, _F32(0), category + np.where(increase, ratio, _F32(1) - ratio))
    return h.astype(_F32), v_min, v_max


def _hv_range_to_rgb(h: np.ndarray, v_min: np.ndarray, v_max: np.ndarray) -> np.ndarray:
    category = h.astype(np.int32)
    ratio = h - category.astype(_F32)
    ratio = np.where(category % 2 == 0, ratio, _F32(1) - ratio)
    v_mid = v_min + ratio * (v_max - v_min)
    cases = [category == k for k in range(5)]
    r = np.select(cases, [v_max, v_mid, v_min, v_min, v_mid], v_max)
    g = np.select(cases, [v_mid, v_max, v_max, v_mid, v_min], v_min)
    b = np.select(cases, [v_min, v_min, v_mid, v_max, v_max], v_mid)
    return np.stack([r, g, b], axis=-1)


@register_kernel(AdjustHue)
def _adjust_hue_kernel(ctx: KernelContext) -> Callable[..., Any]:
    def kernel(images: np.ndarray, delta: Any) -> np.ndarray:
        _check_rgb("AdjustHue", images, 3)
        if np.ndim(delta) != 0:
            raise invalid(f"delta must be scalar: {format_dims(np.shape(delta))}")
        x = images.astype(_F32, copy=False)
        h, v_min, v_max = _hv_range(x[..., 0], x[..., 1], x[..., 2])
        h = h + _F32(delta) * _F32(6)
        h = np.where(h < 0, h + _F32(6), h)        # TF's while loops; one pass covers |delta| <= 1,
        h = np.where(h >= 6, h - _F32(6), h)       # np.mod the rest
        h = np.where((h < 0) | (h >= 6), np.mod(h, _F32(6)), h).astype(_F32)
        return _hv_range_to_rgb(h, v_min, v_max).astype(images.dtype, copy=False)
    return kernel


# ---------------------------------------------------------------------------------------------
# AdjustSaturation: TF's scalar rgb_to_hsv / hsv_to_rgb helpers
# ---------------------------------------------------------------------------------------------
def _scalar_rgb_to_hsv(r: np.ndarray, g: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, ...]:
    v = np.maximum(r, np.maximum(g, b))
    spread = v - np.minimum(r, np.minimum(g, b))
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(v > 0, spread / v, _F32(0))
        norm = _F32(1) / (_F32(6) * spread)
        # The 2.0/6.0 and 4.0/6.0 of TF's helper are doubles: the sum is rounded once, to float.
        h = np.where(r == v, norm * (g - b),
                     np.where(g == v, ((norm * (b - r)).astype(np.float64) + 2.0 / 6.0).astype(_F32),
                              ((norm * (r - g)).astype(np.float64) + 4.0 / 6.0).astype(_F32)))
    h = np.where(spread <= 0, _F32(0), h)
    h = np.where(h < 0, h + _F32(1), h)
    return h.astype(_F32), s.astype(_F32), v


def _scalar_hsv_to_rgb(h: np.ndarray, s: np.ndarray, v: np.ndarray) -> np.ndarray:
    c = s * v
    m = v - c
    dh = h * _F32(6)
    category = dh.astype(np.int32)
    fmodu = dh - _F32(2) * np.floor(dh / _F32(2))   # TF's += / -= 2 loops, exact here
    x = c * (_F32(1) - np.abs(fmodu - _F32(1)))
    zero = np.zeros_like(c)
    cases = [category == k for k in range(6)]
    r = np.select(cases, [c, x, zero, zero, x, c], zero)
    g = np.select(cases, [x, c, c, x, zero, zero], zero)
    b = np.select(cases, [zero, zero, x, c, c, x], zero)
    return np.stack([r + m, g + m, b + m], axis=-1)


@register_kernel(AdjustSaturation)
def _adjust_saturation_kernel(ctx: KernelContext) -> Callable[..., Any]:
    def kernel(images: np.ndarray, scale: Any) -> np.ndarray:
        _check_rgb("AdjustSaturation", images, 3)
        if np.ndim(scale) != 0:
            raise invalid(f"scale must be scalar: {format_dims(np.shape(scale))}")
        x = images.astype(_F32, copy=False)
        h, s, v = _scalar_rgb_to_hsv(x[..., 0], x[..., 1], x[..., 2])
        s = np.minimum(_F32(1), np.maximum(_F32(0), s * _F32(scale)))
        return _scalar_hsv_to_rgb(h, s, v).astype(images.dtype, copy=False)
    return kernel


# ---------------------------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------------------------
def rgb_to_hsv(images: Any, name: Optional[str] = None) -> Any:
    """Converts RGB images (last dimension 3, floats in [0, 1]) to HSV."""
    return apply_op(RGBToHSV, name=name, images=images)


def hsv_to_rgb(images: Any, name: Optional[str] = None) -> Any:
    """Converts HSV images (last dimension 3, floats in [0, 1]) to RGB."""
    return apply_op(HSVToRGB, name=name, images=images)


def adjust_contrastv2(images: Any, contrast_factor: Any, name: Optional[str] = None) -> Any:
    return apply_op(AdjustContrastv2, name=name, images=images, contrast_factor=contrast_factor)


def adjust_hue_op(images: Any, delta: Any, name: Optional[str] = None) -> Any:
    return apply_op(AdjustHue, name=name, images=images, delta=delta)


def adjust_saturation_op(images: Any, scale: Any, name: Optional[str] = None) -> Any:
    return apply_op(AdjustSaturation, name=name, images=images, scale=scale)
