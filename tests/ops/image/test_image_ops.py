"""tf.image colour, conversion, crop/pad, flip/rotate, random, box and composite functions
against TensorFlow 2.21 (tf_image.npz): integer outputs bit-exact, floats rtol 1e-5; static
shapes; graph-time and run-time argument checks."""
import numpy as np
import pytest

import tensorweave as tf
from tensorweave.framework.op_def_library import apply_op
from tensorweave.ops.image.boxes import NonMaxSuppression, NonMaxSuppressionV4
from tensorweave.ops.image.glimpse import ExtractGlimpse
from tests.ops.image.fixture import close, REF, run

U8, F32 = REF["img_u8"], REF["img_f32"]

COLOR = {
    "rgb_to_hsv": lambda: tf.image.rgb_to_hsv(F32),
    "hsv_to_rgb": lambda: tf.image.hsv_to_rgb(REF["hsv_f32"]),
    "adjust_hue/f32": lambda: tf.image.adjust_hue(F32, 0.2),
    "adjust_hue/u8": lambda: tf.image.adjust_hue(U8, -0.3),
    "adjust_saturation/f32": lambda: tf.image.adjust_saturation(F32, 1.7),
    "adjust_saturation/u8": lambda: tf.image.adjust_saturation(U8, 0.4),
    "adjust_contrast/f32": lambda: tf.image.adjust_contrast(F32, 1.5),
    "adjust_contrast/u8": lambda: tf.image.adjust_contrast(U8, 2.0),
    "adjust_brightness/f32": lambda: tf.image.adjust_brightness(F32, 0.1),
    "adjust_brightness/u8": lambda: tf.image.adjust_brightness(U8, -0.2),
    "adjust_gamma/f32": lambda: tf.image.adjust_gamma(F32, 2.0, 1.5),
    "adjust_gamma/u8": lambda: tf.image.adjust_gamma(U8, 0.5),
    "per_image_standardization/f32": lambda: tf.image.per_image_standardization(F32),
    "per_image_standardization/u8": lambda: tf.image.per_image_standardization(U8),
    "rgb_to_grayscale/u8": lambda: tf.image.rgb_to_grayscale(U8),
    "rgb_to_grayscale/f32": lambda: tf.image.rgb_to_grayscale(F32),
    "grayscale_to_rgb": lambda: tf.image.grayscale_to_rgb(REF["gray_f32"]),
    "total_variation/4d": lambda: tf.image.total_variation(F32),
    "total_variation/3d": lambda: tf.image.total_variation(F32[0]),
    "sobel_edges": lambda: tf.image.sobel_edges(tf.constant(F32)),
    "crop_to_bounding_box": lambda: tf.image.crop_to_bounding_box(U8, 1, 2, 3, 4),
    "pad_to_bounding_box": lambda: tf.image.pad_to_bounding_box(U8, 1, 2, 8, 10),
    "crop_or_pad/u8": lambda: tf.image.resize_image_with_crop_or_pad(U8, 3, 10),
    "crop_or_pad/f32": lambda: tf.image.resize_image_with_crop_or_pad(F32, 8, 4),
    "with_pad/f32": lambda: tf.image.resize_image_with_pad(F32, 8, 8),
    "with_pad/u8": lambda: tf.image.resize_image_with_pad(U8, 4, 12, method=1),
    "central_crop/f32": lambda: tf.image.central_crop(F32, 0.5),
    "central_crop/u8": lambda: tf.image.central_crop(U8, 0.7),
}


@pytest.mark.parametrize("key", sorted(COLOR))
def test_functions_match_tf_with_static_shapes(key):
    y = COLOR[key]()
    got = run(y)
    assert y.shape.is_compatible_with(got.shape), (y.shape, got.shape)
    if key.startswith(("crop", "pad", "with_pad", "central", "grayscale", "rgb_to", "hsv", "adjust", "sobel")):
        assert y.shape.is_fully_defined(), y.shape
    close(got, REF[key])


