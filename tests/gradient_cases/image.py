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
