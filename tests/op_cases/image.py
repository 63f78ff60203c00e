"""Op cases for image ops outside the gradient-check table: codecs (PNG, JPEG, BMP, GIF),
colour adjustments, boxes (drawing, non-max suppression, glimpses), area resizing, and the
gradient ops a tape runs for resizes, crop_and_resize and local response normalization."""
import io

import numpy as np
from PIL import Image

import tensorweave as tf
from tests.op_cases import OpCase, raw


def _pixels(rng):
    return [rng.randint(0, 256, (6, 5, 3)).astype(np.uint8)]


def _file_bytes(array, fmt):
    out = io.BytesIO()
    Image.fromarray(array).save(out, format=fmt)
    return out.getvalue()


def _codecs(pixels):
    png = tf.image.encode_png(pixels)
    jpeg = tf.image.encode_jpeg(pixels, quality=90)
    array = np.arange(6 * 5 * 3, dtype=np.uint8).reshape(6, 5, 3)
    bmp = tf.constant(_file_bytes(array, "BMP"))
    gif = tf.constant(_file_bytes(array, "GIF"))
    return [png, tf.image.decode_png(png), tf.image.decode_jpeg(jpeg),
            tf.image.decode_and_crop_jpeg(jpeg, [1, 1, 3, 2]), tf.image.extract_jpeg_shape(jpeg),
            raw("EncodeJpegVariableQuality", pixels, tf.constant(70)), tf.image.decode_bmp(bmp),
            tf.image.decode_gif(gif), tf.image.decode_image(png)]


def _colours(pixels):
    x = tf.image.convert_image_dtype(pixels, tf.float32)
    return [tf.image.adjust_contrast(x, 1.5), tf.image.adjust_hue(x, 0.2), tf.image.adjust_saturation(x, 0.7),
            tf.image.hsv_to_rgb(x), tf.image.rgb_to_hsv(x)]


_BOXES = np.array([[0.0, 0.0, 1.0, 1.0], [0.0, 0.1, 1.0, 1.1], [0.0, -0.1, 1.0, 0.9], [0.0, 10.0, 1.0, 11.0],
                   [0.0, 10.1, 1.0, 11.1], [0.0, 100.0, 1.0, 101.0]], np.float32)
_SCORES = np.array([0.9, 0.75, 0.6, 0.95, 0.5, 0.3], np.float32)


def _boxes():
    boxes, scores = tf.constant(_BOXES), tf.constant(_SCORES)
    overlaps = tf.constant(np.eye(6, dtype=np.float32) * 0.5 + 0.1)
    selected, valid = raw("NonMaxSuppressionV4", boxes, scores, tf.constant(3), tf.constant(0.5), tf.constant(0.0),
                          pad_to_max_output_size=True)
    v5 = raw("NonMaxSuppressionV5", boxes, scores, tf.constant(3), tf.constant(0.5), tf.constant(0.0),
             tf.constant(0.5))
    combined = tf.image.combined_non_max_suppression(
        tf.reshape(boxes, [1, 6, 1, 4]), tf.reshape(scores, [1, 6, 1]), 3, 4)
    images = tf.zeros([1, 8, 8, 3])
    small = tf.constant([[[0.1, 0.1, 0.6, 0.7]]])
    return [raw("NonMaxSuppression", boxes, scores, tf.constant(3), iou_threshold=0.5),
            raw("NonMaxSuppressionV2", boxes, scores, tf.constant(3), tf.constant(0.5)),
            tf.image.non_max_suppression(boxes, scores, 3, score_threshold=0.4), selected, valid, list(v5),
            tf.image.non_max_suppression_overlaps(overlaps, scores, 3, overlap_threshold=0.5),
            list(combined), tf.image.draw_bounding_boxes(images, small),
            tf.image.draw_bounding_boxes(images, small, colors=tf.constant([[1.0, 0.0, 0.0, 1.0]])),
            tf.image.extract_glimpse(tf.reshape(tf.range(64.0), [1, 8, 8, 1]), [3, 3], [[0.1, -0.2]])]


def _gradients(x):
    images = tf.reshape(x, [1, 4, 4, 2])
    boxes = tf.constant([[0.1, 0.2, 0.7, 0.9]])
    with tf.GradientTape(persistent=True) as tape:
        tape.watch([images, boxes])
        targets = [tf.image.resize_bilinear(images, [6, 5]), tf.image.resize_bicubic(images, [6, 5]),
                   tf.image.resize_nearest_neighbor(images, [6, 5]),
                   tf.image.crop_and_resize(images, boxes, [0], [3, 3]),
                   tf.nn.local_response_normalization(images, depth_radius=1)]
    grads = [tape.gradient(t, images) for t in targets]
    return grads + [tape.gradient(targets[3], boxes), tf.image.resize_area(images, [3, 2])]


CASES = [
    OpCase("image:codecs", _codecs, _pixels,
           ("EncodePng", "DecodePng", "EncodeJpeg", "DecodeJpeg", "DecodeAndCropJpeg", "ExtractJpegShape",
            "EncodeJpegVariableQuality", "DecodeBmp", "DecodeGif", "DecodeImage")),
    OpCase("image:colours", _colours, _pixels, ("AdjustContrastv2", "AdjustHue", "AdjustSaturation", "HSVToRGB")),
    OpCase("image:boxes", _boxes,
           ops=("NonMaxSuppression", "NonMaxSuppressionV2", "NonMaxSuppressionV3", "NonMaxSuppressionV4",
                "NonMaxSuppressionV5", "NonMaxSuppressionWithOverlaps", "CombinedNonMaxSuppression",
                "DrawBoundingBoxes", "DrawBoundingBoxesV2", "ExtractGlimpse")),
    OpCase("image:gradients", _gradients, lambda rng: [rng.randn(32).astype(np.float32)],
           ("ResizeBilinearGrad", "ResizeBicubicGrad", "ResizeNearestNeighborGrad", "CropAndResizeGradImage",
            "CropAndResizeGradBoxes", "LRNGrad", "ResizeArea")),
]
