"""`tf.image`: decoding and encoding, resizing, colour adjustments, crops, flips, random
augmentations and bounding boxes (re-exports only; the ops live in tensorweave/ops/image/)."""
from tensorweave.ops.image import (  # noqa: F401
    adjust_brightness, adjust_contrast, adjust_gamma, adjust_hue, adjust_saturation, central_crop,
    convert_image_dtype, crop_and_resize, crop_to_bounding_box, decode_bmp, decode_gif, decode_image, decode_jpeg,
    decode_png,
    draw_bounding_boxes, encode_jpeg, encode_png, flip_left_right, flip_up_down, grayscale_to_rgb, hsv_to_rgb,
    image_gradients, non_max_suppression, pad_to_bounding_box, per_image_standardization, random_brightness,
    random_contrast, random_crop, random_flip_left_right, random_flip_up_down, random_hue, random_saturation,
    resize_area, resize_bicubic, resize_bilinear, resize_image_with_crop_or_pad, resize_image_with_pad,
    resize_images, resize_nearest_neighbor, ResizeMethod, rgb_to_grayscale, rgb_to_hsv, rot90,
    sample_distorted_bounding_box, sobel_edges, total_variation, transpose_image)
from tensorweave.ops.image import (  # noqa: F401
    adjust_jpeg_quality, combined_non_max_suppression, decode_and_crop_jpeg, extract_glimpse, extract_jpeg_shape,
    is_jpeg, non_max_suppression_overlaps, non_max_suppression_with_scores, psnr, random_jpeg_quality, rgb_to_yiq,
    rgb_to_yuv, ssim, yiq_to_rgb, yuv_to_rgb)
from tensorweave.ops.image import transpose_image as transpose  # noqa: F401
from tensorweave.ops.image import resize_images as resize  # noqa: F401
from tensorweave.ops.image import resize_image_with_crop_or_pad as resize_with_crop_or_pad  # noqa: F401
from tensorweave._names.missing import module_getattr as _module_getattr  # noqa: E402
__getattr__ = _module_getattr("image", __name__)
