"""The summary graph of tf_summary_expected.npz, built with either library (`tf` is passed in):
make_tf_summary_fixtures.py runs it under TensorFlow, tests/summary/test_summary_ops.py under
tensorweave."""
import numpy as np


def inputs():
    rng = np.random.RandomState(7)
    return {
        "hist_values": np.concatenate([rng.normal(0, 3, 200), [0.0, 0.0, 1e-13, -1e-13, 1e15, -2.5e7, 1.0, 1.1]])
        .astype(np.float32),
        "img_u8": rng.randint(0, 256, (3, 4, 5, 3)).astype(np.uint8),
        "img_f_pos": rng.rand(2, 3, 4, 1).astype(np.float32) * 7.0,
        "img_f_neg": (rng.rand(2, 3, 2, 4).astype(np.float32) - 0.6) * 5.0,
        "img_f_nan": np.array([[[[0.5], [np.nan]], [[np.inf], [2.0]]]], dtype=np.float32),
        "audio": np.clip(rng.normal(0, 0.5, (2, 50, 2)), -1.2, 1.2).astype(np.float32),
        "audio_2d": (rng.rand(3, 20).astype(np.float32) - 0.5),
        "tensor": np.arange(6, dtype=np.int32).reshape(2, 3),
    }


def build(tf, d):
    """The summary graph (shared with the test, which builds it with tensorweave)."""
    out = {}
    x = tf.constant(3.5, name="x")
    out["scalar"] = tf.summary.scalar("loss", x)
    with tf.name_scope("train"):
        out["scalar_scoped"] = tf.summary.scalar("loss", x * 2.0)
        out["scalar_family"] = tf.summary.scalar("acc", x + 1.0, family="metrics")
    out["scalar_again"] = tf.summary.scalar("loss", x - 1.0)
    out["scalar_odd_name"] = tf.summary.scalar("bad name:with/chars", x)
    out["hist"] = tf.summary.histogram("weights", tf.constant(d["hist_values"]))
    out["hist_int"] = tf.summary.histogram("ints", tf.constant([1, 5, 5, -3, 0], dtype=tf.int32))
    out["hist_empty"] = tf.summary.histogram("empty", tf.zeros([0]))
    out["img_u8"] = tf.summary.image("u8", tf.constant(d["img_u8"]), max_outputs=2)
    out["img_one"] = tf.summary.image("one", tf.constant(d["img_u8"][:1]))
    out["img_f_pos"] = tf.summary.image("fpos", tf.constant(d["img_f_pos"]), max_outputs=5)
    out["img_f_neg"] = tf.summary.image("fneg", tf.constant(d["img_f_neg"]))
    out["img_f_nan"] = tf.summary.image("fnan", tf.constant(d["img_f_nan"]))
    out["audio"] = tf.summary.audio("sound", tf.constant(d["audio"]), 8000, max_outputs=2)
    out["audio_2d"] = tf.summary.audio("mono", tf.constant(d["audio_2d"]), 16000.0, max_outputs=1)
    out["text"] = tf.summary.text("note", tf.constant(["hello", "world"]))
    out["tensor"] = tf.summary.tensor_summary("t", tf.constant(d["tensor"]))
    out["merged"] = tf.summary.merge([out["scalar"], out["hist_int"], out["text"]])
    out["merge_all"] = tf.summary.merge_all()
    out["dup"] = tf.summary.merge([out["scalar"], out["scalar"]], name="dup")
    return out
