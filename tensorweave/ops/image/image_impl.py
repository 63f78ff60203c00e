"""tf.image's Python-level functions (tier 2), built as TF's image_ops_impl builds them from
array, math, random and control-flow ops and this family's tier-1 ops: resizing with
ResizeMethod, cropping and padding, flips and rotations, the random_* augmentations (TF's
graphs, so op seeds give TF's numbers), the adjust_* functions, dtype conversion, grayscale,
standardization, non-max suppression, total variation, image gradients and Sobel edges.

Checks that can be decided at graph construction raise ValueError there, as TF's `_assert`
does; the others become Assert ops the result depends on.
"""
from __future__ import annotations

import enum
from typing import Any, Callable, Optional, Sequence

import numpy as np

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework import tensor_util
from tensorweave.framework.graph import control_dependencies, is_tensor_like, name_scope
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops import array as array_ops, math as math_ops
from tensorweave.ops.control_flow.cond import case, cond
from tensorweave.ops.debugging import Assert
from tensorweave.ops.image import boxes as _boxes, codecs as _codecs, color as _color, resize as _resize
from tensorweave.ops.linalg.einsum import tensordot
from tensorweave.ops.nn.depthwise_conv import depthwise_conv2d
from tensorweave.ops.random.draws import random_uniform
from tensorweave.ops.strings.string_ops import substr

__all__ = ["ResizeMethod", "resize_images", "resize_image_with_crop_or_pad", "resize_image_with_pad",
           "crop_to_bounding_box", "pad_to_bounding_box", "central_crop", "flip_left_right", "flip_up_down",
           "transpose_image", "rot90", "random_flip_left_right", "random_flip_up_down", "random_crop",
           "random_brightness", "random_contrast", "random_saturation", "random_hue", "adjust_brightness",
           "adjust_contrast", "adjust_gamma", "adjust_saturation", "adjust_hue", "per_image_standardization",
           "rgb_to_grayscale", "grayscale_to_rgb", "convert_image_dtype", "non_max_suppression",
           "non_max_suppression_with_scores", "non_max_suppression_overlaps", "total_variation", "image_gradients",
           "sobel_edges", "decode_image", "is_jpeg", "adjust_jpeg_quality", "random_jpeg_quality"]


class ResizeMethod(enum.IntEnum):
    """TF1's resize methods (tf.image.ResizeMethod)."""
    BILINEAR = 0
    NEAREST_NEIGHBOR = 1
    BICUBIC = 2
    AREA = 3


# ---------------------------------------------------------------------------------------------
# Helpers: image dims, graph-time or run-time checks
# ---------------------------------------------------------------------------------------------
def _assert(condition: Any, message: str) -> list[Any]:
    """[] when `condition` holds at graph time (ValueError when it fails); an Assert op when
    it is a tensor, as TF's _assert."""
    if is_tensor_like(condition):
        return [Assert(condition, [message])]
    if not condition:
        raise ValueError(message)
    return []


def _with_deps(ops: Sequence[Any], tensor: Any) -> Any:
    if not ops:
        return tensor
    with control_dependencies(list(ops)):
        return array_ops.identity(tensor)


def _dims(image: Any, rank: int) -> list[Any]:
    """Each dim as a Python int when static, else a scalar tensor."""
    static = image.shape.with_rank(rank).as_list()
    if all(d is not None for d in static):
        return static
    dynamic = array_ops.unstack(array_ops.shape(image), rank)
    return [s if s is not None else d for s, d in zip(static, dynamic)]


def _to_batch(image: Any, what: str = "image") -> tuple[Any, bool]:
    image = convert_to_tensor(image, name=what)
    rank = image.shape.ndims
    if rank == 3:
        return array_ops.expand_dims(image, 0), False
    if rank is None:
        image = array_ops.expand_dims(image, 0)
        image.set_shape([None] * 4)
        return image, False
    if rank != 4:
        raise ValueError(f"'{what}' (shape {image.shape}) must have either 3 or 4 dimensions.")
    return image, True


def _unbatch(image: Any, is_batch: bool) -> Any:
    return image if is_batch else array_ops.squeeze(image, axis=[0])


def _at_least_3d(image: Any) -> Any:
    image = convert_to_tensor(image, name="image")
    shape = image.shape
    if shape.ndims is not None and shape.ndims < 3:
        raise ValueError(f"'image' (shape {shape}) must be at least three-dimensional.")
    if shape.ndims is not None and any(d == 0 for d in shape.as_list()[-3:]):
        raise ValueError(f"inner 3 dims of 'image.shape' must be > 0: {shape}")
    return image


