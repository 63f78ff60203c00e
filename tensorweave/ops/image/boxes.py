"""Bounding boxes: NonMaxSuppression (V1 to V5, WithOverlaps), CombinedNonMaxSuppression, DrawBoundingBoxes (V1, V2),
SampleDistortedBoundingBox (V1, V2) and their TF1 wrappers (tf.image.non_max_suppression is
in image_impl.py).

Non-max suppression is TF's greedy selection (greedy_nms): candidates above `score_threshold`
by descending score (ties to the lower index), each kept unless its IoU with a kept box exceeds
`iou_threshold`, or with soft NMS re-queued with a decayed score; a candidate's IoUs with the
kept boxes are computed at once. Box drawing follows
TF's CPU kernel (corners scaled by size-1 and truncated; inverted and outside boxes skipped;
TF's colour table), one slice assignment per edge. SampleDistortedBoundingBox is TF's sampler
driven by the same Philox words as TF's (SimplePhilox over the kernel's reserved counter), so
seeded programs get TF's boxes.
"""
from __future__ import annotations

import heapq
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework import tensor_util
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops._util import format_dims, invalid, with_rank
from tensorweave.ops.kernels.philox import PhiloxGenerator, philox_words

__all__ = ["draw_bounding_boxes", "sample_distorted_bounding_box", "combined_non_max_suppression"]

_F32 = np.float32


# ---------------------------------------------------------------------------------------------
# NonMaxSuppression
# ---------------------------------------------------------------------------------------------
def _nms_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 2)
    with_rank(op, op.inputs[1].shape, 1)
    for extra in op.inputs[2:]:
        with_rank(op, extra.shape, 0)
    length: Any = None
    if "pad_to_max_output_size" in op.op_def.attrs and op._get_attr("pad_to_max_output_size"):
        length = tensor_util.constant_value(op.inputs[2])
        length = None if length is None else int(length)
    shapes = [TensorShape([length])] * (len(op.outputs) - (1 if op.type in ("NonMaxSuppressionV4",
                                                                         "NonMaxSuppressionV5") else 0))
    return shapes + [TensorShape([])] * (len(op.outputs) - len(shapes))


_NMS_T = ["T: {float16, float32} = float32", "T_threshold: {float16, float32} = float32"]
_PAD = "pad_to_max_output_size: bool = false"
_NMS_IN = ["boxes: T", "scores: T", "max_output_size: int32"]
NonMaxSuppression = define_op("NonMaxSuppression", inputs=["boxes: float", "scores: float", "max_output_size: int32"],
                              outputs=["selected_indices: int32"], attrs=["iou_threshold: float = 0.5"],
                              shape_fn=_nms_shape)
NonMaxSuppressionV2 = define_op("NonMaxSuppressionV2", inputs=_NMS_IN + ["iou_threshold: T_threshold"],
                                outputs=["selected_indices: int32"], attrs=_NMS_T, shape_fn=_nms_shape)
NonMaxSuppressionV3 = define_op("NonMaxSuppressionV3",
                                inputs=_NMS_IN + ["iou_threshold: T_threshold", "score_threshold: T_threshold"],
                                outputs=["selected_indices: int32"], attrs=_NMS_T, shape_fn=_nms_shape)
NonMaxSuppressionV4 = define_op("NonMaxSuppressionV4",
                                inputs=_NMS_IN + ["iou_threshold: T_threshold", "score_threshold: T_threshold"],
                                outputs=["selected_indices: int32", "valid_outputs: int32"], attrs=_NMS_T + [_PAD],
                                shape_fn=_nms_shape)
NonMaxSuppressionV5 = define_op("NonMaxSuppressionV5",
                                inputs=_NMS_IN + ["iou_threshold: T", "score_threshold: T", "soft_nms_sigma: T"],
                                outputs=["selected_indices: int32", "selected_scores: T", "valid_outputs: int32"],
                                attrs=["T: {float16, float32} = float32", _PAD], shape_fn=_nms_shape)
NonMaxSuppressionWithOverlaps = define_op(
    "NonMaxSuppressionWithOverlaps", inputs=["overlaps: float", "scores: float", "max_output_size: int32",
                                             "overlap_threshold: float", "score_threshold: float"],
    outputs=["selected_indices: int32"], shape_fn=_nms_shape)


