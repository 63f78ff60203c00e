"""Records TensorFlow's tf.image numbers for tests/ops/image (tf_image.npz).

Run under the reference TensorFlow (2.21, graph mode):
    /opt/tfref/bin/python tests/data/make_tf_image_fixtures.py
It stores the small deterministic inputs, every resize kernel under every align_corners x
half_pixel_centers combination (and their gradients), the colour, crop/pad and composite
functions, seeded random ops (several runs of one session each), non-max suppression, bounding
boxes, image files encoded by TF (PNG, JPEG) or by Pillow (BMP, GIF: image_sample.*) with TF's
decodings, and tensorweave's own PNG encoder's bytes (ops/kernels/png.py, loaded by path: it
imports only NumPy and zlib) with TF's decodings of them.
"""
import importlib.util
import os

import numpy as np
import tensorflow.compat.v1 as tf

tf.disable_eager_execution()

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = {}


def _load_png_codec():
    path = os.path.join(HERE, "..", "..", "tensorweave", "ops", "kernels", "png.py")
    spec = importlib.util.spec_from_file_location("tw_png", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(build, runs=1, seed=None):
    """Builds `build()` in a fresh graph and returns its values (a list of `runs` values)."""
    with tf.Graph().as_default():
        if seed is not None:
            tf.set_random_seed(seed)
        fetch = build()
        with tf.Session() as sess:
            values = [sess.run(fetch) for _ in range(runs)]
    return values[0] if runs == 1 else values


def put(key, value):
    OUT[key] = np.asarray(value)


def inputs():
    rng = np.random.RandomState(0)
    put("img_u8", rng.randint(0, 256, (5, 7, 3)).astype(np.uint8))
    put("img_f32", rng.uniform(0, 1, (2, 5, 7, 3)).astype(np.float32))
    put("img_small", rng.uniform(-1, 1, (1, 4, 6, 2)).astype(np.float32))
    put("hsv_f32", rng.uniform(0, 1, (4, 6, 3)).astype(np.float32))
    put("gray_f32", rng.uniform(0, 1, (4, 6, 1)).astype(np.float32))
    put("img_u16", rng.randint(0, 65536, (5, 7, 3)).astype(np.uint16))
    put("wide_f32", rng.uniform(-0.5, 1.5, (3, 4, 3)).astype(np.float32))
    put("img_i32", rng.randint(0, 2 ** 31 - 1, (3, 4, 3)).astype(np.int32))


RESIZE_OPS = {"bilinear": tf.raw_ops.ResizeBilinear, "nearest": tf.raw_ops.ResizeNearestNeighbor,
              "bicubic": tf.raw_ops.ResizeBicubic, "area": tf.raw_ops.ResizeArea}
SIZES = [(3, 4), (8, 11), (1, 1), (5, 7), (2, 9)]


def resize():
    for name, op in RESIZE_OPS.items():
        for dname, x in (("u8", OUT["img_u8"][None]), ("f32", OUT["img_f32"])):
            for h, w in SIZES:
                for ac in (False, True):
                    for hpc in ((False,) if name == "area" else (False, True)):
                        if ac and hpc:
                            continue
                        kw = {} if name == "area" else {"half_pixel_centers": hpc}
                        put(f"resize/{name}/{dname}/{h}x{w}/{int(ac)}{int(hpc)}",
                            run(lambda: op(images=tf.constant(x), size=[h, w], align_corners=ac, **kw)))
    rng = np.random.RandomState(1)
    x = OUT["img_small"]
    for name in ("bilinear", "nearest", "bicubic"):
        for h, w in ((3, 4), (8, 11)):
            weights = rng.uniform(-1, 1, (1, h, w, 2)).astype(np.float32)
            put(f"resize_grad_w/{name}/{h}x{w}", weights)
            for ac, hpc in ((False, False), (True, False), (False, True)):
                def build():
                    t = tf.constant(x)
                    y = RESIZE_OPS[name](images=t, size=[h, w], align_corners=ac, half_pixel_centers=hpc)
                    return tf.gradients(tf.reduce_sum(y * weights), t)[0]
                put(f"resize_grad/{name}/{h}x{w}/{int(ac)}{int(hpc)}", run(build))
    for method in range(4):
        put(f"resize_images/{method}",
            run(lambda: tf.image.resize_images(tf.constant(OUT["img_u8"]), [4, 9], method=method)))
        put(f"resize_images_aspect/{method}", run(lambda: tf.image.resize_images(
            OUT["img_f32"], [10, 10], method=method, preserve_aspect_ratio=True)))


def color():
    u8, f32 = OUT["img_u8"], OUT["img_f32"]
    put("rgb_to_hsv", run(lambda: tf.image.rgb_to_hsv(tf.constant(f32))))
    put("hsv_to_rgb", run(lambda: tf.image.hsv_to_rgb(tf.constant(OUT["hsv_f32"]))))
    hsv_weights = np.random.RandomState(4).uniform(-1, 1, f32.shape).astype(np.float32)
    put("rgb_to_hsv_grad_w", hsv_weights)

    def hsv_grad():
        t = tf.constant(f32)
        return tf.gradients(tf.reduce_sum(tf.image.rgb_to_hsv(t) * hsv_weights), t)[0]
    put("rgb_to_hsv_grad", run(hsv_grad))
    put("adjust_hue/f32", run(lambda: tf.image.adjust_hue(tf.constant(f32), 0.2)))
    put("adjust_hue/u8", run(lambda: tf.image.adjust_hue(tf.constant(u8), -0.3)))
    put("adjust_saturation/f32", run(lambda: tf.image.adjust_saturation(tf.constant(f32), 1.7)))
    put("adjust_saturation/u8", run(lambda: tf.image.adjust_saturation(tf.constant(u8), 0.4)))
    put("adjust_contrast/f32", run(lambda: tf.image.adjust_contrast(tf.constant(f32), 1.5)))
    put("adjust_contrast/u8", run(lambda: tf.image.adjust_contrast(tf.constant(u8), 2.0)))
    put("adjust_brightness/f32", run(lambda: tf.image.adjust_brightness(tf.constant(f32), 0.1)))
    put("adjust_brightness/u8", run(lambda: tf.image.adjust_brightness(tf.constant(u8), -0.2)))
    put("adjust_gamma/f32", run(lambda: tf.image.adjust_gamma(tf.constant(f32), 2.0, 1.5)))
    put("adjust_gamma/u8", run(lambda: tf.image.adjust_gamma(tf.constant(u8), 0.5)))
    put("per_image_standardization/f32", run(lambda: tf.image.per_image_standardization(tf.constant(f32))))
    put("per_image_standardization/u8", run(lambda: tf.image.per_image_standardization(tf.constant(u8))))
    put("rgb_to_grayscale/u8", run(lambda: tf.image.rgb_to_grayscale(tf.constant(u8))))
    put("rgb_to_grayscale/f32", run(lambda: tf.image.rgb_to_grayscale(tf.constant(f32))))
    put("grayscale_to_rgb", run(lambda: tf.image.grayscale_to_rgb(tf.constant(OUT["gray_f32"]))))
    conversions = {"u8_f32": (u8, tf.float32, False), "f32_u8": (f32, tf.uint8, False),
                   "u8_u16": (u8, tf.uint16, False), "u16_u8": (OUT["img_u16"], tf.uint8, False),
                   "u8_i32": (u8, tf.int32, False), "i32_u8": (OUT["img_i32"], tf.uint8, False),
                   "wide_u8_sat": (OUT["wide_f32"], tf.uint8, True), "wide_i16_sat": (OUT["wide_f32"], tf.int16, True),
                   "f32_f64": (f32, tf.float64, False), "u16_f32": (OUT["img_u16"], tf.float32, False),
                   "i32_f64": (OUT["img_i32"], tf.float64, False)}
    for key, (x, dtype, sat) in conversions.items():
        put(f"convert/{key}", run(lambda: tf.image.convert_image_dtype(tf.constant(x), dtype, saturate=sat)))
    put("total_variation/4d", run(lambda: tf.image.total_variation(tf.constant(f32))))
    put("total_variation/3d", run(lambda: tf.image.total_variation(tf.constant(f32[0]))))
    dy, dx = run(lambda: tf.image.image_gradients(tf.constant(f32)))
    put("image_gradients/dy", dy)
    put("image_gradients/dx", dx)
    put("sobel_edges", run(lambda: tf.image.sobel_edges(tf.constant(f32))))
    for fn in ("rgb_to_yiq", "yiq_to_rgb", "rgb_to_yuv", "yuv_to_rgb"):
        put(f"colorspace/{fn}", run(lambda: getattr(tf.image, fn)(tf.constant(f32))))
    noisy = np.clip(f32 + np.random.RandomState(6).normal(0, 0.1, f32.shape), 0, 1).astype(np.float32)
    put("noisy_f32", noisy)
    put("psnr/f32", run(lambda: tf.image.psnr(tf.constant(f32), tf.constant(noisy), 1.0)))
    put("psnr/u8", run(lambda: tf.image.psnr(tf.constant(u8), tf.constant(u8[::-1].copy()), 255)))
    big = np.random.RandomState(7).uniform(0, 1, (2, 16, 14, 3)).astype(np.float32)
    big_noisy = np.clip(big + np.random.RandomState(8).normal(0, 0.2, big.shape), 0, 1).astype(np.float32)
    put("ssim/a", big)
    put("ssim/b", big_noisy)
    put("ssim/f32", run(lambda: tf.image.ssim(tf.constant(big), tf.constant(big_noisy), 1.0)))
    put("ssim/small_filter", run(lambda: tf.image.ssim(tf.constant(big), tf.constant(big_noisy), 1.0, filter_size=5,
                                                       filter_sigma=0.8)))


def geometry():
    u8, f32 = OUT["img_u8"], OUT["img_f32"]
    put("crop_to_bounding_box", run(lambda: tf.image.crop_to_bounding_box(tf.constant(u8), 1, 2, 3, 4)))
    put("pad_to_bounding_box", run(lambda: tf.image.pad_to_bounding_box(tf.constant(u8), 1, 2, 8, 10)))
    put("crop_or_pad/u8", run(lambda: tf.image.resize_image_with_crop_or_pad(tf.constant(u8), 3, 10)))
    put("crop_or_pad/f32", run(lambda: tf.image.resize_image_with_crop_or_pad(tf.constant(f32), 8, 4)))
    put("with_pad/f32", run(lambda: tf.image.resize_image_with_pad(tf.constant(f32), 8, 8)))
    put("with_pad/u8", run(lambda: tf.image.resize_image_with_pad(tf.constant(u8), 4, 12, method=1)))
    put("central_crop/f32", run(lambda: tf.image.central_crop(tf.constant(f32), 0.5)))
    put("central_crop/u8", run(lambda: tf.image.central_crop(tf.constant(u8), 0.7)))


def random_ops():
    u8, f32 = OUT["img_u8"], OUT["img_f32"]
    cases = {
        "flip_lr/3d": lambda: tf.image.random_flip_left_right(tf.constant(u8), seed=3),
        "flip_ud/4d": lambda: tf.image.random_flip_up_down(tf.constant(f32), seed=5),
        "flip_lr/4d": lambda: tf.image.random_flip_left_right(tf.constant(f32), seed=6),
        "brightness": lambda: tf.image.random_brightness(tf.constant(f32), 0.3, seed=7),
        "contrast": lambda: tf.image.random_contrast(tf.constant(f32), 0.5, 1.5, seed=8),
        "saturation": lambda: tf.image.random_saturation(tf.constant(f32), 0.5, 1.5, seed=9),
        "hue": lambda: tf.image.random_hue(tf.constant(f32), 0.3, seed=10),
        "crop": lambda: tf.image.random_crop(tf.constant(u8), [3, 4, 3], seed=12),
        "brightness_u8": lambda: tf.image.random_brightness(tf.constant(u8), 0.5, seed=13),
    }
    for key, build in cases.items():
        put(f"random/{key}", np.stack(run(build, runs=4, seed=1234)))


def crop_and_resize():
    rng = np.random.RandomState(5)
    image = rng.uniform(-1, 1, (2, 6, 8, 2)).astype(np.float32)
    crop_boxes = np.array([[0.1, 0.2, 0.7, 0.9], [0.8, 0.9, 0.3, 0.1], [-0.3, 0.2, 0.6, 1.3], [0.4, 0.4, 0.4, 0.6]],
                          np.float32)
    box_ind = np.array([0, 1, 1, 0], np.int32)
    put("car/image", image)
    put("car/boxes", crop_boxes)
    put("car/box_ind", box_ind)
    for method in ("bilinear", "nearest"):
        for h, w in ((3, 5), (1, 4), (7, 1)):
            key = f"car/{method}/{h}x{w}"
            weights = rng.uniform(-1, 1, (4, h, w, 2)).astype(np.float32)
            put(f"{key}/w", weights)

            def build():
                t, b = tf.constant(image), tf.constant(crop_boxes)
                out = tf.image.crop_and_resize(t, b, box_ind, [h, w], method=method, extrapolation_value=0.5)
                return [out] + tf.gradients(tf.reduce_sum(out * weights), [t, b])
            out, g_image, g_boxes = run(build)
            put(f"{key}/out", out)
            put(f"{key}/grad_image", g_image)
            put(f"{key}/grad_boxes", g_boxes)
    put("car/u8", run(lambda: tf.image.crop_and_resize(tf.constant(OUT["img_u8"][None]), crop_boxes[:2],
                                                       [0, 0], [4, 4])))


def glimpse():
    images = OUT["img_f32"]
    offsets = np.array([[0.1, -0.2], [0.9, 0.95]], np.float32)
    put("glimpse/offsets", offsets)
    for centered in (False, True):
        for normalized in (False, True):
            pixel = offsets * (1 if normalized else 3)
            put(f"glimpse/{int(centered)}{int(normalized)}", run(lambda: tf.raw_ops.ExtractGlimpse(
                input=tf.constant(images), size=[3, 4], offsets=pixel, centered=centered, normalized=normalized,
                uniform_noise=False, noise="zero")))
    put("glimpse/inside", run(lambda: tf.image.extract_glimpse(tf.constant(images), [2, 3], [[0.0, 0.0], [-0.2, 0.3]])))


def boxes():
    rng = np.random.RandomState(2)
    corners = rng.uniform(0, 1, (20, 4)).astype(np.float32)
    corners[:, 2:] = corners[:, :2] + rng.uniform(0.05, 0.5, (20, 2)).astype(np.float32)
    corners[3] = corners[3][[2, 3, 0, 1]]  # flipped corners count as the same box
    corners[7] = corners[6]  # an exact duplicate
    scores = rng.uniform(0, 1, 20).astype(np.float32)
    scores[9] = scores[4]  # a tie
    put("nms/boxes", corners)
    put("nms/scores", scores)
    put("nms/v1", run(lambda: tf.raw_ops.NonMaxSuppression(boxes=corners, scores=scores, max_output_size=7,
                                                            iou_threshold=0.5)))
    put("nms/v2", run(lambda: tf.raw_ops.NonMaxSuppressionV2(boxes=corners, scores=scores, max_output_size=7,
                                                              iou_threshold=0.3)))
    put("nms/v3", run(lambda: tf.raw_ops.NonMaxSuppressionV3(boxes=corners, scores=scores, max_output_size=20,
                                                              iou_threshold=0.4, score_threshold=0.3)))
    put("nms/api", run(lambda: tf.image.non_max_suppression(corners, scores, 10, 0.4, 0.2)))
    put("nms/api_default", run(lambda: tf.image.non_max_suppression(corners, scores, 20)))
    multi_boxes = rng.uniform(0, 1, (2, 12, 3, 4)).astype(np.float32) * 1.2 - 0.1
    multi_boxes[..., 2:] = multi_boxes[..., :2] + 0.4
    multi_scores = rng.uniform(0, 1, (2, 12, 3)).astype(np.float32)
    put("combined/boxes", multi_boxes)
    put("combined/scores", multi_scores)
    for key, kw in {"q3": dict(boxes=multi_boxes, max_output_size_per_class=4, max_total_size=7),
                    "q1": dict(boxes=multi_boxes[:, :, :1], max_output_size_per_class=5, max_total_size=20,
                               score_threshold=0.3, clip_boxes=False),
                    "pad": dict(boxes=multi_boxes, max_output_size_per_class=2, max_total_size=20, pad_per_class=True,
                                iou_threshold=0.3)}.items():
        values = run(lambda: tf.image.combined_non_max_suppression(scores=multi_scores, **kw))
        for name, value in zip(("boxes", "scores", "classes", "valid"), values):
            put(f"combined/{key}/{name}", value)
    edge_boxes = np.array([[0, 0, 1, 1], [0, 0, 1, 0.5], [0, 0.5, 1, 1]], np.float32)   # IoU exactly 0.5
    put("nms/edge", run(lambda: tf.image.non_max_suppression(edge_boxes, np.array([0.9, 0.8, 0.7], np.float32),
                                                              5, 0.5)))
    for sigma in (0.0, 0.5):
        indices, kept = run(lambda: tf.image.non_max_suppression_with_scores(corners, scores, 12, 0.4, 0.1, sigma))
        put(f"nms/v5/{sigma}/indices", indices)
        put(f"nms/v5/{sigma}/scores", kept)
    padded = run(lambda: tf.raw_ops.NonMaxSuppressionV4(boxes=corners, scores=scores, max_output_size=15,
                                                         iou_threshold=0.3, score_threshold=0.2,
                                                         pad_to_max_output_size=True))
    put("nms/v4/indices", padded[0])
    put("nms/v4/valid", padded[1])
    overlaps = rng.uniform(0, 1, (20, 20)).astype(np.float32)
    put("nms/overlaps", overlaps)
    put("nms/overlaps_result", run(lambda: tf.image.non_max_suppression_overlaps(overlaps, scores, 10, 0.6, 0.1)))
    draw_boxes = np.array([[[0.1, 0.2, 0.5, 0.9], [-0.2, 0.5, 0.6, 1.4], [0.7, 0.7, 0.2, 0.9]],
                           [[0.0, 0.0, 1.0, 1.0], [0.3, 0.3, 0.31, 0.34], [1.2, 0.1, 1.5, 0.5]]], np.float32)
    put("draw/boxes", draw_boxes)
    for depth in (1, 3, 4):
        canvas = np.full((2, 10, 12, depth), 0.25, np.float32)
        put(f"draw/v1/{depth}", run(lambda: tf.image.draw_bounding_boxes(tf.constant(canvas), draw_boxes)))
    colors = np.array([[0.9, 0.1, 0.2, 1.0], [0.3, 0.4, 0.5, 1.0]], np.float32)
    put("draw/colors", colors)
    put("draw/v2", run(lambda: tf.image.draw_bounding_boxes(np.zeros((2, 10, 12, 3), np.float32), draw_boxes,
                                                            colors=colors)))
    configs = {
        "default": dict(bounding_boxes=[[[0.1, 0.2, 0.6, 0.7]]], seed=4),
        "ranges": dict(bounding_boxes=[[[0.1, 0.2, 0.6, 0.7], [0.5, 0.5, 0.9, 0.8]]], seed=5, seed2=9,
                       min_object_covered=0.5, aspect_ratio_range=[0.5, 2.0], area_range=[0.1, 0.8],
                       max_attempts=50),
        "whole": dict(bounding_boxes=np.zeros((1, 0, 4), np.float32), seed=6, use_image_if_no_bounding_boxes=True,
                      area_range=[0.3, 0.6]),
        "strict": dict(bounding_boxes=[[[0.0, 0.0, 1.0, 1.0]]], seed=8, min_object_covered=0.99,
                       area_range=[0.1, 0.2], max_attempts=10),
    }
    for key, kw in configs.items():
        values = run(lambda: tf.image.sample_distorted_bounding_box([40, 60, 3], **kw), runs=5, seed=77)
        for i, name in enumerate(("begin", "size", "bboxes")):
            put(f"sdbb/{key}/{name}", np.stack([v[i] for v in values]))


def codecs():
    png = _load_png_codec()
    rng = np.random.RandomState(3)
    sources = {"rgb8": rng.randint(0, 256, (5, 7, 3)).astype(np.uint8),
               "gray8": rng.randint(0, 256, (5, 7, 1)).astype(np.uint8),
               "ga8": rng.randint(0, 256, (5, 7, 2)).astype(np.uint8),
               "rgba8": rng.randint(0, 256, (5, 7, 4)).astype(np.uint8),
               "rgb16": rng.randint(0, 65536, (5, 7, 3)).astype(np.uint16),
               "gray16": rng.randint(0, 65536, (5, 7, 1)).astype(np.uint16)}
    for key, image in sources.items():
        put(f"png/src/{key}", image)
        tf_bytes = run(lambda: tf.image.encode_png(tf.constant(image)))
        put(f"png/tf_bytes/{key}", np.frombuffer(tf_bytes, np.uint8))
        ours = png.encode(image)
        put(f"png/our_decoded_by_tf/{key}", run(lambda: tf.image.decode_png(ours, dtype=tf.as_dtype(image.dtype))))
        for channels in (0, 1, 3, 4):
            for dtype in (tf.uint8, tf.uint16):
                put(f"png/decode/{key}/{channels}/{dtype.name}",
                    run(lambda: tf.image.decode_png(tf_bytes, channels=channels, dtype=dtype)))
    smooth = np.clip(np.add.outer(np.arange(16) * 12, np.arange(16) * 5)[..., None] + np.array([0, 40, 90]), 0, 255)
    smooth = smooth.astype(np.uint8)
    put("jpeg/src", smooth)
    for key, image in (("rgb", smooth), ("gray", smooth[..., :1])):
        data = run(lambda: tf.image.encode_jpeg(tf.constant(image), quality=90))
        put(f"jpeg/bytes/{key}", np.frombuffer(data, np.uint8))
        for channels in (0, 1, 3):
            put(f"jpeg/decode/{key}/{channels}", run(lambda: tf.image.decode_jpeg(data, channels=channels)))
    data = run(lambda: tf.image.encode_jpeg(tf.constant(smooth), quality=90))
    put("jpeg/adjust_quality/u8", run(lambda: tf.image.adjust_jpeg_quality(tf.constant(smooth), 30)))
    put("jpeg/adjust_quality/f32", run(lambda: tf.image.adjust_jpeg_quality(tf.constant(smooth / np.float32(255)), 60)))
    put("jpeg/random_quality", np.stack(run(lambda: tf.image.random_jpeg_quality(tf.constant(smooth), 10, 90, seed=4),
                                            runs=3, seed=5)))
    put("jpeg/ratio2", run(lambda: tf.image.decode_jpeg(data, ratio=2)))
    put("jpeg/shape", run(lambda: tf.image.extract_jpeg_shape(data)))
    put("jpeg/is_jpeg", np.array([run(lambda: tf.image.is_jpeg(data)),
                                  run(lambda: tf.image.is_jpeg(png.encode(sources["rgb8"])))]))
    put("jpeg/crop", run(lambda: tf.image.decode_and_crop_jpeg(data, [2, 3, 8, 9])))
    for ext in ("bmp", "gif"):
        with open(os.path.join(HERE, f"image_sample.{ext}"), "rb") as f:
            data = f.read()
        if ext == "bmp":
            put("bmp/decode/0", run(lambda: tf.image.decode_bmp(data)))
            put("bmp/decode/3", run(lambda: tf.image.decode_bmp(data, channels=3)))
            put("bmp/decode_image", run(lambda: tf.image.decode_image(data)))
        else:
            put("gif/decode", run(lambda: tf.image.decode_gif(data)))
            put("gif/decode_image", run(lambda: tf.image.decode_image(data)))
    put("png/decode_image_f32", run(lambda: tf.image.decode_image(png.encode(sources["rgb8"]), dtype=tf.float32)))


def main():
    inputs()
    resize()
    color()
    geometry()
    random_ops()
    crop_and_resize()
    glimpse()
    boxes()
    codecs()
    np.savez_compressed(os.path.join(HERE, "tf_image.npz"), **OUT)
    print(f"wrote {len(OUT)} arrays")


if __name__ == "__main__":
    main()