def _is_tensor(x: Any) -> bool:
    return is_tensor_like(x)


def _max(x: Any, y: Any) -> Any:
    return math_ops.maximum(x, y) if _is_tensor(x) or _is_tensor(y) else max(x, y)


def _min(x: Any, y: Any) -> Any:
    return math_ops.minimum(x, y) if _is_tensor(x) or _is_tensor(y) else min(x, y)


# ---------------------------------------------------------------------------------------------
# Resizing
# ---------------------------------------------------------------------------------------------
_RESIZERS: dict[int, Callable[..., Any]] = {
    ResizeMethod.BILINEAR: _resize.resize_bilinear, ResizeMethod.NEAREST_NEIGHBOR: _resize.resize_nearest_neighbor,
    ResizeMethod.BICUBIC: _resize.resize_bicubic, ResizeMethod.AREA: _resize.resize_area}


# TF 2's method names, which TF 1's resize_images also accepts.
_METHOD_NAMES = {"bilinear": ResizeMethod.BILINEAR, "nearest": ResizeMethod.NEAREST_NEIGHBOR,
                 "bicubic": ResizeMethod.BICUBIC, "area": ResizeMethod.AREA}


def resize_images(images: Any, size: Any, method: Any = ResizeMethod.BILINEAR, align_corners: bool = False,
                  preserve_aspect_ratio: bool = False, name: Optional[str] = None) -> Any:
    """Resizes `images` (3-D or 4-D) to `size` = [new_height, new_width] with `method`."""
    method = _METHOD_NAMES.get(method, method) if isinstance(method, str) else method
    if method not in _RESIZERS:
        raise ValueError("Resize method is not implemented.")
    with name_scope(name, "resize_images", [images, size]):
        images = convert_to_tensor(images, name="images")
        if images.shape.ndims is None:
            raise ValueError("'images' contains no shape.")
        images, is_batch = _to_batch(images, "images")
        _, height, width, _ = images.shape.as_list()
        try:
            size = convert_to_tensor(size, _dtypes.int32, name="size")
        except (TypeError, ValueError):
            raise ValueError("'size' must be a 1-D int32 Tensor") from None
        if not size.shape.is_compatible_with([2]):
            raise ValueError("'size' must be a 1-D Tensor of 2 elements: new_height, new_width")
        if preserve_aspect_ratio:
            _, cur_h, cur_w, _ = _dims(images, 4)
            f32 = _dtypes.float32
            scale = math_ops.minimum(math_ops.cast(size[0], f32) / math_ops.cast(cur_h, f32),
                                     math_ops.cast(size[1], f32) / math_ops.cast(cur_w, f32))
            new_h = math_ops.cast(math_ops.round(scale * math_ops.cast(cur_h, f32)), _dtypes.int32)
            new_w = math_ops.cast(math_ops.round(scale * math_ops.cast(cur_w, f32)), _dtypes.int32)
            size = convert_to_tensor(array_ops.stack([new_h, new_w]), _dtypes.int32, name="size")
        known = tensor_util.constant_value_as_shape(size)
        new_h_const, new_w_const = known.dims[0].value, known.dims[1].value
        if None not in (new_h_const, new_w_const, height, width) and (height, width) == (new_h_const, new_w_const):
            return _unbatch(images, is_batch)
        resized = _RESIZERS[method](images, size, align_corners=align_corners)
        resized.set_shape([None, new_h_const, new_w_const, None])
        return _unbatch(resized, is_batch)


def crop_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any,
                         target_width: Any) -> Any:
    """Crops `image` (3-D or 4-D) to the box with top-left corner (offset_height, offset_width)."""
    with name_scope(None, "crop_to_bounding_box", [image]):
        image, is_batch = _to_batch(image)
        batch, height, width, depth = _dims(image, 4)
        checks = (_assert(offset_width >= 0, "offset_width must be >= 0.")
                  + _assert(offset_height >= 0, "offset_height must be >= 0.")
                  + _assert(target_width > 0, "target_width must be > 0.")
                  + _assert(target_height > 0, "target_height must be > 0.")
                  + _assert(width >= (target_width + offset_width), "width must be >= target + offset.")
                  + _assert(height >= (target_height + offset_height), "height must be >= target + offset."))
        image = _with_deps(checks, image)
        shape = array_ops.shape(image)
        cropped = array_ops.slice(image, array_ops.stack([0, offset_height, offset_width, 0]),
                                  array_ops.stack([shape[0], target_height, target_width, shape[3]]))
        cropped.set_shape([None if _is_tensor(d) else d for d in (batch, target_height, target_width, depth)])
        return _unbatch(cropped, is_batch)