CONVERSIONS = {"u8_f32": (U8, tf.float32, False), "f32_u8": (F32, tf.uint8, False),
               "u8_u16": (U8, tf.uint16, False), "u16_u8": (REF["img_u16"], tf.uint8, False),
               "u8_i32": (U8, tf.int32, False), "i32_u8": (REF["img_i32"], tf.uint8, False),
               "wide_u8_sat": (REF["wide_f32"], tf.uint8, True), "wide_i16_sat": (REF["wide_f32"], tf.int16, True),
               "f32_f64": (F32, tf.float64, False), "u16_f32": (REF["img_u16"], tf.float32, False),
               "i32_f64": (REF["img_i32"], tf.float64, False)}


@pytest.mark.parametrize("key", sorted(CONVERSIONS))
def test_convert_image_dtype_matches_tf(key):
    x, dtype, saturate = CONVERSIONS[key]
    y = tf.image.convert_image_dtype(x, dtype, saturate=saturate)
    assert y.dtype == dtype
    close(run(y), REF[f"convert/{key}"])


def test_convert_image_dtype_same_dtype_and_bad_dtype():
    x = tf.constant(U8)
    assert tf.image.convert_image_dtype(x, tf.uint8).op.type == "Identity"
    with pytest.raises(AttributeError):
        tf.image.convert_image_dtype(x, tf.string)


def test_image_gradients():
    dy, dx = tf.image.image_gradients(tf.constant(F32))
    got_dy, got_dx = run([dy, dx])
    close(got_dy, REF["image_gradients/dy"])
    close(got_dx, REF["image_gradients/dx"])
    with pytest.raises(ValueError, match="4D"):
        tf.image.image_gradients(tf.constant(F32[0]))


RANDOM = {
    "flip_lr/3d": lambda: tf.image.random_flip_left_right(U8, seed=3),
    "flip_ud/4d": lambda: tf.image.random_flip_up_down(F32, seed=5),
    "flip_lr/4d": lambda: tf.image.random_flip_left_right(F32, seed=6),
    "brightness": lambda: tf.image.random_brightness(F32, 0.3, seed=7),
    "contrast": lambda: tf.image.random_contrast(F32, 0.5, 1.5, seed=8),
    "saturation": lambda: tf.image.random_saturation(F32, 0.5, 1.5, seed=9),
    "hue": lambda: tf.image.random_hue(F32, 0.3, seed=10),
    "crop": lambda: tf.image.random_crop(U8, [3, 4, 3], seed=12),
    "brightness_u8": lambda: tf.image.random_brightness(U8, 0.5, seed=13),
}


@pytest.mark.parametrize("key", sorted(RANDOM))
def test_seeded_random_ops_give_tf_sequences(key):
    with tf.Graph().as_default():
        tf.set_random_seed(1234)
        y = RANDOM[key]()
        got = np.stack(run(y, runs=4))
    close(got, REF[f"random/{key}"])
    assert tf.random_crop is tf.image.random_crop


def test_random_argument_checks():
    with pytest.raises(ValueError, match="upper"):
        tf.image.random_contrast(F32, 1.0, 0.5)
    with pytest.raises(ValueError, match="0.5"):
        tf.image.random_hue(F32, 0.7)
    with pytest.raises(ValueError, match="non-negative"):
        tf.image.random_brightness(F32, -1.0)
    with pytest.raises(tf.errors.InvalidArgumentError, match="value.shape >= size"):
        run(tf.image.random_crop(U8, [9, 2, 3], seed=1))