def _iou(box: np.ndarray, others: np.ndarray) -> np.ndarray:
    """IoU of `box` [4] with `others` [k, 4] (corners in either order; empty boxes: 0)."""
    def canonical(b: np.ndarray) -> tuple[np.ndarray, ...]:
        return (np.minimum(b[..., 0], b[..., 2]), np.minimum(b[..., 1], b[..., 3]),
                np.maximum(b[..., 0], b[..., 2]), np.maximum(b[..., 1], b[..., 3]))
    y0, x0, y1, x1 = canonical(box)
    oy0, ox0, oy1, ox1 = canonical(others)
    area, other_area = (y1 - y0) * (x1 - x0), (oy1 - oy0) * (ox1 - ox0)
    inter = (np.maximum(np.minimum(y1, oy1) - np.maximum(y0, oy0), _F32(0))
             * np.maximum(np.minimum(x1, ox1) - np.maximum(x0, ox0), _F32(0)))
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (area + other_area - inter)
    return np.where((area <= 0) | (other_area <= 0), _F32(0), iou)


def _check_scalars(**values: Any) -> None:
    for name, value in values.items():
        if np.ndim(value) != 0:
            raise invalid(f"{name} must be 0-D, got shape {format_dims(np.shape(value))}")


def greedy_nms(similarity: Callable[[int, list[int]], np.ndarray], scores: np.ndarray, limit: int,
               threshold: float, score_threshold: float, sigma: float = 0.0) -> tuple[list[int], list[Any]]:
    """TF's selection loop: candidates above `score_threshold` from a max-heap (ties to the lower
    index); a candidate is suppressed when its similarity to a kept one exceeds `threshold`, or
    (soft NMS, sigma > 0) has its score decayed by exp(-sim^2 / (2 sigma)) per kept box and goes
    back on the heap while still above `score_threshold`."""
    t = scores.dtype.type
    soft = sigma > 0
    scale = t(-0.5) / t(sigma) if soft else t(0)
    heap = [(-scores[i], i, 0) for i in range(scores.shape[0]) if scores[i] > score_threshold]
    heapq.heapify(heap)
    selected: list[int] = []
    kept_scores: list[Any] = []
    while len(selected) < limit and heap:
        neg, index, begin = heapq.heappop(heap)
        original = score = -neg
        suppressed = False
        sims = similarity(index, selected[begin:])
        for sim in sims[::-1]:   # the most recently kept first, as TF
            weight = np.exp(scale * sim * sim) if soft or sim <= threshold else t(0)
            score = t(score * weight)
            if not soft and sim > threshold:
                suppressed = True
                break
            if score <= score_threshold:
                break
        if suppressed:
            continue
        if score == original:
            selected.append(index)
            kept_scores.append(score)
        elif score > score_threshold:
            heapq.heappush(heap, (-score, index, len(selected)))
    return selected, kept_scores


def _box_similarity(boxes: np.ndarray) -> Callable[[int, list[int]], np.ndarray]:
    def similarity(index: int, others: list[int]) -> np.ndarray:
        if not others:
            return np.zeros(0, _F32)
        return _iou(boxes[index], boxes[others]).astype(_F32)
    return similarity


def nms(boxes: np.ndarray, scores: np.ndarray, max_output_size: Any, iou_threshold: Any,
        score_threshold: Any = -np.inf, soft_nms_sigma: Any = 0.0) -> tuple[list[int], list[Any]]:
    if boxes.ndim != 2 or boxes.shape[1] != 4:
        raise invalid(f"boxes must be 2-D [num_boxes, 4], got shape {format_dims(boxes.shape)}")
    if scores.ndim != 1 or scores.shape[0] != boxes.shape[0]:
        raise invalid(f"scores has incompatible shape: expected [{boxes.shape[0]}], got {format_dims(scores.shape)}")
    _check_scalars(max_output_size=max_output_size, iou_threshold=iou_threshold, score_threshold=score_threshold,
                   soft_nms_sigma=soft_nms_sigma)
    limit, threshold, sigma = int(max_output_size), float(iou_threshold), float(soft_nms_sigma)
    if limit < 0:
        raise invalid(f"max_output_size must be non-negative, got {limit}")
    if not 0 <= threshold <= 1:
        raise invalid("iou_threshold must be in [0, 1]")
    if sigma < 0:
        raise invalid("soft_nms_sigma must be non-negative")
    t = scores.dtype.type
    return greedy_nms(_box_similarity(boxes.astype(_F32)), scores, limit, t(threshold), t(score_threshold), sigma)


