"""The summary ops (TF's logging_ops): each turns tensors into a serialized `Summary` protocol
buffer, a string scalar that `FileWriter.add_summary` writes into an event file.

ScalarSummary, HistogramSummary, ImageSummary, AudioSummaryV2, TensorSummaryV2 and MergeSummary,
with TF's signatures, tags and error messages; what they encode is in kernels/summary_encoding.py.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np
from tensorboard.compat.proto import summary_pb2, tensor_pb2

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import Operation
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.ops._util import invalid, shape_error
from tensorweave.ops.kernels.summary_encoding import encode_png, encode_wav, histogram_proto

__all__: list[str] = []

_REAL = "float32, float64, int32, uint8, int16, int8, int64, uint16, float16, uint32, uint64"


def _scalar_string_shape(op: Operation) -> list[TensorShape]:
    return [TensorShape([])]


def _string_scalar(serialized: bytes) -> np.ndarray:
    out = np.empty((), dtype=object)
    out[()] = serialized
    return out


def _tag(value: Any) -> str:
    if value.ndim != 0:
        raise invalid(f"tag must be a scalar, got shape {list(value.shape)}")
    tag = value.item()
    return tag.decode("utf-8", "replace") if isinstance(tag, bytes) else str(tag)


# ---------------------------------------------------------------------------------------------
# ScalarSummary: one simple_value per (tag, value) pair
# ---------------------------------------------------------------------------------------------
def _scalar_summary_shape(op: Operation) -> list[TensorShape]:
    tags, values = op.inputs[0].shape, op.inputs[1].shape
    if tags.is_fully_defined() and values.is_fully_defined() and tags.as_list() != values.as_list():
        raise shape_error(op, f"tags and values not the same shape: {tags} != {values}")
    return [TensorShape([])]


ScalarSummary = define_op("ScalarSummary", inputs=["tags: string", "values: T"], outputs=["summary: string"],
                          attrs=[f"T: {{{_REAL}}}"], shape_fn=_scalar_summary_shape)
ScalarSummary.not_differentiable()


@ScalarSummary.kernel()
def _scalar_summary_kernel(ctx: KernelContext) -> Callable:
    def compute(tags: Any, values: Any) -> Any:
        if tags.shape != values.shape:
            raise invalid(f"tags and values are not the same shape: {list(tags.shape)} != "
                          f"{list(values.shape)} (tag '{_first_tag(tags)}')")
        summary = summary_pb2.Summary()
        for tag, value in zip(tags.reshape(-1), values.reshape(-1)):
            summary.value.add(tag=tag.decode("utf-8", "replace"), simple_value=float(value))
        return _string_scalar(summary.SerializeToString())

    return compute


def _first_tag(tags: Any) -> str:
    flat = tags.reshape(-1)
    return flat[0].decode("utf-8", "replace") if flat.size else ""


# ---------------------------------------------------------------------------------------------
# HistogramSummary
# ---------------------------------------------------------------------------------------------
HistogramSummary = define_op("HistogramSummary", inputs=["tag: string", "values: T"],
                             outputs=["summary: string"], attrs=[f"T: {{{_REAL}}} = float32"],
                             shape_fn=_scalar_string_shape)
HistogramSummary.not_differentiable()


@HistogramSummary.kernel()
def _histogram_summary_kernel(ctx: KernelContext) -> Callable:
    node = ctx.node_name

    def compute(tag: Any, values: Any) -> Any:
        name = _tag(tag)
        flat = values.reshape(-1).astype(np.float64)
        finite = np.isfinite(flat)
        if not finite.all():
            bad = flat[~finite][0]
            kind = "Nan" if np.isnan(bad) else "Infinity"
            raise invalid(f"{kind} in summary histogram for: {node}")
        summary = summary_pb2.Summary()
        summary.value.add(tag=name, histo=histogram_proto(flat))
        return _string_scalar(summary.SerializeToString())

    return compute


# ---------------------------------------------------------------------------------------------
# ImageSummary: up to max_images PNGs; float images scaled into uint8 per image
# ---------------------------------------------------------------------------------------------
ImageSummary = define_op("ImageSummary", inputs=["tag: string", "tensor: T"], outputs=["summary: string"],
                         attrs=["max_images: int >= 1 = 3", "T: {uint8, float32, float16, float64} = float32",
                                "bad_color: tensor"],
                         shape_fn=_scalar_string_shape)
ImageSummary.not_differentiable()


def _float_image_to_uint8(image: np.ndarray, bad_color: np.ndarray) -> np.ndarray:
    """TF's NormalizeFloatImage: positive images scale by 255/max, others by 127/max|v| around
    128 (computed in the image's own float type, then truncated to uint8); a pixel with any
    non-finite channel becomes bad_color."""
    h, w, depth = image.shape
    pixels = image.reshape(h * w, depth)
    finite = np.isfinite(pixels).all(axis=1)
    good = pixels[finite]
    lo = float(good.min()) if good.size else float("inf")
    hi = float(good.max()) if good.size else float("-inf")
    kind = image.dtype.type
    if lo < 0:
        max_val = np.float32(max(abs(lo), abs(hi)))
        scale = kind(0.0 if max_val < np.float32(1e-6) else np.float32(127.0) / max_val)
        offset = kind(128.0)
    else:
        scale = kind(0.0 if np.float32(hi) < np.float32(1e-6) else np.float32(255.0) / np.float32(hi))
        offset = kind(0.0)
    out = np.empty((h * w, depth), dtype=np.uint8)
    with np.errstate(invalid="ignore", over="ignore"):
        out[finite] = (good * scale + offset).astype(np.uint8)
    out[~finite] = bad_color[:depth]
    return out.reshape(h, w, depth)


@ImageSummary.kernel()
def _image_summary_kernel(ctx: KernelContext) -> Callable:
    max_images = ctx.attr("max_images")
    bad_color = np.asarray(ctx.attr("bad_color"), dtype=np.uint8).reshape(-1)

    def compute(tag: Any, tensor: Any) -> Any:
        base = _tag(tag)
        if tensor.ndim != 4 or tensor.shape[3] not in (1, 3, 4):
            raise invalid(f"Tensor must be 4-D with last dim 1, 3, or 4, not {_dims(tensor.shape)}")
        batch, h, w, depth = tensor.shape
        if tensor.dtype != np.uint8 and bad_color.size < depth:
            raise invalid(f"Bad color has {bad_color.size} channels but image has {depth} channels")
        summary = summary_pb2.Summary()
        for i in range(min(max_images, batch)):
            image = tensor[i] if tensor.dtype == np.uint8 else _float_image_to_uint8(tensor[i], bad_color)
            name = f"{base}/image" if max_images == 1 else f"{base}/image/{i}"
            summary.value.add(tag=name, image=summary_pb2.Summary.Image(
                height=h, width=w, colorspace=depth, encoded_image_string=encode_png(image)))
        return _string_scalar(summary.SerializeToString())

    return compute


def _dims(shape: tuple) -> str:
    return "[" + ",".join(str(d) for d in shape) + "]"


# ---------------------------------------------------------------------------------------------
# AudioSummaryV2: up to max_outputs 16-bit WAV clips
# ---------------------------------------------------------------------------------------------
AudioSummaryV2 = define_op("AudioSummaryV2", inputs=["tag: string", "tensor: float32", "sample_rate: float32"],
                           outputs=["summary: string"], attrs=["max_outputs: int >= 1 = 3"],
                           shape_fn=_scalar_string_shape)
AudioSummaryV2.not_differentiable()


@AudioSummaryV2.kernel()
def _audio_summary_kernel(ctx: KernelContext) -> Callable:
    max_outputs = ctx.attr("max_outputs")

    def compute(tag: Any, tensor: Any, sample_rate: Any) -> Any:
        base = _tag(tag)
        if sample_rate.ndim != 0:
            raise invalid(f"sample_rate must be rank-0 or contain a single value, got shape "
                          f"{list(sample_rate.shape)}")
        rate = float(sample_rate)
        if rate <= 0:
            raise invalid("sample_rate must be > 0")
        if tensor.ndim not in (2, 3):
            raise invalid(f"Tensor must be 3-D or 2-D, got: {_dims(tensor.shape)}")
        clips = tensor if tensor.ndim == 3 else tensor[:, :, None]
        batch, frames, channels = clips.shape
        summary = summary_pb2.Summary()
        for i in range(min(max_outputs, batch)):
            name = f"{base}/audio" if max_outputs == 1 else f"{base}/audio/{i}"
            summary.value.add(tag=name, audio=summary_pb2.Summary.Audio(
                sample_rate=rate, num_channels=channels, length_frames=frames, content_type="audio/wav",
                encoded_audio_string=encode_wav(clips[i], int(rate))))
        return _string_scalar(summary.SerializeToString())

    return compute


# ---------------------------------------------------------------------------------------------
# TensorSummaryV2: the whole tensor, with plugin metadata
# ---------------------------------------------------------------------------------------------
TensorSummaryV2 = define_op("TensorSummaryV2", inputs=["tag: string", "tensor: T",
                                                       "serialized_summary_metadata: string"],
                            outputs=["summary: string"], attrs=["T: type"], shape_fn=_scalar_string_shape)
TensorSummaryV2.not_differentiable()


def tensor_to_proto(array: np.ndarray, dtype: Any) -> Any:
    """TF's Tensor::AsProtoTensorContent: numbers as raw little-endian bytes, strings listed."""
    proto = tensor_pb2.TensorProto(dtype=dtype.as_datatype_enum)
    for d in array.shape:
        proto.tensor_shape.dim.add(size=d)
    if dtype == _dtypes.string:
        proto.string_val.extend(v if isinstance(v, bytes) else str(v).encode("utf-8") for v in array.reshape(-1))
    else:
        proto.tensor_content = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<"), copy=False).tobytes()
    return proto


@TensorSummaryV2.kernel()
def _tensor_summary_kernel(ctx: KernelContext) -> Callable:
    dtype = ctx.attr("T")

    def compute(tag: Any, tensor: Any, serialized_metadata: Any) -> Any:
        summary = summary_pb2.Summary()
        value = summary.value.add(tag=_tag(tag))
        value.metadata.ParseFromString(serialized_metadata.item())
        value.metadata.SetInParent()  # TF always sets it, empty or not
        value.tensor.CopyFrom(tensor_to_proto(np.asarray(tensor), dtype))
        return _string_scalar(summary.SerializeToString())

    return compute


# ---------------------------------------------------------------------------------------------
# MergeSummary
# ---------------------------------------------------------------------------------------------
MergeSummary = define_op("MergeSummary", inputs=["inputs: N * string"], outputs=["summary: string"],
                         attrs=["N: int >= 1"], shape_fn=_scalar_string_shape)
MergeSummary.not_differentiable()


@MergeSummary.kernel()
def _merge_summary_kernel(ctx: KernelContext) -> Callable:
    def compute(*inputs: Any) -> Any:
        parts = [s for serialized in inputs for s in np.asarray(serialized).reshape(-1)]
        tags: set[str] = set()
        for s in parts:
            try:
                part = summary_pb2.Summary.FromString(s)
            except Exception:  # noqa: BLE001  (protobuf's DecodeError and friends)
                raise invalid("Could not parse one of the summary inputs") from None
            for value in part.value:
                if value.tag and value.tag in tags:
                    raise invalid(f"Duplicate tag {value.tag} found in summary inputs ")
                tags.add(value.tag)
        # `value` is Summary's only field and it repeats: the concatenated messages are the
        # merged message, byte for byte what re-serializing their values would give.
        return _string_scalar(b"".join(parts))

    return compute
