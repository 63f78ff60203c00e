"""What summary kernels write: TensorFlow's histogram buckets, PNG images and 16-bit WAV audio.

The histogram is TF's (core/lib/histogram): bucket limits grow by 10% from 1e-12 to 1e20, mirrored
for negatives around a zero limit, with DBL_MAX at both ends; a value goes to the first bucket
whose limit is above it; runs of empty buckets collapse into one entry ending at the run's last
limit. The protos are TensorFlow's own (`tensorboard.compat.proto`)."""
from __future__ import annotations

import io
import struct
import sys
from typing import Any

import numpy as np
from tensorboard.compat.proto import summary_pb2

_DBL_MAX = sys.float_info.max


def _default_bucket_limits() -> np.ndarray:
    positive = []
    v = 1.0e-12
    while v < 1.0e20:
        positive.append(v)
        v *= 1.1  # repeated multiplication, as TF's loop: the limits carry its rounding
    positive.append(_DBL_MAX)
    negative = [-x for x in reversed(positive)]
    return np.array(negative + [0.0] + positive, dtype=np.float64)


BUCKET_LIMITS = _default_bucket_limits()


def histogram_proto(values: np.ndarray) -> Any:
    """The HistogramProto of finite float64 `values` (TF's Histogram::EncodeToProto with
    preserve_zero_buckets false)."""
    proto = summary_pb2.HistogramProto()
    flat = values.reshape(-1)
    if flat.size:
        proto.min, proto.max = float(flat.min()), float(flat.max())
        proto.num = float(flat.size)
        # TF adds values one at a time in double precision: so does this sum's order
        proto.sum = float(_sequential_sum(flat))
        proto.sum_squares = float(_sequential_sum(flat * flat))
        counts = np.bincount(np.searchsorted(BUCKET_LIMITS, flat, side="right"),
                             minlength=len(BUCKET_LIMITS))[:len(BUCKET_LIMITS)]
    else:
        proto.min, proto.max = _DBL_MAX, -_DBL_MAX
        counts = np.zeros(len(BUCKET_LIMITS), dtype=np.int64)
    limits, buckets = [], []
    nonzero = np.flatnonzero(counts)
    i, n = 0, len(counts)
    for j in nonzero:
        if j > i:  # an empty run i..j-1 collapses into one entry at its last limit
            limits.append(BUCKET_LIMITS[j - 1])
            buckets.append(0.0)
        limits.append(BUCKET_LIMITS[j])
        buckets.append(float(counts[j]))
        i = j + 1
    if i < n:  # the empty run up to the last limit (the only entry when nothing was added)
        limits.append(BUCKET_LIMITS[n - 1])
        buckets.append(0.0)
    proto.bucket_limit.extend(limits)
    proto.bucket.extend(buckets)
    return proto


def _sequential_sum(values: np.ndarray) -> float:
    # math.fsum would be exact, np.sum pairwise: TF accumulates left to right
    return float(np.add.accumulate(values)[-1]) if values.size else 0.0


def encode_png(image: np.ndarray) -> bytes:
    """A [height, width, channels] uint8 image (1, 3 or 4 channels) as PNG bytes."""
    from PIL import Image  # Pillow comes with tensorboard; loaded only by image summaries
    mode = {1: "L", 3: "RGB", 4: "RGBA"}[image.shape[2]]
    pixels = image[:, :, 0] if image.shape[2] == 1 else image
    out = io.BytesIO()
    Image.fromarray(np.ascontiguousarray(pixels), mode).save(out, format="PNG")
    return out.getvalue()


def encode_wav(audio: np.ndarray, sample_rate: int) -> bytes:
    """[frames, channels] float audio as 16-bit little-endian PCM WAV (TF's
    EncodeAudioAsS16LEWav: samples scaled by 2^15, rounded half away from zero, clamped)."""
    frames, channels = audio.shape
    scaled = np.round(audio.astype(np.float32) * np.float32(32768.0))
    # np.round is half-to-even; roundf is half away from zero: fix the exact halves
    exact = audio.astype(np.float32) * np.float32(32768.0)
    halves = np.abs(exact - np.trunc(exact)) == 0.5
    scaled[halves] = np.trunc(exact[halves]) + np.sign(exact[halves])
    samples = np.clip(scaled, -32768, 32767).astype("<i2")
    data = samples.tobytes()
    header = b"RIFF" + struct.pack("<I", 36 + len(data)) + b"WAVE" + b"fmt " + struct.pack(
        "<IHHIIHH", 16, 1, channels, sample_rate, sample_rate * channels * 2, channels * 2, 16) + \
        b"data" + struct.pack("<I", len(data))
    return header + data