def test_flips_transpose_rot90_against_numpy():
    x3, x4 = tf.constant(U8), tf.constant(F32)
    k = tf.placeholder(tf.int32, [])
    cases = [(tf.image.flip_left_right(x3), U8[:, ::-1]), (tf.image.flip_up_down(x3), U8[::-1]),
             (tf.image.flip_left_right(x4), F32[:, :, ::-1]), (tf.image.flip_up_down(x4), F32[:, ::-1]),
             (tf.image.transpose_image(x3), U8.transpose(1, 0, 2)), (tf.image.transpose(x4), F32.transpose(0, 2, 1, 3))]
    for y, want in cases:
        assert y.shape.as_list() == list(want.shape)
        np.testing.assert_array_equal(run(y), want)
    r3, r4 = tf.image.rot90(x3, k), tf.image.rot90(x4, k)
    assert r3.shape.as_list() == [None, None, 3] and r4.shape.as_list() == [2, None, None, 3]
    for turns in range(-1, 5):
        a, b = run([r3, r4], {k: turns})
        np.testing.assert_array_equal(a, np.rot90(U8, turns, axes=(0, 1)))
        np.testing.assert_array_equal(b, np.rot90(F32, turns, axes=(1, 2)))


def test_crop_and_pad_checks_at_graph_and_run_time():
    with pytest.raises(ValueError, match="width must be >= target"):
        tf.image.crop_to_bounding_box(U8, 0, 5, 2, 4)
    with pytest.raises(ValueError, match="offset_height"):
        tf.image.pad_to_bounding_box(U8, -1, 0, 9, 9)
    with pytest.raises(ValueError, match="central_fraction"):
        tf.image.central_crop(U8, 1.5)
    image = tf.placeholder(tf.uint8, [None, None, 3])
    crop = tf.image.crop_to_bounding_box(image, 1, 1, 3, 3)
    assert crop.shape.as_list() == [3, 3, 3]
    np.testing.assert_array_equal(run(crop, {image: U8}), U8[1:4, 1:4])
    with pytest.raises(tf.errors.InvalidArgumentError, match="target \\+ offset"):
        run(crop, {image: U8[:2]})
    padded = tf.image.resize_image_with_crop_or_pad(image, 6, 6)
    assert padded.shape.as_list() == [6, 6, 3]
    assert run(padded, {image: U8}).shape == (6, 6, 3)
    central = tf.image.central_crop(image, 0.5)
    assert central.shape.as_list() == [None, None, 3]
    np.testing.assert_array_equal(run(central, {image: U8}), U8[1:4, 1:6])