def pad_to_bounding_box(image: Any, offset_height: Any, offset_width: Any, target_height: Any,
                        target_width: Any) -> Any:
    """Pads `image` with zeros to [target_height, target_width], placed at the offsets."""
    with name_scope(None, "pad_to_bounding_box", [image]):
        image, is_batch = _to_batch(image)
        batch, height, width, depth = _dims(image, 4)
        after_w = target_width - offset_width - width
        after_h = target_height - offset_height - height
        checks = (_assert(offset_height >= 0, "offset_height must be >= 0")
                  + _assert(offset_width >= 0, "offset_width must be >= 0")
                  + _assert(after_w >= 0, "width must be <= target - offset")
                  + _assert(after_h >= 0, "height must be <= target - offset"))
        image = _with_deps(checks, image)
        paddings = array_ops.reshape(array_ops.stack([0, 0, offset_height, after_h, offset_width, after_w, 0, 0]),
                                     [4, 2])
        padded = array_ops.pad(image, paddings)
        padded.set_shape([None if _is_tensor(d) else d for d in (batch, target_height, target_width, depth)])
        return _unbatch(padded, is_batch)


def resize_image_with_crop_or_pad(image: Any, target_height: Any, target_width: Any) -> Any:
    """Centrally crops and/or zero-pads `image` to [target_height, target_width]."""
    with name_scope(None, "resize_image_with_crop_or_pad", [image]):
        image, is_batch = _to_batch(image)
        checks = (_assert(target_width > 0, "target_width must be > 0.")
                  + _assert(target_height > 0, "target_height must be > 0."))
        image = _with_deps(checks, image)
        _, height, width, _ = _dims(image, 4)
        width_diff, height_diff = target_width - width, target_height - height
        cropped = crop_to_bounding_box(image, _max(-height_diff // 2, 0), _max(-width_diff // 2, 0),
                                       _min(target_height, height), _min(target_width, width))
        resized = pad_to_bounding_box(cropped, _max(height_diff // 2, 0), _max(width_diff // 2, 0),
                                      target_height, target_width)
        return _unbatch(resized, is_batch)


def resize_image_with_pad(image: Any, target_height: Any, target_width: Any,
                          method: int = ResizeMethod.BILINEAR, align_corners: bool = False) -> Any:
    """Resizes `image` keeping its aspect ratio to fit [target_height, target_width], then
    zero-pads it to that size."""
    with name_scope(None, "resize_image_with_pad", [image]):
        image, is_batch = _to_batch(image)
        checks = (_assert(target_width > 0, "target_width must be > 0.")
                  + _assert(target_height > 0, "target_height must be > 0."))
        image = _with_deps(checks, image)
        _, height, width, _ = _dims(image, 4)
        f32 = _dtypes.float32
        f_height, f_width = math_ops.cast(height, f32), math_ops.cast(width, f32)
        f_target_h, f_target_w = math_ops.cast(target_height, f32), math_ops.cast(target_width, f32)
        ratio = math_ops.maximum(f_width / f_target_w, f_height / f_target_h)
        resized_h_float, resized_w_float = f_height / ratio, f_width / ratio
        resized_h = math_ops.cast(math_ops.floor(resized_h_float), _dtypes.int32)
        resized_w = math_ops.cast(math_ops.floor(resized_w_float), _dtypes.int32)
        pad_h = math_ops.floor((f_target_h - resized_h_float) / 2)
        pad_w = math_ops.floor((f_target_w - resized_w_float) / 2)
        p_height = math_ops.maximum(0, math_ops.cast(pad_h, _dtypes.int32))
        p_width = math_ops.maximum(0, math_ops.cast(pad_w, _dtypes.int32))
        resized = resize_images(image, array_ops.stack([resized_h, resized_w]), method, align_corners=align_corners)
        padded = pad_to_bounding_box(resized, p_height, p_width, target_height, target_width)
        return _unbatch(padded, is_batch)


def central_crop(image: Any, central_fraction: Any) -> Any:
    """Crops the central `central_fraction` (in (0, 1]) of each spatial dimension."""
    with name_scope(None, "central_crop", [image]):
        image = convert_to_tensor(image, name="image")
        fraction_static = tensor_util.constant_value(central_fraction) if _is_tensor(central_fraction) \
            else central_fraction
        if fraction_static is not None:
            if fraction_static <= 0.0 or fraction_static > 1.0:
                raise ValueError("central_fraction must be within (0, 1]")
            if fraction_static == 1.0:
                return image
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError(f"`image` should either be a Tensor with rank = 3 or rank = 4. Had rank = {rank}.")
        first = rank - 3
        static = image.shape.as_list()
        spatial = []
        for axis in (first, first + 1):
            dynamic = static[axis] is None or fraction_static is None
            size = array_ops.shape(image)[axis] if static[axis] is None else static[axis]
            if dynamic:
                size_d = math_ops.cast(size, _dtypes.float64)
                start = math_ops.cast((size_d - size_d * math_ops.cast(central_fraction, _dtypes.float64)) / 2,
                                      _dtypes.int32)
            else:
                start = int((float(size) - float(size) * fraction_static) / 2)
            spatial.append((start, size - start * 2, dynamic))
        (h_start, h_size, h_dyn), (w_start, w_size, w_dyn) = spatial
        begin = [h_start, w_start, 0] if rank == 3 else [0, h_start, w_start, 0]
        size = [h_size, w_size, -1] if rank == 3 else [-1, h_size, w_size, -1]
        cropped = array_ops.slice(image, array_ops.stack(begin), array_ops.stack(size))
        spatial_shape = [None if h_dyn else h_size, None if w_dyn else w_size, static[-1]]
        cropped.set_shape(spatial_shape if rank == 3 else [static[0]] + spatial_shape)
        return cropped


# ---------------------------------------------------------------------------------------------
# Flips, transposes, rotations
# ---------------------------------------------------------------------------------------------
def _flip(image: Any, axis: int, scope: str) -> Any:
    with name_scope(None, scope, [image]):
        image = _at_least_3d(image)
        rank = image.shape.ndims
        if rank is None:
            return cond(math_ops.equal(array_ops.rank(image), 3), lambda: array_ops.reverse(image, [axis]),
                        lambda: array_ops.reverse(image, [axis + 1]))
        if rank == 3:
            return array_ops.reverse(image, [axis])
        if rank == 4:
            return array_ops.reverse(image, [axis + 1])
        raise ValueError("'image' must have either 3 or 4 dimensions.")


def flip_left_right(image: Any) -> Any:
    """Reverses the width dimension of a 3-D or 4-D image."""
    return _flip(image, 1, "flip_left_right")


def flip_up_down(image: Any) -> Any:
    """Reverses the height dimension of a 3-D or 4-D image."""
    return _flip(image, 0, "flip_up_down")


def _random_flip(image: Any, axis: int, seed: Optional[int], scope: str) -> Any:
    with name_scope(None, scope, [image]) as scope_name:
        image = _at_least_3d(image)
        rank = image.shape.ndims
        if rank == 3:
            flip = math_ops.less(random_uniform([], 0, 1.0, seed=seed), 0.5)
            result = cond(flip, lambda: array_ops.reverse(image, [axis]), lambda: image, name=scope_name)
            result.set_shape(image.shape)
            return result
        if rank == 4:
            batch = array_ops.shape(image)[0]
            draws = random_uniform(array_ops.expand_dims(batch, 0), 0, 1.0, seed=seed)
            flips = math_ops.cast(math_ops.round(array_ops.reshape(draws, array_ops.stack([batch, 1, 1, 1]))),
                                  image.dtype)
            flipped = array_ops.reverse(image, [axis + 1])
            return flips * flipped + (1 - flips) * image
        raise ValueError("'image' must have either 3 or 4 dimensions.")


def random_flip_left_right(image: Any, seed: Optional[int] = None) -> Any:
    """Flips each image left to right with probability 1/2."""
    return _random_flip(image, 1, seed, "random_flip_left_right")


def random_flip_up_down(image: Any, seed: Optional[int] = None) -> Any:
    """Flips each image upside down with probability 1/2."""
    return _random_flip(image, 0, seed, "random_flip_up_down")


def transpose_image(image: Any, name: Optional[str] = None) -> Any:
    """Swaps the height and width dimensions of a 3-D or 4-D image."""
    with name_scope(name, "transpose", [image]):
        image = _at_least_3d(image)
        rank = image.shape.ndims
        if rank == 3:
            return array_ops.transpose(image, [1, 0, 2])
        if rank == 4:
            return array_ops.transpose(image, [0, 2, 1, 3])
        raise ValueError("'image' must have either 3 or 4 dimensions.")


def rot90(image: Any, k: Any = 1, name: Optional[str] = None) -> Any:
    """Rotates a 3-D or 4-D image counter-clockwise by k * 90 degrees."""
    with name_scope(name, "rot90", [image, k]) as scope:
        image = _at_least_3d(image)
        k = math_ops.mod(convert_to_tensor(k, _dtypes.int32, name="k"), 4)
        rank = image.shape.ndims
        if rank not in (3, 4):
            raise ValueError("'image' must have either 3 or 4 dimensions.")
        h, w = rank - 3, rank - 2
        perm = [1, 0, 2] if rank == 3 else [0, 2, 1, 3]
        cases = [(math_ops.equal(k, 1), lambda: array_ops.transpose(array_ops.reverse(image, [w]), perm)),
                 (math_ops.equal(k, 2), lambda: array_ops.reverse(image, [h, w])),
                 (math_ops.equal(k, 3), lambda: array_ops.reverse(array_ops.transpose(image, perm), [w]))]
        result = case(cases, default=lambda: image, exclusive=True, name=scope)
        static = image.shape.as_list()
        result.set_shape([None, None, static[2]] if rank == 3 else [static[0], None, None, static[3]])
        return result


# ---------------------------------------------------------------------------------------------
# Dtypes and colour
# ---------------------------------------------------------------------------------------------
def convert_image_dtype(image: Any, dtype: Any, saturate: bool = False, name: Optional[str] = None) -> Any:
    """Converts `image` to `dtype`, scaling values: floats live in [0, 1), integers in
    [0, dtype.max]; `saturate` clips before casting to a narrower integer type."""
    image = convert_to_tensor(image, name="image")
    dtype = _dtypes.as_dtype(dtype)
    if not (dtype.is_floating or dtype.is_integer) or not (image.dtype.is_floating or image.dtype.is_integer):
        raise AttributeError("dtype must be either floating point or integer")
    if dtype == image.dtype:
        return array_ops.identity(image, name=name)
    with name_scope(name, "convert_image", [image]) as scope:
        cast = math_ops.saturate_cast if saturate else math_ops.cast
        if image.dtype.is_integer and dtype.is_integer:
            scale_in, scale_out = image.dtype.max, dtype.max
            if scale_in > scale_out:
                scaled = math_ops.floordiv(image, (scale_in + 1) // (scale_out + 1))
                return cast(scaled, dtype, name=scope)
            return math_ops.multiply(cast(image, dtype), (scale_out + 1) // (scale_in + 1), name=scope)
        if image.dtype.is_floating and dtype.is_floating:
            return math_ops.cast(image, dtype, name=scope)
        if image.dtype.is_integer:
            return math_ops.multiply(math_ops.cast(image, dtype), 1. / image.dtype.max, name=scope)
        scaled = math_ops.multiply(image, dtype.max + 0.5)
        return cast(scaled, dtype, name=scope)


def _float_image(image: Any) -> tuple[Any, Any]:
    image = convert_to_tensor(image, name="image")
    if image.dtype in (_dtypes.float16, _dtypes.float32):
        return image, image.dtype
    return convert_image_dtype(image, _dtypes.float32), image.dtype


def adjust_brightness(image: Any, delta: Any) -> Any:
    """Adds `delta` to every value (of the image as floats in [0, 1])."""
    with name_scope(None, "adjust_brightness", [image, delta]) as scope:
        flt, orig_dtype = _float_image(image)
        adjusted = math_ops.add(flt, math_ops.cast(delta, flt.dtype), name=scope)
        return convert_image_dtype(adjusted, orig_dtype, saturate=True)


def adjust_contrast(images: Any, contrast_factor: Any) -> Any:
    """(x - mean) * contrast_factor + mean, per image and channel."""
    with name_scope(None, "adjust_contrast", [images, contrast_factor]) as scope:
        flt, orig_dtype = _float_image(images)
        adjusted = _color.adjust_contrastv2(flt, contrast_factor=contrast_factor, name=scope)
        return convert_image_dtype(adjusted, orig_dtype, saturate=True)


def adjust_gamma(image: Any, gamma: Any = 1, gain: Any = 1) -> Any:
    """gain * image ** gamma (of the image as floats in [0, 1])."""
    with name_scope(None, "adjust_gamma", [image, gamma, gain]):
        flt, orig_dtype = _float_image(image)
        checks = _assert(gamma >= 0, "Gamma should be a non-negative real number.")
        if checks:
            gamma = _with_deps(checks, gamma)
        adjusted = gain * flt ** gamma
        return convert_image_dtype(adjusted, orig_dtype, saturate=True)


def adjust_hue(image: Any, delta: Any, name: Optional[str] = None) -> Any:
    """Rotates the hue of RGB images by `delta` (a fraction of the colour circle, in [-1, 1])."""
    with name_scope(name, "adjust_hue", [image]) as scope:
        flt, orig_dtype = _float_image(image)
        return convert_image_dtype(_color.adjust_hue_op(flt, delta, name=scope), orig_dtype)


def adjust_saturation(image: Any, saturation_factor: Any, name: Optional[str] = None) -> Any:
    """Multiplies the saturation of RGB images by `saturation_factor` (clipped to [0, 1])."""
    with name_scope(name, "adjust_saturation", [image]) as scope:
        flt, orig_dtype = _float_image(image)
        return convert_image_dtype(_color.adjust_saturation_op(flt, saturation_factor, name=scope), orig_dtype)


def per_image_standardization(image: Any) -> Any:
    """(x - mean) / max(stddev, 1/sqrt(num_pixels)) over each image's last three dimensions."""
    with name_scope(None, "per_image_standardization", [image]) as scope:
        image = _at_least_3d(image)
        image = math_ops.cast(image, _dtypes.float32)
        num_pixels = math_ops.reduce_prod(array_ops.shape(image)[-3:])
        mean = math_ops.reduce_mean(image, axis=[-1, -2, -3], keepdims=True)
        variance = math_ops.reduce_mean(math_ops.squared_difference(image, mean), axis=[-1, -2, -3], keepdims=True)
        stddev = math_ops.sqrt(variance)
        min_stddev = math_ops.rsqrt(math_ops.cast(num_pixels, _dtypes.float32))
        adjusted = math_ops.maximum(stddev, min_stddev)
        return math_ops.divide(image - mean, adjusted, name=scope)


def rgb_to_grayscale(images: Any, name: Optional[str] = None) -> Any:
    """Weighted sum 0.2989 R + 0.5870 G + 0.1140 B, keeping a last dimension of size 1."""
    with name_scope(name, "rgb_to_grayscale", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        orig_dtype = images.dtype
        flt = convert_image_dtype(images, _dtypes.float32)
        weights = np.array([0.2989, 0.5870, 0.1140], np.float32)
        gray = array_ops.expand_dims(tensordot(flt, weights, [-1, -1]), -1)
        return convert_image_dtype(gray, orig_dtype, name=scope)


def grayscale_to_rgb(images: Any, name: Optional[str] = None) -> Any:
    """Repeats the single channel of grayscale images three times."""
    with name_scope(name, "grayscale_to_rgb", [images]) as scope:
        images = convert_to_tensor(images, name="images")
        shape = images.shape
        if shape.ndims is not None and (shape.ndims < 2 or shape.dims[-1].value not in (None, 1)):
            raise ValueError("Last dimension of a grayscale image should be size 1.")
        rank_less_one = array_ops.expand_dims(array_ops.rank(images) - 1, 0)
        multiples = array_ops.concat([array_ops.ones(rank_less_one, _dtypes.int32), [3]], 0)
        rgb = array_ops.tile(images, multiples, name=scope)
        if shape.ndims is not None:
            rgb.set_shape(shape[:-1].concatenate([3]))
        return rgb


# ---------------------------------------------------------------------------------------------
# Random augmentations
# ---------------------------------------------------------------------------------------------
def random_brightness(image: Any, max_delta: float, seed: Optional[int] = None) -> Any:
    """adjust_brightness by a delta drawn uniformly from [-max_delta, max_delta)."""
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    delta = random_uniform([], -max_delta, max_delta, seed=seed)
    return adjust_brightness(image, delta)


def random_contrast(image: Any, lower: float, upper: float, seed: Optional[int] = None) -> Any:
    """adjust_contrast by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_contrast(image, random_uniform([], lower, upper, seed=seed))


def random_saturation(image: Any, lower: float, upper: float, seed: Optional[int] = None) -> Any:
    """adjust_saturation by a factor drawn uniformly from [lower, upper)."""
    if upper <= lower:
        raise ValueError("upper must be > lower.")
    if lower < 0:
        raise ValueError("lower must be non-negative.")
    return adjust_saturation(image, random_uniform([], lower, upper, seed=seed))


def random_hue(image: Any, max_delta: float, seed: Optional[int] = None) -> Any:
    """adjust_hue by a delta drawn uniformly from [-max_delta, max_delta), max_delta <= 0.5."""
    if max_delta > 0.5:
        raise ValueError("max_delta must be <= 0.5.")
    if max_delta < 0:
        raise ValueError("max_delta must be non-negative.")
    return adjust_hue(image, random_uniform([], -max_delta, max_delta, seed=seed))


def random_crop(value: Any, size: Any, seed: Optional[int] = None, name: Optional[str] = None) -> Any:
    """A slice of `value` of shape `size` at a uniformly random offset (tf.random_crop)."""
    with name_scope(name, "random_crop", [value, size]) as scope:
        value = convert_to_tensor(value, name="value")
        size = convert_to_tensor(size, dtype=_dtypes.int32, name="size")
        shape = array_ops.shape(value)
        check = Assert(math_ops.reduce_all(math_ops.greater_equal(shape, size)),
                       ["Need value.shape >= size, got ", shape, size], summarize=1000)
        shape = _with_deps([check], shape)
        limit = shape - size + 1
        offset = random_uniform(array_ops.shape(shape), dtype=size.dtype, maxval=size.dtype.max, seed=seed) % limit
        return array_ops.slice(value, offset, size, name=scope)


# ---------------------------------------------------------------------------------------------
# Boxes, variation, gradients, edges, decoding
# ---------------------------------------------------------------------------------------------
def non_max_suppression(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: float = 0.5,
                        score_threshold: float = float("-inf"), name: Optional[str] = None) -> Any:
    """Indices of at most `max_output_size` boxes greedily selected by score, skipping boxes
    whose IoU with a selected one reaches `iou_threshold` or whose score is not above
    `score_threshold`."""
    with name_scope(name, "non_max_suppression"):
        iou = convert_to_tensor(iou_threshold, _dtypes.float32, name="iou_threshold")
        score = convert_to_tensor(score_threshold, _dtypes.float32, name="score_threshold")
        return _boxes.non_max_suppression_v3(boxes, scores, max_output_size, iou, score)


def non_max_suppression_with_scores(boxes: Any, scores: Any, max_output_size: Any, iou_threshold: float = 0.5,
                                    score_threshold: float = float("-inf"), soft_nms_sigma: float = 0.0,
                                    name: Optional[str] = None) -> tuple[Any, Any]:
    """(selected_indices, selected_scores): non_max_suppression, or Soft-NMS when
    `soft_nms_sigma` > 0 (scores decay by exp(-iou^2 / (2 sigma)) instead of suppression)."""
    with name_scope(name, "non_max_suppression_with_scores"):
        iou = convert_to_tensor(iou_threshold, _dtypes.float32, name="iou_threshold")
        score = convert_to_tensor(score_threshold, _dtypes.float32, name="score_threshold")
        sigma = convert_to_tensor(soft_nms_sigma, _dtypes.float32, name="soft_nms_sigma")
        indices, kept, _ = _boxes.non_max_suppression_v5(boxes, scores, max_output_size, iou, score, sigma)
        return indices, kept


def non_max_suppression_overlaps(overlaps: Any, scores: Any, max_output_size: Any, overlap_threshold: float = 0.5,
                                 score_threshold: float = float("-inf"), name: Optional[str] = None) -> Any:
    """non_max_suppression with a given [n, n] overlap matrix in place of box IoUs."""
    with name_scope(name, "non_max_suppression_overlaps"):
        threshold = convert_to_tensor(overlap_threshold, _dtypes.float32, name="overlap_threshold")
        return _boxes.non_max_suppression_with_overlaps(overlaps, scores, max_output_size, threshold, score_threshold)


def total_variation(images: Any, name: Optional[str] = None) -> Any:
    """Sum of absolute differences of neighbouring pixels: a scalar for a 3-D image, one per
    image for a batch."""
    with name_scope(name, "total_variation"):
        images = convert_to_tensor(images, name="images")
        rank = images.shape.ndims
        if rank == 3:
            dif1 = images[1:, :, :] - images[:-1, :, :]
            dif2 = images[:, 1:, :] - images[:, :-1, :]
            axis = None
        elif rank == 4:
            dif1 = images[:, 1:, :, :] - images[:, :-1, :, :]
            dif2 = images[:, :, 1:, :] - images[:, :, :-1, :]
            axis = [1, 2, 3]
        else:
            raise ValueError("'images' must be either 3 or 4-dimensional.")
        return (math_ops.reduce_sum(math_ops.abs(dif1), axis=axis)
                + math_ops.reduce_sum(math_ops.abs(dif2), axis=axis))


def image_gradients(image: Any) -> tuple[Any, Any]:
    """(dy, dx): forward differences along height and width of a 4-D image, zero in the last
    row / column."""
    image = convert_to_tensor(image, name="image")
    if image.shape.ndims != 4:
        raise ValueError(f"image_gradients expects a 4D tensor [batch_size, h, w, d], not {image.shape}.")
    image_shape = array_ops.shape(image)
    batch, height, width, depth = array_ops.unstack(image_shape)
    dy = image[:, 1:, :, :] - image[:, :-1, :, :]
    dx = image[:, :, 1:, :] - image[:, :, :-1, :]
    dy = array_ops.concat([dy, array_ops.zeros(array_ops.stack([batch, 1, width, depth]), image.dtype)], 1)
    dx = array_ops.concat([dx, array_ops.zeros(array_ops.stack([batch, height, 1, depth]), image.dtype)], 2)
    return array_ops.reshape(dy, image_shape), array_ops.reshape(dx, image_shape)


_SOBEL = np.array([[[-1, -2, -1], [0, 0, 0], [1, 2, 1]], [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]]])


def sobel_edges(image: Any) -> Any:
    """Vertical and horizontal Sobel responses per channel: [batch, h, w, d, 2]."""
    image = convert_to_tensor(image, name="image")
    static_shape = image.shape
    image_shape = array_ops.shape(image)
    kernels = np.expand_dims(np.transpose(_SOBEL, (1, 2, 0)), -2)
    filters = array_ops.tile(array_ops.constant(kernels, dtype=image.dtype),
                             array_ops.stack([1, 1, image_shape[-1], 1]), name="sobel_filters")
    padded = array_ops.pad(image, [[0, 0], [1, 1], [1, 1], [0, 0]], mode="REFLECT")
    output = depthwise_conv2d(padded, filters, [1, 1, 1, 1], "VALID")
    output = array_ops.reshape(output, array_ops.concat([image_shape, [2]], 0))
    output.set_shape(static_shape.concatenate([2]) if static_shape.ndims is not None else TensorShape(None))
    return output


def adjust_jpeg_quality(image: Any, jpeg_quality: Any, name: Optional[str] = None) -> Any:
    """The image after a JPEG round trip at `jpeg_quality` (0-100), in its own dtype."""
    with name_scope(name, "adjust_jpeg_quality", [image]):
        image = convert_to_tensor(image, name="image")
        channels = image.shape.as_list()[-1]
        orig_dtype = image.dtype
        image = convert_image_dtype(image, _dtypes.uint8, saturate=True)
        quality = convert_to_tensor(jpeg_quality, dtype=_dtypes.int32)
        encoded = _codecs.encode_jpeg_variable_quality(image, quality)
        return convert_image_dtype(_codecs.decode_jpeg(encoded, channels=channels), orig_dtype, saturate=True)


def random_jpeg_quality(image: Any, min_jpeg_quality: int, max_jpeg_quality: int, seed: Optional[int] = None) -> Any:
    """adjust_jpeg_quality at a quality drawn uniformly from [min_jpeg_quality, max_jpeg_quality)."""
    if not (0 <= min_jpeg_quality <= 100 and 0 <= max_jpeg_quality <= 100):
        raise ValueError("jpeg encoding range must be between 0 and 100.")
    if min_jpeg_quality >= max_jpeg_quality:
        raise ValueError("`min_jpeg_quality` must be less than `max_jpeg_quality`.")
    quality = random_uniform([], min_jpeg_quality, max_jpeg_quality, seed=seed, dtype=_dtypes.int32)
    return adjust_jpeg_quality(image, quality)


def is_jpeg(contents: Any, name: Optional[str] = None) -> Any:
    """Whether `contents` starts with the JPEG signature (a boolean scalar tensor)."""
    with name_scope(name, "is_jpeg"):
        return math_ops.equal(substr(contents, 0, 3), b"\xff\xd8\xff", name=name)


def decode_image(contents: Any, channels: Optional[int] = None, dtype: Any = _dtypes.uint8,
                 name: Optional[str] = None, expand_animations: bool = True) -> Any:
    """Decodes BMP, GIF, JPEG or PNG bytes (detected from the data): [h, w, c], or
    [frames, h, w, 3] for GIF when `expand_animations`."""
    with name_scope(name, "decode_image"):
        channels = 0 if channels is None else channels
        dtype = _dtypes.as_dtype(dtype)
        if dtype not in (_dtypes.float32, _dtypes.uint8, _dtypes.uint16):
            decoded = _codecs.decode_image_op(contents, channels, _dtypes.uint16, expand_animations)
            return convert_image_dtype(decoded, dtype)
        return _codecs.decode_image_op(contents, channels, dtype, expand_animations)
