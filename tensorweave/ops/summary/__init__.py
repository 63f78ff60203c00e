"""`tf.summary`'s summary ops (TF 1.x summary.py): scalar, histogram, image, audio, text,
tensor_summary, merge and merge_all, with TF's tags (the name scope, a `family` prefix) and the
SUMMARIES collection. The ops are in summary_ops.py."""
from __future__ import annotations

import contextlib
import logging
import re
from typing import Any, Iterator, Optional, Sequence

import numpy as np
from google.protobuf import json_format
from tensorboard.compat.proto import summary_pb2

from tensorweave.framework import dtypes as _dtypes
from tensorweave.framework.graph import GraphKeys, add_to_collection, get_collection, get_default_graph, name_scope
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_conversion import convert_to_tensor
from tensorweave.ops.summary.summary_ops import (AudioSummaryV2, HistogramSummary, ImageSummary, MergeSummary,
                                                 ScalarSummary, TensorSummaryV2)

__all__ = ["scalar", "histogram", "image", "audio", "text", "tensor_summary", "merge", "merge_all",
           "get_summary_description", "summary_scope", "clean_tag"]

_INVALID_TAG_CHARACTERS = re.compile(r"[^-/\w\.]")
_BAD_COLOR = np.array([255, 0, 0, 255], dtype=np.uint8)  # TF's default bad_color: opaque red


def clean_tag(name: Optional[str]) -> Optional[str]:
    """A tag TensorBoard accepts: characters outside [-/\\w.] become '_', leading '/' go."""
    if name is None:
        return None
    new_name = _INVALID_TAG_CHARACTERS.sub("_", name).lstrip("/")
    if new_name != name:
        logging.getLogger("tensorflow").info("Summary name %s is illegal; using %s instead.", name, new_name)
    return new_name


@contextlib.contextmanager
def summary_scope(name: str, family: Optional[str] = None, default_name: Optional[str] = None,
                  values: Optional[Sequence[Any]] = None) -> Iterator[tuple[str, str]]:
    """(tag, scope) for a summary op: the op runs in a name scope built from `family/name`, and
    its tag is that scope (prefixed by the family again, so TensorBoard groups it in a tab)."""
    name, family = clean_tag(name), clean_tag(family)
    base = name if family is None else f"{family}/{name}"
    with name_scope(base, default_name, values) as scope:
        tag = scope.rstrip("/") if family is None else f"{family}/{scope.rstrip('/')}"
        yield tag, scope


def _collect(value: Any, collections: Optional[Sequence[str]], default: Sequence[str]) -> None:
    for key in (default if collections is None else collections):
        add_to_collection(key, value)


def scalar(name: str, tensor: Any, collections: Optional[Sequence[str]] = None,
           family: Optional[str] = None) -> Any:
    """A scalar summary of a real numeric scalar tensor."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        value = apply_op(ScalarSummary, name=scope, tags=tag, values=tensor)
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def histogram(name: str, values: Any, collections: Optional[Sequence[str]] = None,
              family: Optional[str] = None) -> Any:
    """A histogram summary of the values of a numeric tensor (any shape)."""
    with summary_scope(name, family, values=[values]) as (tag, scope):
        value = apply_op(HistogramSummary, name=scope, tag=tag, values=values)
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def image(name: str, tensor: Any, max_outputs: int = 3, collections: Optional[Sequence[str]] = None,
          family: Optional[str] = None) -> Any:
    """An image summary of a [batch, height, width, channels] tensor (1, 3 or 4 channels,
    uint8 or float): the first `max_outputs` images as PNGs."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        value = apply_op(ImageSummary, name=scope, tag=tag, tensor=tensor, max_images=max_outputs,
                         bad_color=_BAD_COLOR)
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def audio(name: str, tensor: Any, sample_rate: Any, max_outputs: int = 3,
          collections: Optional[Sequence[str]] = None, family: Optional[str] = None) -> Any:
    """An audio summary of a [batch, frames] or [batch, frames, channels] float tensor with
    samples in [-1, 1]: the first `max_outputs` clips as WAV."""
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        rate = convert_to_tensor(sample_rate, dtype=_dtypes.float32, name="sample_rate")
        value = apply_op(AudioSummaryV2, name=scope, tag=tag, tensor=tensor, sample_rate=rate,
                         max_outputs=max_outputs)
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def tensor_summary(name: str, tensor: Any, summary_description: Optional[str] = None,
                   collections: Optional[Sequence[str]] = None, summary_metadata: Any = None,
                   family: Optional[str] = None, display_name: Optional[str] = None) -> Any:
    """A summary holding the whole tensor, with its SummaryMetadata (plugin data)."""
    metadata = summary_pb2.SummaryMetadata() if summary_metadata is None else summary_metadata
    if summary_description is not None:
        metadata.summary_description = summary_description
    if display_name is not None:
        metadata.display_name = display_name
    serialized = metadata.SerializeToString()
    with summary_scope(name, family, values=[tensor]) as (tag, scope):
        value = apply_op(TensorSummaryV2, name=scope, tag=tag, tensor=tensor,
                         serialized_summary_metadata=serialized)
    _collect(value, collections, [GraphKeys.SUMMARIES])
    return value


def text(name: str, tensor: Any, collections: Optional[Sequence[str]] = None) -> Any:
    """A text summary (TensorBoard's text plugin) of a string tensor."""
    tensor = convert_to_tensor(tensor)
    if tensor.dtype != _dtypes.string:
        raise ValueError(f"Expected tensor {tensor.name} to have dtype string, got {tensor.dtype.name}")
    metadata = summary_pb2.SummaryMetadata(plugin_data=summary_pb2.SummaryMetadata.PluginData(plugin_name="text"))
    return tensor_summary(name=name, tensor=tensor, summary_metadata=metadata, collections=collections)


def merge(inputs: Sequence[Any], collections: Optional[Sequence[str]] = None, name: Optional[str] = None) -> Any:
    """One Summary holding every value of the `inputs` summaries; a tag seen twice is an
    InvalidArgumentError when it runs. Not in eager mode, as in TF."""
    _refuse_eager_merge()
    with name_scope(name, "Merge", inputs):
        value = apply_op(MergeSummary, name=name, inputs=list(inputs))
    _collect(value, collections, [])
    return value


def merge_all(key: str = GraphKeys.SUMMARIES, scope: Optional[str] = None, name: Optional[str] = None) -> Any:
    """`merge` of every summary in collection `key` (under `scope`), or None if it is empty."""
    _refuse_eager_merge()
    summaries = get_collection(key, scope=scope)
    return merge(summaries, name=name) if summaries else None


def _refuse_eager_merge() -> None:
    if get_default_graph().executes_eagerly:
        raise RuntimeError("Merging tf.summary.* ops is not compatible with eager execution. "
                           "Use tf.contrib.summary instead.")


def get_summary_description(node_def: Any) -> Any:
    """The SummaryDescription in the `description` attr of a TensorSummary NodeDef."""
    if node_def.op != "TensorSummary":
        raise ValueError(f"Can't get_summary_description on {node_def.op}")
    description = summary_pb2.SummaryDescription()
    json_format.Parse(node_def.attr["description"].s.decode("utf-8"), description)
    return description
