"""`tf.summary.FileWriter` (TF 1.x): summaries, graphs, meta graphs, run metadata and session
logs as Event protos in an event file TensorBoard reads.

As TF's SummaryToEventTransformer: a serialized Summary is parsed, plugin metadata is written
only the first time a tag is seen, each event gets the wall time and the global step, and a
graph given to the constructor or `add_graph` is written with its meta graph."""
from __future__ import annotations

import logging
import time
from typing import Any, Optional

import numpy as np
from tensorboard.compat.proto import event_pb2, graph_pb2, summary_pb2

from tensorweave.framework.graph import Graph, get_default_graph
from tensorweave.framework.meta_graph import create_meta_graph_def
from tensorweave.summary.event_file_writer import EventFileWriter


class FileWriter:
    """Writes Summary protos and events to an event file in `logdir`, asynchronously."""

    def __init__(self, logdir: Any, graph: Optional[Graph] = None, max_queue: int = 10, flush_secs: float = 120,
                 graph_def: Any = None, filename_suffix: Optional[str] = None, session: Any = None) -> None:
        if session is not None:
            raise ValueError("FileWriter(session=...) writes through a SummaryWriter resource (TF 2 "
                             "summaries), which tensorweave does not provide; pass a logdir only")
        self.event_writer = EventFileWriter(logdir, max_queue, flush_secs, filename_suffix)
        self._seen_summary_tags: set[str] = set()
        self._seen_run_metadata_tags: set[str] = set()
        if graph is not None or graph_def is not None:
            self.add_graph(graph=graph, graph_def=graph_def)

    def __enter__(self) -> "FileWriter":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_summary(self, summary: Any, global_step: Optional[int] = None) -> None:
        """Adds a Summary (the protobuf, or the bytes a summary op returned)."""
        if isinstance(summary, (bytes, bytearray)):
            summary = summary_pb2.Summary.FromString(bytes(summary))
        elif isinstance(summary, np.ndarray):  # a 0-d string array (what a kernel holds)
            summary = summary_pb2.Summary.FromString(summary.item())
        else:
            copy = summary_pb2.Summary()
            copy.CopyFrom(summary)
            summary = copy
        for value in summary.value:
            if not value.HasField("metadata"):
                continue
            if value.tag in self._seen_summary_tags:
                value.ClearField("metadata")  # TensorBoard needs it once per tag
            else:
                self._seen_summary_tags.add(value.tag)
        self._add_event(event_pb2.Event(summary=summary), global_step)

    def add_session_log(self, session_log: Any, global_step: Optional[int] = None) -> None:
        self._add_event(event_pb2.Event(session_log=session_log), global_step)

    def add_graph(self, graph: Optional[Graph] = None, global_step: Optional[int] = None,
                  graph_def: Any = None) -> None:
        """Adds the graph (with node shapes) and, for a Graph, its meta graph. A GraphDef is
        still taken, in either argument, with TF1's deprecation warning: it is how a step's
        optimised graph (`RunMetadata.partition_graphs`) reaches TensorBoard."""
        if graph is not None and graph_def is not None:
            raise ValueError("Please pass only graph, or graph_def (deprecated), but not both.")
        given = graph if graph is not None else graph_def
        if isinstance(given, Graph):
            self._add_graph_def(given.as_graph_def(add_shapes=True), global_step)
            self.add_meta_graph(create_meta_graph_def(graph=given), global_step)
        elif isinstance(given, graph_pb2.GraphDef):
            logging.getLogger("tensorflow").warning(
                "Passing a `GraphDef` to the SummaryWriter is deprecated. Pass a `Graph` object "
                "instead, such as `sess.graph`.")
            self._add_graph_def(given, global_step)
        else:
            raise TypeError("The passed graph must be an instance of `Graph` or the deprecated `GraphDef`")

    def _add_graph_def(self, graph_def: Any, global_step: Optional[int]) -> None:
        self._add_event(event_pb2.Event(graph_def=graph_def.SerializeToString()), global_step)

    def add_meta_graph(self, meta_graph_def: Any, global_step: Optional[int] = None) -> None:
        if not hasattr(meta_graph_def, "SerializeToString") or not hasattr(meta_graph_def, "graph_def"):
            raise TypeError(f"meta_graph_def must be type MetaGraphDef, saw type: {type(meta_graph_def)}")
        self._add_event(event_pb2.Event(meta_graph_def=meta_graph_def.SerializeToString()), global_step)

    def add_run_metadata(self, run_metadata: Any, tag: str, global_step: Optional[int] = None) -> None:
        """Adds a step's RunMetadata (step stats) under `tag`, for the graph dashboard's
        per-node compute time and memory."""
        if tag in self._seen_run_metadata_tags:
            raise ValueError("The provided tag was already used for this event type")
        self._seen_run_metadata_tags.add(tag)
        tagged = event_pb2.TaggedRunMetadata(tag=tag, run_metadata=run_metadata.SerializeToString())
        self._add_event(event_pb2.Event(tagged_run_metadata=tagged), global_step)

    def _add_event(self, event: Any, step: Optional[int]) -> None:
        event.wall_time = time.time()
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_event(self, event: Any) -> None:
        self.event_writer.add_event(event)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()

    def reopen(self) -> None:
        self.event_writer.reopen()


class FileWriterCache:
    """One FileWriter per log directory, shared by everything in the process that asks."""

    _cache: dict[str, FileWriter] = {}

    @staticmethod
    def get(logdir: Any) -> FileWriter:
        key = str(logdir)
        writer = FileWriterCache._cache.get(key)
        if writer is None:
            writer = FileWriterCache._cache[key] = FileWriter(logdir, graph=get_default_graph())
        return writer

    @staticmethod
    def clear() -> None:
        for writer in FileWriterCache._cache.values():
            writer.close()
        FileWriterCache._cache.clear()