def non_max_suppression_indices(boxes: np.ndarray, scores: np.ndarray, max_output_size: Any, iou_threshold: Any,
                                score_threshold: Any = -np.inf) -> np.ndarray:
    return np.asarray(nms(boxes, scores, max_output_size, iou_threshold, score_threshold)[0], np.int32)


def _padded(values: list[Any], limit: int, pad: bool, dtype: Any) -> np.ndarray:
    out = np.asarray(values, dtype)
    return np.concatenate([out, np.zeros(limit - out.shape[0], dtype)]) if pad else out


@NonMaxSuppression.kernel()
def _nms_v1_kernel(ctx: KernelContext) -> Callable[..., Any]:
    threshold = ctx.attr("iou_threshold")
    return lambda boxes, scores, size: non_max_suppression_indices(boxes, scores, size, threshold)


@NonMaxSuppressionV2.kernel()
def _nms_v2_kernel(ctx: KernelContext) -> Callable[..., Any]:
    return non_max_suppression_indices


@NonMaxSuppressionV3.kernel()
def _nms_v3_kernel(ctx: KernelContext) -> Callable[..., Any]:
    return non_max_suppression_indices


@NonMaxSuppressionV4.kernel()
def _nms_v4_kernel(ctx: KernelContext) -> Callable[..., Any]:
    pad = bool(ctx.attr("pad_to_max_output_size"))

    def kernel(boxes: np.ndarray, scores: np.ndarray, size: Any, iou: Any, score: Any) -> tuple[np.ndarray, ...]:
        selected, _ = nms(boxes, scores, size, iou, score)
        return _padded(selected, int(size), pad, np.int32), np.int32(len(selected))

    return kernel


@NonMaxSuppressionV5.kernel()
def _nms_v5_kernel(ctx: KernelContext) -> Callable[..., Any]:
    pad = bool(ctx.attr("pad_to_max_output_size"))

    def kernel(boxes: np.ndarray, scores: np.ndarray, size: Any, iou: Any, score: Any,
               sigma: Any) -> tuple[np.ndarray, ...]:
        selected, kept = nms(boxes, scores, size, iou, score, sigma)
        return (_padded(selected, int(size), pad, np.int32), _padded(kept, int(size), pad, scores.dtype),
                np.int32(len(selected)))

    return kernel


@NonMaxSuppressionWithOverlaps.kernel()
def _nms_overlaps_kernel(ctx: KernelContext) -> Callable[..., Any]:
    def kernel(overlaps: np.ndarray, scores: np.ndarray, size: Any, threshold: Any, score: Any) -> np.ndarray:
        if overlaps.ndim != 2 or overlaps.shape[0] != overlaps.shape[1]:
            raise invalid(f"overlaps must be a square matrix, got {format_dims(overlaps.shape)}")
        if scores.shape != (overlaps.shape[0],):
            raise invalid(f"scores has incompatible shape {format_dims(scores.shape)}")
        _check_scalars(max_output_size=size, overlap_threshold=threshold, score_threshold=score)
        if int(size) < 0:
            raise invalid(f"max_output_size must be non-negative, got {int(size)}")

        def similarity(index: int, others: list[int]) -> np.ndarray:
            return overlaps[index, others].astype(_F32)

        selected, _ = greedy_nms(similarity, scores.astype(_F32), int(size), _F32(threshold), _F32(score))
        return np.asarray(selected, np.int32)

    return kernel


