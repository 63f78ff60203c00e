"""Image codecs against TensorFlow 2.21: PNG written by TF decoded with every channels x dtype
combination, our PNG encoder's bytes (decoded by TF in the fixture script) and round trips,
JPEG within the documented difference of libjpeg's DCTs, BMP and GIF files, decode_image, and
TF's errors on bad data."""
import os

import numpy as np
import pytest

import tensorweave as tf
from tests.ops.image.fixture import close, DATA, REF, run

PNG_KEYS = sorted(k for k in REF.files if k.startswith("png/decode/"))
SOURCES = ["rgb8", "gray8", "ga8", "rgba8", "rgb16", "gray16"]


def _bytes(key):
    return REF[key].tobytes()


@pytest.mark.parametrize("key", PNG_KEYS)
def test_decode_png_matches_tf(key):
    _, _, src, channels, dtype = key.split("/")
    contents = tf.placeholder(tf.string, [])
    image = tf.image.decode_png(contents, channels=int(channels), dtype=tf.as_dtype(dtype))
    assert image.shape.as_list() == [None, None, int(channels) or None]
    got = run(image, {contents: _bytes(f"png/tf_bytes/{src}")})
    want = REF[key]
    if int(channels) == 1 and src in ("rgba8", "rgb16"):
        # libpng converts RGBA and 16-bit RGB to gray through its gamma tables; we apply its
        # fixed-point weights directly: off by at most one level of the output's depth.
        step = 257 if dtype == "uint16" and src.endswith("8") else 1
        assert got.dtype == want.dtype and got.shape == want.shape
        assert np.abs(got.astype(np.int64) - want).max() <= 4 * step
        return
    close(got, want)


@pytest.mark.parametrize("src", SOURCES)
def test_encode_png_round_trips_and_tf_decodes_it(src):
    image = REF[f"png/src/{src}"]
    encoded = tf.image.encode_png(tf.constant(image))
    assert encoded.dtype == tf.string and encoded.shape.as_list() == []
    decoded = tf.image.decode_png(encoded, dtype=tf.as_dtype(image.dtype))
    data, back = run([encoded, decoded])
    np.testing.assert_array_equal(back, image)
    assert back.dtype == image.dtype
    np.testing.assert_array_equal(REF[f"png/our_decoded_by_tf/{src}"], image)   # TF read our bytes


def test_jpeg_decodes_within_libjpeg_dct_difference():
    for key in ("rgb", "gray"):
        for channels in (0, 1, 3):
            got = run(tf.image.decode_jpeg(_bytes(f"jpeg/bytes/{key}"), channels=channels))
            want = REF[f"jpeg/decode/{key}/{channels}"]
            assert got.shape == want.shape and got.dtype == np.uint8
            # Pillow's libjpeg uses the accurate integer IDCT, TF the fast one: measured <= 3.
            assert np.abs(got.astype(int) - want).max() <= 3


def test_encode_jpeg_round_trip():
    src = REF["jpeg/src"]
    data = tf.image.encode_jpeg(tf.constant(src), quality=95)
    back = run(tf.image.decode_jpeg(data))
    assert back.shape == src.shape
    assert np.abs(back.astype(int) - src).mean() < 2.0
    gray = run(tf.image.decode_jpeg(tf.image.encode_jpeg(tf.constant(src[..., :1]), format="grayscale")))
    assert gray.shape == (16, 16, 1)


def test_bmp_gif_and_decode_image():
    bmp = open(os.path.join(DATA, "image_sample.bmp"), "rb").read()
    gif = open(os.path.join(DATA, "image_sample.gif"), "rb").read()
    close(run(tf.image.decode_bmp(bmp)), REF["bmp/decode/0"])
    close(run(tf.image.decode_bmp(bmp, channels=3)), REF["bmp/decode/3"])
    close(run(tf.image.decode_image(bmp)), REF["bmp/decode_image"])
    frames = tf.image.decode_gif(gif)
    assert frames.shape.as_list() == [None, None, None, 3]
    close(run(frames), REF["gif/decode"])
    close(run(tf.image.decode_image(gif)), REF["gif/decode_image"])
    first = tf.image.decode_image(gif, expand_animations=False)
    assert first.shape.as_list() == [None, None, None]
    close(run(first), REF["gif/decode"][0])
    png = tf.image.encode_png(tf.constant(REF["png/src/rgb8"]))
    close(run(tf.image.decode_image(png, dtype=tf.float32)), REF["png/decode_image_f32"], atol=1e-7)
    assert tf.image.decode_image(png, channels=3).shape.ndims is None


