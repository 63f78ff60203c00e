"""Readers (white paper 4.5, input operations): `tf.TextLineReader`, `tf.FixedLengthRecordReader`,
`tf.WholeFileReader`, `tf.TFRecordReader`, `tf.IdentityReader` and their base `tf.ReaderBase`.

A reader op yields a `resource` handle to reader state in its device's resource manager
(readers/reader_resource.py). `reader.read(queue)` returns the next (key, value) record, taking the
next work unit (a file name) from the string `queue` when the current one is used up;
ReaderRead and ReaderReadUpTo are asynchronous kernels, so a read waiting for work holds no
thread. Once the queue is closed and empty, reads fail with OutOfRangeError.
"""
from __future__ import annotations

import collections
from typing import Any, Callable, Optional

import numpy as np

from tensorweave.framework.graph import Operation, Tensor, get_default_graph
from tensorweave.framework.kernel_contract import KernelContext
from tensorweave.framework.op_def import define_op
from tensorweave.framework.op_def_library import apply_op
from tensorweave.framework.tensor_shape import TensorShape
from tensorweave.lib.tf_record import TFRecordOptions
from tensorweave.ops.kernels.resource_handles import resource_handle_kernel, resource_of
from tensorweave.ops.readers import reader_resource as rr
from tensorweave.ops import _util
from tensorweave.ops._util import invalid

__all__ = ["ReaderBase", "TextLineReader", "FixedLengthRecordReader", "WholeFileReader",
           "TFRecordReader", "IdentityReader"]

_RESOURCE_ATTRS = ["container: string = ''", "shared_name: string = ''"]

TextLineReaderV2 = define_op("TextLineReaderV2", outputs=["reader_handle: resource"],
                             attrs=["skip_header_lines: int = 0"] + _RESOURCE_ATTRS,
                             shape_fn=_util.scalar, is_stateful=True)
FixedLengthRecordReaderV2 = define_op(
    "FixedLengthRecordReaderV2", outputs=["reader_handle: resource"],
    attrs=["header_bytes: int = 0", "record_bytes: int", "footer_bytes: int = 0", "hop_bytes: int = 0"]
    + _RESOURCE_ATTRS + ["encoding: string = ''"], shape_fn=_util.scalar, is_stateful=True)
WholeFileReaderV2 = define_op("WholeFileReaderV2", outputs=["reader_handle: resource"],
                              attrs=_RESOURCE_ATTRS, shape_fn=_util.scalar, is_stateful=True)
TFRecordReaderV2 = define_op("TFRecordReaderV2", outputs=["reader_handle: resource"],
                             attrs=_RESOURCE_ATTRS + ["compression_type: string = ''"],
                             shape_fn=_util.scalar, is_stateful=True)
IdentityReaderV2 = define_op("IdentityReaderV2", outputs=["reader_handle: resource"],
                             attrs=_RESOURCE_ATTRS, shape_fn=_util.scalar, is_stateful=True)


def _reader_kernel(kind: type, make: Callable[[Any, str], rr.ReaderResource]) -> Callable[[Any], Any]:
    """Builder of a reader op's kernel: the handle of its (possibly shared) reader."""

    def build(ctx: KernelContext) -> Callable[[], Any]:
        def verify(existing: Any) -> None:
            if type(existing) is not kind:
                raise invalid(f"Shared reader '{getattr(existing, 'name', '?')}' is a "
                               f"{getattr(existing, 'kind', type(existing).__name__)}, not a {kind.kind}")

        return resource_handle_kernel(ctx, lambda name: make(ctx, name), verify, use_node_name=True)

    return build


def _fixed_length(ctx: KernelContext, name: str) -> rr.ReaderResource:
    sizes = {k: ctx.attr(k) for k in ("record_bytes", "header_bytes", "footer_bytes", "hop_bytes")}
    if sizes["record_bytes"] <= 0 or min(sizes.values()) < 0:
        raise invalid(f"FixedLengthRecordReader needs record_bytes > 0 and non-negative header, footer "
                       f"and hop bytes, got {sizes}")
    encoding = ctx.attr("encoding")
    if encoding not in ("", "ZLIB", "GZIP"):
        raise invalid(f"FixedLengthRecordReader encoding must be '', 'ZLIB' or 'GZIP', got {encoding!r}")
    return rr.FixedLengthRecordReaderResource(name, encoding=encoding, **sizes)


