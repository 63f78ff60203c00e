"""YIQ and YUV conversions (tier 2): a 3x3 colour matrix applied along the last dimension with
tensordot, TF's matrices."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework.graph import name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.linalg.einsum import tensordot

__all__ = ["rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb"]

# Rows are the input channels, columns the output channels (x @ M).
_RGB_TO_YIQ = [[0.299, 0.59590059, 0.2115], [0.587, -0.27455667, -0.52273617],
               [0.114, -0.32134392, 0.31119955]]
_YIQ_TO_RGB = [[1, 1, 1], [0.95598634, -0.27201283, -1.10674021], [0.6208248, -0.64720424, 1.70423049]]
_RGB_TO_YUV = [[0.299, -0.14714119, 0.61497538], [0.587, -0.28886916, -0.51496512],
               [0.114, 0.43601035, -0.10001026]]
_YUV_TO_RGB = [[1, 1, 1], [0, -0.394642334, 2.03206185], [1.13988303, -0.58062185, 0]]


def _convert(images: Any, matrix: list, scope: str, name: Optional[str]) -> Any:
    with name_scope(name, scope, [images]):
        images = convert_to_tensor(images, name="images")
        kernel = convert_to_tensor(np.array(matrix), dtype=images.dtype, name="kernel")
        rank = images.shape.ndims
        if rank is None:
            raise ValueError("images must have a known rank")
        return tensordot(images, kernel, axes=[[rank - 1], [0]])


def rgb_to_yiq(images: Any, name: Optional[str] = None) -> Any:
    """RGB (last dimension 3, floats in [0, 1]) to YIQ."""
    return _convert(images, _RGB_TO_YIQ, "rgb_to_yiq", name)


def yiq_to_rgb(images: Any, name: Optional[str] = None) -> Any:
    """YIQ to RGB."""
    return _convert(images, _YIQ_TO_RGB, "yiq_to_rgb", name)


def rgb_to_yuv(images: Any, name: Optional[str] = None) -> Any:
    """RGB (last dimension 3, floats in [0, 1]) to YUV."""
    return _convert(images, _RGB_TO_YUV, "rgb_to_yuv", name)


def yuv_to_rgb(images: Any, name: Optional[str] = None) -> Any:
    """YUV to RGB."""
    return _convert(images, _YUV_TO_RGB, "yuv_to_rgb", name)
