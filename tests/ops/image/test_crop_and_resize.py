"""CropAndResize and its gradients against TensorFlow 2.21: bilinear and nearest, crop sizes with
a single row or column, flipped and out-of-image boxes with an extrapolation value, uint8
images; static shapes and bad box indices."""
import pytest

import tensorweave as tf
from tests.ops.image.fixture import close, REF, run

KEYS = [f"car/{m}/{h}x{w}" for m in ("bilinear", "nearest") for h, w in ((3, 5), (1, 4), (7, 1))]


@pytest.mark.parametrize("key", KEYS)
def test_crop_and_resize_and_gradients_match_tf(key):
    _, method, hw = key.split("/")
    h, w = map(int, hw.split("x"))
    image, boxes = tf.constant(REF["car/image"]), tf.constant(REF["car/boxes"])
    out = tf.image.crop_and_resize(image, boxes, REF["car/box_ind"], [h, w], method=method, extrapolation_value=0.5)
    assert out.shape.as_list() == [4, h, w, 2]
    grads = tf.gradients(tf.reduce_sum(out * REF[f"{key}/w"]), [image, boxes])
    assert grads[0].shape.as_list() == [2, 6, 8, 2] and grads[1].shape.as_list() == [4, 4]
    got, g_image, g_boxes = run([out] + grads)
    close(got, REF[f"{key}/out"])
    close(g_image, REF[f"{key}/grad_image"], atol=1e-6)
    close(g_boxes, REF[f"{key}/grad_boxes"], rtol=1e-5, atol=1e-5)


def test_crop_and_resize_integer_image_and_checks():
    image = tf.constant(REF["img_u8"][None])
    out = tf.image.crop_and_resize(image, REF["car/boxes"][:2], [0, 0], [4, 4])
    close(run(out), REF["car/u8"])
    assert tf.gradients(tf.reduce_sum(out), image) == [None]   # no gradient into integer pixels
    bad = tf.image.crop_and_resize(image, REF["car/boxes"][:2], [0, 1], [4, 4])
    with pytest.raises(tf.errors.InvalidArgumentError, match="box_index"):
        run(bad)
    size = tf.placeholder(tf.int32, [2])
    assert tf.image.crop_and_resize(image, REF["car/boxes"][:2], [0, 0], size).shape.as_list() == [2, None, None, 3]