def _text_line(ctx: KernelContext, name: str) -> rr.ReaderResource:
    skip = ctx.attr("skip_header_lines")
    if skip < 0:
        raise invalid(f"skip_header_lines must be >= 0 not {skip}")
    return rr.TextLineReaderResource(name, skip)


def _tf_record(ctx: KernelContext, name: str) -> rr.ReaderResource:
    compression = ctx.attr("compression_type")
    if compression not in ("", "ZLIB", "GZIP"):
        raise invalid(f"TFRecordReader compression_type must be '', 'ZLIB' or 'GZIP', got {compression!r}")
    return rr.TFRecordReaderResource(name, compression)


TextLineReaderV2.kernel()(_reader_kernel(rr.TextLineReaderResource, _text_line))
FixedLengthRecordReaderV2.kernel()(_reader_kernel(rr.FixedLengthRecordReaderResource, _fixed_length))
WholeFileReaderV2.kernel()(_reader_kernel(rr.WholeFileReaderResource,
                                          lambda ctx, name: rr.WholeFileReaderResource(name)))
TFRecordReaderV2.kernel()(_reader_kernel(rr.TFRecordReaderResource, _tf_record))
IdentityReaderV2.kernel()(_reader_kernel(rr.IdentityReaderResource,
                                         lambda ctx, name: rr.IdentityReaderResource(name)))


# ---------------------------------------------------------------------------------------------
# The reader verbs
# ---------------------------------------------------------------------------------------------
def _up_to_shape(op: Operation) -> list[TensorShape]:
    return [TensorShape([None])] * 2


_HANDLE = ["reader_handle: resource"]
ReaderReadV2 = define_op("ReaderReadV2", inputs=_HANDLE + ["queue_handle: resource"],
                         outputs=["key: string", "value: string"], shape_fn=_util.scalar,
                         is_async=True, is_stateful=True)
ReaderReadUpToV2 = define_op("ReaderReadUpToV2",
                             inputs=_HANDLE + ["queue_handle: resource", "num_records: int64"],
                             outputs=["keys: string", "values: string"], shape_fn=_up_to_shape,
                             is_async=True, is_stateful=True)
ReaderNumRecordsProducedV2 = define_op("ReaderNumRecordsProducedV2", inputs=_HANDLE,
                                       outputs=["records_produced: int64"], shape_fn=_util.scalar,
                                       is_stateful=True)
ReaderNumWorkUnitsCompletedV2 = define_op("ReaderNumWorkUnitsCompletedV2", inputs=_HANDLE,
                                          outputs=["units_completed: int64"], shape_fn=_util.scalar,
                                          is_stateful=True)
ReaderSerializeStateV2 = define_op("ReaderSerializeStateV2", inputs=_HANDLE, outputs=["state: string"],
                                   shape_fn=_util.scalar, is_stateful=True)
ReaderRestoreStateV2 = define_op("ReaderRestoreStateV2", inputs=_HANDLE + ["state: string"],
                                 shape_fn=_util.no_outputs, is_stateful=True)
ReaderResetV2 = define_op("ReaderResetV2", inputs=_HANDLE, shape_fn=_util.no_outputs, is_stateful=True)

for _op in (TextLineReaderV2, FixedLengthRecordReaderV2, WholeFileReaderV2, TFRecordReaderV2,
            IdentityReaderV2, ReaderReadV2, ReaderReadUpToV2, ReaderNumRecordsProducedV2,
            ReaderNumWorkUnitsCompletedV2, ReaderSerializeStateV2, ReaderRestoreStateV2, ReaderResetV2):
    _op.not_differentiable()


