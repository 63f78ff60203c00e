"""CropAndResize and its gradient ops CropAndResizeGradImage and CropAndResizeGradBoxes, and the
wrapper tf.image.crop_and_resize.

TF's CPU kernel, vectorised over boxes and output pixels: box b samples image box_ind[b] at
y1*(H-1) + i*(y2-y1)*(H-1)/(crop_h-1) (the box centre when crop_h is 1), likewise in x, in
float32; samples outside [0, H-1] x [0, W-1] take `extrapolation_value`. Bilinear blends the
four neighbours as ResizeBilinear does; nearest rounds half away from zero. The image gradient
scatters each output gradient back with the same weights; the boxes gradient is the image's
spatial gradient at each sample times d(sample)/d(corner) (bilinear, also used for nearest,
as TF does).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops._util import format_dims, invalid, register_kernel, with_rank

__all__ = ["crop_and_resize"]

_F32 = np.float32
_TYPES = "{uint8, uint16, int8, int16, int32, int64, float16, float32, float64}"
_METHOD = "method: {'bilinear', 'nearest'} = 'bilinear'"


def _pair(op: Operation, index: int) -> list[Any]:
    with_rank(op, op.inputs[index].shape, 1)
    value = tensor_util.constant_value(op.inputs[index])
    return [None, None] if value is None else [int(v) for v in np.reshape(value, -1)]


def _crop_shape(op: Operation) -> list[TensorShape]:
    image = with_rank(op, op.inputs[0].shape, 4)
    boxes = with_rank(op, op.inputs[1].shape, 2)
    with_rank(op, op.inputs[2].shape, 1)
    h, w = _pair(op, 3)
    return [TensorShape([boxes.dims[0], h, w, image.dims[3]])]


def _grad_image_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 4)
    value = tensor_util.constant_value(op.inputs[3])
    with_rank(op, op.inputs[3].shape, 1)
    return [TensorShape([None] * 4 if value is None else [int(v) for v in np.reshape(value, -1)])]


def _grad_boxes_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 4)
    return [with_rank(op, op.inputs[2].shape, 2)]


CropAndResize = define_op("CropAndResize", inputs=["image: T", "boxes: float", "box_ind: int32", "crop_size: int32"],
                          outputs=["crops: float"],
                          attrs=[f"T: {_TYPES}", _METHOD, "extrapolation_value: float = 0.0"], shape_fn=_crop_shape)
CropAndResizeGradImage = define_op(
    "CropAndResizeGradImage", inputs=["grads: float", "boxes: float", "box_ind: int32", "image_size: int32"],
    outputs=["output: T"], attrs=["T: {float32, float16, float64}", _METHOD], shape_fn=_grad_image_shape)
CropAndResizeGradBoxes = define_op(
    "CropAndResizeGradBoxes", inputs=["grads: float", "image: T", "boxes: float", "box_ind: int32"],
    outputs=["output: float"], attrs=[f"T: {_TYPES}", "method: {'bilinear'} = 'bilinear'"],
    shape_fn=_grad_boxes_shape)
CropAndResizeGradImage.not_differentiable()
CropAndResizeGradBoxes.not_differentiable()


class _Samples:
    """Where each box's output rows and columns sample the image (float32, TF's formulas)."""

    def __init__(self, boxes: np.ndarray, height: int, width: int, crop_h: int, crop_w: int) -> None:
        self.y, self.y_ratio = self._axis(boxes[:, 0], boxes[:, 2], height, crop_h)
        self.x, self.x_ratio = self._axis(boxes[:, 1], boxes[:, 3], width, crop_w)
        self.y_in = (self.y >= 0) & (self.y <= _F32(height - 1))
        self.x_in = (self.x >= 0) & (self.x <= _F32(width - 1))
        self.inside = self.y_in[:, :, None] & self.x_in[:, None, :]

    @staticmethod
    def _axis(start: np.ndarray, end: np.ndarray, size: int, crop: int) -> tuple[np.ndarray, np.ndarray]:
        span = _F32(size - 1)
        if crop > 1:
            scale = (end - start) * span / _F32(crop - 1)
            return start[:, None] * span + np.arange(crop, dtype=_F32)[None, :] * scale[:, None], scale
        return (_F32(0.5) * (start + end) * span)[:, None], np.zeros_like(start)

    def linear(self, height: int, width: int) -> tuple[np.ndarray, ...]:
        """Clipped (top, bottom, left, right) indices and (y_lerp, x_lerp)."""
        ys = np.clip(self.y, 0, height - 1)
        xs = np.clip(self.x, 0, width - 1)
        top, left = np.floor(ys), np.floor(xs)
        return (top.astype(np.int64), np.ceil(ys).astype(np.int64), left.astype(np.int64),
                np.ceil(xs).astype(np.int64), (self.y - top).astype(_F32), (self.x - left).astype(_F32))

    def nearest(self, height: int, width: int) -> tuple[np.ndarray, np.ndarray]:
        ys = np.clip(self.y, 0, height - 1)
        xs = np.clip(self.x, 0, width - 1)
        return np.floor(ys + _F32(0.5)).astype(np.int64), np.floor(xs + _F32(0.5)).astype(np.int64)


def _check(op_type: str, boxes: np.ndarray, box_ind: np.ndarray, batch: int, size: Any, what: str) -> tuple[int, int]:
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise invalid(f"{op_type}: boxes must be 2-D [num_boxes, 4], got {format_dims(boxes.shape)}")
    if box_ind.shape != (boxes.shape[0],):
        raise invalid(f"{op_type}: box_index has incompatible shape {format_dims(box_ind.shape)}")
    if box_ind.size and (box_ind.min() < 0 or box_ind.max() >= batch):
        raise invalid(f"{op_type}: box_index has values outside [0, batch_size)")
    size = np.asarray(size)
    if size.shape != (2,) and what == "crop_size":
        raise invalid(f"{op_type}: crop_size must be a 1-D tensor of 2 elements, got {format_dims(size.shape)}")
    return int(size.reshape(-1)[0]), int(size.reshape(-1)[1])


def crop(image: np.ndarray, boxes: np.ndarray, box_ind: np.ndarray, crop_size: Any, method: str,
         extrapolation: float) -> np.ndarray:
    if image.ndim != 4:
        raise invalid(f"CropAndResize: input image must be 4-D, got {format_dims(image.shape)}")
    crop_h, crop_w = _check("CropAndResize", boxes, box_ind, image.shape[0], crop_size, "crop_size")
    if crop_h <= 0 or crop_w <= 0:
        raise invalid("CropAndResize: crop dimensions must be positive")
    _, height, width, _ = image.shape
    samples = _Samples(boxes.astype(_F32), height, width, crop_h, crop_w)
    src = image.astype(_F32, copy=False)
    b = box_ind.astype(np.int64)[:, None, None]
    if method == "bilinear":
        top, bottom, left, right, y_lerp, x_lerp = samples.linear(height, width)
        t, bo, le, ri = top[:, :, None], bottom[:, :, None], left[:, None, :], right[:, None, :]
        xl = x_lerp[:, None, :, None]
        top_row = src[b, t, le] + (src[b, t, ri] - src[b, t, le]) * xl
        bottom_row = src[b, bo, le] + (src[b, bo, ri] - src[b, bo, le]) * xl
        out = top_row + (bottom_row - top_row) * y_lerp[:, :, None, None]
    else:
        ys, xs = samples.nearest(height, width)
        out = src[b, ys[:, :, None], xs[:, None, :]]
    return np.where(samples.inside[..., None], out, _F32(extrapolation)).astype(_F32)


def grad_image(grads: np.ndarray, boxes: np.ndarray, box_ind: np.ndarray, image_size: Any, method: str,
               dtype: np.dtype) -> np.ndarray:
    size = np.asarray(image_size).reshape(-1)
    if size.shape != (4,) or np.any(size <= 0):
        raise invalid(f"CropAndResizeGradImage: image_size must be 4 positive values, got {size.tolist()}")
    batch, height, width, depth = (int(v) for v in size)
    _check("CropAndResizeGradImage", boxes, box_ind, batch, [0, 0], "image_size")
    if grads.ndim != 4 or grads.shape[0] != boxes.shape[0] or grads.shape[3] != depth:
        raise invalid(f"CropAndResizeGradImage: grads has incompatible shape {format_dims(grads.shape)}")
    samples = _Samples(boxes.astype(_F32), height, width, grads.shape[1], grads.shape[2])
    g = np.where(samples.inside[..., None], grads, 0).astype(np.float64)
    out = np.zeros((batch, height, width, depth), np.float64)
    b = np.broadcast_to(box_ind.astype(np.int64)[:, None, None], samples.inside.shape)
    if method == "bilinear":
        top, bottom, left, right, y_lerp, x_lerp = samples.linear(height, width)
        shape = samples.inside.shape
        yl, xl = y_lerp[:, :, None, None].astype(np.float64), x_lerp[:, None, :, None].astype(np.float64)
        for rows, cols, weight in ((top, left, (1 - yl) * (1 - xl)), (top, right, (1 - yl) * xl),
                                   (bottom, left, yl * (1 - xl)), (bottom, right, yl * xl)):
            np.add.at(out, (b, np.broadcast_to(rows[:, :, None], shape), np.broadcast_to(cols[:, None, :], shape)),
                      g * weight)
    else:
        ys, xs = samples.nearest(height, width)
        shape = samples.inside.shape
        np.add.at(out, (b, np.broadcast_to(ys[:, :, None], shape), np.broadcast_to(xs[:, None, :], shape)), g)
    return out.astype(dtype)


def grad_boxes(grads: np.ndarray, image: np.ndarray, boxes: np.ndarray, box_ind: np.ndarray) -> np.ndarray:
    if image.ndim != 4:
        raise invalid(f"CropAndResizeGradBoxes: image must be 4-D, got {format_dims(image.shape)}")
    _check("CropAndResizeGradBoxes", boxes, box_ind, image.shape[0], [0, 0], "image")
    _, height, width, _ = image.shape
    crop_h, crop_w = grads.shape[1], grads.shape[2]
    samples = _Samples(boxes.astype(_F32), height, width, crop_h, crop_w)
    top, bottom, left, right, y_lerp, x_lerp = samples.linear(height, width)
    src = image.astype(np.float64)
    b = box_ind.astype(np.int64)[:, None, None]
    t, bo, le, ri = top[:, :, None], bottom[:, :, None], left[:, None, :], right[:, None, :]
    tl, tr, bl, br = src[b, t, le], src[b, t, ri], src[b, bo, le], src[b, bo, ri]
    yl, xl = y_lerp[:, :, None, None].astype(np.float64), x_lerp[:, None, :, None].astype(np.float64)
    g = np.where(samples.inside[..., None], grads, 0).astype(np.float64)
    dy = np.sum(((1 - xl) * (bl - tl) + xl * (br - tr)) * g, axis=3)    # d out / d sample row, summed over depth
    dx = np.sum(((1 - yl) * (tr - tl) + yl * (br - bl)) * g, axis=3)
    out = np.zeros((boxes.shape[0], 4), np.float64)
    for axis, d, size, crop_n in ((0, dy.sum(axis=2), height, crop_h), (1, dx.sum(axis=1), width, crop_w)):
        span = float(size - 1)
        if crop_n > 1:
            frac = np.arange(crop_n) / (crop_n - 1)
            out[:, axis] = np.sum(d * span * (1 - frac), axis=1)
            out[:, axis + 2] = np.sum(d * span * frac, axis=1)
        else:
            out[:, axis] = out[:, axis + 2] = np.sum(d, axis=1) * 0.5 * span
    return out.astype(_F32)


@register_kernel(CropAndResize)
def _crop_kernel(ctx: KernelContext) -> Callable[..., Any]:
    method, extrapolation = ctx.attr("method"), ctx.attr("extrapolation_value")
    return lambda image, boxes, box_ind, size: crop(image, boxes, box_ind, size, method, extrapolation)


@register_kernel(CropAndResizeGradImage)
def _grad_image_kernel(ctx: KernelContext) -> Callable[..., Any]:
    method, dtype = ctx.attr("method"), np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
    return lambda grads, boxes, box_ind, size: grad_image(grads, boxes, box_ind, size, method, dtype)


@register_kernel(CropAndResizeGradBoxes)
def _grad_boxes_kernel(ctx: KernelContext) -> Callable[..., Any]:
    return grad_boxes


def crop_and_resize(image: Any, boxes: Any, box_ind: Any, crop_size: Any, method: str = "bilinear",
                    extrapolation_value: float = 0.0, name: Optional[str] = None) -> Any:
    """Crops boxes [num_boxes, 4] (normalised y1, x1, y2, x2) out of images box_ind[b] of the
    4-D `image` and resizes each to `crop_size`: [num_boxes, crop_h, crop_w, depth] float32."""
    return apply_op(CropAndResize, name=name, image=image, boxes=boxes, box_ind=box_ind,
                    crop_size=convert_to_tensor(crop_size, dtype="int32", name="crop_size"), method=method,
                    extrapolation_value=extrapolation_value)
