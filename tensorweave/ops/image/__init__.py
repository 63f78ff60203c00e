"""Image ops (tf.image): codecs, resizing, colour, bounding boxes and the Python-level image
functions.

Tier 1 (modules that declare ops): codecs, resize, crop_resize, glimpse, color,
boxes. Tier 2:
image_impl (TF's image_ops_impl: crops, pads, flips, random augmentations, adjust_*,
conversions), color_impl (YIQ, YUV), quality (PSNR, SSIM) and this module. The gradients are in
grad.py. The family's public names are re-exported here.
"""
from tensorweave.ops.image.codecs import (
    decode_and_crop_jpeg, decode_bmp, decode_gif, decode_jpeg, decode_png, encode_jpeg, encode_png,
    extract_jpeg_shape)
from tensorweave.ops.image.resize import resize_area, resize_bicubic, resize_bilinear, resize_nearest_neighbor
from tensorweave.ops.image.color import hsv_to_rgb, rgb_to_hsv
from tensorweave.ops.image.crop_resize import crop_and_resize
from tensorweave.ops.image.glimpse import extract_glimpse
from tensorweave.ops.image.boxes import (
    combined_non_max_suppression, draw_bounding_boxes, sample_distorted_bounding_box)
from tensorweave.ops.image.image_impl import (
    adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation, central_crop,
    convert_image_dtype, crop_to_bounding_box, decode_image, flip_left_right, flip_up_down, grayscale_to_rgb,
    image_gradients, non_max_suppression, pad_to_bounding_box, per_image_standardization, random_brightness,
    random_contrast, random_crop, random_flip_left_right, random_flip_up_down, random_hue, random_saturation,
    resize_image_with_crop_or_pad, resize_image_with_pad, resize_images, ResizeMethod, rgb_to_grayscale, rot90,
    sobel_edges, total_variation, transpose_image, is_jpeg, non_max_suppression_with_scores,
    non_max_suppression_overlaps, adjust_jpeg_quality, random_jpeg_quality)
from tensorweave.ops.image.color_impl import rgb_to_yiq, rgb_to_yuv, yiq_to_rgb, yuv_to_rgb
from tensorweave.ops.image.quality import psnr, ssim

__all__ = [
    "decode_bmp", "decode_gif", "decode_jpeg", "decode_png", "decode_image", "encode_jpeg", "encode_png",
    "resize_area", "resize_bicubic", "resize_bilinear", "resize_nearest_neighbor", "resize_images", "ResizeMethod",
    "hsv_to_rgb", "rgb_to_hsv", "draw_bounding_boxes", "sample_distorted_bounding_box", "adjust_brightness",
    "adjust_contrast", "adjust_gamma", "adjust_hue", "adjust_saturation", "central_crop", "convert_image_dtype",
    "crop_to_bounding_box", "flip_left_right", "flip_up_down", "grayscale_to_rgb", "image_gradients",
    "non_max_suppression", "pad_to_bounding_box", "per_image_standardization", "random_brightness",
    "random_contrast", "random_crop", "random_flip_left_right", "random_flip_up_down", "random_hue",
    "random_saturation", "resize_image_with_crop_or_pad", "resize_image_with_pad", "rgb_to_grayscale", "rot90",
    "sobel_edges", "total_variation", "transpose_image", "crop_and_resize",
    "decode_and_crop_jpeg", "extract_jpeg_shape", "is_jpeg", "rgb_to_yiq", "rgb_to_yuv", "yiq_to_rgb", "yuv_to_rgb",
    "psnr", "ssim", "non_max_suppression_with_scores", "non_max_suppression_overlaps", "extract_glimpse",
    "adjust_jpeg_quality", "random_jpeg_quality", "combined_non_max_suppression",
]