# ---------------------------------------------------------------------------------------------
# CombinedNonMaxSuppression
# ---------------------------------------------------------------------------------------------
def _combined_nms_shape(op: Operation) -> list[TensorShape]:
    boxes = with_rank(op, op.inputs[0].shape, 4)
    scores = with_rank(op, op.inputs[1].shape, 3)
    for extra in op.inputs[2:]:
        with_rank(op, extra.shape, 0)
    per_class, total = tensor_util.constant_value(op.inputs[2]), tensor_util.constant_value(op.inputs[3])
    size: Any = None if total is None else int(total)
    if op._get_attr("pad_per_class"):
        classes = scores.dims[2].value
        size = None if None in (size, per_class, classes) else min(size, int(per_class) * classes)
    batch = boxes.dims[0].merge_with(scores.dims[0])
    return [TensorShape([batch, size, 4]), TensorShape([batch, size]), TensorShape([batch, size]),
            TensorShape([batch])]


CombinedNonMaxSuppression = define_op(
    "CombinedNonMaxSuppression", inputs=["boxes: float", "scores: float", "max_output_size_per_class: int32",
                                         "max_total_size: int32", "iou_threshold: float", "score_threshold: float"],
    outputs=["nmsed_boxes: float", "nmsed_scores: float", "nmsed_classes: float", "valid_detections: int32"],
    attrs=["pad_per_class: bool = false", "clip_boxes: bool = true"], shape_fn=_combined_nms_shape)


def combined_nms(boxes: np.ndarray, scores: np.ndarray, per_class: Any, total: Any, iou_threshold: Any,
                 score_threshold: Any, pad_per_class: bool, clip_boxes: bool) -> tuple[np.ndarray, ...]:
    """Per image and class, greedy NMS (at most `per_class` boxes); then the best `total` of all
    classes by score, boxes clipped to [0, 1], zero-padded."""
    if boxes.ndim != 4 or boxes.shape[3] != 4:
        raise invalid(f"boxes must be 4-D [batch, num_boxes, q, 4], got {format_dims(boxes.shape)}")
    if scores.ndim != 3 or scores.shape[:2] != boxes.shape[:2]:
        raise invalid(f"scores has incompatible shape {format_dims(scores.shape)}")
    batch, num_boxes, q, _ = boxes.shape
    classes = scores.shape[2]
    if q not in (1, classes):
        raise invalid("third dimension of boxes must be either 1 or num classes")
    _check_scalars(max_output_size_per_class=per_class, max_total_size=total, iou_threshold=iou_threshold,
                   score_threshold=score_threshold)
    per_class, total, threshold = int(per_class), int(total), _F32(iou_threshold)
    if total <= 0:
        raise invalid("max_total_size must be > 0")
    if not 0 <= threshold <= 1:
        raise invalid("iou_threshold must be in [0, 1]")
    size_per_class = min(per_class, num_boxes)
    out_size = min(total, per_class * classes) if pad_per_class else total
    out_boxes = np.zeros((batch, out_size, 4), _F32)
    out_scores = np.zeros((batch, out_size), _F32)
    out_classes = np.zeros((batch, out_size), _F32)
    valid = np.zeros(batch, np.int32)
    for b in range(batch):
        found: list[tuple[Any, int, int]] = []      # (score, class, box)
        for c in range(classes):
            class_boxes = boxes[b, :, c if q > 1 else 0].astype(_F32)
            kept, kept_scores = greedy_nms(_box_similarity(class_boxes), scores[b, :, c].astype(_F32), size_per_class,
                                           threshold, _F32(score_threshold))
            found.extend((score, c, index) for index, score in zip(kept, kept_scores))
        found.sort(key=lambda item: -item[0])
        count = min(len(found), out_size)
        valid[b] = count
        for k, (score, c, index) in enumerate(found[:count]):
            box = boxes[b, index, c if q > 1 else 0].astype(_F32)
            out_boxes[b, k] = np.clip(box, 0, 1) if clip_boxes else box
            out_scores[b, k], out_classes[b, k] = score, c
    return out_boxes, out_scores, out_classes, valid


@CombinedNonMaxSuppression.kernel()
def _combined_nms_kernel(ctx: KernelContext) -> Callable[..., Any]:
    pad, clip = bool(ctx.attr("pad_per_class")), bool(ctx.attr("clip_boxes"))
    return lambda boxes, scores, per_class, total, iou, score: combined_nms(boxes, scores, per_class, total, iou,
                                                                            score, pad, clip)


