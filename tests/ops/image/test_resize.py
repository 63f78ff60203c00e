"""Resize ops against TensorFlow 2.21 (every method x align_corners x half_pixel_centers, uint8
and float32 inputs, and their gradients), resize_images with ResizeMethod and
preserve_aspect_ratio, static shapes and bad arguments."""
import numpy as np
import pytest

import tensorweave as tf
from tests.ops.image.fixture import close, REF, run

WRAPPERS = {"bilinear": tf.image.resize_bilinear, "nearest": tf.image.resize_nearest_neighbor,
            "bicubic": tf.image.resize_bicubic, "area": tf.image.resize_area}
KEYS = sorted(k for k in REF.files if k.startswith("resize/"))


@pytest.mark.parametrize("key", KEYS)
def test_resize_kernels_match_tf(key):
    _, method, dtype, hw, flags = key.split("/")
    x = REF["img_u8"][None] if dtype == "u8" else REF["img_f32"]
    h, w = map(int, hw.split("x"))
    kw = {"align_corners": flags[0] == "1"}
    if method != "area":
        kw["half_pixel_centers"] = flags[1] == "1"
    y = WRAPPERS[method](tf.constant(x), [h, w], **kw)
    assert y.shape.as_list() == [x.shape[0], h, w, 3]
    got = run(y)
    # Bicubic sums 16 products; on 0..255 values TF's order of summation leaves ~2e-4.
    close(got, REF[key], atol=5e-4 if dtype == "u8" else 1e-6)


@pytest.mark.parametrize("key", sorted(k for k in REF.files if k.startswith("resize_grad/")))
def test_resize_gradients_match_tf(key):
    _, method, hw, flags = key.split("/")
    weights = REF[f"resize_grad_w/{method}/{hw}"]
    h, w = map(int, hw.split("x"))
    x = tf.constant(REF["img_small"])
    y = WRAPPERS[method](x, [h, w], align_corners=flags[0] == "1", half_pixel_centers=flags[1] == "1")
    grad = tf.gradients(tf.reduce_sum(y * weights), x)[0]
    assert grad.shape.as_list() == list(REF["img_small"].shape)
    close(run(grad), REF[key], atol=1e-6)


@pytest.mark.parametrize("method", range(4))
def test_resize_images_methods(method):
    y = tf.image.resize_images(REF["img_u8"], [4, 9], method=method)
    assert y.shape.as_list() == [4, 9, 3]
    close(run(y), REF[f"resize_images/{method}"], atol=5e-4)
    y = tf.image.resize_images(REF["img_f32"], [10, 10], method=method, preserve_aspect_ratio=True)
    assert y.shape.as_list() == [2, None, None, 3]
    close(run(y), REF[f"resize_images_aspect/{method}"])


def test_resize_method_enum_and_identity_shortcut():
    assert (tf.image.ResizeMethod.BILINEAR, tf.image.ResizeMethod.NEAREST_NEIGHBOR, tf.image.ResizeMethod.BICUBIC,
            tf.image.ResizeMethod.AREA) == (0, 1, 2, 3)
    x = tf.constant(REF["img_u8"])
    same = tf.image.resize_images(x, [5, 7])    # same size: no resize op, as TF
    assert not any(op.type.startswith("Resize") for op in tf.get_default_graph().get_operations())
    np.testing.assert_array_equal(run(same), REF["img_u8"])
    with pytest.raises(ValueError, match="Resize method"):
        tf.image.resize_images(x, [2, 2], method=7)
    by_name = tf.image.resize_images(x, [4, 9], method="bicubic")   # TF 2's names work too
    close(run(by_name), REF["resize_images/2"], atol=5e-4)


def test_resize_static_shapes_follow_size_and_unknown_dims():
    x = tf.placeholder(tf.float32, [None, None, None, 2])
    size = tf.placeholder(tf.int32, [2])
    for fn in WRAPPERS.values():
        assert fn(x, [3, 4]).shape.as_list() == [None, 3, 4, 2]
        assert fn(x, size).shape.as_list() == [None, None, None, 2]
    value = np.random.RandomState(0).rand(2, 5, 6, 2).astype(np.float32)
    outs = run([fn(x, size) for fn in WRAPPERS.values()], {x: value, size: [7, 3]})
    assert all(o.shape == (2, 7, 3, 2) for o in outs)
    assert tf.image.resize_nearest_neighbor(tf.constant(REF["img_u8"][None]), [2, 2]).dtype == tf.uint8
    assert tf.image.resize_bilinear(tf.constant(REF["img_u8"][None]), [2, 2]).dtype == tf.float32


def test_resize_bad_arguments():
    x = tf.constant(REF["img_f32"])
    with pytest.raises(ValueError, match="rank 4"):
        tf.image.resize_bilinear(tf.constant(REF["img_u8"]), [2, 2])
    y = tf.image.resize_bilinear(x, [2, 2], align_corners=True, half_pixel_centers=True)
    with pytest.raises(tf.errors.InvalidArgumentError, match="half_pixel_centers"):
        run(y)
    size = tf.placeholder(tf.int32, [2])
    with pytest.raises(tf.errors.InvalidArgumentError, match="positive"):
        run(tf.image.resize_area(x, size), {size: [0, 3]})
    with pytest.raises(ValueError, match="3 or 4 dimensions"):
        tf.image.resize_images(tf.zeros([2, 3]), [1, 1])