@ReaderReadV2.kernel()
def _read_kernel(ctx: KernelContext) -> Callable[..., None]:
    def read(step: Any, done: Callable[[Any], None], reader: Any, queue: Any) -> None:
        resource_of(reader).read(step, resource_of(queue), done, 1, False)
    return read


@ReaderReadUpToV2.kernel()
def _read_up_to_kernel(ctx: KernelContext) -> Callable[..., None]:
    def read_up_to(step: Any, done: Callable[[Any], None], reader: Any, queue: Any, num_records: Any) -> None:
        n = int(num_records)
        if n <= 0:
            raise invalid(f"num_records must be greater than 0, got {n}")
        resource_of(reader).read(step, resource_of(queue), done, n, True)
    return read_up_to


@ReaderNumRecordsProducedV2.kernel()
def _num_records_kernel(ctx: KernelContext) -> Callable[[Any], Any]:
    return lambda reader: np.int64(resource_of(reader).num_records_produced)


@ReaderNumWorkUnitsCompletedV2.kernel()
def _num_work_units_kernel(ctx: KernelContext) -> Callable[[Any], Any]:
    return lambda reader: np.int64(resource_of(reader).work_finished)


@ReaderSerializeStateV2.kernel()
def _serialize_kernel(ctx: KernelContext) -> Callable[[Any], Any]:
    def serialize(reader: Any) -> np.ndarray:
        return rr._string_scalar(resource_of(reader).serialize_state())
    return serialize


@ReaderRestoreStateV2.kernel()
def _restore_kernel(ctx: KernelContext) -> Callable[[Any, Any], None]:
    def restore(reader: Any, state: Any) -> None:
        if np.ndim(state) != 0:
            raise invalid(f"Reader state must be a scalar string, got shape {list(np.shape(state))}")
        value = state[()] if isinstance(state, np.ndarray) else state
        resource_of(reader).restore_state(value.encode() if isinstance(value, str) else bytes(value))
    return restore


@ReaderResetV2.kernel()
def _reset_kernel(ctx: KernelContext) -> Callable[[Any], None]:
    def reset(reader: Any) -> None:
        resource_of(reader).reset()
    return reset


# ---------------------------------------------------------------------------------------------
# The public TF1 API
# ---------------------------------------------------------------------------------------------
ReaderReadResult = collections.namedtuple("ReaderReadV2", ["key", "value"])
ReaderReadUpToResult = collections.namedtuple("ReaderReadUpToV2", ["keys", "values"])


def _queue_ref(queue: Any) -> Any:
    return queue if isinstance(queue, Tensor) else queue.queue_ref


class ReaderBase:
    """Base class for readers: each read produces a (key, value) record, taking work units
    (file names) from a queue as needed."""

    def __init__(self, reader_ref: Any, supports_serialize: bool = False) -> None:
        if get_default_graph().executes_eagerly:  # TF's ReaderBase refuses the same way
            raise RuntimeError("Readers are not supported when eager execution is enabled. Instead, please "
                               "use tf.data to get data into your model.")
        self._reader_ref = reader_ref
        self._supports_serialize = supports_serialize

    @property
    def reader_ref(self) -> Any:
        """The reader's handle (a `resource` tensor)."""
        return self._reader_ref

    @property
    def supports_serialize(self) -> bool:
        """Whether serialize_state/restore_state work for this reader."""
        return self._supports_serialize

    def read(self, queue: Any, name: Optional[str] = None) -> Any:
        """The next (key, value) record; dequeues a new work unit from `queue` (a queue or its
        handle) when the current one is finished."""
        key, value = apply_op(ReaderReadV2, name=name, reader_handle=self._reader_ref,
                              queue_handle=_queue_ref(queue))
        return ReaderReadResult(key, value)

    def read_up_to(self, queue: Any, num_records: Any, name: Optional[str] = None) -> Any:
        """Up to `num_records` (keys, values) from one work unit (fewer at its end)."""
        keys, values = apply_op(ReaderReadUpToV2, name=name, reader_handle=self._reader_ref,
                                queue_handle=_queue_ref(queue), num_records=num_records)
        return ReaderReadUpToResult(keys, values)

    def num_records_produced(self, name: Optional[str] = None) -> Any:
        """Scalar int64: records this reader has produced."""
        return apply_op(ReaderNumRecordsProducedV2, name=name, reader_handle=self._reader_ref)

    def num_work_units_completed(self, name: Optional[str] = None) -> Any:
        """Scalar int64: work units this reader has finished."""
        return apply_op(ReaderNumWorkUnitsCompletedV2, name=name, reader_handle=self._reader_ref)

    def serialize_state(self, name: Optional[str] = None) -> Any:
        """Scalar string: the reader's state (UnimplementedError for readers that can't)."""
        return apply_op(ReaderSerializeStateV2, name=name, reader_handle=self._reader_ref)

    def restore_state(self, state: Any, name: Optional[str] = None) -> Any:
        """Restores a state produced by serialize_state of a reader of the same kind."""
        return apply_op(ReaderRestoreStateV2, name=name, reader_handle=self._reader_ref, state=state)

    def reset(self, name: Optional[str] = None) -> Any:
        """Restores the reader to its initial clean state."""
        return apply_op(ReaderResetV2, name=name, reader_handle=self._reader_ref)