def test_non_max_suppression_matches_tf():
    boxes, scores = REF["nms/boxes"], REF["nms/scores"]
    got = tf.image.non_max_suppression(boxes, scores, 10, 0.4, 0.2)
    assert got.dtype == tf.int32 and got.shape.as_list() == [None]
    close(run(got), REF["nms/api"])
    close(run(tf.image.non_max_suppression(boxes, scores, 20)), REF["nms/api_default"])
    v1 = apply_op(NonMaxSuppression, boxes=boxes, scores=scores, max_output_size=7, iou_threshold=0.5)
    close(run(v1), REF["nms/v1"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="iou_threshold"):
        run(tf.image.non_max_suppression(boxes, scores, 3, 1.5))


def test_draw_bounding_boxes_matches_tf():
    for depth in (1, 3, 4):
        canvas = np.full((2, 10, 12, depth), 0.25, np.float32)
        y = tf.image.draw_bounding_boxes(canvas, REF["draw/boxes"])
        assert y.shape.as_list() == [2, 10, 12, depth]
        close(run(y), REF[f"draw/v1/{depth}"])
    y = tf.image.draw_bounding_boxes(np.zeros((2, 10, 12, 3), np.float32), REF["draw/boxes"], colors=REF["draw/colors"])
    close(run(y), REF["draw/v2"])
    with pytest.raises(tf.errors.InvalidArgumentError, match="Channel depth"):
        run(tf.image.draw_bounding_boxes(np.zeros((1, 4, 4, 2), np.float32), np.zeros((1, 1, 4), np.float32)))


SDBB = {
    "default": dict(bounding_boxes=[[[0.1, 0.2, 0.6, 0.7]]], seed=4),
    "ranges": dict(bounding_boxes=[[[0.1, 0.2, 0.6, 0.7], [0.5, 0.5, 0.9, 0.8]]], seed=5, seed2=9,
                   min_object_covered=0.5, aspect_ratio_range=[0.5, 2.0], area_range=[0.1, 0.8], max_attempts=50),
    "whole": dict(bounding_boxes=np.zeros((1, 0, 4), np.float32), seed=6, use_image_if_no_bounding_boxes=True,
                  area_range=[0.3, 0.6]),
    "strict": dict(bounding_boxes=[[[0.0, 0.0, 1.0, 1.0]]], seed=8, min_object_covered=0.99, area_range=[0.1, 0.2],
                   max_attempts=10),
}


@pytest.mark.parametrize("key", sorted(SDBB))
def test_sample_distorted_bounding_box_gives_tf_boxes(key):
    with tf.Graph().as_default():
        tf.set_random_seed(77)
        begin, size, bboxes = tf.image.sample_distorted_bounding_box([40, 60, 3], **SDBB[key])
        assert begin.shape.as_list() == [3] and bboxes.shape.as_list() == [1, 1, 4]
        values = run([begin, size, bboxes], runs=5)
    for i, name in enumerate(("begin", "size", "bboxes")):
        close(np.stack([v[i] for v in values]), REF[f"sdbb/{key}/{name}"])
    for b, s in zip(REF[f"sdbb/{key}/begin"], REF[f"sdbb/{key}/size"]):   # the contract, too
        assert 0 <= b[0] and b[0] + s[0] <= 40 and 0 <= b[1] and b[1] + s[1] <= 60


def test_sample_distorted_bounding_box_errors():
    with pytest.raises(tf.errors.InvalidArgumentError, match="No bounding boxes"):
        run(tf.image.sample_distorted_bounding_box([8, 8, 3], np.zeros((1, 0, 4), np.float32), seed=1)[0])
    with pytest.raises(tf.errors.InvalidArgumentError, match="in \\[0.0, 1.0\\]"):
        run(tf.image.sample_distorted_bounding_box([8, 8, 3], [[[0.0, 0.0, 1.5, 1.0]]], seed=1)[0])


def test_rgb_to_hsv_gradient_matches_tf():
    x = tf.constant(F32)
    grad = tf.gradients(tf.reduce_sum(tf.image.rgb_to_hsv(x) * REF["rgb_to_hsv_grad_w"]), x)[0]
    assert grad.shape.as_list() == list(F32.shape)
    close(run(grad), REF["rgb_to_hsv_grad"], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("fn", ["rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb"])
def test_yiq_yuv_match_tf(fn):
    y = getattr(tf.image, fn)(tf.constant(F32))
    assert y.shape.as_list() == list(F32.shape)
    close(run(y), REF[f"colorspace/{fn}"])


def test_psnr_and_ssim_match_tf():
    p = tf.image.psnr(tf.constant(F32), tf.constant(REF["noisy_f32"]), 1.0)
    close(run(p), REF["psnr/f32"])
    close(run(tf.image.psnr(U8, U8[::-1].copy(), 255)), REF["psnr/u8"])
    a, b = tf.constant(REF["ssim/a"]), tf.constant(REF["ssim/b"])
    s = tf.image.ssim(a, b, 1.0)
    assert s.shape.as_list() == [2]
    close(run(s), REF["ssim/f32"])
    close(run(tf.image.ssim(a, b, 1.0, filter_size=5, filter_sigma=0.8)), REF["ssim/small_filter"])
    with pytest.raises(ValueError, match="Negative dimension"):    # 5x7 images, 11x11 filter: as TF
        tf.image.ssim(tf.constant(F32), tf.constant(F32), 1.0)
    small = tf.placeholder(tf.float32, [None, None, None, 3])
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.image.ssim(small, small, 1.0), {small: F32})


def test_aliases():
    assert tf.image.resize is tf.image.resize_images
    assert tf.image.resize_with_crop_or_pad is tf.image.resize_image_with_crop_or_pad
    assert tf.image.transpose is tf.image.transpose_image


def test_nms_variants_match_tf():
    boxes, scores = REF["nms/boxes"], REF["nms/scores"]
    edge = np.array([[0, 0, 1, 1], [0, 0, 1, 0.5], [0, 0.5, 1, 1]], np.float32)   # IoU exactly at the threshold
    close(run(tf.image.non_max_suppression(edge, np.array([0.9, 0.8, 0.7], np.float32), 5, 0.5)), REF["nms/edge"])
    for sigma in (0.0, 0.5):
        indices, kept = tf.image.non_max_suppression_with_scores(boxes, scores, 12, 0.4, 0.1, sigma)
        got_indices, got_scores = run([indices, kept])
        close(got_indices, REF[f"nms/v5/{sigma}/indices"])
        close(got_scores, REF[f"nms/v5/{sigma}/scores"])
    v4 = apply_op(NonMaxSuppressionV4, boxes=boxes, scores=scores, max_output_size=15, iou_threshold=0.3,
                  score_threshold=0.2, pad_to_max_output_size=True)
    assert v4[0].shape.as_list() == [15] and v4[1].shape.as_list() == []
    got_indices, valid = run(v4)
    close(got_indices, REF["nms/v4/indices"])
    close(valid, REF["nms/v4/valid"])
    got = tf.image.non_max_suppression_overlaps(REF["nms/overlaps"], scores, 10, 0.6, 0.1)
    close(run(got), REF["nms/overlaps_result"])


@pytest.mark.parametrize("centered", [False, True])
@pytest.mark.parametrize("normalized", [False, True])
def test_extract_glimpse_matches_tf(centered, normalized):
    offsets = REF["glimpse/offsets"] * (1 if normalized else 3)
    op = apply_op(ExtractGlimpse, input=tf.constant(F32), size=[3, 4], offsets=offsets, centered=centered,
                  normalized=normalized, uniform_noise=False, noise="zero")
    assert op.shape.as_list() == [2, 3, 4, 3]
    close(run(op), REF[f"glimpse/{int(centered)}{int(normalized)}"])


def test_extract_glimpse_noise_fills_outside_the_image():
    inside = tf.image.extract_glimpse(tf.constant(F32), [2, 3], [[0.0, 0.0], [-0.2, 0.3]])
    close(run(inside), REF["glimpse/inside"])
    outside = run(tf.image.extract_glimpse(tf.constant(F32), [4, 4], [[0.95, 0.95], [-1.0, -1.0]]))
    assert outside.shape == (2, 4, 4, 3)
    for i in range(2):    # uniform noise stays within the image's range
        assert F32[i].min() <= outside[i].min() and outside[i].max() <= F32[i].max()


COMBINED = {"q3": dict(max_output_size_per_class=4, max_total_size=7),
            "q1": dict(max_output_size_per_class=5, max_total_size=20, score_threshold=0.3, clip_boxes=False),
            "pad": dict(max_output_size_per_class=2, max_total_size=20, pad_per_class=True, iou_threshold=0.3)}


@pytest.mark.parametrize("key", sorted(COMBINED))
def test_combined_non_max_suppression_matches_tf(key):
    boxes = REF["combined/boxes"][:, :, :1] if key == "q1" else REF["combined/boxes"]
    outs = tf.image.combined_non_max_suppression(boxes, REF["combined/scores"], **COMBINED[key])
    got = run(list(outs))
    for out, value, name in zip(outs, got, ("boxes", "scores", "classes", "valid")):
        assert out.shape.is_compatible_with(value.shape) and out.shape.is_fully_defined()
        close(value, REF[f"combined/{key}/{name}"])