# ---------------------------------------------------------------------------------------------
# DrawBoundingBoxes
# ---------------------------------------------------------------------------------------------
def _draw_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[1].shape, 3)
    return [with_rank(op, op.inputs[0].shape, 4)]


DrawBoundingBoxes = define_op("DrawBoundingBoxes", inputs=["images: T", "boxes: float"], outputs=["output: T"],
                              attrs=["T: {float32, float16} = float32"], shape_fn=_draw_shape)
DrawBoundingBoxesV2 = define_op("DrawBoundingBoxesV2", inputs=["images: T", "boxes: float", "colors: float"],
                                outputs=["output: T"], attrs=["T: {float32, float16} = float32"],
                                shape_fn=_draw_shape)

_COLOR_TABLE = np.array([[1, 1, 0, 1], [0, 0, 1, 1], [1, 0, 0, 1], [0, 1, 0, 1], [0.5, 0, 0.5, 1],
                         [0.5, 0.5, 0, 1], [0.5, 0, 0, 1], [0, 0, 0.5, 1], [0, 1, 1, 1], [1, 0, 1, 1]], np.float32)


def draw_boxes(images: np.ndarray, boxes: np.ndarray, colors: Optional[np.ndarray] = None) -> np.ndarray:
    if images.ndim != 4:
        raise invalid(f"The rank of the images should be 4, got {format_dims(images.shape)}")
    batch, height, width, depth = images.shape
    if depth not in (1, 3, 4):
        raise invalid(f"Channel depth should be either 1 (GRY), 3 (RGB), or 4 (RGBA), got {depth}")
    if boxes.ndim != 3 or boxes.shape[2] != 4 or boxes.shape[0] != batch:
        raise invalid(f"boxes must be [{batch}, num_boxes, 4], got {format_dims(boxes.shape)}")
    if colors is None:
        table = _COLOR_TABLE.copy()
        if depth == 1:
            table[:, 0] = 1
    else:
        table = np.asarray(colors, np.float32)
        if table.ndim != 2 or table.shape[0] == 0 or table.shape[1] < depth:
            raise invalid(f"colors must be a 2-D [num_colors, >= {depth}] tensor, got {format_dims(table.shape)}")
    canvas = images.copy()
    # Corners as TF casts them: float product, truncated toward zero.
    rows = (boxes[..., [0, 2]].astype(_F32) * _F32(height - 1)).astype(np.int64)
    cols = (boxes[..., [1, 3]].astype(_F32) * _F32(width - 1)).astype(np.int64)
    for b in range(batch):
        for k in range(boxes.shape[1]):
            (r0, r1), (c0, c1) = rows[b, k], cols[b, k]
            if r0 > r1 or c0 > c1 or r0 >= height or r1 < 0 or c0 >= width or c1 < 0:
                continue   # inverted or wholly outside: TF skips it with a warning
            color = table[k % table.shape[0], :depth].astype(images.dtype)
            rc0, rc1, cc0, cc1 = max(r0, 0), min(r1, height - 1), max(c0, 0), min(c1, width - 1)
            if r0 >= 0:
                canvas[b, r0, cc0:cc1 + 1] = color
            if r1 < height:
                canvas[b, r1, cc0:cc1 + 1] = color
            if c0 >= 0:
                canvas[b, rc0:rc1 + 1, c0] = color
            if c1 < width:
                canvas[b, rc0:rc1 + 1, c1] = color
    return canvas


@DrawBoundingBoxes.kernel()
def _draw_kernel(ctx: KernelContext) -> Callable[..., Any]:
    return lambda images, boxes: draw_boxes(images, boxes)


@DrawBoundingBoxesV2.kernel()
def _draw_v2_kernel(ctx: KernelContext) -> Callable[..., Any]:
    return draw_boxes


# ---------------------------------------------------------------------------------------------
# SampleDistortedBoundingBox
# ---------------------------------------------------------------------------------------------
_SDBB_ATTRS = ["T: {uint8, int8, int16, int32, int64}", "seed: int = 0", "seed2: int = 0",
               "aspect_ratio_range: list(float) = [0.75, 1.33]", "area_range: list(float) = [0.05, 1.0]",
               "max_attempts: int = 100", "use_image_if_no_bounding_boxes: bool = false"]


