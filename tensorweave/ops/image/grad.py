"""Gradients of the image family's ops, with TensorFlow's formulas (tier 3: only gradients.py
imports this module): each resize op's gradient is its *Grad op, which spreads every output
gradient back onto the input pixels it was interpolated from (the size input gets None)."""
from __future__ import annotations

from typing import Any

from tensorweave.framework.graph import Operation
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops import array as array_ops
from tensorweave.ops.image import resize


def _flags(op: Operation) -> dict[str, Any]:
    return {"align_corners": op.get_attr("align_corners"), "half_pixel_centers": op.get_attr("half_pixel_centers")}


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
