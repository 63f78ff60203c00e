"""Image quality measures (tier 2): PSNR and SSIM as TF computes them. SSIM blurs with an
11x11 Gaussian (a softmax over squared distances, so it sums to one) through a VALID depthwise
convolution, uses the compensation factor 1 (as MATLAB's MS-SSIM) and averages the map over
height, width and then channels."""
from __future__ import annotations

from typing import Any, Optional

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import control_dependencies, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops import array as array_ops, math as math_ops
from tensorweave.ops.debugging import Assert
from tensorweave.ops.image.image_impl import convert_image_dtype
from tensorweave.ops.nn.depthwise_conv import depthwise_conv2d
from tensorweave.ops.nn.nn_impl import softmax

__all__ = ["psnr", "ssim"]


def _as_float_pair(a: Any, b: Any, max_val: Any) -> tuple[Any, Any, Any]:
    a = convert_to_tensor(a, name="a")
    b = convert_to_tensor(b, name="b")
    if a.shape.ndims is not None and a.shape.ndims < 3:
        raise ValueError(f"Shape must be at least rank 3, got {a.shape}")
    if not a.shape.is_compatible_with(b.shape):
        raise ValueError(f"Shapes {a.shape} and {b.shape} are incompatible")
    max_val = convert_image_dtype(math_ops.cast(max_val, a.dtype), _dtypes.float32)
    return convert_image_dtype(a, _dtypes.float32), convert_image_dtype(b, _dtypes.float32), max_val


def psnr(a: Any, b: Any, max_val: Any, name: Optional[str] = None) -> Any:
    """Peak signal-to-noise ratio of each image pair, in dB: 10 log10(max_val^2 / MSE)."""
    with name_scope(name, "PSNR", [a, b]):
        a, b, max_val = _as_float_pair(a, b, max_val)
        mse = math_ops.reduce_mean(math_ops.squared_difference(a, b), [-3, -2, -1])
        return math_ops.subtract(20 * math_ops.log(max_val) / math_ops.log(10.0),
                                 np.float32(10 / np.log(10)) * math_ops.log(mse), name="psnr")


def _gaussian(size: int, sigma: Any, dtype: Any) -> Any:
    coords = math_ops.cast(array_ops.range(size), dtype) - (size - 1) / 2.0
    g = math_ops.square(coords) * (-0.5 / math_ops.square(convert_to_tensor(sigma, dtype)))
    g = array_ops.reshape(array_ops.reshape(g, [1, -1]) + array_ops.reshape(g, [-1, 1]), [1, -1])
    return array_ops.reshape(softmax(g), [size, size, 1, 1])


def ssim(img1: Any, img2: Any, max_val: Any, filter_size: int = 11, filter_sigma: float = 1.5, k1: float = 0.01,
         k2: float = 0.03) -> Any:
    """Structural similarity of each image pair (last three dimensions: height, width, channels)."""
    with name_scope(None, "SSIM", [img1, img2]):
        x, y, max_val = _as_float_pair(img1, img2, max_val)
        shape = array_ops.shape(x)
        check = Assert(math_ops.reduce_all(math_ops.greater_equal(shape[-3:-1], filter_size)),
                       [shape, filter_size], summarize=8)
        with control_dependencies([check]):
            x = array_ops.identity(x)
        kernel = array_ops.tile(_gaussian(filter_size, filter_sigma, x.dtype),
                                array_ops.stack([1, 1, shape[-1], 1]))

        def blur(t: Any) -> Any:
            t_shape = array_ops.shape(t)
            flat = array_ops.reshape(t, array_ops.concat([[-1], t_shape[-3:]], 0))
            out = depthwise_conv2d(flat, kernel, [1, 1, 1, 1], "VALID")
            return array_ops.reshape(out, array_ops.concat([t_shape[:-3], array_ops.shape(out)[1:]], 0))

        c1, c2 = (k1 * max_val) ** 2, (k2 * max_val) ** 2
        mean_x, mean_y = blur(x), blur(y)
        num0 = mean_x * mean_y * 2.0
        den0 = math_ops.square(mean_x) + math_ops.square(mean_y)
        luminance = (num0 + c1) / (den0 + c1)
        num1 = blur(x * y) * 2.0
        den1 = blur(math_ops.square(x) + math_ops.square(y))
        contrast_structure = (num1 - num0 + c2) / (den1 - den0 + c2)
        per_channel = math_ops.reduce_mean(luminance * contrast_structure, [-3, -2])
        return math_ops.reduce_mean(per_channel, [-1])