def _sdbb_shape(op: Operation) -> list[TensorShape]:
    with_rank(op, op.inputs[0].shape, 1)
    with_rank(op, op.inputs[1].shape, 3)
    return [TensorShape([3]), TensorShape([3]), TensorShape([1, 1, 4])]


SampleDistortedBoundingBox = define_op(
    "SampleDistortedBoundingBox", inputs=["image_size: T", "bounding_boxes: float"],
    outputs=["begin: T", "size: T", "bboxes: float"], attrs=_SDBB_ATTRS + ["min_object_covered: float = 0.1"],
    shape_fn=_sdbb_shape, is_stateful=True)
SampleDistortedBoundingBoxV2 = define_op(
    "SampleDistortedBoundingBoxV2", inputs=["image_size: T", "bounding_boxes: float", "min_object_covered: float"],
    outputs=["begin: T", "size: T", "bboxes: float"], attrs=_SDBB_ATTRS, shape_fn=_sdbb_shape, is_stateful=True)

for _op in (NonMaxSuppression, NonMaxSuppressionV2, NonMaxSuppressionV3, NonMaxSuppressionV4, NonMaxSuppressionV5,
            NonMaxSuppressionWithOverlaps, CombinedNonMaxSuppression, DrawBoundingBoxes, DrawBoundingBoxesV2,
            SampleDistortedBoundingBox, SampleDistortedBoundingBoxV2):
    _op.not_differentiable()


class SimplePhilox:
    """TF's SimplePhilox: single uint32 words drawn in order from consecutive Philox blocks."""

    def __init__(self, key: tuple[int, int], counter: int) -> None:
        self.key, self.counter = key, counter
        self.words: list[int] = []

    def rand32(self) -> int:
        if not self.words:
            self.words = philox_words(self.key, self.counter, 16).tolist()[::-1]
            self.counter += 16
        return self.words.pop()

    def rand_float(self) -> np.float32:
        bits = np.uint32((127 << 23) | (self.rand32() & 0x7FFFFF))
        return bits.view(_F32) - _F32(1)

    def uniform(self, n: int) -> int:
        reject_below = ((1 << 32) - n) % n   # ExactUniformInt: no modulo bias
        value = self.rand32()
        while value < reject_below:
            value = self.rand32()
        return value % n


def _lrint(value: Any) -> int:
    return int(np.rint(_F32(value)))


def _random_crop(width: int, height: int, min_area_frac: float, max_area_frac: float, aspect: np.float32,
                 rng: SimplePhilox) -> Optional[tuple[int, int, int, int]]:
    """TF's GenerateRandomCrop: (x, y, w, h), or None when the constraints can't be met."""
    if max_area_frac <= 0 or aspect <= 0 or width <= 0 or height <= 0 or min_area_frac > max_area_frac:
        return None
    min_area = _F32(_F32(min_area_frac) * _F32(width)) * _F32(height)
    max_area = _F32(_F32(max_area_frac) * _F32(width)) * _F32(height)
    crop_h = _lrint(np.sqrt(min_area / aspect))
    max_h = _lrint(np.sqrt(max_area / aspect))
    if _lrint(_F32(max_h) * aspect) > width:
        max_h = int((width + 0.5 - float(_F32(1e-7))) / float(aspect))
        if _lrint(_F32(max_h) * aspect) > width:
            max_h -= 1
    max_h = min(max_h, height)
    crop_h = min(crop_h, max_h)
    if crop_h < max_h:
        crop_h += rng.uniform(max_h - crop_h + 1)
    crop_w = _lrint(_F32(crop_h) * aspect)
    area = _F32(crop_w * crop_h)
    if area < min_area:
        crop_h += 1
        crop_w = _lrint(_F32(crop_h) * aspect)
        area = _F32(crop_w * crop_h)
    if area > max_area:
        crop_h -= 1
        crop_w = _lrint(_F32(crop_h) * aspect)
        area = _F32(crop_w * crop_h)
    if area < min_area or area > max_area or crop_w > width or crop_h > height or crop_w <= 0 or crop_h <= 0:
        return None
    y = rng.uniform(height - crop_h) if crop_h < height else 0
    x = rng.uniform(width - crop_w) if crop_w < width else 0
    return x, y, crop_w, crop_h


