"""encode_png / decode_png round trip through files written and read with tf.gfile and
tf.read_file, for a grey and an RGB uint8 image, plus decode_image on the same bytes."""
import os

import numpy as np

from tests.compat.programs import _data


def run(tf, workdir):
    images, _ = _data.digits(3)
    grey = (images[0].reshape(8, 8, 1) * 255).astype(np.uint8)
    rgb = np.concatenate([(im.reshape(8, 8, 1) * 255).astype(np.uint8) for im in images], axis=2)
    out_dir = os.path.join(workdir, "png")
    tf.gfile.MakeDirs(out_dir)
    g = tf.placeholder(tf.uint8, [8, 8, 1])
    c = tf.placeholder(tf.uint8, [8, 8, 3])
    enc_g, enc_c = tf.image.encode_png(g), tf.image.encode_png(c)
    path = tf.placeholder(tf.string, [])
    contents = tf.read_file(path)
    dec = tf.image.decode_png(contents, channels=0)
    dec_rgb_as_grey = tf.image.decode_png(contents, channels=1)
    dec_any = tf.image.decode_image(contents)
    result = {}
    with tf.Session() as sess:
        for name, ph, enc, value in (("grey", g, enc_g, grey), ("rgb", c, enc_c, rgb)):
            data = sess.run(enc, {ph: value})
            target = os.path.join(out_dir, name + ".png")
            with tf.gfile.GFile(target, "wb") as f:
                f.write(data)
            d, d1, da = sess.run([dec, dec_rgb_as_grey, dec_any], {path: target})
            result[name + "_decoded"] = d
            result[name + "_as_grey"] = d1
            result[name + "_decode_image"] = da
            result[name + "_signature"] = np.array(data[:8])
            result[name + "_exact"] = np.bool_(np.array_equal(d, value))
    result["files"] = np.array(sorted(os.path.basename(f) for f in tf.gfile.Glob(os.path.join(out_dir, "*.png"))))
    result["static_shape_rank"] = np.int64(dec.shape.ndims if dec.shape.ndims is not None else -1)
    return result
