"""Op cases for TF1 summary ops: scalar, histogram, image, audio, tensor and text summaries
(eager mode returns the serialized Summary, as TF's does) and merging (raw MergeSummary:
tf.summary.merge itself raises in eager mode, as TF's)."""
import numpy as np

import tensorweave as tf
from tests.op_cases import OpCase, raw


def _summaries(x):
    images = tf.reshape(tf.cast(tf.abs(x) * 40.0, tf.uint8)[:12], [1, 2, 2, 3])
    scalar = tf.summary.scalar("loss", x[0])
    with tf.name_scope("family"):
        histogram = tf.summary.histogram("weights", x)
    values = [scalar, histogram, tf.summary.image("picture", images),
              tf.summary.image("floats", tf.cast(images, tf.float32)),
              tf.summary.audio("sound", tf.reshape(tf.tanh(x), [2, 8]), 8000.0),
              tf.summary.tensor_summary("raw", x[:3]), tf.summary.text("words", tf.constant(["hello"]))]
    return values + [raw("MergeSummary", [scalar, histogram])]


CASES = [
    OpCase("summary:ops", _summaries, lambda rng: [rng.randn(16).astype(np.float32)],
           ("ScalarSummary", "HistogramSummary", "ImageSummary", "AudioSummaryV2", "TensorSummaryV2", "MergeSummary")),
]
