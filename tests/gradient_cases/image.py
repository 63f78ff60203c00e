"""Gradient cases: the resize ops (ResizeBilinear, ResizeNearestNeighbor, ResizeBicubic) under
each align_corners / half_pixel_centers setting. Their outputs are float32 whatever the input
(TF's signature), so the checker steps by 0.5: the ops are linear in the image, which makes
such a step exact, and the tolerance covers float32 rounding."""
import numpy as np

import tensorweave as tf
from tests.gradient_cases import GradCase

_FLAGS = [(False, False), (True, False), (False, True)]


def _case(name, fn, op_type, size, ac, hpc):
    def build(x):
        return tf.cast(fn(x, size, align_corners=ac, half_pixel_centers=hpc), tf.float64)
    return GradCase(f"{name}_{size[0]}x{size[1]}_{int(ac)}{int(hpc)}", (op_type,), build, [(2, 4, 5, 2)],
                    tol=1e-5, delta=0.5)


CASES = [_case(name, fn, op_type, size, ac, hpc)
         for name, fn, op_type in (("resize_bilinear", tf.image.resize_bilinear, "ResizeBilinear"),
                                   ("resize_nearest", tf.image.resize_nearest_neighbor, "ResizeNearestNeighbor"),
                                   ("resize_bicubic", tf.image.resize_bicubic, "ResizeBicubic"))
         for size in ((3, 7), (8, 3)) for ac, hpc in _FLAGS]


def _distinct_rgb(rng):
    """Pixels whose three channels are apart by more than the checker's step (no ties)."""
    base = rng.uniform(0.1, 0.9, (3, 4, 1))
    offsets = np.stack([rng.permutation([0.0, 0.03, 0.07]) for _ in range(12)]).reshape(3, 4, 3)
    return [base + offsets]


CASES.append(GradCase("rgb_to_hsv", ("RGBToHSV",), tf.image.rgb_to_hsv, [(3, 4, 3)], init=_distinct_rgb, tol=1e-5))


_CAR_BOXES = np.array([[0.13, 0.21, 0.71, 0.87], [0.83, 0.91, 0.27, 0.12], [0.41, 0.33, 0.52, 0.61]])


def _car_image(method):
    def build(image):
        out = tf.image.crop_and_resize(image, _CAR_BOXES.astype(np.float32), [0, 1, 1], [3, 4], method=method)
        return tf.cast(out, tf.float64)
    return build


def _car_boxes(image_value):
    def build(boxes):
        out = tf.image.crop_and_resize(tf.constant(image_value), tf.cast(boxes, tf.float32), [0, 1, 1], [3, 4])
        return tf.cast(out, tf.float64)
    return build


# The image gradient is linear (step 0.5); the boxes gradient is checked with a small step in
# float32, with box corners whose samples stay inside one pixel cell over the step.
CASES += [GradCase(f"crop_and_resize_image_{m}", ("CropAndResize",), _car_image(m), [(2, 5, 6, 2)], tol=1e-5,
                   delta=0.5) for m in ("bilinear", "nearest")]
CASES.append(GradCase("crop_and_resize_boxes", ("CropAndResize",),
                      _car_boxes(np.random.RandomState(3).uniform(-1, 1, (2, 5, 6, 2)).astype(np.float32)),
                      [(3, 4)], init=lambda rng: [_CAR_BOXES], tol=2e-3, delta=1e-4))
