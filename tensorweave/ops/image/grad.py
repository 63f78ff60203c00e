"""Gradients of the image family's ops, with TensorFlow's formulas (tier 3: only gradients.py
imports this module): each resize op's gradient is its *Grad op, which spreads every output
gradient back onto the input pixels it was interpolated from (the size input gets None);
RGBToHSV's is built from math ops, in the input's dtype; CropAndResize's are TF's grad ops."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.graph import Operation
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array as array_ops, math as math_ops
from tensorweave.ops.image import color, crop_resize, resize


def _flags(op: Operation) -> dict[str, Any]:
    return {"align_corners": op._get_attr("align_corners"), "half_pixel_centers": op._get_attr("half_pixel_centers")}


@resize.ResizeBilinear.gradient
def _resize_bilinear_grad(op: Operation, grad: Any) -> list[Any]:
    return [apply_op(resize.ResizeBilinearGrad, grads=grad, original_image=op.inputs[0], **_flags(op)), None]


@resize.ResizeBicubic.gradient
def _resize_bicubic_grad(op: Operation, grad: Any) -> list[Any]:
    if not op.inputs[0].dtype.is_floating:
        return [None, None]   # TF: integer images get no gradient
    return [apply_op(resize.ResizeBicubicGrad, grads=grad, original_image=op.inputs[0], **_flags(op)), None]


@resize.ResizeNearestNeighbor.gradient
def _resize_nearest_neighbor_grad(op: Operation, grad: Any) -> list[Any]:
    image = op.inputs[0]
    static = image.shape[1:3]
    size = static.as_list() if static.is_fully_defined() else array_ops.shape(image)[1:3]
    return [apply_op(resize.ResizeNearestNeighborGrad, grads=grad, size=size, **_flags(op)), None]


@color.RGBToHSV.gradient
def _rgb_to_hsv_grad(op: Operation, grad: Any) -> Any:
    """The derivative of the piecewise HSV formulas, with the max and min channels chosen as
    the forward pass chooses them (R, then G, on ties). With M = max, m = min, C = M - m:
    V = M; S = 1 - m/M; H = N / (6C) (+ a constant), where N is the difference of the two
    channels other than the max, taken in cyclic order (G-B, B-R or R-G). Pixels where M or C
    is zero get no gradient through S or H."""
    x, y = op.inputs[0], op.outputs[0]
    dtype = x.dtype
    r, g, b = array_ops.unstack(x, num=3, axis=-1)
    _, _, v = array_ops.unstack(y, num=3, axis=-1)
    gh, gs, gv = array_ops.unstack(grad, num=3, axis=-1)

    def mask(condition: Any) -> Any:
        return math_ops.cast(condition, dtype)

    r_max = math_ops.logical_and(r >= g, r >= b)
    g_max = math_ops.logical_and(math_ops.logical_not(r_max), g >= b)
    is_max = [mask(r_max), mask(g_max), mask(math_ops.logical_not(math_ops.logical_or(r_max, g_max)))]
    r_min = math_ops.logical_and(r <= g, r <= b)
    g_min = math_ops.logical_and(math_ops.logical_not(r_min), g <= b)
    is_min = [mask(r_min), mask(g_min), mask(math_ops.logical_not(math_ops.logical_or(r_min, g_min)))]
    low = r * is_min[0] + g * is_min[1] + b * is_min[2]
    chroma = v - low
    numerator = is_max[0] * (g - b) + is_max[1] * (b - r) + is_max[2] * (r - g)
    hue_scale = math_ops.div_no_nan(array_ops.ones_like(chroma), 6 * chroma * chroma)
    inv_v = math_ops.div_no_nan(array_ops.ones_like(v), v)
    parts = []
    for i in range(3):
        d_numerator = is_max[(i - 1) % 3] - is_max[(i + 1) % 3]
        d_chroma = is_max[i] - is_min[i]
        d_h = (d_numerator * chroma - numerator * d_chroma) * hue_scale
        d_s = is_max[i] * low * inv_v * inv_v - is_min[i] * inv_v
        parts.append(gh * d_h + gs * d_s + gv * is_max[i])
    return array_ops.stack(parts, axis=-1)


@crop_resize.CropAndResize.gradient
def _crop_and_resize_grad(op: Operation, grad: Any) -> list[Any]:
    """TF's: the image gets CropAndResizeGradImage (float images only), the boxes
    CropAndResizeGradBoxes (the bilinear derivative, for either method)."""
    image, boxes, box_ind = op.inputs[0], op.inputs[1], op.inputs[2]
    grad_image = None
    if image.dtype.is_floating:
        size = image.shape.as_list() if image.shape.is_fully_defined() else array_ops.shape(image)
        grad_image = apply_op(crop_resize.CropAndResizeGradImage, grads=grad, boxes=boxes, box_ind=box_ind,
                              image_size=size, T=image.dtype, method=op._get_attr("method"))
    grad_boxes = apply_op(crop_resize.CropAndResizeGradBoxes, grads=grad, image=image, boxes=boxes, box_ind=box_ind)
    return [grad_image, grad_boxes, None, None]