def _covers(crop: tuple[int, int, int, int], min_covered: float, boxes: list[tuple[int, int, int, int]]) -> bool:
    x, y, w, h = crop
    if w * h < 1:
        return False
    for bx0, by0, bx1, by1 in boxes:
        area = (bx1 - bx0) * (by1 - by0)
        if area < 1:
            continue
        ix0, iy0, ix1, iy1 = max(x, bx0), max(y, by0), min(x + w, bx1), min(y + h, by1)
        inter = 0 if ix0 > ix1 or iy0 > iy1 else (ix1 - ix0) * (iy1 - iy0)
        if _F32(inter) / _F32(area) >= _F32(min_covered):
            return True
    return False


def _sdbb_kernel(ctx: KernelContext) -> Callable[..., Any]:
    gen = PhiloxGenerator(ctx.attr("seed"), ctx.attr("seed2"))
    aspect_lo, aspect_hi = (_F32(v) for v in ctx.attr("aspect_ratio_range"))
    area_lo, area_hi = (float(_F32(v)) for v in ctx.attr("area_range"))
    attempts, use_image = ctx.attr("max_attempts"), bool(ctx.attr("use_image_if_no_bounding_boxes"))
    if not (aspect_lo > 0 and aspect_hi > 0):
        raise invalid(f"Aspect ratio range must be non-negative: [{aspect_lo}, {aspect_hi}]")
    if not (area_lo > 0 and area_hi > 0) or area_lo > 1 or area_hi > 1:
        raise invalid(f"Area range must be in (0, 1]: [{area_lo}, {area_hi}]")
    if attempts <= 0:
        raise invalid(f"Max attempts must be non-negative: {attempts}")
    dtype = np.dtype(ctx.output_dtypes[0].as_numpy_dtype)
    fixed_cover = ctx.attr("min_object_covered") if "min_object_covered" in ctx.op.op_def.attrs else None

    def kernel(image_size: np.ndarray, boxes: np.ndarray, min_covered: Any = None) -> tuple[np.ndarray, ...]:
        covered = fixed_cover if min_covered is None else float(min_covered)
        if np.ndim(min_covered) not in (0,) and min_covered is not None:
            raise invalid(f"min_object_covered must be 0-D, got shape {format_dims(np.shape(min_covered))}")
        if covered < 0:
            raise invalid(f"Min object covered must be non-negative: {covered}")
        if image_size.ndim != 1 or image_size.shape[0] != 3:
            raise invalid(f"image_size must be 1-dimensional with 3 elements, got {format_dims(image_size.shape)}")
        if boxes.ndim != 3 or boxes.shape[-1] != 4:
            raise invalid(f"input boxes must be 3-dimensional [batch, num_boxes, coords] with 4 coords, got "
                          f"{format_dims(boxes.shape)}")
        height, width = int(image_size[0]), int(image_size[1])
        flat = boxes.reshape(-1, 4).astype(_F32)
        if flat.size and not np.all((flat >= 0) & (flat <= 1)):
            raise invalid("All bounding box coordinates must be in [0.0, 1.0]")
        rects = [(int(b[1] * _F32(width)), int(b[0] * _F32(height)), int(b[3] * _F32(width)),
                  int(b[2] * _F32(height))) for b in flat]
        if not rects:
            if not use_image:
                raise invalid("No bounding boxes provided as input. One must enable use_image_if_no_bounding_boxes "
                              "if you wish to not provide any bounding boxes.")
            rects = [(0, 0, width, height)]
        rng = SimplePhilox(gen.key, gen.reserve_words(4 * attempts))
        crop = (0, 0, width, height)
        for _ in range(attempts):
            aspect = rng.rand_float() * (aspect_hi - aspect_lo) + aspect_lo
            sample = _random_crop(width, height, area_lo, area_hi, _F32(aspect), rng)
            if sample is not None and _covers(sample, covered, rects):
                crop = sample
                break
        x, y, w, h = crop
        bboxes = np.array([[[_F32(y) / _F32(height), _F32(x) / _F32(width), _F32(y + h) / _F32(height),
                             _F32(x + w) / _F32(width)]]], _F32)
        return np.array([y, x, 0], dtype), np.array([h, w, -1], dtype), bboxes

    return kernel


