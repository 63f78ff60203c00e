"""The summary ops against TensorFlow 2.21 (tests/data/tf_summary_expected.npz, written by
make_tf_summary_fixtures.py with the same graph): serialized Summary protos, op names and types,
tags under name scopes and families, the SUMMARIES collection, merge's duplicate-tag error."""
import io
import json
import os
import wave

import numpy as np
import pytest
from PIL import Image

import tensorweave as tf
from tests.data.summary_cases import build

DATA = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "data")
EXPECTED = np.load(os.path.join(DATA, "tf_summary_expected.npz"))
META = json.loads(EXPECTED["meta"].tobytes())
INPUTS = {k[len("input_"):]: EXPECTED[k] for k in EXPECTED.files if k.startswith("input_")}
KEYS = [k for k in META["names"] if k != "dup"]


@pytest.fixture(scope="module")
def ran():
    with tf.Graph().as_default() as graph:
        out = build(tf, INPUTS)
        with tf.Session() as sess:
            values = sess.run([out[k] for k in KEYS])
        return graph, out, dict(zip(KEYS, values))


def tf_summary(key):
    return tf.Summary.FromString(EXPECTED[f"summary_{key}"].tobytes())


def test_names_types_tags_and_collection(ran):
    graph, out, _ = ran
    assert {k: [v.op.name, v.op.type] for k, v in out.items()} == META["names"]
    assert [t.name for t in graph.get_collection(tf.GraphKeys.SUMMARIES)] == META["collection"]
    for t in out.values():
        assert t.dtype == tf.string and t.shape.as_list() == []


@pytest.mark.parametrize("key", ["scalar", "scalar_scoped", "scalar_family", "scalar_again", "scalar_odd_name",
                                 "hist", "hist_int", "hist_empty", "text", "tensor", "audio", "audio_2d",
                                 "merged"])
def test_summaries_are_tensorflows_bytes(ran, key):
    got = ran[2][key]
    assert isinstance(got, bytes)
    assert tf.Summary.FromString(got) == tf_summary(key)
    assert got == EXPECTED[f"summary_{key}"].tobytes()


@pytest.mark.parametrize("key", ["img_u8", "img_one", "img_f_pos", "img_f_neg", "img_f_nan"])
def test_image_summaries_decode_to_tensorflows_pixels(ran, key):
    """PNG bytes may differ (libpng vs Pillow's zlib settings); the images may not."""
    got, want = tf.Summary.FromString(ran[2][key]), tf_summary(key)
    assert [v.tag for v in got.value] == [v.tag for v in want.value]
    for g, w in zip(got.value, want.value):
        assert (g.image.height, g.image.width, g.image.colorspace) == \
            (w.image.height, w.image.width, w.image.colorspace)
        np.testing.assert_array_equal(np.asarray(Image.open(io.BytesIO(g.image.encoded_image_string))),
                                      np.asarray(Image.open(io.BytesIO(w.image.encoded_image_string))))


def test_audio_is_a_wav_file(ran):
    clip = tf.Summary.FromString(ran[2]["audio"]).value[0].audio
    with wave.open(io.BytesIO(clip.encoded_audio_string)) as w:
        assert (w.getnchannels(), w.getframerate(), w.getnframes(), w.getsampwidth()) == (2, 8000, 50, 2)


def test_merge_all_is_none_without_summaries_and_duplicate_tags_fail():
    assert tf.summary.merge_all() is None
    s = tf.summary.scalar("loss", tf.constant(1.0))
    dup = tf.summary.merge([s, s], name="dup")
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Duplicate tag loss found in summary inputs"):
            sess.run(dup)
    assert META["dup_error"] == ["InvalidArgumentError", "Duplicate tag loss found in summary inputs "]


def test_bad_inputs_raise_tensorflows_errors():
    with tf.Session() as sess:
        with pytest.raises(tf.errors.InvalidArgumentError, match="Nan in summary histogram for: h"):
            sess.run(tf.summary.histogram("h", tf.constant([1.0, np.nan])))
        with pytest.raises(tf.errors.InvalidArgumentError, match="Infinity in summary histogram for: inf"):
            sess.run(tf.summary.histogram("inf", tf.constant([np.inf])))
        x = tf.placeholder(tf.float32)
        with pytest.raises(tf.errors.InvalidArgumentError, match="4-D with last dim 1, 3, or 4"):
            sess.run(tf.summary.image("img", x), {x: np.zeros([2, 3, 3, 2])})
        with pytest.raises(tf.errors.InvalidArgumentError, match="3-D or 2-D"):
            sess.run(tf.summary.audio("a", x, 8000), {x: np.zeros([3])})
    with pytest.raises(ValueError, match="dtype string"):
        tf.summary.text("t", tf.constant(1.0))


def test_collections_argument_and_family():
    s = tf.summary.scalar("x", tf.constant(1.0), collections=["mine"], family="fam")
    assert tf.get_collection("mine") == [s] and tf.get_collection(tf.GraphKeys.SUMMARIES) == []
    assert s.op.name == "fam/x"
    with tf.Session() as sess:
        assert tf.Summary.FromString(sess.run(s)).value[0].tag == "fam/fam/x"