def _non_negative_int(value: Any, what: str) -> int:
    if value is None:
        return 0
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{what} must be an int, got {value!r}")
    if value < 0:
        raise ValueError(f"{what} must be non-negative, got {value}")
    return int(value)


class TextLineReader(ReaderBase):
    """A reader that outputs the lines of a file delimited by newlines; the key is
    'filename:line_number'. `skip_header_lines` lines are skipped at the start of each file."""

    def __init__(self, skip_header_lines: Optional[int] = None, name: Optional[str] = None) -> None:
        ref = apply_op(TextLineReaderV2, name=name,
                       skip_header_lines=_non_negative_int(skip_header_lines, "skip_header_lines"))
        super().__init__(ref)


class FixedLengthRecordReader(ReaderBase):
    """A reader that outputs fixed-length records from a file: `record_bytes` each, after
    `header_bytes` and before `footer_bytes`, each starting `hop_bytes` after the previous one
    (0 or None: right after it). Keys are 'filename:record_number'."""

    def __init__(self, record_bytes: int, header_bytes: Optional[int] = None,
                 footer_bytes: Optional[int] = None, hop_bytes: Optional[int] = None,
                 name: Optional[str] = None, encoding: Optional[str] = None) -> None:
        record_bytes = _non_negative_int(record_bytes, "record_bytes")
        if record_bytes == 0:
            raise ValueError("record_bytes must be positive")
        ref = apply_op(FixedLengthRecordReaderV2, name=name, record_bytes=record_bytes,
                       header_bytes=_non_negative_int(header_bytes, "header_bytes"),
                       footer_bytes=_non_negative_int(footer_bytes, "footer_bytes"),
                       hop_bytes=_non_negative_int(hop_bytes, "hop_bytes"), encoding=encoding or "")
        super().__init__(ref)


class WholeFileReader(ReaderBase):
    """A reader that outputs the entire contents of a file as the value, the file name as key."""

    def __init__(self, name: Optional[str] = None) -> None:
        super().__init__(apply_op(WholeFileReaderV2, name=name), supports_serialize=True)


class TFRecordReader(ReaderBase):
    """A reader that outputs the records of TFRecord files; keys are 'filename:offset'.
    `options` (a tf.python_io.TFRecordOptions) gives the compression."""

    def __init__(self, name: Optional[str] = None, options: Any = None) -> None:
        compression = TFRecordOptions.get_compression_type_string(options)
        super().__init__(apply_op(TFRecordReaderV2, name=name, compression_type=compression))


class IdentityReader(ReaderBase):
    """A reader that outputs each queued work string as both key and value."""

    def __init__(self, name: Optional[str] = None) -> None:
        super().__init__(apply_op(IdentityReaderV2, name=name), supports_serialize=True)