SampleDistortedBoundingBox.kernel()(_sdbb_kernel)
SampleDistortedBoundingBoxV2.kernel()(_sdbb_kernel)


# ---------------------------------------------------------------------------------------------
# Wrappers
# ---------------------------------------------------------------------------------------------
def non_max_suppression_v5(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any, score_threshold: Any,
                           soft_nms_sigma: Any, pad_to_max_output_size: bool = False,
                           name: Optional[str] = None) -> Any:
    return apply_op(NonMaxSuppressionV5, name=name, boxes=boxes, scores=scores, max_output_size=max_output_size,
                    iou_threshold=iou_threshold, score_threshold=score_threshold, soft_nms_sigma=soft_nms_sigma,
                    pad_to_max_output_size=pad_to_max_output_size)


def non_max_suppression_with_overlaps(overlaps: Any, scores: Any, max_output_size: Any, overlap_threshold: Any,
                                      score_threshold: Any, name: Optional[str] = None) -> Any:
    return apply_op(NonMaxSuppressionWithOverlaps, name=name, overlaps=overlaps, scores=scores,
                    max_output_size=max_output_size, overlap_threshold=overlap_threshold,
                    score_threshold=score_threshold)


def non_max_suppression_v3(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: Any,
                           score_threshold: Any, name: Optional[str] = None) -> Any:
    return apply_op(NonMaxSuppressionV3, name=name, boxes=boxes, scores=scores, max_output_size=max_output_size,
                    iou_threshold=iou_threshold, score_threshold=score_threshold)


def combined_non_max_suppression(boxes: Any, scores: Any, max_output_size_per_class: Any, max_total_size: Any,
                                 iou_threshold: Any = 0.5, score_threshold: Any = float("-inf"),
                                 pad_per_class: bool = False, clip_boxes: bool = True,
                                 name: Optional[str] = None) -> Any:
    """Greedy NMS per image and class, then the best `max_total_size` detections of each image:
    (nmsed_boxes, nmsed_scores, nmsed_classes, valid_detections)."""
    return apply_op(CombinedNonMaxSuppression, name=name, boxes=boxes, scores=scores,
                    max_output_size_per_class=max_output_size_per_class, max_total_size=max_total_size,
                    iou_threshold=iou_threshold, score_threshold=score_threshold, pad_per_class=pad_per_class,
                    clip_boxes=clip_boxes)


def draw_bounding_boxes(images: Any, boxes: Any, name: Optional[str] = None, colors: Any = None) -> Any:
    """Draws `boxes` [batch, num_boxes, 4] (y_min, x_min, y_max, x_max in [0, 1]) on float
    `images` [batch, height, width, depth]; `colors` [num_colors, depth] cycles over the boxes."""
    if colors is None:
        return apply_op(DrawBoundingBoxes, name=name, images=images, boxes=boxes)
    return apply_op(DrawBoundingBoxesV2, name=name, images=images, boxes=boxes, colors=colors)


def sample_distorted_bounding_box(image_size: Any, bounding_boxes: Any, seed: Optional[int] = None,
                                  seed2: Optional[int] = None, min_object_covered: Any = 0.1,
                                  aspect_ratio_range: Any = None, area_range: Any = None,
                                  max_attempts: Optional[int] = None,
                                  use_image_if_no_bounding_boxes: Optional[bool] = None,
                                  name: Optional[str] = None) -> Any:
    """A random crop (begin, size, bboxes) of an image of `image_size` covering at least
    `min_object_covered` of one of `bounding_boxes` (TF's sampler and seeds)."""
    # TF1 hands both seeds to the op as given (no graph seed), as TF 1.x did.
    return apply_op(SampleDistortedBoundingBoxV2, name=name or "sample_distorted_bounding_box",
                    image_size=image_size, bounding_boxes=bounding_boxes, min_object_covered=min_object_covered,
                    seed=seed or 0, seed2=seed2 or 0, aspect_ratio_range=aspect_ratio_range, area_range=area_range,
                    max_attempts=max_attempts, use_image_if_no_bounding_boxes=use_image_if_no_bounding_boxes)