def test_bad_data_raises_invalid_argument():
    contents = tf.placeholder(tf.string, [])
    for op in (tf.image.decode_png(contents), tf.image.decode_jpeg(contents), tf.image.decode_gif(contents),
               tf.image.decode_bmp(contents), tf.image.decode_image(contents)):
        with pytest.raises(tf.errors.InvalidArgumentError):
            run(op, {contents: b"definitely not an image"})
    truncated = _bytes("png/tf_bytes/rgb16")[:60]
    with pytest.raises(tf.errors.InvalidArgumentError):
        run(tf.image.decode_png(contents, dtype=tf.uint16), {contents: truncated})
    with pytest.raises(tf.errors.InvalidArgumentError, match="channels"):
        run(tf.image.decode_png(contents, channels=5), {contents: _bytes("png/tf_bytes/rgb8")})
    with pytest.raises(ValueError, match="rank 3"):
        tf.image.encode_png(tf.zeros([2, 2], tf.uint8))


def test_jpeg_shape_is_jpeg_and_decode_and_crop():
    data = run(tf.image.encode_jpeg(tf.constant(REF["jpeg/src"]), quality=90))
    shape = tf.image.extract_jpeg_shape(data)
    assert shape.shape.as_list() == [3]
    close(run(shape), REF["jpeg/shape"])
    png = tf.image.encode_png(tf.constant(REF["png/src/rgb8"]))
    np.testing.assert_array_equal(run([tf.image.is_jpeg(data), tf.image.is_jpeg(png)]), REF["jpeg/is_jpeg"])
    crop = run(tf.image.decode_and_crop_jpeg(_bytes("jpeg/bytes/rgb"), [2, 3, 8, 9]))
    full = run(tf.image.decode_jpeg(_bytes("jpeg/bytes/rgb")))
    np.testing.assert_array_equal(crop, full[2:10, 3:12])
    assert np.abs(crop.astype(int) - REF["jpeg/crop"]).max() <= 3   # TF's bytes differ from ours: its encode
    with pytest.raises(tf.errors.InvalidArgumentError, match="crop window"):
        run(tf.image.decode_and_crop_jpeg(_bytes("jpeg/bytes/rgb"), [10, 10, 8, 9]))


def test_decode_jpeg_ratio_scales_down_in_the_decoder():
    got = run(tf.image.decode_jpeg(_bytes("jpeg/bytes/rgb"), ratio=2))
    want = REF["jpeg/ratio2"]
    assert got.shape == want.shape == (8, 8, 3)
    assert np.abs(got.astype(int) - want).max() <= 3
    with pytest.raises(tf.errors.InvalidArgumentError, match="ratio"):
        run(tf.image.decode_jpeg(_bytes("jpeg/bytes/rgb"), ratio=3))


def test_encode_jpeg_writes_tfs_bytes():
    # Pillow's libjpeg(-turbo) encoder with TF's settings writes the very bytes TF writes.
    data = run(tf.image.encode_jpeg(tf.constant(REF["jpeg/src"]), quality=90))
    assert data == _bytes("jpeg/bytes/rgb")


def test_adjust_and_random_jpeg_quality():
    src = REF["jpeg/src"]
    u8 = tf.image.adjust_jpeg_quality(tf.constant(src), 30)
    assert u8.dtype == tf.uint8 and u8.shape.as_list() == [None, None, 3]   # as TF: decoded
    assert np.abs(run(u8).astype(int) - REF["jpeg/adjust_quality/u8"]).max() <= 3
    f32 = run(tf.image.adjust_jpeg_quality(tf.constant(src / np.float32(255)), 60))
    assert f32.dtype == np.float32
    assert np.abs(f32 - REF["jpeg/adjust_quality/f32"]).max() <= 3 / 255 + 1e-6
    with tf.Graph().as_default():
        tf.set_random_seed(5)
        got = np.stack(run(tf.image.random_jpeg_quality(tf.constant(src), 10, 90, seed=4), runs=3))
    assert np.abs(got.astype(int) - REF["jpeg/random_quality"]).max() <= 3
    with pytest.raises(ValueError, match="less than"):
        tf.image.random_jpeg_quality(tf.constant(src), 50, 50)
